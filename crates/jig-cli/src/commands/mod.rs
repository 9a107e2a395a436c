//! One module per command.

pub mod approvals;
pub mod audit;
pub mod call;
pub mod doctor;
pub mod forward;
pub mod list;
pub mod mcp;
pub mod mcp_discover;
pub mod mcp_import;
pub mod policy;
pub mod publish;
pub mod resident;
pub mod runbook;
pub mod runs;
pub mod select;
pub mod serve;
pub mod show;
pub mod trust;
pub mod validate;
