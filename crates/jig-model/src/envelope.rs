//! The JSON envelopes of seed 002 §2: what clients send and what the runtime answers.
//!
//! Each envelope carries its `"type"` discriminator as its first field, in the struct itself, so
//! whichever surface serialises one speaks the seed's shape, and a stream of mixed messages (a
//! WebSocket, an MCP bridge) can be decoded as one [`Envelope`]. On input the tag may be left out
//! (`jig call --request` takes a bare request); a wrong tag is refused. `ToolResponse` adds `run_id`
//! and `replayed` after the seed's fields (DESIGN.md §6).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ErrorCode;

/// A request to run one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolRequest {
    /// Always `"ToolRequest"`.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag::ToolRequest::openapi_schema))]
    pub kind: tag::ToolRequest,
    /// The registry id of the tool, e.g. `file_read` or `acme.deploy`.
    pub tool: String,
    /// The arguments, validated against the tool's `inputSchema`.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Caller-chosen id that ties responses and events to this request.
    pub request_id: String,
    /// The session the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Seconds since the Unix epoch, as the client saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// One error inside a [`ToolResponse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResponseError {
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for people.
    pub message: String,
    /// Structured details (the field, the rule, the limit…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ResponseError {
    /// The approval a refused call waits for (`details.approval_id`, where the engine writes
    /// it), if this error says it waits.
    pub fn approval_id(&self) -> Option<crate::ApprovalId> {
        let id = self.details.as_ref()?.get("approval_id")?.as_str()?;
        Some(crate::ApprovalId::new(id))
    }
}

/// The outcome of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolResponse {
    /// Always `"ToolResponse"`.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag::ToolResponse::openapi_schema))]
    pub kind: tag::ToolResponse,
    /// `true` when the tool ran and its output passed validation.
    pub ok: bool,
    /// The registry id of the tool.
    pub tool: String,
    /// The id of the request this answers.
    pub request_id: String,
    /// Wall time of the call in milliseconds.
    pub duration_ms: u64,
    /// The tool's output (valid against its `outputSchema` when `ok`).
    #[serde(default)]
    pub data: Value,
    /// Why the call failed; empty when `ok`.
    #[serde(default)]
    pub errors: Vec<ResponseError>,
    /// Deterministic run identity (DESIGN.md §5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `true` when the result was replayed from the audit store instead of executed.
    #[serde(default)]
    pub replayed: bool,
    /// Set while the call's work waits or runs on a scheduler (seed 001's slurm and hybrid
    /// plans): `ok` then means *accepted*, and `data` is empty until the job is collected
    /// (`jig runs show`, `jig call --wait`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<SubmittedJob>,
}

impl ToolResponse {
    /// The answer to a request refused before it ran: nothing ran, nothing is recorded here.
    pub fn refused(tool: &str, request_id: &str, code: ErrorCode, message: String) -> Self {
        Self {
            kind: Default::default(),
            ok: false,
            tool: tool.to_owned(),
            request_id: request_id.to_owned(),
            duration_ms: 0,
            data: Value::Null,
            errors: vec![ResponseError { code, message, details: None }],
            run_id: None,
            replayed: false,
            job: None,
        }
    }

    /// The approval this response says the call waits for (`E_POLICY` with
    /// `details.approval_id`), if it does: what a surface acts on when a call waits.
    pub fn waits_for(&self) -> Option<crate::ApprovalId> {
        if self.ok {
            return None;
        }
        self.errors.iter().find_map(ResponseError::approval_id)
    }
}

/// A call's job on a scheduler, as a response reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubmittedJob {
    /// The scheduler (`slurm`).
    pub engine: String,
    /// The job's id there.
    pub id: String,
    /// `queued` or `running`.
    pub state: String,
    /// The call that submitted it (another one when this response is a replay).
    pub request_id: String,
}

/// Progress of a running task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CallProgress))]
pub struct Progress {
    /// Percent complete, 0–100, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct: Option<f64>,
    /// What is happening now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An event about a running request: progress, a chunk of output, a state change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventMessage {
    /// Always `"EventMessage"`.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag::EventMessage::openapi_schema))]
    pub kind: tag::EventMessage,
    /// The event name, e.g. `TaskProgress` or `OutputChunk`.
    pub event: String,
    /// The request the event belongs to.
    pub request_id: String,
    /// Progress, for `TaskProgress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// Event-specific payload (an output chunk, a state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An error not tied to a finished call (a malformed request, a transport problem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorMessage {
    /// Always `"ErrorMessage"`.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag::ErrorMessage::openapi_schema))]
    pub kind: tag::ErrorMessage,
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for people.
    pub message: String,
    /// The request concerned, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Liveness of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Heartbeat {
    /// Always `"Heartbeat"`.
    #[serde(rename = "type", default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag::Heartbeat::openapi_schema))]
    pub kind: tag::Heartbeat,
    /// The session that is alive.
    pub session_id: String,
    /// Seconds since the Unix epoch.
    pub timestamp: i64,
}

/// Any envelope, told apart by its `"type"` field (each variant's own tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Envelope {
    /// See [`ToolRequest`].
    ToolRequest(ToolRequest),
    /// See [`ToolResponse`].
    ToolResponse(ToolResponse),
    /// See [`EventMessage`].
    EventMessage(EventMessage),
    /// See [`ErrorMessage`].
    ErrorMessage(ErrorMessage),
    /// See [`Heartbeat`].
    Heartbeat(Heartbeat),
}

/// The `"type"` tags: one single-valued type per envelope, so the tag is written by construction
/// and a message of another type does not decode.
pub mod tag {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    macro_rules! tags {
        ($($name:ident),*) => {$(
            #[doc = concat!("The tag `\"", stringify!($name), "\"`.")]
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
            #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
            pub enum $name {
                #[doc = concat!("`\"", stringify!($name), "\"`.")]
                #[default]
                $name,
            }

            #[cfg(feature = "openapi")]
            impl $name {
                /// The field's schema: the one string, described (utoipa's own wraps an inlined
                /// enum with a description in an `allOf` whose second half says `object`).
                pub fn openapi_schema() -> utoipa::openapi::Object {
                    utoipa::openapi::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::Type::String)
                        .enum_values(Some([stringify!($name)]))
                        .description(Some(concat!("Always `\"", stringify!($name), "\"`.")))
                        .build()
                }
            }
        )*};
    }

    tags!(ToolRequest, ToolResponse, EventMessage, ErrorMessage, Heartbeat);
}
