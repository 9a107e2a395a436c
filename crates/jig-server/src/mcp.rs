//! `/mcp`: Jig's MCP server over Streamable HTTP, behind the same checks as the API — a foreign
//! `Host` or `Origin` gets 403, a request without a known token 401 — with the token's holder
//! as the person the MCP client acts for.
//!
//! A session (`Mcp-Session-Id`) belongs to the token that opened it: another token presenting
//! its id is refused (403), so nobody acts inside someone else's session — their budget, their
//! approvals, their name in the record.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use jig_mcp::{Acting, HttpOptions};
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Person, Role};
use crate::error::ApiError;
use crate::state::AppState;

/// The header naming a session.
const SESSION: &str = "mcp-session-id";

/// At most this many sessions are remembered; the oldest binding goes first, and its session is
/// then refused as unknown (never left open to any token).
const MAX_SESSIONS: usize = 10_000;

/// Which token (its SHA-256) opened each session.
#[derive(Debug, Clone, Default)]
struct Sessions(Arc<Mutex<Owners>>);

/// Session id → token hash, and the ids in the order they were opened.
#[derive(Debug, Default)]
struct Owners {
    by_session: HashMap<String, String>,
    order: std::collections::VecDeque<String>,
}

impl Sessions {
    fn owner(&self, id: &str) -> Option<String> {
        self.0.lock().ok()?.by_session.get(id).cloned()
    }

    fn bind(&self, id: &str, token: &str) {
        let Ok(mut owners) = self.0.lock() else { return };
        if owners.by_session.insert(id.to_owned(), token.to_owned()).is_none() {
            owners.order.push_back(id.to_owned());
        }
        while owners.order.len() > MAX_SESSIONS {
            if let Some(old) = owners.order.pop_front() {
                owners.by_session.remove(&old);
            }
        }
    }

    fn forget(&self, id: &str) {
        if let Ok(mut owners) = self.0.lock() {
            owners.by_session.remove(id);
            owners.order.retain(|other| other != id);
        }
    }
}

/// Where the MCP endpoint is mounted.
pub const PATH: &str = "/mcp";

/// The MCP endpoint for `state`'s engine; `shutdown` ends its sessions (their event streams
/// would otherwise hold the server open).
pub fn router(state: &AppState, shutdown: CancellationToken) -> Router {
    let service = jig_mcp::http_service(state.engine.clone(), HttpOptions { shutdown });
    Router::new()
        .route_service(PATH, service)
        .layer(from_fn_with_state(state.engine.clone(), hold))
        .layer(from_fn_with_state(Sessions::default(), acting))
        .layer(from_fn_with_state(state.access.clone(), auth::require_person))
}

/// `policy.mcp.stream_hold`: a call's own event stream (the answer to its POST) ends once it
/// has been open that long. Every event of it has an id and the service keeps the session's
/// events, so the client reconnects with `Last-Event-ID` (a GET) and reads the rest from there
/// (MCP's SSE polling, SEP-1699): a call that waits for an approval does not hold the
/// connection it was sent on. The stream a client reopens stays until the answer.
async fn hold(
    State(engine): State<Arc<jig_engine::Engine>>,
    request: Request,
    next: Next,
) -> Response {
    use futures_util::StreamExt as _;
    let post = request.method() == Method::POST;
    let response = next.run(request).await;
    let Some(hold) = engine.policy().config().mcp.stream_hold() else { return response };
    let streaming = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !post || !streaming {
        return response;
    }
    let (parts, body) = response.into_parts();
    // Cut between events, never inside one: the body yields whole events.
    let events = body.into_data_stream().take_until(tokio::time::sleep(hold));
    Response::from_parts(parts, axum::body::Body::from_stream(events))
}

/// The authenticated person, as the MCP server knows who acts — inside a session only the
/// token that opened it.
async fn acting(State(sessions): State<Sessions>, mut request: Request, next: Next) -> Response {
    let token =
        auth::token_of(request.headers()).map(|t| crate::identity::hash(&t)).unwrap_or_default();
    let session = request.headers().get(SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(id) = &session {
        match sessions.owner(id) {
            Some(owner) if owner == token => {}
            Some(_) => {
                return ApiError::forbidden(
                    "this MCP session was opened with another token; open a session of your own",
                )
                .into_response();
            }
            // Not one this server opened (or one long forgotten): unknown, as MCP says.
            None => {
                return ApiError::not_found(format!("no MCP session `{id}`")).into_response();
            }
        }
    }
    if let Some(person) = request.extensions().get::<Person>().cloned() {
        request.extensions_mut().insert(Acting {
            person: person.name,
            may_run: person.role >= Role::Runner,
            may_approve: person.role >= Role::Approver,
        });
    }
    let deleting = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match &session {
        // A new session: it is this token's.
        None => {
            if let Some(id) = response.headers().get(SESSION).and_then(|v| v.to_str().ok()) {
                sessions.bind(id, &token);
            }
        }
        Some(id) if response.status() == StatusCode::NOT_FOUND || deleting => sessions.forget(id),
        Some(_) => {}
    }
    response
}
