//! Defect: truncation was undetectable. Packets deleted in the middle or at the tail, the tail
//! deleted with the head rewritten to match, and (SQLite) a truncated database file — each is
//! detected by `jig audit verify`, the last two with a head kept elsewhere (`--expect`, plain
//! or signed), on SQLite and on PostgreSQL.

use std::path::Path;

use crate::calls::example_copy;
use crate::{jig, stderr};

/// Where the store is: the project's SQLite file, or a PostgreSQL database.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

struct Recorded {
    dir: tempfile::TempDir,
    db: Option<String>,
    /// `SEQ HASH` as `jig audit head` printed it after the calls.
    head: String,
    /// The head signed with the project's key, in a file.
    signed: std::path::PathBuf,
}

impl Recorded {
    fn jig(&self, args: &[&str]) -> std::process::Output {
        let mut all: Vec<&str> = Vec::new();
        if let Some(db) = &self.db {
            all.extend(["--db", db.as_str()]);
        }
        all.extend(args);
        jig(self.dir.path(), &all)
    }

    fn verify(&self, expect: Option<&str>) -> (Option<i32>, String) {
        let mut args = vec!["audit", "verify"];
        if let Some(expect) = expect {
            args.extend(["--expect", expect]);
        }
        let output = self.jig(&args);
        (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn sql(&self, statements: &[&str]) {
        let target = self
            .db
            .clone()
            .unwrap_or_else(|| self.dir.path().join(".jig/audit.db").display().to_string());
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async {
            let store = jig_audit::Store::open(&target).await.expect("open");
            for statement in statements {
                store.execute_raw(statement).await.expect(statement);
            }
            store.close().await;
        });
    }
}

/// Four read-only calls (twelve packets), the head printed and signed with a key the project
/// names in its manifest.
fn recorded(backend: Backend) -> Recorded {
    let dir = example_copy();
    let root = dir.path();
    let keys = tempfile::tempdir().expect("tmp").keep();
    let key_file = keys.join("head.key");
    let keygen = jig(root, &["audit", "keygen", key_file.to_str().expect("utf-8")]);
    assert_eq!(keygen.status.code(), Some(0), "{}", stderr(&keygen));
    let public = String::from_utf8_lossy(&keygen.stdout).trim().to_owned();
    let manifest = fs_err::read_to_string(root.join("jig.yaml")).expect("manifest");
    let manifest = manifest.replacen(
        "config:\n",
        &format!("config:\n  audit: {{ head_key: \"{public}\" }}\n"),
        1,
    );
    fs_err::write(root.join("jig.yaml"), manifest).expect("write");
    let db = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(jig_testkit::postgres_url()),
    };
    let mut recorded = Recorded { dir, db, head: String::new(), signed: keys.join("head.json") };
    for file in ["jig.yaml", "tools/journal.tool.yaml", "jig.yaml", "tools/journal.tool.yaml"] {
        let args = format!(r#"{{"path": "{file}", "max_bytes": 100000}}"#);
        let call = recorded.jig(&["call", "file_read", "--args", &args]);
        assert_eq!(call.status.code(), Some(0), "{}", stderr(&call));
    }
    recorded.head =
        String::from_utf8_lossy(&recorded.jig(&["audit", "head"]).stdout).trim().to_owned();
    let signed = recorded.jig(&["audit", "head", "--sign", key_file.to_str().expect("utf-8")]);
    assert_eq!(signed.status.code(), Some(0), "{}", stderr(&signed));
    fs_err::write(&recorded.signed, &signed.stdout).expect("write signed head");
    let (code, text) = recorded.verify(Some(&recorded.head));
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = recorded.verify(Some(recorded.signed.to_str().expect("utf-8")));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("verifies with the project's key"), "{text}");
    recorded
}

fn seq_of(head: &str) -> i64 {
    head.split_once(' ').expect("SEQ HASH").0.parse().expect("seq")
}

const DROP_TRIGGER_SQLITE: &str = "DROP TRIGGER packets_no_delete";
const DROP_TRIGGER_POSTGRES: &str = "DROP TRIGGER packets_no_delete ON packets";

