//! Writes: a batch of operations is applied in one transaction — all of it or none — and is on
//! disk when `Store::apply` returns.

mod people;

use serde_json::Value;

pub use people::{PeopleOp, PeopleOutcome};

use crate::packet::NewPacket;
use crate::records::{ApprovalRecord, KeyRecord, KeyState, RunRecord, RunState};

/// One write.
#[derive(Debug, Clone)]
pub enum Op {
    /// Append a packet to the chain.
    Append(NewPacket),
    /// Store a large result once, by its hash (a second identical one is a no-op).
    PutBlob(crate::blob::Blob),
    /// Record a new run.
    CreateRun(Box<RunRecord>),
    /// Move a run to another state.
    SetRun(RunUpdate),
    /// Take an idempotency key for a request, under the key's unique constraint.
    ClaimKey {
        /// The key.
        key: String,
        /// The request taking it.
        request_id: String,
    },
    /// Settle a key held by `request_id`.
    SettleKey {
        /// The key.
        key: String,
        /// The request that holds it.
        request_id: String,
        /// Its new state.
        state: KeyState,
        /// The response, when done.
        response: Option<Value>,
    },
    /// Add to a session's usage (creating the session).
    AddUsage {
        /// The session.
        session_id: String,
        /// Who the session belongs to.
        principal: Option<String>,
        /// Calls to add.
        calls: i64,
        /// Bytes to add.
        bytes: i64,
        /// Milliseconds to add.
        wall_ms: i64,
    },
    /// Record a pending approval.
    CreateApproval(Box<ApprovalRecord>),
    /// Approve or deny a pending approval.
    DecideApproval {
        /// The approval.
        id: String,
        /// Approve (`true`) or deny.
        approve: bool,
        /// SHA-256 of the one-time token, when approving.
        token_hash: Option<String>,
        /// Until when the token is valid.
        expires_us: Option<i64>,
        /// Who decided.
        decided_by: Option<String>,
        /// Everyone who approved, in order (empty on a denial).
        approvers: Vec<String>,
        /// What the decider wrote (a denial's reason, an approval's comment), when given.
        reason: Option<String>,
        /// The decision's packet, appended only if this decision is the one recorded (a
        /// decision that lost a race leaves nothing in the chain).
        packet: Box<NewPacket>,
    },
    /// End a pending approval undecided: expired (`withdrawn: false`) or withdrawn by its
    /// caller. Only if it is still pending; its waiting run ends the same way, and `packet` is
    /// appended only then.
    CloseApproval {
        /// The approval.
        id: String,
        /// Withdrawn by its caller (`false`: expired).
        withdrawn: bool,
        /// The packet saying so.
        packet: Box<NewPacket>,
    },
    /// One more person approves an approval several must give, before the last: `after`
    /// becomes its approvers only if it is still pending with exactly `before` (two people
    /// approving at once cannot both be counted on the same list).
    SecondApproval {
        /// The approval.
        id: String,
        /// Its approvers as read.
        before: Vec<String>,
        /// Its approvers with this person added.
        after: Vec<String>,
        /// The approval's packet, appended only if it is counted.
        packet: Box<NewPacket>,
    },
    /// Mark a run a dead process left unfinished as failed, and append `packet` saying so —
    /// both only if the run is still unfinished when the transaction looks (its owner may have
    /// finished it since recovery read it).
    AbandonRun {
        /// The run's request.
        request_id: String,
        /// The run's error text.
        error: String,
        /// The `tool.call.failed` packet.
        packet: NewPacket,
    },
    /// Record a runbook journal entry under `(run_id, key)` unless one is there, and append
    /// `packet` only if this entry is the one recorded (first writer wins).
    Journal {
        /// The runbook run.
        run_id: String,
        /// The entry's key in the run.
        key: String,
        /// The entry.
        entry: Value,
        /// The packet that records it in the chain, if any.
        packet: Option<NewPacket>,
    },
    /// Create or update a runbook run's summary row.
    SaveRunbookRun(Box<crate::records::RunbookRunRecord>),
    /// Use an approval's token for the request it was given for.
    ConsumeApproval {
        /// SHA-256 of the presented token.
        token_hash: String,
        /// SHA-256 of the request it is presented with.
        request_hash: String,
        /// The request using it: the waiting run is `resumed_as` it.
        by_request: String,
    },
    /// Use the approval a person gave to exactly this request (tool, arguments, session,
    /// principal), without its token: the retry of a caller that cannot carry one (an MCP
    /// client). The approval must still be approved, unexpired, unused and in the chain.
    ConsumeApprovedRequest {
        /// SHA-256 of the request.
        request_hash: String,
        /// The request using it: the waiting run is `resumed_as` it.
        by_request: String,
    },
    /// Record a job a call handed to a scheduler.
    CreateJob(Box<crate::JobRecord>),
    /// Move a job's run on — to running (from queued), or to its final state (from any
    /// unfinished one) — only if the run is still there when the transaction looks (several
    /// processes may follow the same job); append `packet` only then. A final state also closes
    /// the job and gives the call's idempotency key the final response.
    MoveJobRun {
        /// The run's change (its request id, state, response, error, duration).
        update: RunUpdate,
        /// The packet recording the change.
        packet: NewPacket,
    },
    /// Change people's state (sign-ins, sessions, grants, tokens), with the packets a token's
    /// change is recorded by.
    People(PeopleOp),
}

