//! `/api/tokens`: personal API tokens for scripts and agents, made by their owner and revoked by
//! their owner or an admin. A token is shown once, when it is made; the store keeps only its
//! hash. Its role is at most its owner's, now and whenever it is used; it ends after the days
//! its maker chose (the team's `config.auth.token_days` by default, never more than
//! `token_max_days`). Each is made and revoked with a packet in the chain.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use jig_audit::ApiToken;
use jig_model::envelope::ErrorMessage;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Person, Role, Via};
use crate::error::ApiError;
use crate::extract::{Body, Params};
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
    /// How many days it works (the team's default when left out; at most its maximum).
    #[serde(default)]
    pub days: Option<u32>,
}

/// Which tokens to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokenFilter {
    /// Every person's tokens (admins only).
    #[serde(default)]
    pub all: Option<bool>,
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
    /// When it stops working (µs since the Unix epoch).
    pub expires_us: i64,
}

/// Your tokens, newest first (revoked and expired ones too; never the tokens themselves);
/// `?all=true`: everyone's, for an admin.
#[utoipa::path(get, path = "/api/tokens", operation_id = "listTokens", tag = "tokens",
    params(TokenFilter),
    responses((status = 200, body = Vec<ApiToken>), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Params(filter): Params<TokenFilter>,
) -> Result<Json<Vec<ApiToken>>, ApiError> {
    available(&state)?;
    if filter.all.unwrap_or(false) {
        if person.role < Role::Admin {
            return Err(ApiError::forbidden("only an admin lists everyone's tokens"));
        }
        return Ok(Json(state.engine.all_tokens().await?));
    }
    Ok(Json(state.engine.tokens_of(&person.name).await?))
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
    let auth = state.engine.snapshot().auth().cloned().unwrap_or_default();
    let days = request.days.unwrap_or_else(|| auth.default_token_days());
    if days == 0 || days > auth.max_token_days() {
        return Err(ApiError::bad_request(format!(
            "`days`: a token works 1 to {} days here (`config.auth.token_max_days`)",
            auth.max_token_days()
        )));
    }
    let token = format!("{TOKEN_PREFIX}{}", crate::auth::new_token());
    let created_us = jig_audit::time::now_us();
    let record = ApiToken {
        id: jig_engine::new_id(),
        owner: person.name,
        name: name.to_owned(),
        role: role_text(role).to_owned(),
        token_hash: hash(&token),
        created_us,
        last_used_us: None,
        expires_us: Some(created_us + i64::from(days) * 86_400_000_000),
        revoked_us: None,
        revoked_by: None,
    };
    state.engine.mint_token(&record).await?;
    let expires_us = record.expires_us.unwrap_or_default();
    Ok((
        StatusCode::CREATED,
        Json(MadeToken { id: record.id, token, role: record.role, name: record.name, expires_us }),
    ))
}

/// Revoke a token: your own, or (as an admin) anyone's. It stops working at once, on every
/// instance.
#[utoipa::path(delete, path = "/api/tokens/{id}", operation_id = "revokeToken", tag = "tokens",
    params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorMessage)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    available(&state)?;
    let owner = (person.role < Role::Admin).then_some(person.name.as_str());
    match state.engine.revoke_token(owner, &id, &person.name).await? {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None if owner.is_some() => {
            Err(ApiError::not_found(format!("you have no live token `{id}`")))
        }
        None => Err(ApiError::not_found(format!("there is no live token `{id}`"))),
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
