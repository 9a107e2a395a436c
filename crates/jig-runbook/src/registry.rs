//! From Jig's registry to what the interpreter needs: which tool a runbook's reference calls,
//! and its contract.

use std::collections::BTreeMap;

use jig_model::ToolDef;
use jig_model::tool_def::ToolExecution;

use crate::host::{Contract, ToolInfo};

/// The registry id a step's tool reference and action name: a toolpack's own id, or
/// `<tool>.<action>` for tool/v0 (`<package>/<tool>.<action>` from a required package).
pub fn tool_id(reference: &str, action: Option<&str>) -> String {
    match action {
        Some(action) if !action.is_empty() => format!("{reference}.{action}"),
        _ => reference.to_owned(),
    }
}

/// A registry tool as a step sees it.
pub fn tool_info(tool: &ToolDef) -> ToolInfo {
    // A resource tag among the effects (`kubernetes`) is a write to that resource for the
    // parallel-safety check: two arms acting on one resource do not run at once.
    let (reads, writes) = match &tool.execution {
        ToolExecution::Gert(gert) => {
            let mut writes = gert.writes.clone();
            for tag in &gert.effect_tags {
                if !writes.contains(tag) {
                    writes.push(tag.clone());
                }
            }
            (gert.reads.clone(), writes)
        }
        ToolExecution::Toolpack(_) => (Vec::new(), Vec::new()),
    };
    let outputs = tool
        .output_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let accepts = matches!(tool.execution, ToolExecution::Gert(_)).then(|| {
        tool.input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    });
    ToolInfo {
        id: tool.id.clone(),
        contract: Contract {
            side_effects: tool.has_side_effects(),
            deterministic: tool.deterministic,
            idempotent: tool.idempotent,
            effects: tool
                .side_effects
                .iter()
                .map(|e| e.as_str().to_owned())
                .filter(|e| e != "none")
                .chain(tool.effect_tags().iter().cloned())
                .collect(),
            reads,
            writes,
        },
        outputs,
        accepts,
    }
}

/// What a runbook's tool references resolved to when the project was loaded: reference →
/// action → registry id (jig-load's `RunbookEntry::tools`).
pub type Resolved = BTreeMap<String, BTreeMap<String, String>>;

/// The tool references a run of `entry` may meet: its own, then — for runbooks it invokes —
/// every other runbook's, where they do not clash with its own.
pub fn references(snapshot: &jig_load::Snapshot, entry: &jig_load::RunbookEntry) -> Resolved {
    let mut all = entry.tools.clone();
    for other in snapshot.runbooks() {
        for (reference, actions) in &other.tools {
            all.entry(reference.clone()).or_insert_with(|| actions.clone());
        }
    }
    all
}

/// Resolve a step's `tool` (and `action`): through what the loader resolved for the runbook,
/// else by the id rule ([`tool_id`]; also how a toolpack answers to gert's `run`).
pub fn resolve<'a>(
    resolved: &Resolved,
    reference: &str,
    action: Option<&str>,
    find: impl Fn(&str) -> Option<&'a ToolDef>,
) -> Result<ToolInfo, String> {
    let id = match resolved.get(reference) {
        Some(actions) => match actions.get(action.unwrap_or("")) {
            Some(id) => id.clone(),
            None => {
                let known: Vec<&str> =
                    actions.keys().filter(|a| !a.is_empty()).map(String::as_str).collect();
                return Err(format!(
                    "`{reference}` has no action `{}` (its actions: {})",
                    action.unwrap_or(""),
                    known.join(", ")
                ));
            }
        },
        None => tool_id(reference, action),
    };
    if let Some(tool) = find(&id) {
        return Ok(tool_info(tool));
    }
    if let Some(tool) = find(reference).filter(|_| action.is_none_or(|a| a == "run")) {
        return Ok(tool_info(tool));
    }
    Err(match action {
        Some(action) => format!("no tool `{reference}` with action `{action}` in the registry"),
        None => format!("no tool `{reference}` in the registry"),
    })
}
