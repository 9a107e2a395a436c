//! Jig's MCP server: the registry's tools for agents and MCP clients, under the same policy,
//! approvals and audit chain as a person at the workbench.
//!
//! The server is a mapping and nothing more. Every `tools/call` is one [`Engine::dispatch`]
//! (validation, the policy's decision, approvals, execution, the audit record); tools are
//! listed from the registry with their resolved schemas and annotations derived from their
//! definitions ([`catalog`]); results keep their structure ([`outcome`]); progress and tool
//! logs come from the engine's events ([`live`]); a call that needs approval asks the person
//! at the client through elicitation when it can ([`approval`]), as are the inputs only a
//! person (or the client's model) gives ([`asked`]). Audit runs, and what the
//! project serves through read-only tools, are resources ([`resources`]) a client may
//! subscribe to; runbooks are prompts ([`prompts`]).
//!
//! Who acts is known, never typed in: the OS user behind a stdio server, the holder of the
//! token behind an HTTP one; the client's own name is recorded beside it
//! (`alice (via claude-code)`, [`jig_engine::agent_principal`]).
//!
//! [`Engine::dispatch`]: jig_engine::Engine::dispatch

pub mod approval;
pub mod asked;
pub mod catalog;
mod handler;
pub mod live;
pub mod outcome;
pub mod prompts;
pub mod resources;
mod resumable;
pub mod stdio;
mod subscriptions;
pub mod transport;
mod waiting;

pub use handler::JigMcp;
pub use transport::{Acting, HttpOptions, http_service, serve_stdio};

/// The protocol revisions Jig speaks: those with the `initialize` handshake, up to 2025-11-25
/// (the revision Jig implements; its elicitation is a request from server to client).
pub fn protocol_versions() -> &'static [rmcp::model::ProtocolVersion] {
    rmcp::model::ProtocolVersion::known_up_to(&rmcp::model::ProtocolVersion::V_2025_11_25)
}
