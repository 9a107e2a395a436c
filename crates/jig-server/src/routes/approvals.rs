//! `/api/approvals`: the queue, and deciding in one's own name. Approving a call started here
//! runs exactly that request, in the name of who asked.

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Person;
use crate::error::ApiError;
use crate::extract::{Body, MaybeBody, Params};
use crate::state::{AppState, actor};
use jig_model::envelope::ErrorMessage;

/// Which approvals.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Filter {
    /// All of them, not only those pending.
    #[serde(default)]
    pub all: bool,
}

/// Approvals, newest first: the rule that asked, who asked, and the request — in clear, exactly
/// as it will run, for an approver (and for who asked it) while it is pending; with secrets
/// redacted for everyone else and once decided.
#[utoipa::path(get, path = "/api/approvals", operation_id = "listApprovals", tag = "approvals", params(Filter),
    responses((status = 200, body = Vec<jig_engine::ApprovalRecord>), (status = 400, body = ErrorMessage)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Params(filter): Params<Filter>,
) -> Result<Json<Vec<jig_engine::ApprovalRecord>>, ApiError> {
    Ok(Json(state.app.approvals(&actor(&person), !filter.all).await?))
}

/// What approving did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Approved {
    /// The one-time token, only when you asked the call yourself (self-approval); anyone
    /// else's approved call runs where it waits, or at its caller's next identical call.
    pub token: Option<String>,
    /// Who has approved so far, while more must (empty once granted).
    pub approvers: Vec<String>,
    /// How many people must approve (a runbook's `min_approvers`; 1 otherwise).
    pub required: u32,
    /// The request now running the approved call, when it waits in this server.
    pub resumed_as: Option<String>,
    /// The runbook run that walked on, when the call was a runbook step's.
    pub runbook_run: Option<String>,
}

/// Approve as the person behind the token (`approvals.self_approval` decides whether one may
/// approve one's own request).
#[utoipa::path(post, path = "/api/approvals/{id}/approve", operation_id = "approve", tag = "approvals",
    params(("id" = String, Path)), request_body(content = ApproveRequest, content_type = "application/json"),
    responses((status = 200, body = Approved), (status = 400, body = ErrorMessage), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 409, body = ErrorMessage)))]
pub async fn approve(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
    MaybeBody(body): MaybeBody<ApproveRequest>,
) -> Result<Json<Approved>, ApiError> {
    let comment = body.and_then(|request| request.comment);
    let done = state.app.approve(&actor(&person), &id, comment.as_deref()).await?;
    Ok(Json(Approved {
        token: done.token,
        approvers: done.approvers,
        required: done.required,
        resumed_as: done.resumed_as,
        runbook_run: done.runbook_run.map(|run| run.id),
    }))
}

/// What an approver adds.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    /// A comment for who asked, kept in the chain.
    #[serde(default)]
    pub comment: Option<String>,
}

/// Why a reviewer denies.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DenyRequest {
    /// Shown to who asked, and kept in the chain.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Deny as the person behind the token, with a reason shown to who asked.
#[utoipa::path(post, path = "/api/approvals/{id}/deny", operation_id = "deny", tag = "approvals",
    params(("id" = String, Path)), request_body(content = DenyRequest, content_type = "application/json"),
    responses((status = 204), (status = 400, body = ErrorMessage), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 409, body = ErrorMessage)))]
pub async fn deny(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
    MaybeBody(body): MaybeBody<DenyRequest>,
) -> Result<axum::http::StatusCode, ApiError> {
    let reason = body.and_then(|request| request.reason);
    state.app.deny(&actor(&person), &id, reason.as_deref()).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Several approvals decided with one note.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideRequest {
    /// The approvals (1 to 200, each once).
    pub ids: Vec<String>,
    /// `approve` or `deny`.
    pub verdict: DecideVerdict,
    /// A deny's reason, shown to each asker (needed to deny); an approval's comment.
    #[serde(default)]
    pub note: Option<String>,
}

/// Approve or deny.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecideVerdict {
    /// Run each request, in the name of who asked it.
    Approve,
    /// End each request, with the note as the reason.
    Deny,
}

/// What became of one approval.
#[derive(Debug, Serialize, ToSchema)]
pub struct DecideOutcome {
    /// The approval.
    pub id: String,
    /// `approved`, `seconded` (recorded; more people must approve), `denied`, or `error`.
    pub outcome: String,
    /// The request now running the approved call, when it waits in this server.
    pub resumed_as: Option<String>,
    /// The stable error code, when it failed (decided meanwhile by someone else: `E_CONFLICT`).
    pub code: Option<String>,
    /// What happened, when it failed.
    pub message: Option<String>,
}

/// Decide several approvals at once with one note: each is recorded and run (or ended) on its
/// own, so one already decided by someone else fails alone. The list is refused whole when it
/// is empty, too long, repeats an id, or denies without a reason.
#[utoipa::path(post, path = "/api/approvals/decide", operation_id = "decideApprovals", tag = "approvals",
    request_body(content = DecideRequest, content_type = "application/json"),
    responses((status = 200, body = Vec<DecideOutcome>), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage)))]
pub async fn decide(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Body(body): Body<DecideRequest>,
) -> Result<Json<Vec<DecideOutcome>>, ApiError> {
    let verdict = match body.verdict {
        DecideVerdict::Approve => jig_app::Choice::Approve,
        DecideVerdict::Deny => jig_app::Choice::Deny,
    };
    let outcomes =
        state.app.decide_many(&actor(&person), &body.ids, verdict, body.note.as_deref()).await?;
    Ok(Json(
        outcomes
            .into_iter()
            .map(|o| DecideOutcome {
                id: o.id,
                outcome: o.outcome.to_owned(),
                resumed_as: o.resumed_as,
                code: o.code,
                message: o.message,
            })
            .collect(),
    ))
}
