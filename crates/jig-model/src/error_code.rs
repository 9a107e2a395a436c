//! The stable error codes of DESIGN.md §6: seed 002's ten plus Jig's three.
//!
//! Surfaces show a code next to the message; clients branch on the code, never on the text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A stable, machine-readable error code carried by `ErrorMessage` and `ToolResponse.errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ErrorCode {
    /// A file could not be read, written, moved or found.
    #[serde(rename = "E_FILE_IO")]
    FileIo,
    /// Source code did not parse.
    #[serde(rename = "E_AST_PARSE")]
    AstParse,
    /// A structural edit could not be applied.
    #[serde(rename = "E_AST_EDIT")]
    AstEdit,
    /// Input or output failed its schema, or a validator rule blocked the call.
    #[serde(rename = "E_VALIDATION_FAIL")]
    ValidationFail,
    /// A git operation failed.
    #[serde(rename = "E_GIT")]
    Git,
    /// An HTTP request failed.
    #[serde(rename = "E_HTTP")]
    Http,
    /// A command failed to start or was refused.
    #[serde(rename = "E_SHELL")]
    Shell,
    /// The policy denied the call, or an approval token was not valid for it.
    #[serde(rename = "E_POLICY")]
    Policy,
    /// The call ran out of time.
    #[serde(rename = "E_TIMEOUT")]
    Timeout,
    /// A bug or an unexpected condition in Jig itself.
    #[serde(rename = "E_INTERNAL")]
    Internal,
    /// No tool or runbook by that name.
    #[serde(rename = "E_NOT_FOUND")]
    NotFound,
    /// A size limit was hit.
    #[serde(rename = "E_LIMIT")]
    Limit,
    /// An idempotency key clashed with a different request.
    #[serde(rename = "E_CONFLICT")]
    Conflict,
}

impl ErrorCode {
    /// Every code, in the order DESIGN.md lists them.
    pub const ALL: [ErrorCode; 13] = [
        Self::FileIo,
        Self::AstParse,
        Self::AstEdit,
        Self::ValidationFail,
        Self::Git,
        Self::Http,
        Self::Shell,
        Self::Policy,
        Self::Timeout,
        Self::Internal,
        Self::NotFound,
        Self::Limit,
        Self::Conflict,
    ];

    /// The code spelled `text` on the wire (`E_FILE_IO`), if there is one.
    pub fn from_wire(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.as_str() == text)
    }

    /// The wire spelling, e.g. `E_FILE_IO`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FileIo => "E_FILE_IO",
            Self::AstParse => "E_AST_PARSE",
            Self::AstEdit => "E_AST_EDIT",
            Self::ValidationFail => "E_VALIDATION_FAIL",
            Self::Git => "E_GIT",
            Self::Http => "E_HTTP",
            Self::Shell => "E_SHELL",
            Self::Policy => "E_POLICY",
            Self::Timeout => "E_TIMEOUT",
            Self::Internal => "E_INTERNAL",
            Self::NotFound => "E_NOT_FOUND",
            Self::Limit => "E_LIMIT",
            Self::Conflict => "E_CONFLICT",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
