//! The stateful records beside the packet chain: runs, idempotency keys, approvals, sessions,
//! and people's state (`people`).

mod people;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use people::{ApiToken, DesktopGrant, SignIn, WebSession};

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        // Every spelling is snake_case; said once for the schema (the per-variant renames are
        // macro literals, which the schema derive cannot read).
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// The stored spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }

            /// Parse the stored spelling.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some(Self::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// Where a run is in its life (issue: created → queued → running → an end state).
    RunState {
        /// Received.
        Created = "created",
        /// Accepted, waiting to run.
        Queued = "queued",
        /// Running now.
        Running = "running",
        /// Finished with a valid result.
        Succeeded = "succeeded",
        /// Finished with an error, or never finished.
        Failed = "failed",
        /// Refused by policy.
        Denied = "denied",
        /// Waiting for a person.
        PendingApproval = "pending_approval",
        /// Stopped on request.
        Cancelled = "cancelled",
        /// Was waiting for a person, who approved: waits for its caller to run it (the run
        /// that does is `resumed_as`, and this run then takes that run's state).
        Approved = "approved",
        /// Was waiting for a person; nobody decided within the approval's time.
        Expired = "expired",
        /// Was waiting for a person; its caller withdrew it.
        Withdrawn = "withdrawn",
    }
}

impl RunState {
    /// Whether the run is over.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Succeeded
                | Self::Failed
                | Self::Denied
                | Self::Cancelled
                | Self::PendingApproval
                | Self::Approved
                | Self::Expired
                | Self::Withdrawn
        )
    }
}

string_enum! {
    /// The state of an idempotency key.
    KeyState {
        /// A call holding the key is executing.
        Pending = "pending",
        /// The call finished; its response is recorded.
        Done = "done",
        /// The call died without a response (found at start-up); the key may be taken over.
        Failed = "failed",
    }
}

string_enum! {
    /// The state of an approval.
    ApprovalState {
        /// Waiting for a person.
        Pending = "pending",
        /// Approved; its token has not been used.
        Approved = "approved",
        /// Refused.
        Denied = "denied",
        /// Approved, and its token was used.
        Consumed = "consumed",
        /// Nobody decided before it expired.
        Expired = "expired",
        /// Its caller withdrew it before anyone decided.
        Withdrawn = "withdrawn",
    }
}

/// One call as the store knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunRecord {
    /// The request (unique per call).
    pub request_id: String,
    /// The deterministic run identity (shared by calls with the same tool, version, policy and
    /// arguments).
    pub run_id: String,
    /// The tool id.
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// The session.
    pub session_id: Option<String>,
    /// The thread.
    pub thread_id: Option<String>,
    /// Who called.
    pub principal: Option<String>,
    /// `params_hash`.
    pub params_hash: String,
    /// `policy_hash` at the time of the call.
    pub policy_hash: String,
    /// Whether the tool is deterministic.
    pub deterministic: bool,
    /// Where the run is.
    pub state: RunState,
    /// The policy rule that decided.
    pub rule: Option<String>,
    /// When it was created (µs since the epoch).
    pub created_us: i64,
    /// When it last changed.
    pub updated_us: i64,
    /// Execution time.
    pub duration_ms: Option<i64>,
    /// The response returned (a `ToolResponse`, redacted).
    pub response: Option<Value>,
    /// What went wrong.
    pub error: Option<String>,
    /// The request whose result this one replayed.
    pub replayed_from: Option<String>,
    /// The process running the call (`host/pid/start`), see [`crate::owner`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// After this time (µs) an unfinished run is abandoned, whatever its owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_us: Option<i64>,
    /// Who asked, as principals are compared (an agent as its person): whose replays it serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// The tool's definition hash when it was called: a replay is served only under the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    /// A call that waited for approval: the request that ran it once approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_as: Option<String>,
    /// The call that waited for approval this run executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumes: Option<String>,
}

/// What a recorded run must share with a call to answer it as a replay (seeds 001 and 003):
/// the run id, the tool's definition, and — unless the policy shares the tool's results — the
/// person who asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayIdentity<'a> {
    /// The run id.
    pub run_id: &'a str,
    /// The tool's definition hash.
    pub definition: &'a str,
    /// The person (a canonical principal); `None` when results are shared.
    pub person: Option<&'a str>,
}

