//! Argument and result validation against a tool's schemas, with compiled validators cached by
//! the tool's hash (a reloaded, unchanged tool keeps its validators).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jig_model::ToolDef;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde::Serialize;
use serde_json::Value;

/// One problem with a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Problem {
    /// JSON pointer of the offending value.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// Seed 003's `ValidationResult`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationResult {
    /// Whether the arguments are valid.
    pub valid: bool,
    /// Every problem found.
    pub errors: Vec<Problem>,
}

#[derive(Default)]
pub(crate) struct Validators {
    by_hash: RwLock<HashMap<(String, bool), Arc<Validator>>>,
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validators").finish_non_exhaustive()
    }
}

impl Validators {
    /// Problems of `value` against the tool's input (`input = true`) or output schema.
    pub fn check(&self, tool: &ToolDef, input: bool, value: &Value) -> Vec<Problem> {
        let Some(validator) = self.validator(tool, input) else {
            return vec![Problem {
                pointer: String::new(),
                message: "the tool's schema does not compile".into(),
            }];
        };
        if validator.is_valid(value) {
            return Vec::new();
        }
        let schema = if input { &tool.input_schema } else { &tool.output_schema };
        validator
            .iter_errors(value)
            .map(|e| Problem {
                pointer: e.instance_path().as_str().to_owned(),
                message: choice_message(schema, &e).unwrap_or_else(|| e.to_string()),
            })
            .collect()
    }

    fn validator(&self, tool: &ToolDef, input: bool) -> Option<Arc<Validator>> {
        let key = (tool.hash.clone(), input);
        if let Some(found) = self.by_hash.read().ok().and_then(|m| m.get(&key).cloned()) {
            return Some(found);
        }
        let schema = if input { &tool.input_schema } else { &tool.output_schema };
        let compiled = Arc::new(jsonschema::options().offline().build(schema).ok()?);
        if let Ok(mut map) = self.by_hash.write() {
            map.insert(key, Arc::clone(&compiled));
        }
        Some(compiled)
    }
}

/// What a person is told when a value fits none of a `oneOf`'s or `anyOf`'s options (or more
/// than one of a `oneOf`'s), instead of "not valid under any of the schemas listed": the options
/// by their titles (else their place), each with the properties it still needs — as the
/// workbench's form says it.
fn choice_message(schema: &Value, error: &ValidationError<'_>) -> Option<String> {
    let (context, several) = match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            (context, false)
        }
        ValidationErrorKind::OneOfMultipleValid { context } => (context, true),
        _ => return None,
    };
    let options = schema.pointer(error.schema_path().as_str()).and_then(Value::as_array);
    let count = options.map_or(context.len(), Vec::len);
    let described: Vec<String> = (0..count)
        .map(|i| {
            let name = options
                .and_then(|options| options.get(i)?.get("title")?.as_str())
                .map_or_else(|| format!("option {}", i + 1), str::to_owned);
            let missing: Vec<&str> = context
                .get(i)
                .into_iter()
                .flatten()
                .filter_map(|e| match e.kind() {
                    ValidationErrorKind::Required { property } => property.as_str(),
                    _ => None,
                })
                .collect();
            if several || missing.is_empty() {
                name
            } else {
                format!("{name} (needs {})", missing.join(", "))
            }
        })
        .collect();
    Some(if several {
        format!("fits more than one of: {}", described.join("; "))
    } else {
        format!("choose one of: {}", described.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn problems(schema: &serde_json::Value, value: &serde_json::Value) -> Vec<String> {
        let validator = jsonschema::options().offline().build(schema).expect("schema");
        validator
            .iter_errors(value)
            .map(|e| super::choice_message(schema, &e).unwrap_or_else(|| e.to_string()))
            .collect()
    }

    #[test]
    fn a_choice_names_its_options_and_what_each_still_needs() {
        let schema = json!({
            "type": "object",
            "properties": { "start": { "oneOf": [
                { "title": "At a time", "type": "object", "required": ["at"] },
                { "title": "After a delay", "type": "object", "required": ["after_minutes"] },
            ] } },
        });
        assert_eq!(
            problems(&schema, &json!({ "start": {} })),
            ["choose one of: At a time (needs at); After a delay (needs after_minutes)"]
        );
        assert_eq!(
            problems(&schema, &json!({ "start": { "at": 1, "after_minutes": 2 } })),
            ["fits more than one of: At a time; After a delay"]
        );
        // Untitled options are named by their place.
        let untitled = json!({ "anyOf": [{ "type": "string" }, { "required": ["a"] }] });
        assert_eq!(
            problems(&untitled, &json!({})),
            ["choose one of: option 1; option 2 (needs a)"]
        );
    }
}
