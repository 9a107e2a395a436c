//! A run's inputs: required ones present, defaults filled in, text from a command line turned
//! into the declared type, enums and patterns checked — before anything runs.

use jig_model::gert_tool::FieldType;
use jig_model::runbook::{Runbook, RunbookInput};
use serde_json::{Map, Value};

use crate::error::RunbookError;

/// The inputs a run starts with.
pub fn resolve(
    runbook: &Runbook,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, RunbookError> {
    if let Some(unknown) = given.keys().find(|k| !runbook.inputs.contains_key(*k)) {
        let known: Vec<&str> = runbook.inputs.keys().map(String::as_str).collect();
        return Err(RunbookError::Input {
            name: unknown.clone(),
            message: if known.is_empty() {
                "the runbook takes no inputs".to_owned()
            } else {
                format!("the runbook has no such input (its inputs: {})", known.join(", "))
            },
        });
    }
    let mut out = Map::new();
    for (name, input) in &runbook.inputs {
        let value = match given.get(name).or(input.default.as_ref()) {
            Some(value) => coerce(name, input, value)?,
            None if input.required => {
                return Err(RunbookError::Input {
                    name: name.clone(),
                    message: match &input.description {
                        Some(d) => format!("required, and not given ({d})"),
                        None => "required, and not given".to_owned(),
                    },
                });
            }
            None => continue,
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

fn coerce(name: &str, input: &RunbookInput, value: &Value) -> Result<Value, RunbookError> {
    let bad = |message: String| RunbookError::Input { name: name.to_owned(), message };
    let value = match (input.input_type, value) {
        (Some(FieldType::Int | FieldType::Integer), Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| bad(format!("`{s}` is not a whole number")))?,
        (Some(FieldType::Float | FieldType::Number), Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| bad(format!("`{s}` is not a number")))?,
        (Some(FieldType::Bool | FieldType::Boolean), Value::String(s)) => match s.trim() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            other => return Err(bad(format!("`{other}` is not true or false"))),
        },
        (Some(FieldType::String), Value::Number(_) | Value::Bool(_)) => {
            Value::String(jig_expr::text(value))
        }
        (_, value) => value.clone(),
    };
    if let Some(allowed) = &input.allowed
        && !allowed.iter().any(|a| a == &value || jig_expr::text(a) == jig_expr::text(&value))
    {
        let shown: Vec<String> = allowed.iter().map(jig_expr::text).collect();
        return Err(bad(format!(
            "`{}` is not one of {}",
            jig_expr::text(&value),
            shown.join(", ")
        )));
    }
    if let Some(pattern) = &input.pattern {
        let re = regex::Regex::new(&format!("^(?:{pattern})$"))
            .map_err(|e| bad(format!("its pattern does not compile: {e}")))?;
        let text = jig_expr::text(&value);
        if !re.is_match(&text) {
            return Err(bad(format!("`{text}` does not match the pattern `{pattern}`")));
        }
    }
    Ok(value)
}
