//! `/api/calls`: start a call (the answer is its request id; progress, output and the response
//! come on the event stream), read its response, cancel it.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use jig_app::CallSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Person;
use crate::error::ApiError;
use crate::extract::Body;
use crate::state::{AppState, actor};
use jig_model::envelope::ErrorMessage;

/// A call to start.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    #[schema(value_type = Object)]
    #[serde(default)]
    pub args: Option<Value>,
    /// The session (default `web`).
    #[serde(default)]
    pub session: Option<String>,
    /// The thread (idempotency keys are per thread).
    #[serde(default)]
    pub thread: Option<String>,
    /// A one-time approval token for this exact request.
    #[serde(default)]
    pub approval_token: Option<String>,
}

/// A started call.
#[derive(Debug, Serialize, ToSchema)]
pub struct Started {
    /// Follow it on `/api/events` and read it at `/api/calls/{request_id}`.
    pub request_id: String,
}

/// Start a call as the person behind the token. While every place for calls in the
/// background stays taken for 10 s, the start is refused (503, `E_LIMIT`, `Retry-After`) with
/// nothing run or recorded.
#[utoipa::path(post, path = "/api/calls", operation_id = "startCall", tag = "calls", request_body = CallRequest,
    responses((status = 202, body = Started), (status = 400, body = ErrorMessage), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 503, body = ErrorMessage)))]
pub async fn start(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    headers: axum::http::HeaderMap,
    Body(call): Body<CallRequest>,
) -> Result<(StatusCode, Json<Started>), ApiError> {
    // W3C trace context: the caller's trace continues through the call.
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let spec = CallSpec {
        tool: call.tool,
        args: call.args.unwrap_or_else(|| Value::Object(Default::default())),
        session: call.session.unwrap_or_else(|| "web".to_owned()),
        thread: call.thread,
        approval_token: call.approval_token,
        timestamp: Some(jig_engine::time::now_us() / 1_000_000),
        trace: jig_engine::telemetry::TraceOrigin {
            traceparent: header("traceparent"),
            tracestate: header("tracestate"),
            mcp_session: None,
        },
        ..CallSpec::default()
    };
    let request_id = state.app.start(&actor(&person), &spec).await?;
    Ok((StatusCode::ACCEPTED, Json(Started { request_id })))
}

/// A call's state and, once it finished, its recorded response.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallState {
    /// The request.
    pub request_id: String,
    /// `running` while it runs here; then the run's state (`succeeded`, `failed`, …).
    pub state: String,
    /// The response as recorded (redacted), once there is one.
    #[schema(value_type = Option<jig_model::envelope::ToolResponse>)]
    pub response: Option<Value>,
    /// For a call that waited for approval and was approved: the request that ran it (its
    /// state and response are this call's now).
    pub resumed_as: Option<String>,
    /// What went wrong, or why it ended as it did (`denied by bob: …`).
    pub error: Option<String>,
}

/// Where a call is, and what happened to it: `pending_approval` only while it waits, then
/// `denied`, `expired`, `withdrawn`, `approved` until it runs, or the state of the run the
/// approval let run (`succeeded`, `failed`, …).
#[utoipa::path(get, path = "/api/calls/{request_id}", operation_id = "readCall", tag = "calls",
    params(("request_id" = String, Path)),
    responses((status = 200, body = CallState), (status = 404, body = ErrorMessage)))]
pub async fn read(
    State(state): State<AppState>,
    Path(request_id): Path<String>,
) -> Result<Json<CallState>, ApiError> {
    let running = state.engine.is_running(&request_id);
    let run = state.engine.history().call(&request_id).await?;
    if run.is_none() && !running {
        return Err(ApiError::not_found(format!("no call `{request_id}`")));
    }
    let (recorded, response, resumed_as, error) = match run {
        Some(run) => (Some(run.state), run.response, run.resumed_as, run.error),
        None => (None, None, None, None),
    };
    let state = match recorded {
        Some(recorded) if !running => recorded.to_string(),
        _ => "running".to_owned(),
    };
    Ok(Json(CallState { request_id, state, response, resumed_as, error }))
}

/// Whether a cancel reached a running call.
#[derive(Debug, Serialize, ToSchema)]
pub struct Cancelled {
    /// True when the call was running (or its job was open) and was asked to stop.
    pub cancelled: bool,
}

/// Stop a running call you made (an admin: anyone's), or the job it handed to a scheduler;
/// it ends as cancelled, with its record. A call waiting for approval is withdrawn (wherever
/// it was asked): the approval and the call end withdrawn.
#[utoipa::path(post, path = "/api/calls/{request_id}/cancel", operation_id = "cancelCall", tag = "calls",
    params(("request_id" = String, Path)),
    responses((status = 200, body = Cancelled), (status = 403, body = ErrorMessage)))]
pub async fn cancel(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(request_id): Path<String>,
) -> Result<Json<Cancelled>, ApiError> {
    let cancelled = state.app.cancel(&actor(&person), &request_id).await?;
    Ok(Json(Cancelled { cancelled }))
}
