//! Servers Jig keeps running and talks to: a tool/v0 `jsonrpc` server, and upstream MCP
//! servers (`mcp_servers:` in the manifest, or a tool/v0 `mcp` transport) over stdio or
//! Streamable HTTP. `pool` keeps one per tool file and startup command, `server` starts and
//! speaks to one, `calls` is what a tool asks of it (`jsonrpc`, `tools/call`, `tools/list`),
//! `wire` routes what it writes back, `remote` is the HTTP transport, and
//! `last_words` says why one died.

mod calls;
mod last_words;
mod pool;
mod remote;
mod server;
mod wire;

pub use pool::Servers;
pub use wire::tools_changed;

/// A server's identity in the pool: its tool file and its startup command.
pub(crate) type ServerKey = (String, Vec<String>);
