//! Inputs the caller does not give. A tool marks an input property `x-jig-from: person` when
//! its value must come from the person at the client and never from the agent: a
//! confirmation, a reason, a choice. Over MCP the agent does not see those properties (they are
//! left out of the tool's `inputSchema`), may not send them, and Jig asks the person for them
//! with an elicitation form built from their declarations — defaults, enums, titled choices and
//! multi-selects as MCP's forms have them.
//!
//! `x-jig-from: model` marks a text the client's model writes (MCP sampling) from the tool
//! author's `x-jig-prompt`, whose `{name}` parts are the call's other arguments: a summary, a
//! commit message, without Jig holding any model's credentials. The tool's process never talks
//! to the model; it receives the text as an argument, checked against its schema.
//!
//! What is given joins the agent's arguments, and the call goes through validation, the
//! policy and the audit as any other. At the workbench and the CLI the caller is the person,
//! who fills them in like the rest.

#![allow(deprecated)] // MCP sampling: deprecated by a later revision, current in 2025-11-25.

use jig_model::ToolDef;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    SamplingMessage,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value, json};

/// The input-property keyword naming who gives a value: `person` or `model`.
pub const FROM: &str = "x-jig-from";
/// The prompt the model answers, for `x-jig-from: model`.
pub const PROMPT: &str = "x-jig-prompt";
/// The most tokens the model may answer with (default 1000).
pub const TOKENS: &str = "x-jig-max-tokens";
const MAX_TOKENS: u32 = 1000;

/// The properties of `tool`'s input given by `from` (`person`, `model`), as declared.
pub fn fields_from(tool: &ToolDef, from: &str) -> Map<String, Value> {
    tool.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, declaration)| declaration.get(FROM).and_then(Value::as_str) == Some(from))
        .map(|(name, declaration)| (name.clone(), declaration.clone()))
        .collect()
}

/// The properties of `tool`'s input the caller does not give.
fn hidden(tool: &ToolDef) -> Map<String, Value> {
    let mut hidden = fields_from(tool, "person");
    hidden.extend(fields_from(tool, "model"));
    hidden
}

/// `schema` (an input schema) without the properties the caller does not give: what an agent
/// sees.
pub fn for_agent(schema: &Value, tool: &ToolDef) -> Value {
    let hidden = hidden(tool);
    if hidden.is_empty() {
        return schema.clone();
    }
    let mut schema = schema.clone();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| !hidden.contains_key(name));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name.as_str().is_none_or(|name| !hidden.contains_key(name)));
    }
    schema
}

/// Why a call cannot have what the person gives, or their answers to merge into its arguments.
#[derive(Debug)]
pub enum Given {
    /// The tool asks nothing of a person.
    Nothing,
    /// The person's values and the model's texts.
    Values(Map<String, Value>),
    /// The call does not run: the text says why (it leads with an error code).
    Refused(String),
}

/// Get what `tool` needs besides `args` (the agent's, checked to hold none of it): the
/// person's values through elicitation, then the model's texts through sampling.
pub async fn ask(peer: &Peer<RoleServer>, tool: &ToolDef, args: &Map<String, Value>) -> Given {
    let hidden = hidden(tool);
    if hidden.is_empty() {
        return Given::Nothing;
    }
    if let Some(name) = args.keys().find(|name| hidden.contains_key(*name)) {
        let from = hidden[name].get(FROM).and_then(Value::as_str).unwrap_or("person");
        return Given::Refused(crate::coded!(
            Policy,
            "`{name}` of `{}` is given by the {from}, not by the caller (x-jig-from: {from})",
            tool.id
        ));
    }
    let by = |from: &str| -> Map<String, Value> {
        hidden
            .iter()
            .filter(|(_, declaration)| declaration.get(FROM).and_then(Value::as_str) == Some(from))
            .map(|(name, declaration)| (name.clone(), declaration.clone()))
            .collect()
    };
    let mut given = match from_person(peer, tool, &by("person")).await {
        Ok(values) => values,
        Err(refused) => return Given::Refused(refused),
    };
    let mut known = args.clone();
    known.extend(given.clone());
    match from_model(peer, tool, &by("model"), &known).await {
        Ok(texts) => given.extend(texts),
        Err(refused) => return Given::Refused(refused),
    }
    Given::Values(given)
}

