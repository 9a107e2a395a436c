//! `/api/session`, `/api/problems`, `/api/policy`, `/api/metrics`: who is acting, the watcher's
//! diagnostics, the effective policy, and the counters.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Person;
use crate::state::AppState;

/// Who is acting, where.
#[derive(Debug, Serialize, ToSchema)]
pub struct Session {
    /// The person behind the token.
    pub person: Person,
    /// The project's name.
    pub project: String,
    /// The registry's hash (changes when the files do).
    pub registry_hash: String,
    /// How many tools it has.
    pub tools: usize,
}

/// Who you are.
#[utoipa::path(get, path = "/api/session", tag = "project", responses((status = 200, body = Session)))]
pub async fn session(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
) -> Json<Session> {
    let snapshot = state.engine.snapshot();
    Json(Session {
        person,
        project: state.project.clone(),
        registry_hash: snapshot.registry_hash().to_owned(),
        tools: state.engine.list(None, None).len(),
    })
}

/// The watcher's diagnostics: empty while the project loads.
#[utoipa::path(get, path = "/api/problems", tag = "project",
    responses((status = 200, body = Vec<Object>)))]
pub async fn problems(State(state): State<AppState>) -> Json<Vec<jig_model::Diagnostic>> {
    Json(state.engine.problems())
}

/// The effective policy, as compiled from the manifest.
#[utoipa::path(get, path = "/api/policy", tag = "project",
    responses((status = 200, body = Object)))]
pub async fn policy(State(state): State<AppState>) -> Json<Value> {
    let policy = state.engine.policy();
    Json(serde_json::json!({
        "hash": policy.hash(),
        "config": serde_json::to_value(policy.config()).unwrap_or_default(),
    }))
}

/// The engine's counters and latency summaries.
#[utoipa::path(get, path = "/api/metrics", tag = "project",
    responses((status = 200, body = Object)))]
pub async fn metrics(State(state): State<AppState>) -> Json<jig_engine::MetricsSnapshot> {
    Json(state.engine.metrics())
}
