//! Where the server listens: stdio (`jig mcp`), or Streamable HTTP (`jig mcp --http`, and
//! `/mcp` in `jig serve`), behind jig-server's token, `Host` and `Origin` checks.

use std::sync::Arc;

use jig_engine::Engine;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use crate::JigMcp;

/// Who acts, as the transport established it. Over HTTP the server's authentication puts one
/// in the request's extensions for every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acting {
    /// The person (the OS user; a token's holder).
    pub person: String,
    /// Whether they may run tools (not a viewer).
    pub may_run: bool,
    /// Whether they may decide approvals (the policy still decides whose).
    pub may_approve: bool,
}

impl Acting {
    /// The person at this machine, who may do everything the policy allows.
    pub fn owner(person: impl Into<String>) -> Self {
        Self { person: person.into(), may_run: true, may_approve: true }
    }

    /// Nobody: what a request without established identity gets (never runs anything).
    fn nobody() -> Self {
        Self { person: "anonymous".to_owned(), may_run: false, may_approve: false }
    }
}

/// Serve MCP on stdin and stdout as `person` until the client goes away.
pub async fn serve_stdio(engine: Arc<Engine>, person: String) -> std::io::Result<()> {
    let server = JigMcp::new(engine, Acting::owner(person))
        .serve(crate::stdio::streams())
        .await
        .map_err(std::io::Error::other)?;
    server.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// How the HTTP service runs.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Ends every session when cancelled (the server is shutting down).
    pub shutdown: CancellationToken,
}

/// How long a client waits before it reconnects to a stream that ended without its answer.
pub const RESUME_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// The Streamable HTTP service (sessions with `Mcp-Session-Id`, SSE streams). It expects the
/// caller to have checked the token, `Host` and `Origin`, and put [`Acting`] in the request's
/// extensions; `MCP-Protocol-Version` is checked here.
pub fn http_service(
    engine: Arc<Engine>,
    options: HttpOptions,
) -> StreamableHttpService<JigMcp, LocalSessionManager> {
    // Host and Origin are checked, with the exact port, by the server in front of this.
    // A stream cut on purpose (`policy.mcp.stream_hold`) is resumed this soon: the hint every
    // stream starts with.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_sse_retry(Some(RESUME_AFTER))
        .with_cancellation_token(options.shutdown);
    let mut sessions = LocalSessionManager::default()
        .with_event_store(Arc::new(crate::resumable::Events::default()));
    sessions.session_config.sse_retry = Some(RESUME_AFTER);
    StreamableHttpService::new(
        move || Ok(JigMcp::new(Arc::clone(&engine), Acting::nobody())),
        Arc::new(sessions),
        config,
    )
}