async fn from_person(
    peer: &Peer<RoleServer>,
    tool: &ToolDef,
    fields: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    if fields.is_empty() {
        return Ok(Map::new());
    }
    if peer.peer_info().is_none_or(|info| info.capabilities.elicitation.is_none()) {
        return Err(crate::coded!(
            Policy,
            "`{}` needs {} from the person at the client, and this client cannot ask (no elicitation); call it from the workbench or `jig call`",
            tool.id,
            names(fields)
        ));
    }
    let schema = form(tool, fields).map_err(|error| {
        crate::coded!(ValidationFail, "the inputs of `{}` a person gives cannot be asked over MCP (its forms take strings, numbers, booleans and choices): {error}",
            tool.id)
    })?;
    let message = tool
        .input_schema
        .get("x-jig-ask")
        .and_then(Value::as_str)
        .map_or_else(|| format!("`{}` needs from you: {}", tool.id, names(fields)), str::to_owned);
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    match peer.create_elicitation(params).await {
        Ok(answer) if answer.action == ElicitationAction::Accept => {
            // Only what was asked: a client cannot slip in another argument this way.
            let mut values =
                answer.content.and_then(|c| c.as_object().cloned()).unwrap_or_default();
            values.retain(|name, _| fields.contains_key(name));
            Ok(values)
        }
        Ok(answer) => Err(crate::coded!(
            Policy,
            "the person {} giving {} (the call did not run)",
            if answer.action == ElicitationAction::Decline { "declined" } else { "cancelled" },
            names(fields)
        )),
        Err(error) => Err(crate::coded!(
            Policy,
            "the person at the client could not be asked for {}: {error} (the call did not run)",
            names(fields)
        )),
    }
}

/// Each text the model writes: its prompt with `known`'s values in, asked of the client.
async fn from_model(
    peer: &Peer<RoleServer>,
    tool: &ToolDef,
    fields: &Map<String, Value>,
    known: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    if fields.is_empty() {
        return Ok(Map::new());
    }
    if peer.peer_info().is_none_or(|info| info.capabilities.sampling.is_none()) {
        return Err(crate::coded!(
            Policy,
            "`{}` needs {} written by the client's model, and this client offers none (no sampling)",
            tool.id,
            names(fields)
        ));
    }
    let mut texts = Map::new();
    for (name, declaration) in fields {
        let Some(template) = declaration.get(PROMPT).and_then(Value::as_str) else {
            return Err(crate::coded!(
                ValidationFail,
                "`{name}` of `{}` is written by the model but has no `{PROMPT}`",
                tool.id
            ));
        };
        let max_tokens = declaration
            .get(TOKENS)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(MAX_TOKENS);
        let prompt = fill(template, known);
        let params =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], max_tokens);
        let answer = peer.create_message(params).await.map_err(|error| {
            crate::coded!(
                Policy,
                "the client's model did not write `{name}`: {error} (the call did not run)"
            )
        })?;
        let text: String = answer
            .message
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        texts.insert(name.clone(), Value::String(text));
    }
    Ok(texts)
}

/// `template` with each `{name}` replaced by `known`'s value (a string as is, anything else
/// as JSON); an unknown `{name}` stays as written.
fn fill(template: &str, known: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').map(|close| (&after[..close], close)) {
            Some((name, close)) if known.contains_key(name) => {
                match &known[name] {
                    Value::String(text) => out.push_str(text),
                    other => out.push_str(&other.to_string()),
                }
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The elicitation form of `fields`: each declaration without Jig's own keyword, required as
/// the tool requires it.
fn form(tool: &ToolDef, fields: &Map<String, Value>) -> Result<ElicitationSchema, String> {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, declaration)| {
            let mut declaration = declaration.clone();
            if let Some(object) = declaration.as_object_mut() {
                object.remove(FROM);
            }
            (name.clone(), declaration)
        })
        .collect();
    let required: Vec<&Value> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|name| name.as_str().is_some_and(|name| fields.contains_key(name)))
        .collect();
    let schema = json!({ "type": "object", "properties": properties, "required": required });
    serde_json::from_value(schema).map_err(|error| error.to_string())
}

fn names(fields: &Map<String, Value>) -> String {
    fields.keys().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::fill;
    use serde_json::json;

    #[test]
    fn a_prompt_takes_the_calls_values_and_leaves_the_rest() {
        let known = json!({ "prompt": "Hi {there}", "n": 3 });
        let known = known.as_object().unwrap();
        assert_eq!(
            fill("Say: {prompt} ({n}) {missing} {", known),
            "Say: Hi {there} (3) {missing} {"
        );
    }
}
