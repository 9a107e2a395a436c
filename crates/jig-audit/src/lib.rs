//! Jig's audit store.
//!
//! Every request, decision and result of every call is a [`Packet`] in one append-only chain:
//! each packet's hash covers its content and the previous packet's hash, UPDATE and DELETE on
//! packets are refused by triggers, and [`Store::verify`] names the first packet that does not
//! check out. Beside the chain, the store keeps the state Jig needs to act on it: runs and their
//! states, idempotency keys (claimed under a unique constraint before any side effect), approvals
//! with hashed one-time tokens, and session usage.
//!
//! SQLite is the default (`.jig/audit.db`: WAL, `synchronous=FULL`, write transactions with
//! `BEGIN IMMEDIATE`, group commit); PostgreSQL serves teams with the same schema and code.

mod apply;
mod bell;
mod binding;
pub mod blob;
mod chain;
pub mod checkpoint;
mod dialect;
mod error;
pub mod feed;
pub mod forward;
mod jobs;
mod journal_ops;
mod ops;
mod own;
pub mod owner;
mod packet;
mod payload;
mod people;
mod query;
mod reads;
mod records;
mod rollup;
mod rows;
mod runbooks;
mod series;
pub mod signed_head;
mod statement;
mod store;
pub mod time;
mod verify;
mod writer;

pub use binding::BindingKey;
pub use dialect::Dialect;
pub use error::AuditError;
pub use jobs::{JobRecord, JobSummary};
pub use ops::{Op, Outcome, PeopleOp, PeopleOutcome, RunUpdate, TokenRefusal};
pub use packet::{GENESIS, NewPacket, Packet, PacketKind};
pub use payload::{
    ApprovalDecided, CallDecided, CallMoved, CallPendingApproval, JournalSeal, RecordedError,
    TokenChanged,
};

pub use query::{MAX_PAGE, RunPage, RunQuery, RunTotal};
pub use records::{
    ApiToken, ApprovalRecord, ApprovalState, DesktopGrant, KeyRecord, KeyState, ReplayIdentity,
    RunRecord, RunState, RunbookRunRecord, SessionUsage, SignIn, WebSession,
};
pub use rollup::Rollup;
pub use series::{Count, Line, MAX_BUCKETS, Series, SeriesQuery, ToolLine};
pub use store::{Flush, Integrity, Recovery, SYNC_WINDOW, Store};
pub use verify::Verification;
