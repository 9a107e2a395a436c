//! The project's runbooks as MCP prompts: an agent (or the person at the client) picks one,
//! fills its inputs, and gets the instruction to start it in Jig, where each step is governed
//! and audited and a reviewer steps through what needs a person. An input whose value (given,
//! or its default) names a resource Jig serves brings that resource along, read as any read
//! is: a run to look into, a ticket, a diagram (images come as images).

use std::sync::Arc;

use jig_app::App;
use jig_app::runbooks::RunbookSummary;
use jig_engine::Engine;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteResult, GetPromptResult, ListPromptsResult, ReadResourceResult, ResourceContents,
};
use serde_json::{Map, Value, json};

/// Every runbook, its inputs as the prompt's arguments.
pub fn list(app: &App) -> ListPromptsResult {
    let prompts: Vec<Value> = app
        .runbook_list()
        .into_iter()
        .map(|runbook| {
            json!({
                "name": runbook.name,
                "title": crate::catalog::title(&runbook.name),
                "description": runbook.description.unwrap_or_else(|| format!("The runbook `{}`.", runbook.name)),
                "arguments": arguments(&runbook.inputs),
            })
        })
        .collect();
    serde_json::from_value(json!({ "prompts": prompts })).unwrap_or_default()
}

/// The runbook `name`, when the project has it.
fn runbook(app: &App, name: &str) -> Option<RunbookSummary> {
    app.runbook_list().into_iter().find(|runbook| runbook.name == name)
}

/// The prompt of runbook `name` with `args` as its inputs, and the resources it brings along
/// (each input value naming a resource Jig serves), to be read and added with [`attach`].
pub fn get(
    app: &App,
    name: &str,
    args: &Map<String, Value>,
) -> Result<(GetPromptResult, Vec<String>), ErrorData> {
    let runbook = runbook(app, name).ok_or_else(|| {
        ErrorData::invalid_params(format!("no runbook `{name}`"), Some(json!({ "name": name })))
    })?;
    let attachments = attachments(app.engine(), &runbook.inputs, args);
    let declared = arguments(&runbook.inputs);
    for argument in &declared {
        let required = argument["required"] == json!(true);
        let given = argument["name"].as_str().is_some_and(|n| args.contains_key(n));
        if required && !given {
            return Err(ErrorData::invalid_params(
                format!(
                    "runbook `{name}` needs the input `{}`",
                    argument["name"].as_str().unwrap_or_default()
                ),
                None,
            ));
        }
    }
    // Only the runbook's own inputs: a made-up name would reach the command line below.
    if let Some(unknown) =
        args.keys().find(|key| !declared.iter().any(|a| a["name"].as_str() == Some(key.as_str())))
    {
        return Err(ErrorData::invalid_params(
            format!("runbook `{name}` has no input `{unknown}`"),
            Some(json!({ "input": unknown })),
        ));
    }
    // One POSIX shell word per argument, quoted by the same code that quotes every command
    // line Jig writes: a value is never code for the shell the agent pastes this into.
    let mut words = vec!["jig".to_owned(), "runbook".to_owned(), "run".to_owned(), name.to_owned()];
    for (key, value) in args {
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        words.extend(["--input".to_owned(), format!("{key}={value}")]);
    }
    let command = jig_policy::command::render(&words);
    let text = format!(
        "Run the runbook `{name}`{}{}.\n\nStart it with this command (or from Jig's workbench):\n\n\
         ```sh\n{command}\n```\n\nEach tool step goes through Jig's policy and audit; steps that \
         need a person wait for their decision in the workbench.",
        runbook.description.map(|d| format!(" ({d})")).unwrap_or_default(),
        if args.is_empty() {
            String::new()
        } else {
            format!(" with the inputs {}", Value::Object(args.clone()))
        },
    );
    let result = json!({
        "description": format!("Start the runbook `{name}`"),
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    });
    let prompt = serde_json::from_value(result)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None::<Value>))?;
    Ok((prompt, attachments))
}

/// The resources a runbook with `inputs` brings along with `args`: each input's value, given
/// or its default, that names a resource Jig serves.
fn attachments(engine: &Arc<Engine>, inputs: &Value, args: &Map<String, Value>) -> Vec<String> {
    let defaults = inputs
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(input, _)| !args.contains_key(*input))
        .filter_map(|(_, declaration)| declaration.get("default"));
    let mut uris: Vec<String> = args
        .values()
        .chain(defaults)
        .filter_map(Value::as_str)
        .filter(|value| crate::resources::exists(engine, value))
        .map(str::to_owned)
        .collect();
    uris.dedup();
    uris
}

/// `prompt` with `contents` as further messages: images and audio as such, anything else as
/// an embedded resource.
pub fn attach(
    prompt: GetPromptResult,
    contents: ReadResourceResult,
) -> Result<GetPromptResult, ErrorData> {
    let internal = |error: serde_json::Error| ErrorData::internal_error(error.to_string(), None);
    let mut prompt = serde_json::to_value(prompt).map_err(internal)?;
    let Some(messages) = prompt.get_mut("messages").and_then(Value::as_array_mut) else {
        return Err(ErrorData::internal_error("a prompt without messages", None));
    };
    for item in contents.contents {
        let content = match &item {
            ResourceContents::BlobResourceContents { mime_type: Some(mime), blob, .. }
                if mime.starts_with("image/") || mime.starts_with("audio/") =>
            {
                let kind = if mime.starts_with("image/") { "image" } else { "audio" };
                json!({ "type": kind, "data": blob, "mimeType": mime })
            }
            _ => json!({ "type": "resource", "resource": item }),
        };
        messages.push(json!({ "role": "user", "content": content }));
    }
    serde_json::from_value(prompt).map_err(internal)
}

/// A runbook's inputs (name → declaration) as prompt arguments.
fn arguments(inputs: &Value) -> Vec<Value> {
    let Some(inputs) = inputs.as_object() else { return Vec::new() };
    inputs
        .iter()
        .map(|(name, declaration)| {
            let required = declaration.get("required").and_then(Value::as_bool).unwrap_or(false)
                && declaration.get("default").is_none();
            let mut argument = json!({ "name": name, "required": required });
            if let Some(description) = declaration.get("description").and_then(Value::as_str) {
                argument["description"] = json!(description);
            }
            argument
        })
        .collect()
}

/// Values for the argument `argument` of prompt `name` starting with `prefix`: the runbook
/// input's `enum`, or its `default`.
pub fn complete(app: &App, name: &str, argument: &str, prefix: &str) -> CompleteResult {
    let declaration = runbook(app, name)
        .and_then(|runbook| runbook.inputs.get(argument).cloned())
        .unwrap_or(Value::Null);
    let candidates = match (declaration.get("enum"), declaration.get("default")) {
        (Some(Value::Array(values)), _) => values.clone(),
        (_, Some(default)) => vec![default.clone()],
        _ => Vec::new(),
    };
    let values: Vec<String> = candidates
        .iter()
        .map(|value| value.as_str().map_or_else(|| value.to_string(), str::to_owned))
        .filter(|value| value.starts_with(prefix))
        .take(100)
        .collect();
    let result =
        json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } });
    serde_json::from_value(result).unwrap_or_default()
}
