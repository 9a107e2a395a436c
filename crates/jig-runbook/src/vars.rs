//! The variables of a run (kernel-v0 §7): inputs and constants from the start, step outputs as
//! steps complete, scopes, and exports.
//!
//! As in gert, a step's outputs are readable under its id (`{{ .check.status_code }}`, also
//! `{{ .step.check.status_code }}`) and, unless the step has a `scope`, as globals
//! (`{{ .status_code }}`), the latest step's value winning. A scoped step's outputs live under
//! `{{ .scope.<path>.<name> }}` until exported.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Where a global came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Input,
    Constant,
    /// A step's output, promoted: a later step's output of the same name replaces it.
    Output,
    /// Exported by this step.
    Exported(String),
}

/// The state of one line of execution (parallel arms each get a copy).
#[derive(Debug, Clone)]
pub(crate) struct State {
    vars: Value,
    origin: BTreeMap<String, Origin>,
    /// Step ids executed, in order.
    pub visited: Vec<String>,
}

impl State {
    pub(crate) fn new(inputs: Map<String, Value>, constants: &Map<String, Value>) -> Self {
        let mut origin = BTreeMap::new();
        let mut vars = Map::new();
        for (name, value) in constants {
            origin.insert(name.clone(), Origin::Constant);
            vars.insert(name.clone(), value.clone());
        }
        for (name, value) in inputs {
            origin.insert(name.clone(), Origin::Input);
            vars.insert(name, value);
        }
        Self { vars: Value::Object(vars), origin, visited: Vec::new() }
    }

    /// A line of execution branching off this one (a loop's item): the same variables, and
    /// the steps it visits recorded afresh, for its parent to append.
    pub(crate) fn fork(&self) -> Self {
        Self { vars: self.vars.clone(), origin: self.origin.clone(), visited: Vec::new() }
    }

    /// Every variable, for templates.
    pub(crate) fn vars(&self) -> &Value {
        &self.vars
    }

    fn map(&mut self) -> &mut Map<String, Value> {
        if !self.vars.is_object() {
            self.vars = Value::Object(Map::new());
        }
        match &mut self.vars {
            Value::Object(map) => map,
            _ => unreachable!("made an object above"),
        }
    }

    /// Set a variable for the current line only (a loop variable, `repeat`).
    pub(crate) fn set(&mut self, name: &str, value: Value) {
        self.map().insert(name.to_owned(), value);
    }

    /// Remove a variable set with [`State::set`].
    pub(crate) fn unset(&mut self, name: &str) {
        self.map().remove(name);
    }

    /// Record a completed step's outputs.
    pub(crate) fn outputs(
        &mut self,
        step_id: &str,
        scope: Option<&str>,
        outputs: &Map<String, Value>,
    ) -> Result<(), String> {
        // `retry_count` belongs to the step, not to one run of it.
        let retry = self.vars.get(step_id).and_then(|v| v.get("retry_count")).cloned();
        let mut own = outputs.clone();
        if let Some(retry) = retry {
            own.entry("retry_count").or_insert(retry);
        }
        let map = self.map();
        map.insert(step_id.to_owned(), Value::Object(own));
        let steps = map.entry("step").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(steps) = steps {
            steps.insert(step_id.to_owned(), Value::Object(outputs.clone()));
        }
        match scope {
            Some(scope) => {
                let mut node = map.entry("scope").or_insert_with(|| Value::Object(Map::new()));
                for segment in scope_path(scope) {
                    let Value::Object(inner) = node else { break };
                    node = inner.entry(segment).or_insert_with(|| Value::Object(Map::new()));
                }
                if let Value::Object(inner) = node {
                    for (name, value) in outputs {
                        inner.insert(name.clone(), value.clone());
                    }
                }
            }
            None => {
                for (name, value) in outputs {
                    match self.origin.get(name) {
                        Some(Origin::Constant) => {
                            return Err(format!(
                                "step `{step_id}` produced `{name}`, which is a constant (constants are immutable)"
                            ));
                        }
                        Some(Origin::Input) => continue,
                        _ => {}
                    }
                    self.origin.insert(name.clone(), Origin::Output);
                    self.map().insert(name.clone(), value.clone());
                }
            }
        }
        Ok(())
    }

    /// Promote `names` of a step's outputs to globals (kernel-v0 §7 `export`).
    pub(crate) fn export(
        &mut self,
        step_id: &str,
        names: &[String],
        outputs: &Map<String, Value>,
    ) -> Result<(), String> {
        for name in names {
            let Some(value) = outputs.get(name) else {
                return Err(format!("step `{step_id}` exports `{name}`, which it did not produce"));
            };
            match self.origin.get(name) {
                None | Some(Origin::Output) => {}
                Some(Origin::Exported(by)) if by == step_id => {}
                Some(other) => {
                    let what = match other {
                        Origin::Input => "an input".to_owned(),
                        Origin::Constant => "a constant".to_owned(),
                        Origin::Exported(by) => format!("exported by step `{by}`"),
                        Origin::Output => unreachable!("matched above"),
                    };
                    return Err(format!(
                        "step `{step_id}` exports `{name}`, which is already {what} (no silent overwrite)"
                    ));
                }
            }
            self.origin.insert(name.clone(), Origin::Exported(step_id.to_owned()));
            self.map().insert(name.clone(), value.clone());
        }
        Ok(())
    }

    /// `{{ .<step>.retry_count }}` for the target of a backward `next`.
    pub(crate) fn retry_count(&mut self, step_id: &str, count: u32) {
        let map = self.map();
        let entry = map.entry(step_id.to_owned()).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(entry) = entry {
            entry.insert("retry_count".to_owned(), Value::from(count));
        }
    }

    /// The globals this line set or changed since `base` (for merging parallel arms).
    pub(crate) fn changes_since(&self, base: &State) -> Vec<(String, Value)> {
        let (Value::Object(now), Value::Object(before)) = (&self.vars, &base.vars) else {
            return Vec::new();
        };
        now.iter()
            .filter(|(name, value)| before.get(*name) != Some(*value))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }

    /// Take a change from a parallel arm.
    pub(crate) fn merge(&mut self, name: String, value: Value, from: &State) {
        if let Some(origin) = from.origin.get(&name) {
            self.origin.insert(name.clone(), origin.clone());
        }
        self.map().insert(name, value);
    }
}

/// `round/0` and `round.0` are the same scope (kernel-v0 §7): its dot-separated segments.
pub(crate) fn scope_path(scope: &str) -> Vec<String> {
    scope.split(['/', '.']).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}
