//! `/api/jobs`: calls whose work runs on a scheduler (seed 001's slurm and hybrid plans), with
//! where each stands; the engine's watcher keeps them current, and each change comes on the
//! event stream as `RunStateChanged`.

use axum::Json;
use axum::extract::{Path, State};
use jig_engine::history::JobSummary;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// How many jobs.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobsQuery {
    /// Rows (1–1000, default 100).
    pub limit: Option<i64>,
}

/// The latest jobs, newest first.
#[utoipa::path(get, path = "/api/jobs", operation_id = "listJobs", tag = "audit", params(JobsQuery),
    responses((status = 200, body = Vec<JobSummary>), (status = 400, body = ErrorMessage)))]
pub async fn list(
    State(state): State<AppState>,
    Params(query): Params<JobsQuery>,
) -> Result<Json<Vec<JobSummary>>, ApiError> {
    Ok(Json(state.engine.history().jobs(query.limit.unwrap_or(100)).await?))
}

/// What the open job of a call has printed so far (the last 64 KiB); 204 when the call has no
/// open job (a collected job's whole log is among its artifacts), so a view polling a job that
/// has just finished reads "nothing more", not an error.
#[utoipa::path(get, path = "/api/jobs/{request_id}/log", operation_id = "readJobLog", tag = "audit",
    params(("request_id" = String, Path)),
    responses((status = 200, body = jig_engine::JobLog), (status = 204)))]
pub async fn log(
    State(state): State<AppState>,
    Path(request_id): Path<String>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    Ok(match state.engine.job_log(&request_id).await? {
        Some(log) => Json(log).into_response(),
        None => axum::http::StatusCode::NO_CONTENT.into_response(),
    })
}
