//! The store's binding key: approvals are bound to a keyed hash of the exact request.
//!
//! The record shows arguments with secrets redacted (by name and by value), so that a token
//! typed into a command never reaches an export or a screen; the approval must still fit only
//! the exact request, clear arguments and all. A plain SHA-256 of the clear request, kept in
//! the chain, would let anyone holding an export test guesses of a redacted secret against it;
//! an HMAC under a key only the store holds does not. The key is made once, by whichever
//! process opens the store first, and read by every other.
//!
//! Where it is kept depends on who may hold the store. A PostgreSQL store is the team's, and
//! every process that may write to it is trusted: its key is in the store (`store_keys`). An
//! SQLite file is something a repository, an archive or a colleague can hand over, with a key
//! of their choosing inside and an approval "given" under it for a request they foresee; so
//! its key is kept outside the file and the project, in the person's state directory
//! (`$XDG_STATE_HOME/jig/store-keys/`, by default `~/.local/state/…`), named by the file's
//! real path. A file that arrives from elsewhere (or moves) is opened with a new key, under
//! which none of its approvals fits a request: they are asked for again.
//!
//! The same key vouches for results: a replay answers only from a result packet this store
//! tagged when it recorded it, so a result planted in a store handed over is never served.

use jig_model::canonical::{canonical_json, hex, unhex};
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use sqlx::{AnyPool, Row};
use std::path::{Path, PathBuf};

use crate::error::AuditError;

/// The key's name in `store_keys`.
const NAME: &str = "binding";

/// Where in a result packet's data the store's tag is ([`BindingKey::vouch`]).
pub const MAC: &str = "mac";

/// The packets a replay may answer from: how a call ended.
const VOUCHED: [crate::PacketKind; 3] = [
    crate::PacketKind::CallResult,
    crate::PacketKind::CallFailed,
    crate::PacketKind::CallSubmitted,
];

/// HMAC-SHA256 under the store's binding key.
#[derive(Clone)]
pub struct BindingKey(hmac::Key);

impl std::fmt::Debug for BindingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BindingKey(…)")
    }
}

impl BindingKey {
    /// The keyed hash of `value`'s canonical JSON (RFC 8785), as hex.
    pub fn hash(&self, value: &serde_json::Value) -> String {
        let tag = hmac::sign(&self.0, canonical_json(value).as_bytes());
        hex(tag.as_ref())
    }

    /// Vouch for `packet` if it records how a call ended (a result, a failure, a job handed to
    /// a scheduler): its data gets `mac`, this key's tag over the packet's body. A replay
    /// answers only from a packet this store vouched for ([`BindingKey::vouches`]): what a
    /// store brought from elsewhere (a repository, an archive) may be a result its author
    /// foresaw and forged, chain and all, and was never vouched for under this key.
    pub fn vouch(&self, packet: &mut crate::NewPacket) {
        if !VOUCHED.contains(&packet.kind) {
            return;
        }
        let Some(data) = packet.data.as_object_mut() else { return };
        data.remove(MAC);
        let tag = self.result_tag(
            packet.kind.as_str(),
            [&packet.session_id, &packet.thread_id, &packet.principal, &packet.request_id],
            [&packet.run_id, &packet.tool, &packet.args_hash],
            &packet.data,
        );
        if let Some(data) = packet.data.as_object_mut() {
            data.insert(MAC.to_owned(), serde_json::Value::String(tag));
        }
    }

    /// Whether this store vouched for `packet` ([`BindingKey::vouch`]).
    pub fn vouches(&self, packet: &crate::Packet) -> bool {
        let Some(given) = packet.data.get(MAC).and_then(serde_json::Value::as_str) else {
            return false;
        };
        let mut data = packet.data.clone();
        if let Some(object) = data.as_object_mut() {
            object.remove(MAC);
        }
        let tag = self.result_tag(
            &packet.kind,
            [&packet.session_id, &packet.thread_id, &packet.principal, &packet.request_id],
            [&packet.run_id, &packet.tool, &packet.args_hash],
            &data,
        );
        // Compared in constant time: a tag is a secret's output.
        tag.len() == given.len()
            && tag.bytes().zip(given.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
    }

    /// The tag over a result packet's body (all of it but its time, which the writer sets),
    /// 128 bits as hex.
    fn result_tag(
        &self,
        kind: &str,
        [session_id, thread_id, principal, request_id]: [&Option<String>; 4],
        [run_id, tool, args_hash]: [&Option<String>; 3],
        data: &serde_json::Value,
    ) -> String {
        let mut tag = self.hash(&serde_json::json!({
            "domain": "jig.audit.result.v1", "kind": kind, "session_id": session_id,
            "thread_id": thread_id, "principal": principal, "request_id": request_id,
            "run_id": run_id, "tool": tool, "args_hash": args_hash, "data": data,
        }));
        tag.truncate(32);
        tag
    }

    /// A key from its hex form.
    fn from_hex(hex: &str) -> Result<Self, AuditError> {
        match unhex(hex) {
            Some(bytes) if bytes.len() == 32 => Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes))),
            _ => Err(AuditError::Corrupt("the store's binding key is malformed".to_owned())),
        }
    }
}

