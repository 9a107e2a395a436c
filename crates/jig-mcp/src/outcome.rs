//! A [`ToolResponse`] as an MCP tool result.
//!
//! A result is `structuredContent` (the tool's JSON object, as its output schema describes it)
//! with its compact JSON as a text block for clients that read only text. A tool whose output
//! schema says `x-mcp-content: true` returns its own content blocks in `content` (text, image,
//! audio, embedded resources): those are the result's content. A failed call is a result with
//! `isError: true` whose text leads with the seed's error code; the envelope's errors are in
//! `_meta` (`jig/errors`), so a client can act on the code, the rule and an approval's id.

use jig_model::ToolDef;
use jig_model::envelope::{ResponseError, ToolResponse};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// `coded!(Policy, "`{tool}` may not …")`: a refusal's text as every MCP error reads,
/// `E_…: message`, its code an [`ErrorCode`](jig_model::ErrorCode) variant (the same codes the
/// API and the CLI answer with).
#[macro_export]
macro_rules! coded {
    ($code:ident, $($message:tt)*) => {
        format!("{}: {}", jig_model::ErrorCode::$code.as_str(), format_args!($($message)*))
    };
}

/// The output-schema annotation that makes a tool's `content` its MCP content blocks.
pub const CONTENT_MARK: &str = "x-mcp-content";

/// The MCP result of `response` (from `tool`, when it exists).
pub fn result(tool: Option<&ToolDef>, response: &ToolResponse) -> CallToolResult {
    let mut result = if response.ok { success(tool, response) } else { failure(response) };
    let mut meta = json!({ "jig/request_id": response.request_id });
    if let Some(run_id) = &response.run_id {
        meta["jig/run_id"] = json!(run_id);
    }
    if response.replayed {
        meta["jig/replayed"] = json!(true);
    }
    if !response.ok {
        meta["jig/errors"] = json!(response.errors);
    }
    result["_meta"] = meta;
    serde_json::from_value(result).unwrap_or_else(|error| {
        let text = crate::coded!(Internal, "the result could not be sent over MCP: {error}");
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)])
    })
}

fn success(tool: Option<&ToolDef>, response: &ToolResponse) -> Value {
    let data = &response.data;
    let own_blocks = tool
        .is_some_and(|tool| tool.output_schema.get(CONTENT_MARK) == Some(&Value::Bool(true)))
        .then(|| data.get("content").filter(|c| c.is_array()).cloned())
        .flatten();
    let content = own_blocks.unwrap_or_else(|| json!([{ "type": "text", "text": text(data) }]));
    let mut result = json!({ "content": content, "isError": false });
    if data.is_object() && tool.is_none_or(crate::catalog::structured) {
        result["structuredContent"] = data.clone();
    }
    result
}

fn failure(response: &ToolResponse) -> Value {
    let text = match response.errors.as_slice() {
        [] => crate::coded!(Internal, "`{}` failed without saying why", response.tool),
        errors => errors.iter().map(line).collect::<Vec<_>>().join("\n"),
    };
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// `E_POLICY: … (approval 1f3…: approve it in the workbench or with `jig approvals approve
/// 1f3…`, then call again with the same arguments)`.
fn line(error: &ResponseError) -> String {
    let mut line = format!("{}: {}", error.code.as_str(), error.message);
    if let Some(id) = error.approval_id() {
        line.push_str(&format!(
            " (approval {id}: a person approves it in the workbench or with \
             `jig approvals approve {id}`; then call again with the same arguments)"
        ));
    }
    line
}

fn text(data: &Value) -> String {
    match data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_model::ErrorCode;

    fn response(ok: bool, data: Value, errors: Vec<ResponseError>) -> ToolResponse {
        ToolResponse {
            kind: Default::default(),
            ok,
            tool: "t".into(),
            request_id: "r1".into(),
            duration_ms: 1,
            data,
            errors,
            run_id: Some("run".into()),
            replayed: false,
            job: None,
        }
    }

    #[test]
    fn a_result_is_structured_with_its_json_as_text() {
        let result = result(None, &response(true, json!({ "n": 1 }), vec![]));
        let value = serde_json::to_value(&result).unwrap();
        assert_eq!(value["structuredContent"], json!({ "n": 1 }));
        assert_eq!(value["content"][0]["text"], "{\"n\":1}");
        assert_eq!(value["_meta"]["jig/run_id"], "run");
        assert_ne!(value["isError"], json!(true));
    }

    #[test]
    fn a_failure_leads_with_its_code_and_names_the_approval() {
        let error = ResponseError {
            code: ErrorCode::Policy,
            message: "`x` needs approval".into(),
            details: Some(json!({ "approval_id": "abc" })),
        };
        let value =
            serde_json::to_value(result(None, &response(false, Value::Null, vec![error]))).unwrap();
        assert_eq!(value["isError"], true);
        let text = value["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("E_POLICY: `x` needs approval (approval abc"), "{text}");
        assert_eq!(value["_meta"]["jig/errors"][0]["details"]["approval_id"], "abc");
    }
}
