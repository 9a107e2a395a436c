//! The audit as MCP resources: `jig://runs/recent` (the latest runs), and
//! `jig://runs/{request_id}` (one call as recorded: its state, decision, arguments and
//! response). They are read from the store as the workbench's audit view reads them.

use std::sync::Arc;

use jig_engine::Engine;
use jig_engine::history::RunQuery;
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ResourceContents,
};
use serde_json::{Value, json};

/// The latest runs.
pub const RECENT: &str = "jig://runs/recent";
const RUN_PREFIX: &str = "jig://runs/";
/// How many runs `jig://runs/recent` holds.
const RECENT_RUNS: i64 = 50;

/// The fixed resources.
pub fn list() -> ListResourcesResult {
    let resources = json!({ "resources": [{
        "uri": RECENT,
        "name": "recent-runs",
        "title": "Recent runs",
        "description": "The latest calls in this project's audit, newest first (tool, state, principal, time).",
        "mimeType": "application/json",
    }]});
    serde_json::from_value(resources).unwrap_or_default()
}

/// The resource templates.
pub fn templates() -> ListResourceTemplatesResult {
    let templates = json!({ "resourceTemplates": [{
        "uriTemplate": "jig://runs/{request_id}",
        "name": "run",
        "title": "One run",
        "description": "One call as the audit recorded it: state, policy decision, arguments and response.",
        "mimeType": "application/json",
    }]});
    serde_json::from_value(templates).unwrap_or_default()
}

/// Read `uri`.
pub async fn read(engine: &Arc<Engine>, uri: &str) -> Result<ReadResourceResult, ErrorData> {
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
    let contents = ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some("application/json".to_owned()),
        text,
        meta: None,
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource `{uri}`: Jig serves {RECENT} and jig://runs/{{request_id}}"),
        Some(json!({ "uri": uri })),
    )
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None::<Value>)
}
