//! Resources. The audit's own: `jig://runs/recent` (the latest runs) and
//! `jig://runs/{request_id}` (one call as recorded: its state, decision, arguments and
//! response), read from the store as the workbench's audit view reads them. And the project's
//! (`policy.mcp.resources`): each read by calling a tool without side effects, so a read is a
//! call like any other — validated, decided by the policy, recorded in the audit.

use std::sync::Arc;

use jig_engine::Engine;
use jig_engine::history::RunQuery;
use jig_model::ToolDef;
use jig_model::policy::McpResource;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceResult, ResourceContents,
};
use serde_json::{Map, Value, json};

/// The latest runs.
pub const RECENT: &str = "jig://runs/recent";
const RUN_PREFIX: &str = "jig://runs/";
/// How many runs `jig://runs/recent` holds.
const RECENT_RUNS: i64 = 50;

/// The fixed resources, and the project's without parts whose tool the policy lets anyone
/// call (as `tools/list` leaves out what the policy denies outright).
pub fn list(engine: &Arc<Engine>) -> ListResourcesResult {
    let mut resources = vec![json!({
        "uri": RECENT,
        "name": "recent-runs",
        "title": "Recent runs",
        "description": "The latest calls in this project's audit, newest first (tool, state, principal, time).",
        "mimeType": "application/json",
    })];
    resources.extend(project(engine, false));
    serde_json::from_value(json!({ "resources": resources })).unwrap_or_default()
}

/// The resource templates.
pub fn templates(engine: &Arc<Engine>) -> ListResourceTemplatesResult {
    let mut templates = vec![json!({
        "uriTemplate": "jig://runs/{request_id}",
        "name": "run",
        "title": "One run",
        "description": "One call as the audit recorded it: state, policy decision, arguments and response.",
        "mimeType": "application/json",
    })];
    templates.extend(project(engine, true));
    serde_json::from_value(json!({ "resourceTemplates": templates })).unwrap_or_default()
}

/// The project's resources that are templates (or not), as listed, leaving out those whose
/// tool is missing, has side effects or is denied outright.
fn project(engine: &Arc<Engine>, templated: bool) -> Vec<Value> {
    let policy = engine.policy();
    let key = if templated { "uriTemplate" } else { "uri" };
    policy
        .config()
        .mcp
        .resources
        .iter()
        .filter(|resource| resource.parts().is_empty() != templated)
        .filter(|resource| served(engine, &policy, resource).is_some())
        .map(|resource| describe(resource, key))
        .collect()
}

fn describe(resource: &McpResource, key: &str) -> Value {
    let mut described = json!({
        key: resource.uri,
        "name": resource.name.clone().unwrap_or_else(|| resource.uri.clone()),
    });
    if let Some(description) = &resource.description {
        described["description"] = json!(description);
    }
    if let Some(mime_type) = &resource.mime_type {
        described["mimeType"] = json!(mime_type);
    }
    described
}

/// The tool that serves `resource`, when it exists, reads only, and the policy does not deny
/// it outright.
fn served(
    engine: &Arc<Engine>,
    policy: &jig_policy::Policy,
    resource: &McpResource,
) -> Option<Arc<ToolDef>> {
    engine
        .get(&resource.tool)
        .filter(|tool| !tool.has_side_effects() && crate::catalog::callable(policy, tool))
}

/// Whether `uri` is one of the audit's resources.
pub fn is_audit(uri: &str) -> bool {
    uri.starts_with(RUN_PREFIX)
}

/// Read one of the audit's resources.
pub async fn read_audit(engine: &Arc<Engine>, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let body = if uri == RECENT {
        let query = RunQuery { limit: RECENT_RUNS, ..RunQuery::default() };
        let page = engine.history().runs(&query).await.map_err(internal)?;
        serde_json::to_value(page.runs).map_err(internal)?
    } else if let Some(request_id) = uri.strip_prefix(RUN_PREFIX).filter(|id| !id.is_empty()) {
        match engine.history().call(request_id).await.map_err(internal)? {
            Some(run) => serde_json::to_value(run).map_err(internal)?,
            None => return Err(not_found(uri)),
        }
    } else {
        return Err(not_found(uri));
    };
    let text = serde_json::to_string_pretty(&body).map_err(internal)?;
    Ok(ReadResourceResult::new(vec![text_contents(uri, "application/json", text)]))
}

