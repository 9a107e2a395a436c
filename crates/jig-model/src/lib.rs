//! Jig's wire and file contract. No I/O lives here.
//!
//! - File formats: [`toolpack`] (seed 000), [`gert_tool`] (gert `tool/v0`), [`manifest`]
//!   (`jig.yaml` / `gert.yaml`), [`runbook`] (v0, v1, kernel/v0 → one [`runbook::Runbook`]),
//!   [`scenario`]. Their JSON Schemas come from [`file_schemas`].
//! - The registry entry every surface shows: [`tool_def::ToolDef`].
//! - Seed 002's envelopes ([`envelope`]) and the error codes of DESIGN.md §6 ([`ErrorCode`]).
//! - Diagnostics ([`diagnostic`]) and canonical JSON with SHA-256 ([`canonical`]).

pub mod canonical;
pub mod diagnostic;
pub mod duration;
pub mod envelope;
mod error_code;
pub mod file_schemas;
pub mod gert_tool;
pub mod ids;
pub mod manifest;
pub mod mcp_server;
pub mod plan;
pub mod policy;
pub mod prepared;
pub mod protected_path;
pub mod runbook;
pub mod scenario;
pub mod tool_def;
pub mod toolpack;
pub mod verdict;

pub use canonical::Sha256Hash;
pub use diagnostic::{Diagnostic, Severity};
pub use error_code::ErrorCode;
pub use ids::ApprovalId;
pub use tool_def::ToolDef;
pub use toolpack::{EffectTag, Risk, SideEffect};
pub use verdict::Verdict;
