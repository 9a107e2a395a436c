//! `/api/artifacts/{sha256}`: what a run produced (its declared outputs and its log), by the
//! hash its result names, for viewing and saving.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::extract::Params;
use crate::routes::download;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// How to name the download.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ArtifactQuery {
    /// The file name to save it as (default: the hash).
    pub name: Option<String>,
}

/// An artifact's bytes, checked against its hash (content-addressed, so cacheable for good).
#[utoipa::path(get, path = "/api/artifacts/{sha256}", operation_id = "readArtifact", tag = "audit",
    params(("sha256" = String, Path, description = "The artifact's SHA-256, hex"), ArtifactQuery),
    responses((status = 200, description = "The artifact's bytes", content((String = "application/octet-stream"))),
        (status = 400, body = ErrorMessage), (status = 404, body = ErrorMessage),
        (status = 500, body = ErrorMessage)))]
pub async fn read(
    State(state): State<AppState>,
    Path(sha256): Path<String>,
    Params(query): Params<ArtifactQuery>,
) -> Result<axum::response::Response, ApiError> {
    let bytes = state.engine.artifact(&sha256).await?;
    let name = query.name.unwrap_or_else(|| sha256.clone());
    Ok(download::file(&name, bytes, true))
}
