//! gert's `tool/v0` transports: `stdio` (a process per call, outputs extracted from what it
//! prints), `jsonrpc` (a persistent server answering JSON-RPC requests) and `mcp` (a tool of a
//! Model Context Protocol server). The servers of the last two are kept in
//! [`crate::upstream`].
//!
//! Argument templates use Go-template syntax (`{{ .url }}`). tool/v0 files write `argv` two
//! ways — with the program first (the kernel-v0 examples) or without it, `meta.binary` naming
//! it (the shared tools): when `argv[0]` is not the binary, the binary is put in front.

mod extract;
mod stdio;

use std::sync::Arc;

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::gert_tool::TransportMode;
use jig_model::tool_def::{GertExecution, ToolExecution};
use serde_json::Value;

use jig_exec::{Execution, Executor, Invocation, ToolError};

use crate::upstream::Servers;

/// Runs tool/v0 actions of every transport.
#[derive(Debug, Default)]
pub struct GertExecutor {
    servers: Arc<Servers>,
}

#[async_trait]
impl Executor for GertExecutor {
    fn command_line(&self, tool: &jig_model::ToolDef, args: &Value) -> Option<Vec<String>> {
        let ToolExecution::Gert(gert) = &tool.execution else { return None };
        (gert.kind == TransportMode::Stdio)
            .then(|| argv(gert, &with_defaults(args, &tool.input_schema)).ok())
            .flatten()
    }

    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let ToolExecution::Gert(gert) = &invocation.tool.execution else {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("`{}` is not a tool/v0 action", invocation.tool.id),
            ));
        };
        // A contract input's `default` fills an argument the call leaves out.
        let args = with_defaults(invocation.args, &invocation.tool.input_schema);
        let invocation = Invocation { args: &args, ..invocation };
        let output = match gert.kind {
            TransportMode::Stdio => stdio::run(&invocation, gert).await?,
            TransportMode::Jsonrpc => self.servers.jsonrpc(&invocation, gert).await?,
            // No tool named: the server itself, asked for its tools (discovery).
            TransportMode::Mcp if gert.mcp_tool.is_none() => {
                self.servers.list_tools(&invocation, gert).await?
            }
            TransportMode::Mcp => self.servers.mcp(&invocation, gert).await?,
        };
        Ok(Execution::Done(output))
    }
}

/// An argv template rendered with the call's arguments (text as is, other values as JSON), by
/// the runbooks' template language. An argument the call does not have (or gives as null) is
/// an error, never an empty word.
pub(crate) fn render(template: &str, args: &Value) -> Result<String, ToolError> {
    if !jig_expr::is_template(template) {
        return Ok(template.to_owned());
    }
    let given = match args {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    };
    jig_expr::render(template, &given).map_err(|e| {
        ToolError::new(ErrorCode::ValidationFail, format!("the template `{template}`: {e}"))
    })
}

/// `args` with the schema's property defaults for what it lacks.
fn with_defaults(args: &Value, schema: &Value) -> Value {
    let mut args = args.clone();
    if let (Value::Object(map), Some(properties)) =
        (&mut args, schema.get("properties").and_then(Value::as_object))
    {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                map.entry(name.clone()).or_insert_with(|| default.clone());
            }
        }
    }
    args
}

/// The argv of an action: rendered, with the binary in front when it is not already there.
pub(crate) fn argv(gert: &GertExecution, args: &Value) -> Result<Vec<String>, ToolError> {
    let mut argv =
        gert.argv.iter().map(|part| render(part, args)).collect::<Result<Vec<_>, _>>()?;
    let mut sources = gert.argv.clone();
    if let Some(binary) = &gert.binary {
        let first = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a));
        if first != Some(binary.rsplit('/').next().unwrap_or(binary)) {
            argv.insert(0, binary.clone());
            sources.insert(0, binary.clone());
        }
    }
    jig_exec::template::check_positional(&sources, &argv)?;
    if argv.is_empty() {
        return Err(ToolError::new(
            ErrorCode::Internal,
            "the action has neither `argv` nor a binary",
        ));
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn go_templates_take_arguments_and_refuse_missing_ones() {
        let args = json!({ "url": "https://x.example", "n": 3 });
        assert_eq!(
            render("{{ .url }}/a?n={{.n}}", &args).expect("render"),
            "https://x.example/a?n=3"
        );
        assert!(render("{{ .missing }}", &args).is_err());
        assert_eq!(render("-s", &args).expect("plain"), "-s");
    }

    #[test]
    fn the_binary_goes_first_once() {
        let mut gert: GertExecution = serde_json::from_value(
            json!({ "kind": "stdio", "binary": "curl", "argv": ["-s", "{{ .url }}"] }),
        )
        .expect("gert");
        let args = json!({ "url": "u" });
        assert_eq!(argv(&gert, &args).expect("argv"), ["curl", "-s", "u"]);
        gert.argv = vec!["curl".into(), "-s".into()];
        assert_eq!(argv(&gert, &args).expect("argv"), ["curl", "-s"]);
    }
}
