//! The payloads of the packets Jig reads back, as types: what the writer puts in a packet and
//! what a reader finds there are one definition, not a `json!` on one side and `data["…"]` on
//! the other. A packet's hash covers its canonical JSON, so a field added here must be optional
//! (older packets lack it) and skipped when empty (the bytes of a packet written today are
//! what they were).

use jig_model::policy::LayerKind;
use jig_model::runbook::kernel::GovernanceAction;
use jig_model::{ApprovalId, Verdict};
use serde::{Deserialize, Serialize};

use crate::RunState;
use crate::packet::{Packet, PacketKind};

/// `approval.decided`: someone (or the clock) decided an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalDecided {
    /// The approval.
    pub approval_id: ApprovalId,
    /// How it came out.
    pub verdict: Verdict,
    /// Why: a denial's reason, an approval's validity, "nobody decided in time".
    #[serde(default)]
    pub reason: String,
    /// Who asked for the call (`null` when nobody was named).
    #[serde(default)]
    pub requested_by: Option<String>,
    /// Who named the decider when the name was not known (`--as`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asserted_by: Option<String>,
    /// An approval's note to who asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The SHA-256 of the one-time token an approval granted (the chain binds the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_hash: Option<String>,
    /// The request an approval is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_hash: Option<String>,
    /// Everyone who has approved so far (a seconded approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<Vec<String>>,
    /// How many approvals the rule asks for (a seconded approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<u32>,
}

impl ApprovalDecided {
    /// A decision of `verdict` on `approval_id`, asked by `requested_by`, for `reason`.
    pub fn new(
        approval_id: &ApprovalId,
        verdict: Verdict,
        reason: &str,
        requested_by: Option<&str>,
    ) -> Self {
        Self {
            approval_id: approval_id.clone(),
            verdict,
            reason: reason.to_owned(),
            requested_by: requested_by.map(str::to_owned),
            asserted_by: None,
            note: None,
            token_hash: None,
            request_hash: None,
            approvers: None,
            required: None,
        }
    }

    /// As a packet's data.
    pub fn to_data(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Whether this grants `token_hash` for `request_hash` on `approval_id`: what the chain
    /// must say before an approvals row's token is believed.
    pub fn grants(&self, approval_id: &str, token_hash: &str, request_hash: &str) -> bool {
        self.approval_id == approval_id
            && self.verdict == Verdict::Approved
            && self.token_hash.as_deref() == Some(token_hash)
            && self.request_hash.as_deref() == Some(request_hash)
    }
}

/// `tool.call.pending_approval`: a call waits for approval `approval_id`, by `rule`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallPendingApproval {
    /// The approval it waits for.
    pub approval_id: ApprovalId,
    /// The rule that asks.
    #[serde(default)]
    pub rule: String,
    /// Why the rule asks.
    #[serde(default)]
    pub reason: String,
}