impl RunRecord {
    /// Apply an update as `Op::SetRun` would (only the fields it sets).
    pub fn apply(&mut self, update: &crate::RunUpdate) {
        if let Some(state) = update.state {
            self.state = state;
        }
        if let Some(rule) = &update.rule {
            self.rule = Some(rule.clone());
        }
        if let Some(duration_ms) = update.duration_ms {
            self.duration_ms = Some(duration_ms);
        }
        if let Some(response) = &update.response {
            self.response = Some(response.clone());
        }
        if let Some(error) = &update.error {
            self.error = Some(error.clone());
        }
        if let Some(replayed_from) = &update.replayed_from {
            self.replayed_from = Some(replayed_from.clone());
        }
        if let Some(resumes) = &update.resumes {
            self.resumes = Some(resumes.clone());
        }
    }
}

/// An idempotency key's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// The key: `thread + tool + params_hash`, or the request id.
    pub key: String,
    /// Its state.
    pub state: KeyState,
    /// The request that holds (or held) it.
    pub request_id: String,
    /// The response recorded when done.
    pub response: Option<Value>,
}

/// An approval, pending or decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalRecord {
    /// Its id (shown to people, used on `approve`/`deny`).
    pub id: jig_model::ApprovalId,
    /// The keyed hash of the exact request (tool, its code, canonical arguments, session,
    /// principal) it is for.
    pub request_hash: String,
    /// The request that waits for it (its run ends in what happens to the approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// The session of the request.
    pub session_id: Option<String>,
    /// Who asked.
    pub principal: Option<String>,
    /// The request, redacted.
    pub request: Value,
    /// The rule that asked for approval.
    pub rule: String,
    /// Why.
    pub reason: String,
    /// Its state.
    pub state: ApprovalState,
    /// Until when an approval's token is valid (µs since the epoch).
    pub expires_us: Option<i64>,
    /// Who decided (the last approver, when several must approve).
    pub decided_by: Option<String>,
    /// How many different people must approve (a runbook's `min_approvers`; 1 otherwise).
    pub required: u32,
    /// Who has approved so far, in order (all of them once it is approved).
    pub approvers: Vec<String>,
    /// When it was asked for.
    pub created_us: i64,
    /// When it was decided.
    pub decided_us: Option<i64>,
    /// When its token was used.
    pub consumed_us: Option<i64>,
    /// What the person who decided wrote: a denial's reason, an approval's comment.
    #[serde(default)]
    pub note: Option<String>,
    /// The request in clear — arguments and argv exactly as they will run — while it is
    /// pending, for the people who may decide it; `request` is what everyone else sees. Never
    /// serialized: [`ApprovalRecord::seen_by`] puts it where a decider reads it.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub clear_request: Option<Value>,
}

impl ApprovalRecord {
    /// The record as one viewer sees it: the request in clear for someone who may decide it
    /// (while it is pending), else with its secrets redacted.
    #[must_use]
    pub fn seen_by(mut self, may_decide: bool) -> Self {
        let clear = self.clear_request.take();
        if may_decide && let Some(clear) = clear {
            self.request = clear;
        }
        self
    }
}

/// What a session has used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionUsage {
    /// Calls.
    pub calls: i64,
    /// Bytes of arguments and results.
    pub bytes: i64,
    /// Milliseconds of execution.
    pub wall_ms: i64,
}

/// A runbook run as the store lists it (its state proper is its journal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookRunRecord {
    /// The run's id.
    pub id: String,
    /// The runbook's reference name.
    pub runbook: String,
    /// The runbook's hash when the run began.
    pub hash: String,
    /// `completed`, `failed`, `error`, `denied` or `paused`.
    pub status: String,
    /// Who started it.
    pub started_by: Option<String>,
    /// When it began (µs since the epoch).
    pub created_us: i64,
    /// When it last moved.
    pub updated_us: i64,
    /// Where it stands: the outcome, the failure, or the steps it waits at.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub summary: Option<Value>,
}
