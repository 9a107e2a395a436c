//! `ast_validate`: rules over indexed symbols — required doc comments, forbidden text in
//! bodies — each with its enforcement level.

use jig_model::ErrorCode;
use serde_json::{Value, json};

use super::{Bodies, filter, fresh_index};
use crate::builtin::call::Call;
use jig_exec::{Output, ToolError};

pub(in crate::builtin) fn validate(call: &Call) -> Result<Output, ToolError> {
    let rules = call.args.get("rules").and_then(Value::as_array).cloned().unwrap_or_default();
    let index = fresh_index(call)?;
    let mut bodies = Bodies::default();
    let mut violations = Vec::new();
    for rule in &rules {
        let id = rule.get("id").and_then(Value::as_str).unwrap_or("ast.rule");
        let enforcement = rule.get("enforcement").and_then(Value::as_str).unwrap_or("blocking");
        let matches = filter(rule.get("where"))?;
        let needs_doc = rule
            .get("must_have")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|v| v == "docstring"));
        let forbidden: Vec<&str> = rule
            .get("must_not_contain")
            .and_then(Value::as_array)
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for symbol in index.symbols().filter(|s| matches.matches(s)) {
            call.check_time()?;
            let mut found = |line: usize, message: String| {
                violations.push(json!({
                    "rule": id, "enforcement": enforcement, "file": symbol.file,
                    "line": line, "node_id": symbol.id, "message": message,
                }));
            };
            if needs_doc && !symbol.has_doc {
                found(symbol.line, format!("`{}` has no doc comment", symbol.name));
            }
            if forbidden.is_empty() {
                continue;
            }
            for needle in &forbidden {
                if let Some(line) = bodies.find(call, symbol, needle)? {
                    found(line, format!("`{}` contains `{needle}`", symbol.name));
                }
            }
        }
    }
    let blocking = violations.iter().filter(|v| v["enforcement"] == "blocking").count();
    if rules.is_empty() {
        return Err(ToolError::new(ErrorCode::ValidationFail, "argument `rules` is empty"));
    }
    Ok(Output::data(json!({ "violations": violations, "blocking": blocking })))
}
