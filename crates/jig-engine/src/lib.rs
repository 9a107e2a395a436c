//! Jig's engine: the one pipeline every call takes, so that no tool runs without validation, a
//! policy decision and an audit record — and the audit's one writer. Surfaces do not call it
//! to act; they act through `jig-app`, which calls it.
//!
//! [`Engine::open`] loads a project (fail-closed), compiles its policy and opens the audit
//! store; [`Engine::dispatch`] runs one call through the whole pipeline; [`Engine::select`]
//! picks a tool for an intent; [`Engine::approve`] and [`Engine::deny`] decide pending calls.

mod approvals;
mod artifacts;
mod background;
mod cancel;
mod decode;
mod dispatch;
mod emit;
mod engine;
mod error;
mod events;
mod follow;
pub mod history;
mod identity;
mod job_log;
mod jobs;
mod metrics;
mod notify;
mod os_user;
mod outbound;
mod people;
pub mod policy_view;
mod presets;
mod preview;
mod reload;
mod select;
mod tokens;
mod trust;
mod upstream;
mod validation;
mod walk_reads;
mod walk_records;
mod what_if;

pub use background::{BACKGROUND_CALLS, START_WAIT};
pub use decode::{decode_request, parse_json_strict};
pub use engine::{
    Approval, CallContext, CommitHook, Engine, EngineOptions, check_state_dir, default_db,
};
pub use error::EngineError;
pub use events::{
    ApprovalEvent, Audience, Event, EventBus, RegistryEvent, RunbookEvent, Subscription, Viewer,
};
pub use identity::{agent_principal, canonical_principal, idempotency_key, new_id};
pub use jig_outbound::client::http_client;
pub use jig_outbound::notice::{FLUSH_WITHIN, notices_sent};
pub use jig_outbound::{Forwarder, Progress, Stop, telemetry};
pub use job_log::JobLog;
pub use metrics::{LatencySummary, MetricsSnapshot};
pub use os_user::os_user;
pub use people::People;
pub use presets::{MAX_PRESET_BYTES, Preset, Presets};
pub use preview::Preview;
pub use select::{Candidate, Intent, ToolSelection};
pub use upstream::{Discovery, ServerFound};
pub use validation::{Problem, ValidationResult};
pub use walk_reads::WalkReads;
pub use walk_records::WalkRecord;
pub use what_if::{MAX_WHAT_IF, WhatIf, WhatIfCall, parse_draft};

pub use history::{History, Reader, RunDetail};
/// Time as the audit records it (microseconds since the epoch) and as people read it.
pub use jig_audit::time;
/// The record types the history hands out.
pub use jig_audit::{ApprovalRecord, ApprovalState, Packet, PacketKind, RunRecord, RunState};
/// Calls over time (the metrics charts).
pub use jig_audit::{Count, Line, Series, SeriesQuery, ToolLine};
pub use jig_exec::Cancel;
pub use jig_load::watch::WatchHandle;
pub use jig_model::envelope::{ToolRequest, ToolResponse};
