//! Packets: the append-only, hash-chained record of everything that happened.
//!
//! Each packet's hash is SHA-256 over a domain tag, its sequence number, the previous packet's
//! hash, and the RFC 8785 canonical JSON of its whole body (kind, time, session, thread,
//! principal, request, run, tool, arguments hash and redacted data). Changing any stored column
//! of any packet breaks the chain from that packet on, and `verify` names the first broken seq.

use jig_model::canonical::Sha256Hash;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The hash before the first packet.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Domain separation: a packet hash can never be mistaken for another Jig hash.
const DOMAIN: &[u8] = b"jig.audit.packet.v1";

/// What a packet records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PacketKind {
    /// A selection was asked for (seed 003).
    #[serde(rename = "tool.select.request")]
    SelectRequest,
    /// The selection made.
    #[serde(rename = "tool.select.result")]
    SelectResult,
    /// A call was received.
    #[serde(rename = "tool.call.request")]
    CallRequest,
    /// The policy's decision on it.
    #[serde(rename = "tool.call.decision")]
    CallDecision,
    /// It waits for a person's approval.
    #[serde(rename = "tool.call.pending_approval")]
    CallPendingApproval,
    /// It produced a result (or replayed one).
    #[serde(rename = "tool.call.result")]
    CallResult,
    /// It failed, was denied, cancelled, or never finished.
    #[serde(rename = "tool.call.failed")]
    CallFailed,
    /// Its work was handed to a scheduler (seed 001's batch jobs): the job, queued.
    #[serde(rename = "tool.call.submitted")]
    CallSubmitted,
    /// Its job changed state on the scheduler (queued → running).
    #[serde(rename = "tool.call.state")]
    CallState,
    /// Someone asked to stop it while it ran in another process (`data.by`): the process
    /// running it hears this on the store's feed and stops it.
    #[serde(rename = "tool.call.cancel_requested")]
    CallCancelRequested,
    /// A person approved or denied a pending call.
    #[serde(rename = "approval.decided")]
    ApprovalDecided,
    /// A runbook run began, paused or finished.
    #[serde(rename = "runbook.run")]
    RunbookRun,
    /// A runbook step began, was decided about, or finished.
    #[serde(rename = "runbook.step")]
    RunbookStep,
    /// A runbook's flow: a branch taken, parallel arms forked or merged, a loop's round.
    #[serde(rename = "runbook.flow")]
    RunbookFlow,
    /// A person acted on a runbook run: evidence, a go-ahead, a choice, a retry.
    #[serde(rename = "runbook.person")]
    RunbookPerson,
    /// A runbook run reached its outcome.
    #[serde(rename = "runbook.outcome")]
    RunbookOutcome,
    /// A personal API token was made (`data`: its id, name, owner, role and end; never the
    /// token or its hash).
    #[serde(rename = "token.minted")]
    TokenMinted,
    /// A personal API token was revoked (`data.by`: its owner, an admin, or `sign-in`).
    #[serde(rename = "token.revoked")]
    TokenRevoked,
}

impl PacketKind {
    /// The wire name, e.g. `tool.call.request`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SelectRequest => "tool.select.request",
            Self::SelectResult => "tool.select.result",
            Self::CallRequest => "tool.call.request",
            Self::CallDecision => "tool.call.decision",
            Self::CallPendingApproval => "tool.call.pending_approval",
            Self::CallResult => "tool.call.result",
            Self::CallFailed => "tool.call.failed",
            Self::CallSubmitted => "tool.call.submitted",
            Self::CallState => "tool.call.state",
            Self::CallCancelRequested => "tool.call.cancel_requested",
            Self::ApprovalDecided => "approval.decided",
            Self::RunbookRun => "runbook.run",
            Self::RunbookStep => "runbook.step",
            Self::RunbookFlow => "runbook.flow",
            Self::RunbookPerson => "runbook.person",
            Self::RunbookOutcome => "runbook.outcome",
            Self::TokenMinted => "token.minted",
            Self::TokenRevoked => "token.revoked",
        }
    }

    /// Every kind.
    pub const ALL: [Self; 18] = [
        Self::SelectRequest,
        Self::SelectResult,
        Self::CallRequest,
        Self::CallDecision,
        Self::CallPendingApproval,
        Self::CallResult,
        Self::CallFailed,
        Self::CallSubmitted,
        Self::CallState,
        Self::CallCancelRequested,
        Self::ApprovalDecided,
        Self::RunbookRun,
        Self::RunbookStep,
        Self::RunbookFlow,
        Self::RunbookPerson,
        Self::RunbookOutcome,
        Self::TokenMinted,
        Self::TokenRevoked,
    ];

    /// The kind with this wire name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// A packet to append. Its data must already be redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewPacket {
    /// What it records.
    pub kind: PacketKind,
    /// The session.
    pub session_id: Option<String>,
    /// The thread (conversation) inside the session.
    pub thread_id: Option<String>,
    /// Who acted.
    pub principal: Option<String>,
    /// The request.
    pub request_id: Option<String>,
    /// The run identity.
    pub run_id: Option<String>,
    /// The tool.
    pub tool: Option<String>,
    /// `params_hash` of the arguments.
    pub args_hash: Option<String>,
    /// The redacted body.
    pub data: Value,
}

