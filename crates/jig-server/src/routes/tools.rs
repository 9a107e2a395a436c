//! `/api/tools`: the registry, one tool with its resolved schemas and what the policy allows it,
//! and the preview of a call.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::Body;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// A tool as the list shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolSummary {
    /// Registry id.
    pub id: String,
    /// Semver.
    pub version: String,
    /// What it does.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
    /// The package that defines it.
    pub package: String,
    /// Execution kind (`builtin`, `cli`, `stdio`, …).
    pub kind: String,
    /// `none`, `read`, `write`, `network`, `exec`.
    pub side_effects: Vec<String>,
    /// `low`, `medium`, `high`.
    pub risk: String,
    /// Whether the same arguments always give the same result.
    pub deterministic: bool,
    /// What the policy decides for this tool with no arguments yet: `allow`,
    /// `require-approval` or `deny`, with its rule.
    pub verdict: Verdict,
}

/// A policy verdict for a tool.
#[derive(Debug, Serialize, ToSchema)]
pub struct Verdict {
    /// `allow`, `require-approval` or `deny`.
    pub action: String,
    /// The deciding rule.
    pub rule: String,
    /// Why.
    pub reason: String,
}

/// One tool in full.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolDetail {
    /// The list's fields.
    #[serde(flatten)]
    pub summary: ToolSummary,
    /// Where it is defined (`file:line`, relative to the project).
    pub source: String,
    /// The resolved, self-contained input schema.
    #[schema(value_type = Object)]
    pub input_schema: Value,
    /// The resolved output schema.
    #[schema(value_type = Object)]
    pub output_schema: Value,
    /// The definition as loaded (execution, caps, limits, templating, outputs).
    #[schema(value_type = Object)]
    pub definition: Value,
}

fn summary(policy: &jig_policy::Policy, tool: &jig_model::ToolDef) -> ToolSummary {
    let decision = policy.decide(tool, &Value::Object(Default::default()));
    ToolSummary {
        id: tool.id.clone(),
        version: tool.version.clone(),
        description: tool.description.clone(),
        tags: tool.tags.clone(),
        package: tool.package.clone(),
        kind: tool.execution.kind().to_owned(),
        side_effects: tool.side_effects.iter().map(|e| e.as_str().to_owned()).collect(),
        risk: tool.risk.as_str().to_owned(),
        deterministic: tool.deterministic,
        verdict: Verdict {
            action: decision.action.as_str().to_owned(),
            rule: decision.rule,
            reason: decision.reason,
        },
    }
}

/// Every tool, sorted by id.
#[utoipa::path(get, path = "/api/tools", operation_id = "listTools", tag = "tools",
    responses((status = 200, body = Vec<ToolSummary>)))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<ToolSummary>> {
    let policy = state.engine.policy();
    Json(state.engine.list(None, None).iter().map(|t| summary(&policy, t)).collect())
}

/// One tool with its resolved schemas.
#[utoipa::path(get, path = "/api/tools/{id}", operation_id = "showTool", tag = "tools",
    params(("id" = String, Path, description = "Registry id")),
    responses((status = 200, body = ToolDetail), (status = 404, body = ErrorMessage)))]
pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ToolDetail>, ApiError> {
    let tool =
        state.engine.get(&id).ok_or_else(|| ApiError::not_found(format!("no tool `{id}`")))?;
    Ok(Json(ToolDetail {
        summary: summary(&state.engine.policy(), &tool),
        source: format!("{}:{}", tool.source.file, tool.source.line),
        input_schema: tool.input_schema.clone(),
        output_schema: tool.output_schema.clone(),
        definition: serde_json::to_value(&*tool).unwrap_or_default(),
    }))
}

/// The arguments of a call to preview.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    /// The arguments.
    #[schema(value_type = Object)]
    pub args: Value,
    /// The session the call would be in (budgets are per session).
    #[serde(default)]
    pub session: Option<String>,
}

/// Check arguments and say what the policy would decide; nothing runs, nothing is audited.
#[utoipa::path(post, path = "/api/tools/{id}/preview", operation_id = "previewCall", tag = "tools",
    params(("id" = String, Path, description = "Registry id")),
    request_body = PreviewRequest,
    responses((status = 200, body = jig_engine::Preview), (status = 400, body = ErrorMessage),
        (status = 404, body = ErrorMessage)))]
pub async fn preview(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Body(request): Body<PreviewRequest>,
) -> Result<Json<jig_engine::Preview>, ApiError> {
    let session = request.session.unwrap_or_else(|| "web".to_owned());
    Ok(Json(state.engine.preview(&id, &request.args, &session).await?))
}
