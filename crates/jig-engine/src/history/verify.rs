//! The chain check every surface runs: the database's own consistency check, the hash chain,
//! the side tables against their packets, and a head kept elsewhere (plain or signed). It says
//! what it checked, so "ok" never claims more than was looked at.

use serde::Serialize;

use super::{Checkpoint, History, SignedHead};
use crate::EngineError;

/// A head kept outside the database, to detect truncation and rewriting.
#[derive(Debug, Clone)]
pub enum ExpectedHead {
    /// `SEQ:HASH`, as `jig audit head` prints it.
    Plain(i64, String),
    /// A head signed with `jig audit head --sign`.
    Signed(SignedHead),
    /// A C2SP checkpoint signed note (`jig audit publish`, or the `checkpoint` of a signed
    /// head), opened with the project's key.
    Checkpoint {
        /// What the note says, read before its signature is checked.
        head: Checkpoint,
        /// The note as given.
        note: String,
    },
}

impl std::str::FromStr for ExpectedHead {
    type Err = String;

    /// `SEQ:HASH`, or `SEQ HASH` as `jig audit head` prints it.
    fn from_str(text: &str) -> Result<Self, String> {
        let (seq, hash) = text
            .split_once([':', ' '])
            .ok_or_else(|| "expected SEQ:HASH, as `jig audit head` prints it".to_owned())?;
        let seq = seq.trim().parse::<i64>().map_err(|e| format!("SEQ `{seq}`: {e}"))?;
        let hash = hash.trim();
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("HASH `{hash}` is not 64 hexadecimal digits"));
        }
        Ok(Self::Plain(seq, hash.to_ascii_lowercase()))
    }
}

impl ExpectedHead {
    fn pair(&self) -> (i64, String) {
        match self {
            Self::Plain(seq, hash) => (*seq, hash.to_ascii_lowercase()),
            Self::Signed(head) => (head.seq, head.hash.to_ascii_lowercase()),
            Self::Checkpoint { head, .. } => (head.size, head.hash.clone()),
        }
    }
}

/// The chain's head: its last packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Head {
    /// The last packet's seq.
    pub seq: i64,
    /// Its hash.
    pub hash: String,
}

/// What verifying found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ChainStatus {
    /// Everything checked holds.
    Ok {
        /// What was checked, one sentence each.
        checked: Vec<String>,
        /// The head: the last packet.
        head: Head,
    },
    /// Something does not hold.
    Broken {
        /// The first packet that does not verify, when the problem is one packet.
        at: Option<i64>,
        /// What is wrong, for people.
        reason: String,
        /// How many packets verified before the problem.
        verified: i64,
    },
}

impl ChainStatus {
    fn broken(at: Option<i64>, reason: impl Into<String>, verified: i64) -> Self {
        Self::Broken { at, reason: reason.into(), verified }
    }

    /// Whether everything checked holds.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok { .. })
    }
}

impl History {
    /// Check the record. `expect` is a head kept elsewhere (a missing packet or a different hash
    /// means the chain was truncated or rewritten); `trusted_key` is the public key
    /// (`config.audit.head_key`) a signed head must verify with.
    pub async fn verify(
        &self,
        expect: Option<&ExpectedHead>,
        trusted_key: Option<&str>,
    ) -> Result<ChainStatus, EngineError> {
        let integrity = self.store.integrity().await?;
        if let Some(problem) = &integrity.problem {
            return Ok(ChainStatus::broken(
                None,
                format!("{} fails: {problem}", integrity.check),
                0,
            ));
        }
        let verification = self.store.verify().await?;
        let verified = verification.checked;
        if let Some((seq, reason)) = &verification.first_broken {
            return Ok(ChainStatus::broken(Some(*seq), reason.clone(), verified));
        }
        if let Some(problem) = &verification.side_tables {
            return Ok(ChainStatus::broken(None, problem.clone(), verified));
        }
        let mut checked = vec![
            format!(
                "{verified} packets verified (hashes, links, chain head; approvals and recorded responses match their packets)"
            ),
            integrity.summary(),
        ];
        if let Some(expected) = expect {
            if let ExpectedHead::Signed(head) = expected {
                // Like a checkpoint note: a head carries its own public key, so without the
                // project's key its signature proves only that someone signed it.
                let Some(key) = trusted_key else {
                    let reason = "a signed head is trusted only with the project's key, and the manifest names no `config.audit.head_key`";
                    return Ok(ChainStatus::broken(None, reason, verified));
                };
                if let Err(error) = head.check(Some(key)) {
                    let reason = format!("the signed head is not trusted: {error}");
                    return Ok(ChainStatus::broken(None, reason, verified));
                }
                checked.push("the signed head verifies with the project's key".to_owned());
            }
            if let ExpectedHead::Checkpoint { note, head } = expected {
                let Some(key) = trusted_key else {
                    let reason = "a checkpoint is trusted only with the project's key, and the manifest names no `config.audit.head_key`";
                    return Ok(ChainStatus::broken(None, reason, verified));
                };
                if let Err(error) = Checkpoint::open(note, key) {
                    let reason = format!("the checkpoint is not trusted: {error}");
                    return Ok(ChainStatus::broken(None, reason, verified));
                }
                checked.push(format!(
                    "the checkpoint of {} verifies with the project's key",
                    head.origin
                ));
            }
            let (seq, hash) = expected.pair();
            match self.store.packet_hash(seq).await? {
                None => {
                    let reason = format!(
                        "the chain ends at seq {}, but packet {seq} was expected (packets were removed)",
                        verification.head.0
                    );
                    return Ok(ChainStatus::broken(None, reason, verified));
                }
                Some(found) if found != hash => {
                    let reason = format!(
                        "its hash is {found}, not the expected {hash} (the chain was rewritten)"
                    );
                    return Ok(ChainStatus::broken(Some(seq), reason, verified));
                }
                Some(_) => checked.push(format!("holds the expected packet {seq}")),
            }
        }
        let (seq, hash) = verification.head;
        Ok(ChainStatus::Ok { checked, head: Head { seq, hash } })
    }
}

/// What a missing store means for an expected head: an empty record holds only seq 0.
pub fn verify_missing(expect: Option<&ExpectedHead>) -> ChainStatus {
    match expect.map(ExpectedHead::pair) {
        Some((seq, _)) if seq > 0 => ChainStatus::broken(
            None,
            format!("there is no audit store, but packet {seq} was expected"),
            0,
        ),
        _ => ChainStatus::Ok {
            checked: vec!["there is no audit store yet: nothing was recorded".to_owned()],
            head: Head { seq: 0, hash: super::GENESIS.to_owned() },
        },
    }
}
