//! `/api/metrics/series`: calls over time per tool, from the audit store (so every process that
//! used the store counts, not only this one): calls, failures, denials and latency
//! percentiles per bucket, denials by rule, the busiest sessions.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// Which window, cut how.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeriesParams {
    /// The window's start (µs since the epoch; default: an hour before `until_us`).
    pub since_us: Option<i64>,
    /// Its end (µs since the epoch; default: now).
    pub until_us: Option<i64>,
    /// How many buckets (1–240, default 60).
    pub buckets: Option<u32>,
}

const HOUR_US: i64 = 3_600_000_000;

/// Calls over a window, per tool and bucket.
#[utoipa::path(get, path = "/api/metrics/series", operation_id = "metricsSeries", tag = "project",
    params(SeriesParams),
    responses((status = 200, body = jig_engine::Series), (status = 400, body = ErrorMessage)))]
pub async fn series(
    State(state): State<AppState>,
    Params(params): Params<SeriesParams>,
) -> Result<Json<jig_engine::Series>, ApiError> {
    let until_us = params.until_us.unwrap_or_else(jig_engine::time::now_us);
    let query = jig_engine::SeriesQuery {
        since_us: params.since_us.unwrap_or(until_us.saturating_sub(HOUR_US)),
        until_us,
        buckets: params.buckets.unwrap_or(60),
    };
    Ok(Json(state.engine.history().series(query).await?))
}
