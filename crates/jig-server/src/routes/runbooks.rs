//! `/api/runbooks` and `/api/runbook-runs`: the project's runbooks with their step graphs, and
//! runs a reviewer steps through — start, read, act on a waiting step, resume. Every call goes
//! to the one runbook service the terminal uses, so a run started here resumes there.
//!
//! Runbook names hold slashes (`service/restart-unhealthy`): clients send them encoded
//! (`%2F`) in the path, which axum decodes after routing.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use jig_app::runbooks::{Action, RunView, RunbookDetail, RunbookSummary};
use jig_audit::RunbookRunRecord;
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Person;
use crate::error::ApiError;
use crate::extract::{Body, Params};
use crate::state::{AppState, actor};
use jig_model::envelope::ErrorMessage;

/// The project's runbooks, by name.
#[utoipa::path(get, path = "/api/runbooks", operation_id = "listRunbooks", tag = "runbooks",
    responses((status = 200, body = Vec<RunbookSummary>)))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<RunbookSummary>> {
    Json(state.app.runbook_list())
}

/// One runbook with the graph of its steps.
#[utoipa::path(get, path = "/api/runbooks/{name}", operation_id = "showRunbook", tag = "runbooks",
    params(("name" = String, Path, description = "The runbook's name (slashes encoded as %2F)")),
    responses((status = 200, body = RunbookDetail), (status = 404, body = ErrorMessage)))]
pub async fn show(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<RunbookDetail>, ApiError> {
    Ok(Json(state.app.runbook(&name)?))
}

/// How many runs.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunsQuery {
    /// At most this many, newest first (default 100, at most 1,000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// The latest runs of every runbook, newest first.
#[utoipa::path(get, path = "/api/runbook-runs", operation_id = "listRunbookRuns", tag = "runbooks",
    params(RunsQuery),
    responses((status = 200, body = Vec<RunbookRunRecord>), (status = 400, body = ErrorMessage)))]
pub async fn runs(
    State(state): State<AppState>,
    Params(query): Params<RunsQuery>,
) -> Result<Json<Vec<RunbookRunRecord>>, ApiError> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request("`limit` must be between 1 and 1000"));
    }
    Ok(Json(state.app.runbook_runs(limit).await?))
}

/// A run to start.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    /// The runbook's name.
    pub runbook: String,
    /// Its inputs (checked against the runbook's declarations before anything is recorded).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Map<String, Value>,
    /// Wait for a go-ahead before every step (the default: a reviewer steps through).
    #[serde(default = "yes")]
    pub stepwise: bool,
}

fn yes() -> bool {
    true
}

/// Start a run in the name of the person behind the token; it walks until it needs people.
#[utoipa::path(post, path = "/api/runbook-runs", operation_id = "startRunbookRun", tag = "runbooks",
    request_body = StartRun,
    responses((status = 201, body = RunView), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage)))]
pub async fn start(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Body(start): Body<StartRun>,
) -> Result<(StatusCode, Json<RunView>), ApiError> {
    let view =
        state.app.start_run(&actor(&person), &start.runbook, start.inputs, start.stepwise).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// A run as last walked: its status, the steps it waits at (rendered inputs, contract, the
/// policy's verdict), its outcome or failure, and its variables.
#[utoipa::path(get, path = "/api/runbook-runs/{id}", operation_id = "showRunbookRun", tag = "runbooks",
    params(("id" = String, Path)),
    responses((status = 200, body = RunView), (status = 404, body = ErrorMessage)))]
pub async fn run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(state.app.run(&id).await?))
}

/// A run's trace: the packets it appended to the audit chain, in order — run started, each
/// step's start and completion, branches, governance decisions, evidence, approvals, the
/// outcome — each with the principal it is attributed to.
#[utoipa::path(get, path = "/api/runbook-runs/{id}/trace", operation_id = "runbookRunTrace",
    tag = "runbooks", params(("id" = String, Path)),
    responses((status = 200, body = Vec<jig_audit::Packet>), (status = 404, body = ErrorMessage)))]
pub async fn trace(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<jig_audit::Packet>>, ApiError> {
    Ok(Json(state.app.run_trace(&id).await?))
}

/// A file attached as evidence to run `id`, by its SHA-256. Always sent as a download
/// (`application/octet-stream`, `nosniff`): what a person attached is never rendered here.
#[utoipa::path(get, path = "/api/runbook-runs/{id}/attachments/{sha256}",
    operation_id = "runbookRunAttachment", tag = "runbooks",
    params(("id" = String, Path), ("sha256" = String, Path, description = "The file's SHA-256, hex")),
    responses((status = 200, description = "The file's bytes", content((String = "application/octet-stream"))),
        (status = 404, body = ErrorMessage)))]
pub async fn attachment(
    State(state): State<AppState>,
    Path((id, sha256)): Path<(String, String)>,
) -> Result<axum::response::Response, ApiError> {
    let (name, _media_type, bytes) = state.app.run_attachment(&id, &sha256).await?;
    Ok(crate::routes::download::file(&name, bytes, false))
}

/// Walk a run again from its journal (after a restart, or to pick up an approval decided
/// elsewhere).
#[utoipa::path(post, path = "/api/runbook-runs/{id}/resume", operation_id = "resumeRunbookRun",
    tag = "runbooks", params(("id" = String, Path)),
    responses((status = 200, body = RunView), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 409, body = ErrorMessage)))]
pub async fn resume(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(state.app.resume_run(&actor(&person), &id).await?))
}

/// Hold a run before its next step that would do something, in one's own name: at once when it
/// waits for people, within a quarter of a second when a walk is under way (here, in another
/// request or another process). A go-ahead (`run`) at the step where it holds resumes it.
#[utoipa::path(post, path = "/api/runbook-runs/{id}/pause", operation_id = "pauseRunbookRun",
    tag = "runbooks", params(("id" = String, Path)),
    responses((status = 200, body = RunView), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 409, body = ErrorMessage)))]
pub async fn pause(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(state.app.pause_run(&actor(&person), &id).await?))
}

/// Inputs over those an outcome gives its next runbook.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FollowRun {
    /// Inputs of the next runbook, over those the outcome rendered.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Map<String, Value>,
}

/// Continue an ended run with the runbook its outcome names (`next_runbook`), in one's own
/// name; a run is continued once, and asking again answers with the run that continues it.
#[utoipa::path(post, path = "/api/runbook-runs/{id}/follow", operation_id = "followRunbookRun",
    tag = "runbooks", params(("id" = String, Path)), request_body = FollowRun,
    responses((status = 200, body = RunView), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage),
        (status = 409, body = ErrorMessage)))]
pub async fn follow(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
    Body(follow): Body<FollowRun>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(state.app.follow_run(&actor(&person), &id, follow.inputs).await?))
}

/// What a person does to one waiting step: `{"key": …, "action": "skip", "reason": …}`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ActRequest {
    /// The step instance (`waiting[].key`).
    pub key: String,
    /// What to do, and with what.
    #[serde(flatten)]
    pub action: Action,
}

/// Act on a waiting step in one's own name — run, skip, evidence, a choice, approve, deny,
/// retry, abort — and walk on. When two people act on one step, the second gets 409.
#[utoipa::path(post, path = "/api/runbook-runs/{id}/act", operation_id = "actOnRunbookRun",
    tag = "runbooks", params(("id" = String, Path)), request_body = ActRequest,
    responses((status = 200, body = RunView), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage),
        (status = 409, body = ErrorMessage)))]
pub async fn act(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
    Body(act): Body<ActRequest>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(state.app.act_on_run(&actor(&person), &id, &act.key, act.action).await?))
}
