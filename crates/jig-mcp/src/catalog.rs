//! The registry as MCP tools: each tool with its resolved input and output schemas, and
//! annotations derived from what its definition declares (never from what it claims about
//! itself in prose).

use jig_model::ToolDef;
use jig_model::runbook::kernel::GovernanceAction;
use jig_model::toolpack::SideEffect;
use rmcp::model::Tool;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// How tools are named to MCP clients: by id, or by the name `policy.mcp.names` gives one.
#[derive(Debug)]
pub struct Names<'a> {
    names: &'a BTreeMap<String, String>,
    ids: BTreeMap<&'a str, &'a str>,
}

impl<'a> Names<'a> {
    /// The names of `policy`.
    pub fn of(policy: &'a jig_policy::Policy) -> Self {
        let names = &policy.config().mcp.names;
        let ids = names.iter().map(|(id, name)| (name.as_str(), id.as_str())).collect();
        Self { names, ids }
    }

    /// The MCP name of the tool `id`.
    pub fn name<'b>(&'b self, id: &'b str) -> &'b str {
        self.names.get(id).map_or(id, String::as_str)
    }

    /// The tool id an MCP name stands for. A name given to a tool hides an id spelled the
    /// same (that tool is then reachable only by its own MCP name, if it has one).
    pub fn id<'b>(&'b self, name: &'b str) -> Option<&'b str> {
        match self.ids.get(name) {
            Some(id) => Some(id),
            None if self.names.contains_key(name) => None,
            None => Some(name),
        }
    }

    /// Whether `id` is reachable under its MCP name.
    pub fn reachable(&self, id: &str) -> bool {
        self.id(self.name(id)) == Some(id)
    }
}

/// The MCP description of `tool`, named `name`.
pub fn describe(tool: &ToolDef, name: &str) -> Tool {
    let mut description = json!({
        "name": name,
        "title": title(&tool.id),
        "description": tool.description,
        "inputSchema": crate::asked::for_agent(&object_schema(&tool.input_schema), tool),
        "annotations": annotations(tool),
    });
    if structured(tool) {
        description["outputSchema"] = tool.output_schema.clone();
    }
    // Every field is one `Tool` has; a failure here would be a bug in this function.
    serde_json::from_value(description).unwrap_or_else(|_| unreachable_tool(&tool.id))
}

/// Whether `tool`'s results go out as `structuredContent`: MCP's structured results are JSON
/// objects, so a tool whose output schema is not one is described by text only.
pub fn structured(tool: &ToolDef) -> bool {
    tool.output_schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Whether the policy lets anyone call `tool` at all. With no arguments, the policy's checks
/// of arguments find nothing to refuse, so a denial here holds whatever the call: such a tool
/// is not shown to an agent.
pub fn callable(policy: &jig_policy::Policy, tool: &ToolDef) -> bool {
    policy.decide(tool, &Value::Object(Map::new())).action != GovernanceAction::Deny
}

/// MCP's hints, from the definition: read-only when it declares no effect beyond reading,
/// destructive when it writes or runs programs, idempotent when deterministic and without
/// side effects or declared so, open-world when it talks to the network.
fn annotations(tool: &ToolDef) -> Value {
    let effects = &tool.side_effects;
    let read_only = !tool.has_side_effects();
    let destructive = effects.iter().any(|e| matches!(e, SideEffect::Write | SideEffect::Exec))
        || (!tool.effect_tags().is_empty() && !read_only);
    json!({
        "title": title(&tool.id),
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": tool.deterministic,
        "openWorldHint": effects.contains(&SideEffect::Network),
    })
}

/// `acme.coverage_summary` → `Coverage summary`: the last segment, for people.
pub fn title(id: &str) -> String {
    let last = id.rsplit(['.', '/']).next().unwrap_or(id);
    let words = last.replace(['_', '-'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => id.to_owned(),
    }
}

/// MCP requires `inputSchema` to be an object schema; a tool without arguments gets one.
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if !map.is_empty() => schema.clone(),
        _ => json!({ "type": "object", "properties": {} }),
    }
}

fn unreachable_tool(id: &str) -> Tool {
    tracing::error!(tool = id, "a tool's MCP description did not deserialise");
    Tool::new(id.to_owned(), "", std::sync::Arc::new(Map::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_given_to_a_tool_stands_for_it() {
        let names: BTreeMap<String, String> =
            [("fixtures.echo".to_owned(), "echo".to_owned())].into();
        let ids = names.iter().map(|(id, name)| (name.as_str(), id.as_str())).collect();
        let names = Names { names: &names, ids };
        assert_eq!(names.name("fixtures.echo"), "echo");
        assert_eq!(names.id("echo"), Some("fixtures.echo"));
        // Its id is no second name for it; other ids are their own names.
        assert_eq!(names.id("fixtures.echo"), None);
        assert_eq!(names.id("file_read"), Some("file_read"));
        assert!(names.reachable("fixtures.echo") && names.reachable("file_read"));
    }

    #[test]
    fn titles_are_for_people() {
        assert_eq!(title("acme.coverage_summary"), "Coverage summary");
        assert_eq!(title("file_read"), "File read");
        assert_eq!(title("netkit/tls-days-left"), "Tls days left");
    }

    #[test]
    fn an_empty_input_schema_is_still_an_object_schema() {
        assert_eq!(object_schema(&json!({})), json!({ "type": "object", "properties": {} }));
        let schema = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
        assert_eq!(object_schema(&schema), schema);
    }
}
