//! Errors as the API answers them: an HTTP status and seed 002's `ErrorMessage` envelope, with
//! the code the engine gives (one mapping for every surface).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use jig_engine::EngineError;
use jig_model::ErrorCode;
use jig_model::envelope::ErrorMessage;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: ErrorMessage,
}

impl ApiError {
    /// An error with this status, code and sentence.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: ErrorMessage {
                kind: Default::default(),
                code,
                message: message.into(),
                request_id: None,
            },
        }
    }

    /// 403 with `E_POLICY`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorCode::Policy, message)
    }

    /// 404 with `E_NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, message)
    }

    /// 400 with `E_VALIDATION_FAIL`, naming the argument.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::ValidationFail, message)
    }
}

/// The HTTP status of an error code.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::ValidationFail => StatusCode::BAD_REQUEST,
        ErrorCode::Policy => StatusCode::FORBIDDEN,
        ErrorCode::Conflict => StatusCode::CONFLICT,
        ErrorCode::Limit => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> Self {
        // Busy is a limit of this server, not of the request: 503, and the same request may
        // be sent again (IntoResponse adds Retry-After).
        let status = match error {
            EngineError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            _ => status_of(error.code()),
        };
        Self { status, message: error.to_message(None) }
    }
}

impl From<jig_audit::AuditError> for ApiError {
    fn from(error: jig_audit::AuditError) -> Self {
        EngineError::from(error).into()
    }
}

impl From<jig_app::AppError> for ApiError {
    fn from(error: jig_app::AppError) -> Self {
        match error {
            jig_app::AppError::Engine(error) => error.into(),
            other => Self::new(status_of(other.code()), other.code(), other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.message)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from_static("1"));
        }
        response
    }
}
