//! The audit store's tests, each run against SQLite (a file) and a real PostgreSQL server.
#![allow(clippy::disallowed_methods, reason = "the tests start processes to kill them")]

mod chain;
mod feed;
mod forward;
mod people;
mod runbooks;
mod state;

use jig_audit::{NewPacket, PacketKind, Store};
use serde_json::json;

/// A fresh store of each kind: an SQLite file, and a new database on PostgreSQL.
pub async fn stores() -> Vec<(Store, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("tmp");
    let sqlite =
        Store::open(&dir.path().join(".jig/audit.db").display().to_string()).await.expect("sqlite");
    let postgres = Store::open(&jig_testkit::postgres_url()).await.expect("postgres");
    vec![(sqlite, Some(dir)), (postgres, None)]
}

/// A request packet for `request`.
pub fn packet(request: &str, n: i64) -> NewPacket {
    NewPacket {
        kind: PacketKind::CallRequest,
        session_id: Some("s1".into()),
        thread_id: Some("t1".into()),
        principal: Some("ada".into()),
        request_id: Some(request.into()),
        run_id: Some(format!("run-{request}")),
        tool: Some("file_read".into()),
        args_hash: Some("ab".into()),
        data: json!({ "n": n, "args": { "path": "src/lib.rs" } }),
    }
}
