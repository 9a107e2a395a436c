//! `/api/tools/{id}/presets`: named arguments saved beside the tool (`*.preset.json`), listed,
//! saved and deleted in the project so a team shares them in git.

use axum::Extension;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jig_engine::{Preset, Presets};
use jig_model::envelope::ErrorMessage;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::{Person, Role};
use crate::error::ApiError;
use crate::extract::Body;
use crate::state::AppState;

/// A tool's presets, and the files beside it that are not valid presets.
#[utoipa::path(get, path = "/api/tools/{id}/presets", operation_id = "listPresets", tag = "tools",
    params(("id" = String, Path, description = "Registry id")),
    responses((status = 200, body = Presets), (status = 404, body = ErrorMessage)))]
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Presets>, ApiError> {
    Ok(Json(state.engine.presets(&id)?))
}

/// A preset to save.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PresetBody {
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// The arguments (a JSON object; they may be partial).
    #[schema(value_type = Object)]
    pub args: Value,
}

/// Save (or replace) a preset, as a runner or above.
#[utoipa::path(put, path = "/api/tools/{id}/presets/{name}", operation_id = "savePreset", tag = "tools",
    params(("id" = String, Path, description = "Registry id"), ("name" = String, Path, description = "Preset name")),
    request_body = PresetBody,
    responses((status = 200, body = Preset), (status = 400, body = ErrorMessage),
        (status = 403, body = ErrorMessage), (status = 404, body = ErrorMessage)))]
pub async fn save(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path((id, name)): Path<(String, String)>,
    Body(body): Body<PresetBody>,
) -> Result<Json<Preset>, ApiError> {
    person.require(Role::Runner)?;
    let preset = Preset { tool: id, name, description: body.description, args: body.args };
    Ok(Json(state.engine.save_preset(preset)?))
}

/// Delete a preset, as a runner or above.
#[utoipa::path(delete, path = "/api/tools/{id}/presets/{name}", operation_id = "deletePreset", tag = "tools",
    params(("id" = String, Path, description = "Registry id"), ("name" = String, Path, description = "Preset name")),
    responses((status = 204), (status = 400, body = ErrorMessage), (status = 403, body = ErrorMessage),
        (status = 404, body = ErrorMessage)))]
pub async fn delete(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Path((id, name)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    person.require(Role::Runner)?;
    state.engine.delete_preset(&id, &name)?;
    Ok(StatusCode::NO_CONTENT)
}
