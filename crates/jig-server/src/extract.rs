//! axum's `Json` and `Query` extractors with their rejections answered as the API answers every
//! error: a 400 `ErrorMessage` naming what was wrong (axum's own are plain text, 400, 415 or
//! 422, which no client of the OpenAPI document expects).

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body (`Content-Type: application/json`).
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<S, T> FromRequest<S> for Body<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => {
                Err(ApiError::bad_request(format!("request body: {}", rejection.body_text())))
            }
        }
    }
}

/// A JSON body that may be left out: an empty body is `None` (an older client's deny, say).
#[derive(Debug)]
pub struct MaybeBody<T>(pub Option<T>);

impl<S, T> FromRequest<S> for MaybeBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = axum::body::Bytes::from_request(request, state).await.map_err(|rejection| {
            ApiError::bad_request(format!("request body: {}", rejection.body_text()))
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(None));
        }
        serde_json::from_slice(&bytes)
            .map(|value| Self(Some(value)))
            .map_err(|error| ApiError::bad_request(format!("request body: {error}")))
    }
}

/// Query parameters.
#[derive(Debug)]
pub struct Params<T>(pub T);

impl<S, T> FromRequestParts<S> for Params<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => {
                Err(ApiError::bad_request(format!("query parameters: {}", rejection.body_text())))
            }
        }
    }
}
