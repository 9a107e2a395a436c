//! The API in process, for the desktop app: each request goes to the same [`Router`] as
//! `jig serve`'s (through `tower::ServiceExt::oneshot`), with no TCP port to reach or guard.
//!
//! The app holds the only token, made here and never shown; the person behind it is the OS user.
//! Events come from the engine's bus as the same [`Outgoing`] values the WebSocket sends.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, header};
use jig_engine::{Subscription, Viewer};
use serde::Serialize;
use tower::ServiceExt as _;

use crate::auth::{Access, Guard, Person, Users, new_token};
use crate::{AppState, router};

pub use crate::routes::events::{Outgoing, next};

/// The router and the token that opens it.
#[derive(Debug, Clone)]
pub struct Local {
    router: Router,
    token: String,
    engine: Arc<jig_engine::Engine>,
    viewer: Viewer,
}

/// The answer to one request, whole.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The response's headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body as text (every API answer is JSON, JSON Lines or CSV).
    pub body: String,
}

/// Why a request never reached the router.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// Not an API path (`/api/…`), or not a method the API has.
    #[error("{0}")]
    BadRequest(String),
}

impl Local {
    /// The API over `engine`, acting as `person`; `project` names the project in the UI.
    pub fn new(engine: Arc<jig_engine::Engine>, person: Person, project: String) -> Self {
        let token = new_token();
        let viewer = crate::routes::events::viewer_of(&person);
        // No `Host` or `Origin` checks: these requests never cross a network.
        let access = Access {
            users: Arc::new(Users::single(person, &token)),
            guard: Guard::default(),
            people: None,
        };
        let state = AppState::new(Arc::clone(&engine), access, project);
        Self { router: router(state), token, engine, viewer }
    }

    /// Hand one request to the router. `path` is the API path with its query
    /// (`/api/tools?q=x`); `body` is JSON text.
    pub async fn handle(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<Answer, LocalError> {
        let (status, headers, bytes) = self.send(method, path, body).await?;
        Ok(Answer { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() })
    }

    /// `GET path` with the body as bytes (an artifact or attachment to save): its status and
    /// body (an error's JSON when not 200).
    pub async fn download(&self, path: &str) -> Result<(u16, Vec<u8>), LocalError> {
        let (status, _, bytes) = self.send("GET", path, None).await?;
        Ok((status, bytes.to_vec()))
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<(u16, Vec<(String, String)>, axum::body::Bytes), LocalError> {
        if !path.starts_with("/api/") || path == "/api/events" {
            return Err(LocalError::BadRequest(format!(
                "`{path}`: only the API's request paths go through here (events arrive as window events)"
            )));
        }
        let method = Method::from_bytes(method.as_bytes())
            .ok()
            .filter(|m| [Method::GET, Method::POST, Method::PUT, Method::DELETE].contains(m))
            .ok_or_else(|| LocalError::BadRequest(format!("`{method}`: not an API method")))?;
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token));
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(body.map_or_else(Body::empty, Body::from))
            .map_err(|e| LocalError::BadRequest(format!("`{path}`: {e}")))?;
        let response = match self.router.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_owned())))
            .collect();
        // A body that fails mid-stream (an export whose query failed) ends where it failed;
        // the status already said what it could.
        let bytes =
            axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
        Ok((status, headers, bytes))
    }

    /// The engine's events from now on (read them with [`next`]).
    pub fn events(&self) -> Subscription {
        self.engine.subscribe()
    }

    /// Whose events this surface's person receives.
    pub fn viewer(&self) -> Viewer {
        self.viewer.clone()
    }
}
