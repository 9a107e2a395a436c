//! `/api/audit`: the runs timeline (paged, filtered), one run with its packets, the chain's
//! head and its verification.

use axum::Json;
use axum::extract::{Path, Query, State};
use jig_engine::history::{ChainStatus, RunPage, RunQuery};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// Filters of the timeline.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunFilter {
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this state (`succeeded`, `failed`, `denied`, `pending_approval`, …).
    pub state: Option<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Only this principal.
    pub principal: Option<String>,
    /// Created at or after (µs since the epoch).
    pub since_us: Option<i64>,
    /// Created before (µs since the epoch).
    pub until_us: Option<i64>,
    /// Text in ids, tool, principal, session, rule, error or arguments.
    pub q: Option<String>,
    /// The `next` cursor of the previous page.
    pub after: Option<String>,
    /// Rows per page (1–1000, default 100).
    pub limit: Option<i64>,
}

/// A page of runs, newest first.
#[utoipa::path(get, path = "/api/audit/runs", operation_id = "listRuns", tag = "audit", params(RunFilter),
    responses((status = 200, body = RunPage), (status = 400, body = ErrorMessage)))]
pub async fn runs(
    State(state): State<AppState>,
    Query(filter): Query<RunFilter>,
) -> Result<Json<RunPage>, ApiError> {
    let run_state = filter
        .state
        .as_deref()
        .map(|s| {
            jig_engine::RunState::parse(s)
                .ok_or_else(|| ApiError::bad_request(format!("state `{s}` is not a run state")))
        })
        .transpose()?;
    let query = RunQuery {
        tool: filter.tool,
        state: run_state,
        session: filter.session,
        principal: filter.principal,
        since_us: filter.since_us,
        until_us: filter.until_us,
        text: filter.q,
        after: filter.after,
        limit: filter.limit.unwrap_or(100),
    };
    Ok(Json(state.engine.history().runs(&query).await?))
}

/// One run (by request id or run id, or a unique prefix) with its packets.
#[utoipa::path(get, path = "/api/audit/runs/{id}", operation_id = "showRun", tag = "audit", params(("id" = String, Path)),
    responses((status = 200, body = jig_engine::RunDetail), (status = 404, body = ErrorMessage)))]
pub async fn run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<jig_engine::RunDetail>, ApiError> {
    state.engine.history().run(&id).await?.map(Json).ok_or_else(|| {
        ApiError::not_found(format!("no run with a request id or run id starting `{id}`"))
    })
}

/// Verify the chain and say what was checked.
#[utoipa::path(get, path = "/api/audit/verify", operation_id = "verifyChain", tag = "audit",
    responses((status = 200, body = ChainStatus)))]
pub async fn verify(State(state): State<AppState>) -> Result<Json<ChainStatus>, ApiError> {
    Ok(Json(state.engine.history().verify(None, None).await?))
}