fn drop_trigger(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => DROP_TRIGGER_SQLITE,
        Backend::Postgres => DROP_TRIGGER_POSTGRES,
    }
}

fn every_truncation_is_detected(backend: Backend) {
    // A packet deleted in the middle.
    let store = recorded(backend);
    store.sql(&[drop_trigger(backend), "DELETE FROM packets WHERE seq = 5"]);
    let (code, text) = store.verify(None);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("seq 6 follows seq 4"), "{text}");

    // The last packets deleted: the stored head no longer matches.
    let store = recorded(backend);
    let last = seq_of(&store.head);
    store.sql(&[drop_trigger(backend), &format!("DELETE FROM packets WHERE seq > {}", last - 2)]);
    let (code, text) = store.verify(None);
    assert_eq!(code, Some(1), "{text}");

    // The tail deleted and the head rewritten to match: the chain alone cannot tell; a head
    // kept elsewhere, plain or signed, can.
    let store = recorded(backend);
    let keep = last - 3;
    store.sql(&[drop_trigger(backend), &format!("DELETE FROM packets WHERE seq > {keep}")]);
    store.sql(&[&format!(
        "UPDATE chain_head SET seq = {keep}, hash = (SELECT hash FROM packets WHERE seq = {keep}) WHERE id = 1"
    )]);
    let (code, text) = store.verify(None);
    assert_eq!(code, Some(0), "a consistent shorter chain verifies on its own: {text}");
    let (code, text) = store.verify(Some(&store.head));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("packets were removed"), "{text}");
    let (code, text) = store.verify(Some(store.signed.to_str().expect("utf-8")));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("packets were removed"), "{text}");
}

#[test]
fn truncation_is_detected_on_sqlite() {
    every_truncation_is_detected(Backend::Sqlite);
}

#[test]
fn truncation_is_detected_on_postgres() {
    every_truncation_is_detected(Backend::Postgres);
}

/// A database file cut short: verify fails with a message, not a crash.
#[test]
fn a_truncated_database_file_fails_verify() {
    let store = recorded(Backend::Sqlite);
    let db = store.dir.path().join(".jig/audit.db");
    // Fold the write-ahead log into the file first, so that cutting the file cuts packets.
    store.sql(&["PRAGMA wal_checkpoint(TRUNCATE)"]);
    let size = fs_err::metadata(&db).expect("db").len();
    let file = fs_err::OpenOptions::new().write(true).open(&db).expect("open");
    file.set_len(size / 2).expect("truncate");
    let output = store.jig(&["audit", "verify", "--expect", &store.head]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("malformed"), "{}", stderr(&output));
}

/// A head signed with another key than the one the project names is not trusted.
#[test]
fn a_head_signed_with_another_key_is_refused() {
    let store = recorded(Backend::Sqlite);
    let other = tempfile::tempdir().expect("tmp");
    let key = other.path().join("other.key");
    let root: &Path = store.dir.path();
    assert_eq!(
        jig(root, &["audit", "keygen", key.to_str().expect("utf-8")]).status.code(),
        Some(0)
    );
    let forged = jig(root, &["audit", "head", "--sign", key.to_str().expect("utf-8")]);
    let forged_file = other.path().join("forged.json");
    fs_err::write(&forged_file, &forged.stdout).expect("write");
    let (code, text) = store.verify(Some(forged_file.to_str().expect("utf-8")));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("not with the trusted key"), "{text}");
}

#[test]
fn a_signed_head_is_not_trusted_without_the_projects_key() {
    let store = recorded(Backend::Sqlite);
    let root: &Path = store.dir.path();
    // The same head, with the manifest's key taken away: its own key proves nothing.
    let manifest = fs_err::read_to_string(root.join("jig.yaml")).expect("manifest");
    let keyless: String =
        manifest.lines().filter(|l| !l.contains("head_key")).map(|l| format!("{l}\n")).collect();
    fs_err::write(root.join("jig.yaml"), keyless).expect("write");
    let (code, text) = store.verify(Some(store.signed.to_str().expect("utf-8")));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("trusted only with the project's key"), "{text}");
}
