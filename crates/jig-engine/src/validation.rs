//! Argument and result validation against a tool's schemas, with compiled validators cached by
//! the tool's hash (a reloaded, unchanged tool keeps its validators).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jig_model::ToolDef;
use jsonschema::Validator;
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
        validator
            .iter_errors(value)
            .map(|e| Problem {
                pointer: e.instance_path().as_str().to_owned(),
                message: e.to_string(),
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