/// The call that reads the project's resource `uri`: its tool, arguments and declared media
/// type.
pub fn call_for(
    engine: &Arc<Engine>,
    uri: &str,
) -> Result<(Arc<ToolDef>, Value, Option<String>), ErrorData> {
    let policy = engine.policy();
    let Some((resource, parts)) = policy
        .config()
        .mcp
        .resources
        .iter()
        .find_map(|resource| resource.matches(uri).map(|parts| (resource, parts)))
    else {
        return Err(not_found(uri));
    };
    let Some(tool) = engine.get(&resource.tool) else {
        return Err(ErrorData::internal_error(
            format!("`{uri}` is read by `{}`, which is not in the registry", resource.tool),
            Some(json!({ "uri": uri, "tool": resource.tool })),
        ));
    };
    if tool.has_side_effects() {
        return Err(ErrorData::invalid_request(
            format!(
                "`{uri}` is read by `{}`, which declares side effects: a resource is read by a tool that changes nothing",
                tool.id
            ),
            Some(json!({ "uri": uri, "tool": tool.id })),
        ));
    }
    let mut args: Map<String, Value> = resource.arguments.clone();
    for (name, value) in parts {
        args.insert(name, Value::String(value));
    }
    Ok((tool, Value::Object(args), resource.mime_type.clone()))
}

/// Whether a client may subscribe to `uri`: a resource Jig serves.
pub fn exists(engine: &Arc<Engine>, uri: &str) -> bool {
    if is_audit(uri) {
        return uri.len() > RUN_PREFIX.len();
    }
    engine.policy().config().mcp.resources.iter().any(|resource| resource.matches(uri).is_some())
}

/// The contents of `uri` from the result of the call of `tool` that read it. A tool that
/// returns its own content blocks: its text blocks as text (`mime_type`, or `text/plain`),
/// images and audio as binary with their own types, embedded resources as they are. Any other
/// tool: its JSON result as JSON text.
pub fn contents(
    uri: &str,
    mime_type: Option<&str>,
    tool: &ToolDef,
    result: CallToolResult,
) -> Result<ReadResourceResult, ErrorData> {
    if result.is_error == Some(true) {
        let text: Vec<String> =
            result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        return Err(ErrorData::internal_error(
            format!("`{uri}` could not be read: {}", text.join("; ")),
            result.meta.as_ref().and_then(|meta| serde_json::to_value(meta).ok()),
        ));
    }
    let own_blocks = tool.output_schema.get(crate::outcome::CONTENT_MARK) == Some(&json!(true));
    if let Some(structured) = result.structured_content.as_ref().filter(|_| !own_blocks) {
        let text = serde_json::to_string_pretty(structured).map_err(internal)?;
        let mime_type = mime_type.unwrap_or("application/json");
        return Ok(ReadResourceResult::new(vec![text_contents(uri, mime_type, text)]));
    }
    let mut contents = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => {
                contents.push(text_contents(uri, mime_type.unwrap_or("text/plain"), text.text));
            }
            ContentBlock::Image(image) => contents.push(blob(uri, image.mime_type, image.data)),
            ContentBlock::Audio(audio) => contents.push(blob(uri, audio.mime_type, audio.data)),
            ContentBlock::Resource(embedded) => contents.push(embedded.resource),
            // A link is no contents (and anything newer is not understood here).
            _ => {}
        }
    }
    Ok(ReadResourceResult::new(contents))
}

fn text_contents(uri: &str, mime_type: &str, text: String) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime_type.to_owned()),
        text,
        meta: None,
    }
}

fn blob(uri: &str, mime_type: String, data: String) -> ResourceContents {
    ResourceContents::BlobResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime_type),
        blob: data,
        meta: None,
    }
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "no resource `{uri}`: Jig serves {RECENT}, jig://runs/{{request_id}} and the project's `policy.mcp.resources`"
        ),
        Some(json!({ "uri": uri })),
    )
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None::<Value>)
}