/// A stored packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Packet {
    /// Position in the chain, from 1, without gaps.
    pub seq: i64,
    /// What it records (`tool.call.request`, …).
    pub kind: String,
    /// Microseconds since the Unix epoch.
    pub ts_us: i64,
    /// The session.
    pub session_id: Option<String>,
    /// The thread.
    pub thread_id: Option<String>,
    /// Who acted.
    pub principal: Option<String>,
    /// The request.
    pub request_id: Option<String>,
    /// The run identity.
    pub run_id: Option<String>,
    /// The tool.
    pub tool: Option<String>,
    /// `params_hash` of the arguments.
    pub args_hash: Option<String>,
    /// The redacted body.
    pub data: Value,
    /// The previous packet's hash.
    pub prev_hash: String,
    /// This packet's hash.
    pub hash: String,
}

/// The fields a packet's hash covers, besides seq and the previous hash.
pub(crate) struct Body<'a> {
    pub kind: &'a str,
    pub ts_us: i64,
    pub session_id: Option<&'a str>,
    pub thread_id: Option<&'a str>,
    pub principal: Option<&'a str>,
    pub request_id: Option<&'a str>,
    pub run_id: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub args_hash: Option<&'a str>,
    pub data: &'a Value,
}

impl Body<'_> {
    /// The hash of the packet at `seq` after `prev_hash`.
    pub fn hash(&self, seq: i64, prev_hash: &str) -> String {
        let canonical = self.canonical();
        let seq = seq.to_string();
        Sha256Hash::of_parts([DOMAIN, seq.as_bytes(), prev_hash.as_bytes(), &canonical]).to_hex()
    }

    /// The body as RFC 8785 JSON: an object of these ten members, keys in canonical order,
    /// written in place (a packet is hashed as it is appended and again by every `verify`).
    fn canonical(&self) -> Vec<u8> {
        use jig_model::canonical::{write_canonical, write_canonical_str};
        let mut out = Vec::with_capacity(256);
        let members: [(&str, Member<'_>); 10] = [
            ("args_hash", Member::Text(self.args_hash)),
            ("data", Member::Json(self.data)),
            ("kind", Member::Text(Some(self.kind))),
            ("principal", Member::Text(self.principal)),
            ("request_id", Member::Text(self.request_id)),
            ("run_id", Member::Text(self.run_id)),
            ("session_id", Member::Text(self.session_id)),
            ("thread_id", Member::Text(self.thread_id)),
            ("tool", Member::Text(self.tool)),
            ("ts_us", Member::Int(self.ts_us)),
        ];
        out.push(b'{');
        for (i, (key, member)) in members.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_canonical_str(key, &mut out);
            out.push(b':');
            match member {
                Member::Text(Some(text)) => write_canonical_str(text, &mut out),
                Member::Text(None) => out.extend_from_slice(b"null"),
                Member::Json(value) => write_canonical(value, &mut out),
                Member::Int(value) => write_canonical(&Value::from(value), &mut out),
            }
        }
        out.push(b'}');
        out
    }
}

/// One member of a packet's body, borrowed.
enum Member<'a> {
    Text(Option<&'a str>),
    Json(&'a Value),
    Int(i64),
}

impl Packet {
    /// The hash this packet should have, from its own columns.
    pub fn expected_hash(&self) -> String {
        Body {
            kind: &self.kind,
            ts_us: self.ts_us,
            session_id: self.session_id.as_deref(),
            thread_id: self.thread_id.as_deref(),
            principal: self.principal.as_deref(),
            request_id: self.request_id.as_deref(),
            run_id: self.run_id.as_deref(),
            tool: self.tool.as_deref(),
            args_hash: self.args_hash.as_deref(),
            data: &self.data,
        }
        .hash(self.seq, &self.prev_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body written in place is the canonical JSON of the body as an object: stores
    /// written before it still verify.
    #[test]
    fn the_body_in_place_is_the_canonical_object() {
        let data = json!({ "z": [1, 2.5, "é\n\u{1}"], "a": { "\u{1F600}": null, "\u{FB33}": true }, "big": 18446744073709551615u64 });
        for principal in [None, Some("alice \"ops\"")] {
            let body = Body {
                kind: "tool.call.result",
                ts_us: 1_764_000_000_000_000,
                session_id: Some("s-1"),
                thread_id: None,
                principal,
                request_id: Some("r"),
                run_id: None,
                tool: Some("file_read"),
                args_hash: Some("ab"),
                data: &data,
            };
            let object = json!({
                "kind": body.kind, "ts_us": body.ts_us, "session_id": body.session_id,
                "thread_id": body.thread_id, "principal": body.principal,
                "request_id": body.request_id, "run_id": body.run_id, "tool": body.tool,
                "args_hash": body.args_hash, "data": body.data,
            });
            let reference = serde_json_canonicalizer::to_string(&object).expect("canonical");
            assert_eq!(String::from_utf8(body.canonical()).expect("utf-8"), reference);
        }
    }
}
