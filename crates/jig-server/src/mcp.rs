//! `/mcp`: Jig's MCP server over Streamable HTTP, behind the same checks as the API — a foreign
//! `Host` or `Origin` gets 403, a request without a known token 401 — with the token's holder
//! as the person the MCP client acts for.

use axum::Router;
use axum::extract::Request;
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::Response;
use jig_mcp::{Acting, HttpOptions};
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Person, Role};
use crate::state::AppState;

/// Where the MCP endpoint is mounted.
pub const PATH: &str = "/mcp";

/// The MCP endpoint for `state`'s engine; `shutdown` ends its sessions (their event streams
/// would otherwise hold the server open).
pub fn router(state: &AppState, shutdown: CancellationToken) -> Router {
    let service = jig_mcp::http_service(state.engine.clone(), HttpOptions { shutdown });
    Router::new()
        .route_service(PATH, service)
        .layer(from_fn(acting))
        .layer(from_fn_with_state(state.access.clone(), auth::require_person))
}

/// The authenticated person, as the MCP server knows who acts.
async fn acting(mut request: Request, next: Next) -> Response {
    if let Some(person) = request.extensions().get::<Person>().cloned() {
        request.extensions_mut().insert(Acting {
            person: person.name,
            may_run: person.role >= Role::Runner,
            may_approve: person.role >= Role::Approver,
        });
    }
    next.run(request).await
}
