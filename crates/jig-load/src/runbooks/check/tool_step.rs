//! A runbook's tool step against the tool it calls: the tool is on the runbook's list, the
//! action exists, and the inputs are those the tool takes.

use std::collections::{BTreeMap, BTreeSet};

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::runbook::{RunbookApi, Step};
use serde_json::Value;

use super::{Checker, TOOLPACK_ACTION, ToolRef};
use crate::located::Suggest;
use crate::toolfile::{ToolFile, ToolFileKind};

impl Checker<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tool_step(
        &self,
        step: &Step,
        tool: &str,
        action: Option<&str>,
        inputs: &serde_json::Map<String, Value>,
        spread: bool,
        tools: &BTreeMap<String, ToolRef>,
        out: &mut Vec<Diagnostic>,
    ) {
        if tool.is_empty() {
            return; // reported as a missing `tool`
        }
        let tool_pointer = match self.runbook.api_version {
            RunbookApi::KernelV0 => format!("{}/tool", step.pointer),
            _ => format!("{}/tool/name", step.pointer),
        };
        let resolved = match tools.get(tool) {
            Some(resolved) => resolved,
            None if self.runbook.tools.iter().any(|t| t == tool) => return, // failed above
            None => {
                let mut diagnostic = Diagnostic::error(
                    codes::RESOLVE_TOOL,
                    format!("step uses tool `{tool}`, which is not in the runbook's `tools` list"),
                );
                diagnostic = diagnostic.suggest_or(
                    tool,
                    self.runbook.tools.iter().map(String::as_str),
                    format!("add `{tool}` to `tools`: the list is the runbook's allow-list"),
                );
                out.push(self.located.at(diagnostic, &tool_pointer));
                return;
            }
        };
        let ToolRef::File(file) = resolved else { return };
        let Some(schema) = self.schema_of(step, tool, action, file, out) else { return };
        self.tool_inputs(step, tool, file, schema, inputs, spread, out);
    }

    /// The input schema of `tool`'s `action` (a toolpack's one entry point, or a tool/v0
    /// action), once the step names it rightly.
    fn schema_of<'f>(
        &self,
        step: &Step,
        tool: &str,
        action: Option<&str>,
        file: &'f ToolFile,
        out: &mut Vec<Diagnostic>,
    ) -> Option<&'f Value> {
        let action_pointer = match self.runbook.api_version {
            RunbookApi::KernelV0 => format!("{}/action", step.pointer),
            _ => format!("{}/tool/action", step.pointer),
        };
        match &file.kind {
            None => None, // the tool file has its own errors
            Some(ToolFileKind::Toolpack) => {
                // A toolpack has one entry point; v0/v1 steps, which must name an action, call
                // it `run`.
                if let Some(action) = action.filter(|a| *a != TOOLPACK_ACTION) {
                    out.push(
                        self.located.at(
                            Diagnostic::error(
                                codes::RUNBOOK,
                                format!("`{tool}` is a toolpack; it has no action `{action}`"),
                            )
                            .with_hint(format!(
                                "omit `action` (or write `{TOOLPACK_ACTION}` where the format requires one)"
                            )),
                            &action_pointer,
                        ),
                    );
                    return None;
                }
                file.defs.first().map(|d| &d.input_schema)
            }
            Some(ToolFileKind::Gert(gert)) => {
                let Some(action) = action else {
                    let actions: Vec<&str> = gert.actions.keys().map(String::as_str).collect();
                    out.push(
                        self.located.at(
                            Diagnostic::error(
                                codes::RUNBOOK,
                                format!("step calls `{tool}` without an `action`"),
                            )
                            .with_hint(format!("its actions: {}", actions.join(", "))),
                            &step.pointer,
                        ),
                    );
                    return None;
                };
                if !gert.actions.contains_key(action) {
                    let actions: Vec<&str> = gert.actions.keys().map(String::as_str).collect();
                    let mut diagnostic = Diagnostic::error(
                        codes::RUNBOOK,
                        format!("tool `{tool}` has no action `{action}`"),
                    );
                    diagnostic = diagnostic.suggest_or(
                        action,
                        actions.iter().copied(),
                        format!("its actions: {}", actions.join(", ")),
                    );
                    out.push(self.located.at(diagnostic, &action_pointer));
                    return None;
                }
                file.defs
                    .iter()
                    .find(|d| d.id.ends_with(&format!(".{action}")))
                    .map(|d| &d.input_schema)
            }
        }
    }

    /// The step's inputs against `schema`: none it does not take (where it is closed), every
    /// one it requires (unless `inputs_from` may give the rest).
    #[allow(clippy::too_many_arguments)]
    fn tool_inputs(
        &self,
        step: &Step,
        tool: &str,
        file: &ToolFile,
        schema: &Value,
        inputs: &serde_json::Map<String, Value>,
        spread: bool,
        out: &mut Vec<Diagnostic>,
    ) {
        let inputs_pointer = match self.runbook.api_version {
            RunbookApi::KernelV0 => format!("{}/inputs", step.pointer),
            _ => format!("{}/tool/args", step.pointer),
        };
        let properties: BTreeSet<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let gert = matches!(file.kind, Some(ToolFileKind::Gert(_)));
        for name in inputs.keys() {
            if closed && !properties.contains(name.as_str()) {
                // gert passes a tool/v0 action only what its templates use and ignores the
                // rest; Jig does the same and says so. A toolpack's schema is Jig's own format.
                let mut diagnostic = if gert {
                    Diagnostic::warning(
                        codes::RUNBOOK,
                        format!(
                            "`{tool}` takes no input `{name}`: the call is made without it, as gert makes it"
                        ),
                    )
                } else {
                    Diagnostic::error(codes::RUNBOOK, format!("`{tool}` takes no input `{name}`"))
                };
                diagnostic = diagnostic.suggest_or(
                    name,
                    properties.iter().copied(),
                    format!(
                        "its inputs: {}",
                        properties.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                );
                out.push(
                    self.located
                        .at_key(diagnostic, &crate::yaml::pointer_push(&inputs_pointer, name)),
                );
            }
        }
        if spread {
            return; // `inputs_from` may supply the rest.
        }
        let required =
            schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
        for name in required.iter().filter_map(Value::as_str) {
            if !inputs.contains_key(name) {
                let argv_only = schema["properties"][name]
                    .get(crate::toolfile::gert::UNDECLARED)
                    .is_some_and(|v| v == true);
                // gert warns where an action's argv uses a variable its contract does not list;
                // the call then fails naming it, unless something gives it.
                let diagnostic = if argv_only {
                    Diagnostic::warning(
                        codes::RUNBOOK,
                        format!(
                            "step does not give `{tool}` the input `{name}`, which its action's argv uses but its contract does not list; the call will fail without it"
                        ),
                    )
                } else {
                    Diagnostic::error(
                        codes::RUNBOOK,
                        format!("step does not give `{tool}` its required input `{name}`"),
                    )
                };
                out.push(self.located.at(diagnostic, &step.pointer));
            }
        }
    }
}
