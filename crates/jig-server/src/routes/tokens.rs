//! `/api/tokens`: personal API tokens for scripts and agents, made and revoked by their owner.
//! A token is shown once, when it is made; the store keeps only its hash. Its role is at most
//! its owner's, now and whenever it is used.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use jig_audit::ApiToken;
use jig_model::envelope::ErrorMessage;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Person, Role, Via};
use crate::error::ApiError;
use crate::extract::Body;
use crate::people::{TOKEN_PREFIX, hash, role_named};
use crate::state::AppState;

/// A token to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// What you call it (`ci`, `claude-code on my laptop`).
    pub name: String,
    /// What it may do (`viewer`, `runner`, `approver`, `admin`): at most your role; yours when
    /// left out.
    #[serde(default)]
    pub role: Option<String>,
}

/// A token just made: the only time it is shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct MadeToken {
    /// Its id.
    pub id: String,
    /// The token: `Authorization: Bearer …`. Not shown again.
    pub token: String,
    /// What it may do.
    pub role: String,
    /// Its name.
    pub name: String,
}

/// Your tokens, newest first (revoked ones too; never the tokens themselves).
#[utoipa::path(get, path = "/api/tokens", operation_id = "listTokens", tag = "tokens",
    responses((status = 200, body = Vec<ApiToken>), (status = 404, body = ErrorMessage)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
) -> Result<Json<Vec<ApiToken>>, ApiError> {
    available(&state)?;
    Ok(Json(state.engine.store().api_tokens(&person.name).await?))
}

/// Make a token.
#[utoipa::path(post, path = "/api/tokens", operation_id = "makeToken", tag = "tokens", request_body = NewToken,
    responses((status = 201, body = MadeToken), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage)))]
pub async fn make(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Extension(via): Extension<Via>,
    Body(request): Body<NewToken>,
) -> Result<(StatusCode, Json<MadeToken>), ApiError> {
    available(&state)?;
    // A token that could make tokens would outlive its own revocation.
    if via == Via::PersonalToken {
        return Err(ApiError::forbidden(
            "a personal token cannot make tokens: make them signed in, in the workbench",
        ));
    }
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::bad_request("`name` must be 1 to 100 characters"));
    }
    let role = match request.role.as_deref() {
        None => person.role,
        Some(wanted) => role_named(wanted).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`role`: `{wanted}` is not viewer, runner, approver or admin"
            ))
        })?,
    };
    if role > person.role {
        return Err(ApiError::forbidden(format!(
            "a token may do at most what its owner may: you are a {}",
            role_text(person.role)
        )));
    }
    let token = format!("{TOKEN_PREFIX}{}", crate::auth::new_token());
    let record = ApiToken {
        id: jig_engine::new_id(),
        owner: person.name,
        name: name.to_owned(),
        role: role_text(role).to_owned(),
        token_hash: hash(&token),
        created_us: jig_audit::time::now_us(),
        last_used_us: None,
        revoked_us: None,
    };
    state.engine.store().create_api_token(&record).await?;
    Ok((
        StatusCode::CREATED,
        Json(MadeToken { id: record.id, token, role: record.role, name: record.name }),
    ))
}

/// Revoke one of your tokens: it stops working at once, on every instance.
#[utoipa::path(delete, path = "/api/tokens/{id}", operation_id = "revokeToken", tag = "tokens",
    params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorMessage)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    available(&state)?;
    let now = jig_audit::time::now_us();
    if state.engine.store().revoke_api_token(&person.name, &id, now).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("you have no live token `{id}`")))
    }
}

fn available(state: &AppState) -> Result<(), ApiError> {
    match state.access.people {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found("personal tokens are made on a `jig serve`")),
    }
}

fn role_text(role: Role) -> &'static str {
    match role {
        Role::Viewer => "viewer",
        Role::Runner => "runner",
        Role::Approver => "approver",
        Role::Admin => "admin",
    }
}