fn fresh_hex() -> Result<String, AuditError> {
    let mut fresh = [0u8; 32];
    SystemRandom::new()
        .fill(&mut fresh)
        .map_err(|_| AuditError::Commit("no randomness for the store's binding key".to_owned()))?;
    Ok(hex(&fresh))
}

/// The key of the SQLite store `file`, kept outside it and its project, made now if this
/// person has none for that file (the first process wins; everyone reads its key).
pub(crate) fn load_or_create_local(file: &Path) -> Result<BindingKey, AuditError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| AuditError::Io { path, source }
    };
    let real = fs_err::canonicalize(file).map_err(io(file))?;
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/state"))
        })
        .ok_or_else(|| {
            AuditError::Commit(
                "neither XDG_STATE_HOME nor HOME is set: there is nowhere outside the project to keep the store's key".to_owned(),
            )
        })?;
    let dir = state.join("jig").join("store-keys");
    fs_err::create_dir_all(&dir).map_err(io(&dir))?;
    let digest = ring::digest::digest(&ring::digest::SHA256, real.as_os_str().as_encoded_bytes());
    let name = hex(&digest.as_ref()[..16]);
    let path = dir.join(name);
    if !path.exists() {
        // Written whole under another name, then linked into place: a process that finds the
        // key reads all of it, and of two processes making one, the first link wins.
        let partial = dir.join(format!(".{}.{}", std::process::id(), fresh_hex()?));
        write_private(&partial, &fresh_hex()?).map_err(io(&partial))?;
        let linked = std::fs::hard_link(&partial, &path);
        let _ = std::fs::remove_file(&partial);
        match linked {
            Ok(()) => {
                tracing::debug!(store = %real.display(), key = %path.display(), "a new binding key for this store")
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(io(&path)(error)),
        }
    }
    let hex = fs_err::read_to_string(&path).map_err(io(&path))?;
    BindingKey::from_hex(hex.trim())
}

/// Create `path` readable by its owner only, holding `text`.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// The store's key, made now if it has none (the first writer wins; everyone reads its key).
pub(crate) async fn load_or_create(pool: &AnyPool) -> Result<BindingKey, AuditError> {
    let hex = fresh_hex()?;
    sqlx::query(
        "INSERT INTO store_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(NAME)
    .bind(&hex)
    .execute(pool)
    .await?;
    let row = sqlx::query("SELECT value FROM store_keys WHERE name = $1")
        .bind(NAME)
        .fetch_one(pool)
        .await?;
    BindingKey::from_hex(&row.try_get::<String, _>("value")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewPacket, Packet, PacketKind};
    use serde_json::json;

    fn key() -> BindingKey {
        BindingKey::from_hex(&fresh_hex().expect("random")).expect("key")
    }

    fn new(kind: PacketKind) -> NewPacket {
        NewPacket {
            kind,
            session_id: Some("s".into()),
            thread_id: None,
            principal: Some("alice".into()),
            request_id: Some("r1".into()),
            run_id: Some("run".into()),
            tool: Some("t.answer".into()),
            args_hash: Some("ab".into()),
            data: json!({ "state": "succeeded", "ok": true, "data": { "answer": 42 } }),
        }
    }

    fn stored(packet: &NewPacket) -> Packet {
        Packet {
            seq: 7,
            kind: packet.kind.as_str().to_owned(),
            ts_us: 1,
            session_id: packet.session_id.clone(),
            thread_id: packet.thread_id.clone(),
            principal: packet.principal.clone(),
            request_id: packet.request_id.clone(),
            run_id: packet.run_id.clone(),
            tool: packet.tool.clone(),
            args_hash: packet.args_hash.clone(),
            data: packet.data.clone(),
            prev_hash: crate::GENESIS.to_owned(),
            hash: String::new(),
        }
    }

    #[test]
    fn a_store_vouches_for_the_results_it_recorded_and_no_other() {
        let (mine, theirs) = (key(), key());
        let mut packet = new(PacketKind::CallResult);
        mine.vouch(&mut packet);
        assert_eq!(packet.data[MAC].as_str().map(str::len), Some(32));
        assert!(mine.vouches(&stored(&packet)));
        // Under another store's key (the store came from elsewhere), it is not.
        assert!(!theirs.vouches(&stored(&packet)));
        // Another answer, another request or run, a forged tag: not.
        let mut answer = stored(&packet);
        answer.data["data"]["answer"] = json!(41);
        assert!(!mine.vouches(&answer));
        let mut request = stored(&packet);
        request.request_id = Some("r2".into());
        assert!(!mine.vouches(&request));
        let mut run = stored(&packet);
        run.run_id = Some("other".into());
        assert!(!mine.vouches(&run));
        let mut forged = stored(&packet);
        forged.data[MAC] = json!("0".repeat(32));
        assert!(!mine.vouches(&forged));
        // A tag brought in with the data is replaced, not kept.
        let mut brought = new(PacketKind::CallResult);
        brought.data[MAC] = json!("f".repeat(32));
        mine.vouch(&mut brought);
        assert_eq!(brought.data, packet.data);
        // Only how a call ended is vouched for.
        let mut request = new(PacketKind::CallRequest);
        mine.vouch(&mut request);
        assert!(request.data.get(MAC).is_none());
        assert!(!mine.vouches(&stored(&request)));
    }
}
