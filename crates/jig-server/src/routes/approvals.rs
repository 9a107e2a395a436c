//! `/api/approvals`: the queue, and deciding in one's own name. Approving a call started here
//! runs exactly that request, in the name of who asked.

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Person, Role};
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
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
    let reader =
        jig_engine::Reader { may_approve: person.role >= Role::Approver, person: person.name };
    Ok(Json(state.engine.history().approvals(!filter.all, &reader).await?))
}

/// What approving did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Approved {
    /// The one-time token for exactly that request (for a caller who runs it themselves),
    /// once granted; absent while more people must approve.
    pub token: Option<String>,
    /// Who has approved so far, while more must (empty once granted).
    pub approvers: Vec<String>,
    /// How many people must approve (a runbook's `min_approvers`; 1 otherwise).
    pub required: u32,
    /// The request now running the approved call, when it was started here.
    pub resumed_as: Option<String>,
    /// The runbook run that walked on, when the call was a runbook step's.
    pub runbook_run: Option<String>,
}

/// Approve as the person behind the token (`approvals.self_approval` decides whether one may
/// approve one's own request).
#[utoipa::path(post, path = "/api/approvals/{id}/approve", operation_id = "approve", tag = "approvals",
    params(("id" = String, Path)),
    responses((status = 200, body = Approved), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage), (status = 409, body = ErrorMessage)))]
pub async fn approve(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<Json<Approved>, ApiError> {
    person.require(Role::Approver)?;
    let (approval, resumed_as) = state.engine.approve_and_run(&id, &person.name).await?;
    let (token, approvers, required) = match approval {
        jig_engine::Approval::Granted(token) => (Some(token), Vec::new(), 1),
        jig_engine::Approval::Seconded { approvers, required } => (None, approvers, required),
    };
    // A runbook step waiting on this approval walks on now, not when someone next looks.
    let run = match &token {
        Some(token) => {
            let runbooks = jig_runbook::Runbooks::new(state.engine.clone());
            runbooks.approval_decided(&id, Some(token.clone())).await?
        }
        None => None,
    };
    Ok(Json(Approved { token, approvers, required, resumed_as, runbook_run: run.map(|r| r.id) }))
}

/// Deny as the person behind the token.
#[utoipa::path(post, path = "/api/approvals/{id}/deny", operation_id = "deny", tag = "approvals",
    params(("id" = String, Path)),
    responses((status = 204), (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage),
        (status = 409, body = ErrorMessage)))]
pub async fn deny(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<axum::http::StatusCode, ApiError> {
    person.require(Role::Approver)?;
    state.engine.deny(&id, &person.name, None).await?;
    jig_runbook::Runbooks::new(state.engine.clone()).approval_decided(&id, None).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}
