//! Serving the router on a TCP address: loopback unless asked otherwise.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::auth::{Access, Guard, PublicName, Users};
use crate::{AppState, router};

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    state: AppState,
    /// The address it listens on.
    pub addr: SocketAddr,
}

impl Bound {
    /// Bind `addr` for `engine`; `users` hold the tokens; `public` are the names people reach
    /// it by behind a proxy (their `Host` and origin are accepted too).
    pub async fn bind(
        addr: SocketAddr,
        engine: Arc<jig_engine::Engine>,
        users: Users,
        project: String,
        public: &[PublicName],
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let mut hosts: Vec<String> = Vec::new();
        if !addr.ip().is_loopback() {
            hosts.push(addr.to_string());
        }
        let guard = Guard::loopback(addr.port(), &hosts, public);
        let people = Some(crate::people::People::new(Arc::clone(&engine)));
        let access = Access { users: Arc::new(users), guard, people };
        Ok(Self { listener, state: AppState::new(engine, access, project), addr })
    }

    /// Serve the workbench, its API and the MCP endpoint until `shutdown` resolves.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let sessions = CancellationToken::new();
        let app =
            router(self.state.clone()).merge(crate::mcp::router(&self.state, sessions.clone()));
        serve(self.listener, app, shutdown, sessions).await
    }

    /// Serve only the MCP endpoint (`jig mcp --http`) until `shutdown` resolves.
    pub async fn run_mcp(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let sessions = CancellationToken::new();
        let app = crate::mcp::router(&self.state, sessions.clone());
        serve(self.listener, app, shutdown, sessions).await
    }
}

/// Serve `app`; on `shutdown`, end the MCP sessions first (their streams stay open otherwise).
async fn serve(
    listener: TcpListener,
    app: axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    sessions: CancellationToken,
) -> std::io::Result<()> {
    let shutdown = async move {
        shutdown.await;
        sessions.cancel();
    };
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}