impl Op {
    /// The packet of a write that may record a call's end (a result, a failure, a job handed
    /// over), for the store to vouch for it before it is written ([`crate::BindingKey::vouch`]).
    pub(crate) fn result_packet_mut(&mut self) -> Option<&mut NewPacket> {
        match self {
            Self::Append(packet)
            | Self::AbandonRun { packet, .. }
            | Self::MoveJobRun { packet, .. } => Some(packet),
            _ => None,
        }
    }
}

/// A run's state change.
#[derive(Debug, Clone, Default)]
pub struct RunUpdate {
    /// The run.
    pub request_id: String,
    /// The new state.
    pub state: Option<RunState>,
    /// The deciding rule.
    pub rule: Option<String>,
    /// Execution time.
    pub duration_ms: Option<i64>,
    /// The response returned.
    pub response: Option<Value>,
    /// What went wrong.
    pub error: Option<String>,
    /// The request whose result was replayed.
    pub replayed_from: Option<String>,
    /// The call waiting for approval this run executes.
    pub resumes: Option<String>,
}

/// What one operation did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A packet was appended.
    Appended {
        /// Its seq.
        seq: i64,
        /// Its hash.
        hash: String,
    },
    /// The key was taken.
    Claimed,
    /// The key was already held or settled.
    KeyTaken(KeyRecord),
    /// An approval was decided (`false`: it was not pending).
    Decided(bool),
    /// A token was accepted for this request.
    Consumed {
        /// The approval.
        approval: jig_model::ApprovalId,
        /// The request that waited for it, when known (its run now follows this one).
        waiting: Option<String>,
    },
    /// A pending approval was ended undecided (`false`: it was not pending).
    Closed(bool),
    /// A token was refused.
    TokenRefused(TokenRefusal),
    /// A run was abandoned (`false`: it had finished meanwhile; nothing was written).
    Abandoned(bool),
    /// A job's run was moved on (`false`: it was not in an expected state; nothing written).
    Moved(bool),
    /// A journal entry: the one now recorded, and whether it was this operation's.
    Journaled {
        /// This operation's entry was recorded (`false`: an earlier one stands).
        inserted: bool,
        /// The recorded entry.
        entry: Value,
    },
    /// What a change to people's state did.
    People(PeopleOutcome),
    /// Done, nothing to report.
    Done,
}

/// Why a presented approval token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    /// No approval has this token (forged, or mistyped).
    Unknown,
    /// The token was already used.
    Used,
    /// The token's time is over.
    Expired,
    /// The approvals table says approved, but no intact packet in the chain does.
    NotInChain,
    /// The token belongs to a different request (tool, arguments or session).
    Mismatch,
}

impl TokenRefusal {
    /// A sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Unknown => "no approval has this token",
            Self::Used => "the approval token was already used",
            Self::Expired => "the approval token has expired",
            Self::Mismatch => {
                "the approval token is for a different request (other arguments, another principal, or the tool or its code changed since it was approved)"
            }
            Self::NotInChain => {
                "the approval is not in the audit chain (the approvals table was edited)"
            }
        }
    }
}