impl CallPendingApproval {
    /// As a packet's data.
    pub fn to_data(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// `token.minted` and `token.revoked`: a personal token made or revoked — never the token or
/// its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenChanged {
    /// The token's id.
    pub token_id: String,
    /// What its owner calls it.
    pub name: String,
    /// Whose it is.
    pub owner: String,
    /// What it may do.
    pub role: String,
    /// When it ends (µs; `null`: never).
    pub expires_us: Option<i64>,
    /// Who revoked it (a revocation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Why, when a refused sign-in revoked it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl TokenChanged {
    /// As a packet's data.
    pub fn to_data(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// `tool.call.decision`: what the policy said of a call, under which policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallDecided {
    /// `allow`, `require-approval` or `deny`.
    pub action: GovernanceAction,
    /// The rule that decided.
    #[serde(default)]
    pub rule: String,
    /// Why, for people.
    #[serde(default)]
    pub reason: String,
    /// The hash of the policy that decided.
    #[serde(default)]
    pub policy_hash: String,
    /// The caller's note, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The policy layer whose rule decided; written only when a layer above the project did.
    #[serde(default, skip_serializing_if = "LayerKind::is_project")]
    pub layer: LayerKind,
}

impl CallDecided {
    /// As a packet's data.
    pub fn to_data(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// What a reader takes from `tool.call.result`, `tool.call.failed` and `tool.call.state`:
/// where the call went, and the first error an end names. (Each writer adds its own fields —
/// a replay's source, a job's handle — that no reader here needs.)
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CallMoved {
    /// The state it reached; older results and failures do not say (succeeded, failed).
    #[serde(default)]
    pub state: Option<RunState>,
    /// The errors a failure names (a success writes `null` or none).
    #[serde(default)]
    pub errors: Option<Vec<RecordedError>>,
}

impl CallMoved {
    /// The first error it names.
    pub fn first_error(&self) -> Option<&RecordedError> {
        self.errors.as_deref()?.first()
    }
}

/// One error as an ended call's packet records it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RecordedError {
    /// Its stable code (`E_…`).
    #[serde(default)]
    pub code: String,
    /// Its message.
    #[serde(default)]
    pub message: String,
}

/// What a runbook packet says of the journal row it puts in the chain: the row's key and the
/// SHA-256 of its canonical JSON, so a row changed behind the chain's back is found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalSeal {
    /// The journal row's key.
    pub key: String,
    /// The SHA-256 (hex) of the row's canonical JSON.
    pub hash: String,
}

impl JournalSeal {
    /// The seal of `entry` under `key`.
    pub fn of(key: &str, entry: &serde_json::Value) -> Self {
        Self { key: key.to_owned(), hash: jig_model::Sha256Hash::of_json(entry).to_hex() }
    }

    /// Where a packet keeps it.
    pub(crate) const FIELD: &'static str = "journal";

    /// The seal a runbook packet's data carries, if any.
    pub fn in_data(data: &serde_json::Value) -> Option<Self> {
        Self::deserialize(data.get(Self::FIELD)?).ok()
    }
}

impl Packet {
    /// The policy's decision, when this is a `tool.call.decision` packet that reads as one.
    pub fn call_decided(&self) -> Option<CallDecided> {
        self.payload(PacketKind::CallDecision)
    }

    /// Where the call went, when this is a result, a failure or a state change: a result
    /// that does not say succeeded, a failure that does not say failed.
    pub fn call_moved(&self) -> Option<CallMoved> {
        let (kind, default) = match PacketKind::parse(&self.kind)? {
            PacketKind::CallResult => (PacketKind::CallResult, Some(RunState::Succeeded)),
            PacketKind::CallFailed => (PacketKind::CallFailed, Some(RunState::Failed)),
            PacketKind::CallState => (PacketKind::CallState, None),
            _ => return None,
        };
        let mut moved: CallMoved = self.payload(kind)?;
        moved.state = moved.state.or(default);
        Some(moved)
    }

    /// The journal row a runbook packet seals, if it seals one.
    pub fn journal_seal(&self) -> Option<JournalSeal> {
        self.kind.starts_with("runbook.").then(|| JournalSeal::in_data(&self.data)).flatten()
    }
    /// This packet's token change, when it is a `token.minted` or `token.revoked` packet.
    pub fn token_changed(&self) -> Option<TokenChanged> {
        self.payload(PacketKind::TokenMinted).or_else(|| self.payload(PacketKind::TokenRevoked))
    }

    /// This packet's decision, when it is an `approval.decided` packet that reads as one.
    pub fn approval_decided(&self) -> Option<ApprovalDecided> {
        self.payload(PacketKind::ApprovalDecided)
    }

    /// What this call waits for, when it is a `tool.call.pending_approval` packet.
    pub fn pending_approval(&self) -> Option<CallPendingApproval> {
        self.payload(PacketKind::CallPendingApproval)
    }

    fn payload<T: serde::de::DeserializeOwned>(&self, kind: PacketKind) -> Option<T> {
        // Read in place: the follower asks this of every packet another process appends.
        (self.kind == kind.as_str()).then(|| T::deserialize(&self.data).ok()).flatten()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_decision_writes_the_fields_it_always_wrote_and_no_empty_ones() {
        let a1 = ApprovalId::new("a1");
        let denied = ApprovalDecided::new(&a1, Verdict::Denied, "no", None);
        assert_eq!(
            denied.to_data(),
            json!({ "approval_id": "a1", "verdict": "denied", "reason": "no", "requested_by": null })
        );
        let mut approved = ApprovalDecided::new(&a1, Verdict::Approved, "ok", Some("alice"));
        approved.token_hash = Some("t".to_owned());
        approved.request_hash = Some("r".to_owned());
        assert!(approved.grants("a1", "t", "r"));
        assert!(!approved.grants("a1", "t", "other") && !denied.grants("a1", "t", "r"));
        let back: ApprovalDecided = serde_json::from_value(approved.to_data()).unwrap();
        assert_eq!(back, approved);
    }

    #[test]
    fn a_token_change_writes_what_it_always_wrote() {
        let mut change = TokenChanged {
            token_id: "t1".into(),
            name: "laptop".into(),
            owner: "ada".into(),
            role: "runner".into(),
            expires_us: None,
            by: None,
            reason: None,
        };
        let minted = json!({ "token_id": "t1", "name": "laptop", "owner": "ada", "role": "runner", "expires_us": null });
        assert_eq!(change.to_data(), minted);
        change.by = Some("bob".into());
        change.reason = Some("no group".into());
        let mut revoked = minted;
        revoked["by"] = json!("bob");
        revoked["reason"] = json!("no group");
        assert_eq!(change.to_data(), revoked);
    }

    #[test]
    fn a_waiting_call_names_its_approval_rule_and_reason() {
        let waits = CallPendingApproval {
            approval_id: ApprovalId::new("a1"),
            rule: "rules[0]".to_owned(),
            reason: "writes".to_owned(),
        };
        assert_eq!(
            waits.to_data(),
            json!({ "approval_id": "a1", "rule": "rules[0]", "reason": "writes" })
        );
    }
}
