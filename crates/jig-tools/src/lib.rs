//! Jig's standard executors: the 27 built-ins of seed 002 §5, the `cli` ([`cli`]),
//! `python`/`node`/`php` ([`script`]) and `http` ([`http`]) kinds, and gert's tool/v0 transports
//! ([`tool_v0`]), with the servers Jig keeps running for them and for upstream MCP servers
//! ([`upstream`]). The contract they implement — the `Executor` trait, invocations, the process
//! runner and the sandbox — is `jig-exec`'s.

mod builtin;
pub mod cli;
pub mod http;
pub mod http_client;
mod redact;
pub mod script;
pub mod tool_v0;
pub mod upstream;

use std::sync::Arc;

use jig_exec::{Executor, Executors};

/// The executors this version of Jig has, by execution kind.
pub fn standard_executors() -> Executors {
    let mut executors = Executors::new();
    executors.insert("builtin", Arc::new(builtin::BuiltinExecutor::default()));
    executors.insert("cli", Arc::new(cli::CliExecutor));
    executors.insert("http", Arc::new(http::HttpExecutor));
    let gert = Arc::new(tool_v0::GertExecutor::default());
    for kind in ["stdio", "jsonrpc", "mcp"] {
        executors.insert(kind, Arc::clone(&gert) as Arc<dyn Executor>);
    }
    for kind in ["python", "node", "php"] {
        executors.insert(kind, Arc::new(script::ScriptExecutor));
    }
    executors
}
