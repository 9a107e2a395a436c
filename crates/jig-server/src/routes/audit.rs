//! `/api/audit`: the runs timeline (paged, filtered), one run with its packets, the chain's
//! head and its verification.

use axum::Json;
use axum::extract::{Path, State};
use jig_engine::history::{ChainStatus, RunPage, RunQuery};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::extract::Params;
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

impl RunFilter {
    /// The store's query for these filters (the `state` spelled as a run state).
    pub fn query(self) -> Result<RunQuery, ApiError> {
        let state = self
            .state
            .as_deref()
            .map(|s| {
                jig_engine::RunState::parse(s)
                    .ok_or_else(|| ApiError::bad_request(format!("state `{s}` is not a run state")))
            })
            .transpose()?;
        Ok(RunQuery {
            tool: self.tool,
            state,
            session: self.session,
            principal: self.principal,
            since_us: self.since_us,
            until_us: self.until_us,
            text: self.q,
            after: self.after,
            limit: self.limit.unwrap_or(100),
        })
    }
}

/// A page of runs, newest first.
#[utoipa::path(get, path = "/api/audit/runs", operation_id = "listRuns", tag = "audit", params(RunFilter),
    responses((status = 200, body = RunPage), (status = 400, body = ErrorMessage)))]
pub async fn runs(
    State(state): State<AppState>,
    Params(filter): Params<RunFilter>,
) -> Result<Json<RunPage>, ApiError> {
    let query = filter.query()?;
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
