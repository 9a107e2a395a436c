//! The v0/v1 step details that act when a step runs, as gert's runtime gives them meaning: a
//! `precondition` that may skip the step, a `delay` before it, `capture`s from what it printed,
//! `assertions` on that, per-step `approvals`, and an invoke step's `gate`. kernel/v0 has none
//! of them (contract outputs, `assert` steps and governance do that work there).
//!
//! Captures and assertions are pure functions of the step's recorded result, so every walk of
//! the journal reaches the same verdict without recording it twice. The precondition check is
//! a call of its own (`shell_exec`, through the engine: policy, approvals and the audit apply),
//! journaled under the step's key with `#precondition`, so a walk never runs it twice.

use jig_model::runbook::legacy::{LegacyAssertion, Precondition};
use jig_model::runbook::{LegacyDetails, Step};
use serde_json::{Map, Value};

use super::plan::Plan;
use super::{Flow, Interpreter, stop};
use crate::host::ToolAnswer;
use crate::journal::{Entry, Failure, StepStatus, keys};
use crate::outcome::{Need, RunStatus};
use crate::render;
use crate::vars::State;

/// A step's recorded result: status, outputs, and why it did not succeed.
pub(super) type Recorded = (StepStatus, Map<String, Value>, Option<Failure>);

/// The journal key of a step's precondition check.
fn precondition_key(key: &str) -> String {
    format!("{key}#precondition")
}

impl Interpreter<'_> {
    /// Run the step's precondition, if it has one that can skip it. `Ok(Some)`: skip the step,
    /// with why; `Ok(None)`: run it; `Err`: the walk stops here (a person must approve the
    /// check, or the journal failed).
    pub(super) async fn precondition(
        &self,
        step: &Step,
        plan: &Plan,
        id: &str,
        key: &str,
        state: &State,
    ) -> Result<Option<Failure>, Flow> {
        let Some(pre) = step.legacy.as_ref().and_then(|d| d.precondition.as_ref()) else {
            return Ok(None);
        };
        // gert runs the check only when its success would skip the step; so does Jig
        // (`jig validate` says that `skip_if_succeeds: false` does nothing).
        if !pre.skip_if_succeeds {
            return Ok(None);
        }
        let pre_key = precondition_key(key);
        let (status, outputs, _) = match self.entry(&keys::done(&pre_key)) {
            Some(Entry::Done { status, outputs, failure }) => (status, outputs, failure),
            _ => self.check(pre, plan, id, &pre_key, state).await?,
        };
        let exit = outputs.get("code").and_then(Value::as_i64);
        if status != StepStatus::Success || exit != Some(0) {
            return Ok(None);
        }
        let rendered = render_argv(&pre.check, state.vars()).unwrap_or_default();
        let message = pre
            .message
            .clone()
            .unwrap_or_else(|| format!("precondition satisfied: {}", rendered.join(" ")));
        Ok(Some(Failure::new("precondition", message)))
    }

    /// Run the check once and journal its result.
    async fn check(
        &self,
        pre: &Precondition,
        plan: &Plan,
        id: &str,
        pre_key: &str,
        state: &State,
    ) -> Result<Recorded, Flow> {
        let argv = render_argv(&pre.check, state.vars())
            .map_err(|e| stop(pre_key, "template", e.to_string(), RunStatus::Error))?;
        let info = self
            .run()
            .host
            .tool("shell_exec", None)
            .map_err(|e| stop(pre_key, "tool_not_found", e, RunStatus::Error))?;
        let inputs =
            Map::from_iter([("cmd".to_owned(), Value::String(jig_policy::command::render(&argv)))]);
        let call = self.call(id, pre_key, "shell_exec", None, &info.id, inputs.clone());
        let answer = self.run().host.call_tool(&call).await;
        if let ToolAnswer::PendingApproval { approval_id, rule } = &answer {
            // The reviewer approves the check itself: shown as what will run.
            let mut view = plan.view.clone();
            view.key = pre_key.to_owned();
            view.tool = Some(info.id);
            view.inputs = Some(inputs);
            view.contract = Some(info.contract);
            view.need = Need::Approval { approval_id: approval_id.clone(), rule: rule.clone() };
            return Err(Flow::Wait(vec![view]));
        }
        let Some(Entry::Done { status, outputs, failure }) = answer.entry() else {
            return Err(stop(pre_key, "internal", "no result for the check", RunStatus::Error));
        };
        self.keep(pre_key, status, outputs, failure).await
    }

    /// Wait the step's `delay` before it runs (hosts that replay recorded runs do not wait).
    pub(super) async fn delay(&self, step: &Step, key: &str) -> Result<(), Flow> {
        let Some(text) = step.legacy.as_ref().and_then(|d| d.delay.as_deref()) else {
            return Ok(());
        };
        let Some(duration) = jig_model::duration::parse_duration(text) else {
            return Err(stop(
                key,
                "delay",
                format!("`delay: {text}` is not a duration (`500ms`, `30s`, `5m`, `1h`)"),
                RunStatus::Error,
            ));
        };
        if self.run().host.waits() {
            tokio::time::sleep(duration).await;
        }
        Ok(())
    }
}

/// A step's result after its captures and assertions (a successful result only: a failed
/// step stays failed, as in gert).
pub(super) fn settle(step: &Step, recorded: Recorded) -> Recorded {
    let Some(details) = &step.legacy else { return recorded };
    let (status, mut outputs, failure) = recorded;
    if status != StepStatus::Success {
        return (status, outputs, failure);
    }
    let captured = match capture(details, &outputs) {
        Ok(captured) => captured,
        Err(message) => {
            return (StepStatus::Error, outputs, Some(Failure::new("capture", message)));
        }
    };
    let failed = assertions(&details.assertions, &outputs);
    outputs.extend(captured);
    match failed {
        None => (StepStatus::Success, outputs, None),
        Some(message) => (StepStatus::Failed, outputs, Some(Failure::new("assertion", message))),
    }
}

/// `capture: {name: source}`: `stdout`, `stderr`, `exit_code`, `stdout.<path>` (a JSON path
/// into what it printed), or the name of one of the step's outputs.
fn capture(
    details: &LegacyDetails,
    outputs: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (name, source) in &details.capture {
        let value = match source.as_str() {
            "stdout" => Value::String(stream(outputs, "stdout").trim().to_owned()),
            "stderr" => Value::String(stream(outputs, "stderr").trim().to_owned()),
            "exit_code" | "code" => Value::from(exit_code(outputs)),
            _ => match source.split_once('.') {
                Some((s @ ("stdout" | "stderr"), path)) => {
                    let text = stream(outputs, s);
                    let parsed: Value = serde_json::from_str(text.trim()).map_err(|e| {
                        format!("capture `{name}`: {s} is not JSON ({e}), so `{path}` cannot be read from it")
                    })?;
                    at_path(&parsed, path)
                        .cloned()
                        .ok_or_else(|| format!("capture `{name}`: {s} has nothing at `{path}`"))?
                }
                _ => outputs
                    .get(source)
                    .cloned()
                    .or_else(|| at_path(&Value::Object(outputs.clone()), source).cloned())
                    .ok_or_else(|| {
                        let known: Vec<&str> = outputs.keys().map(String::as_str).collect();
                        format!(
                            "capture `{name}`: the step produced no `{source}` (it produced: {})",
                            if known.is_empty() { "nothing".to_owned() } else { known.join(", ") }
                        )
                    })?,
            },
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// What the step printed on `name` (`stdout` or `stderr`): the output of that name; for
/// stdout of a tool with one output, that output; else the outputs as JSON.
fn stream(outputs: &Map<String, Value>, name: &str) -> String {
    if let Some(value) = outputs.get(name) {
        return jig_expr::text(value);
    }
    if name != "stdout" {
        return String::new();
    }
    let declared: Vec<(&String, &Value)> =
        outputs.iter().filter(|(k, _)| !matches!(k.as_str(), "code" | "exit_code")).collect();
    match declared.as_slice() {
        [(_, only)] => jig_expr::text(only),
        _ => Value::Object(outputs.clone()).to_string(),
    }
}

/// The exit code a step reported (`code` of `shell_exec`, `exit_code` of a tool/v0 action);
/// 0 for a step that succeeded without saying.
fn exit_code(outputs: &Map<String, Value>) -> i64 {
    outputs.get("code").or_else(|| outputs.get("exit_code")).and_then(Value::as_i64).unwrap_or(0)
}

/// A simple JSON path: `$.a.b`, `a.0.b` (a number indexes an array).
fn at_path<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    let path = path.strip_prefix('$').unwrap_or(path);
    let path = path.strip_prefix('.').unwrap_or(path);
    let mut node = value;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        node = match node {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Every assertion against the step's stdout and exit code; what failed, if anything.
fn assertions(list: &[LegacyAssertion], outputs: &Map<String, Value>) -> Option<String> {
    let text = stream(outputs, "stdout");
    // A trailing newline is how programs end their output, not part of the answer.
    let output = text.trim_end_matches(['\n', '\r']);
    let code = exit_code(outputs);
    let mut failures = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let problem = if let Some(expected) = &a.contains {
            (!output.contains(expected.as_str()))
                .then(|| format!("output does not contain {expected:?}"))
        } else if let Some(unwanted) = &a.not_contains {
            output.contains(unwanted.as_str()).then(|| format!("output contains {unwanted:?}"))
        } else if let Some(pattern) = &a.matches {
            match regex::Regex::new(pattern) {
                Ok(re) => {
                    (!re.is_match(output)).then(|| format!("output does not match /{pattern}/"))
                }
                Err(e) => Some(format!("`{pattern}` is not a regex: {e}")),
            }
        } else if let Some(expected) = a.exit_code {
            (code != expected).then(|| format!("exit code {code} is not {expected}"))
        } else if let Some(expected) = &a.equals {
            (output != expected).then(|| format!("output {:?} is not {expected:?}", clip(output)))
        } else if let Some(unwanted) = &a.not_equals {
            (output == unwanted).then(|| format!("output is {unwanted:?}"))
        } else if let Some(json) = &a.json_path {
            match serde_json::from_str::<Value>(output.trim()) {
                Err(e) => Some(format!("output is not JSON ({e})")),
                Ok(parsed) => match at_path(&parsed, &json.path) {
                    None => Some(format!("nothing at `{}`", json.path)),
                    Some(found) if jig_expr::text(found) == json.equals => None,
                    Some(found) => Some(format!(
                        "`{}` is {:?}, not {:?}",
                        json.path,
                        jig_expr::text(found),
                        json.equals
                    )),
                },
            }
        } else {
            Some("the assertion checks nothing".to_owned())
        };
        if let Some(problem) = problem {
            failures.push(format!("assertions[{i}]: {problem}"));
        }
    }
    (!failures.is_empty()).then(|| failures.join("; "))
}

fn clip(text: &str) -> &str {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn render_argv(argv: &[String], vars: &Value) -> Result<Vec<String>, render::RenderError> {
    render::argv("precondition.check", argv, vars)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outputs(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn assertion(value: Value) -> LegacyAssertion {
        serde_json::from_value(value).expect("an assertion")
    }

    #[test]
    fn captures_read_streams_paths_and_outputs() {
        let details = LegacyDetails {
            capture: [
                ("out", "stdout"),
                ("err", "stderr"),
                ("phase", "stdout.status.phase"),
                ("first", "stdout.items.0"),
                ("rc", "exit_code"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            ..LegacyDetails::default()
        };
        let got = capture(
            &details,
            &outputs(json!({ "code": 3, "stdout": "{\"status\":{\"phase\":\"Ready\"},\"items\":[\"a\"]}\n", "stderr": " warn \n" })),
        )
        .expect("captured");
        assert_eq!(got["phase"], json!("Ready"));
        assert_eq!(got["first"], json!("a"));
        assert_eq!(got["err"], json!("warn"));
        assert_eq!(got["rc"], json!(3));
        assert!(got["out"].as_str().is_some_and(|s| s.starts_with('{') && s.ends_with('}')));
    }

    #[test]
    fn a_capture_of_what_the_step_did_not_produce_names_it() {
        let details = LegacyDetails {
            capture: [("x".to_owned(), "missing".to_owned())].into_iter().collect(),
            ..LegacyDetails::default()
        };
        let error = capture(&details, &outputs(json!({ "answer": "1.2.3.4" }))).unwrap_err();
        assert!(error.contains("`missing`") && error.contains("answer"), "{error}");
        // A tool with one output: that output is what it printed.
        let details = LegacyDetails {
            capture: [("x".to_owned(), "stdout".to_owned())].into_iter().collect(),
            ..LegacyDetails::default()
        };
        let got = capture(&details, &outputs(json!({ "answer": "1.2.3.4\n" }))).expect("captured");
        assert_eq!(got["x"], json!("1.2.3.4"));
    }

    #[test]
    fn each_assertion_kind_holds_and_fails() {
        let out = outputs(json!({ "code": 0, "stdout": "{\"phase\": \"Ready\"}\n" }));
        let holds = [
            json!({ "contains": "Ready" }),
            json!({ "not_contains": "Failed" }),
            json!({ "matches": "phase.+Ready" }),
            json!({ "exit_code": 0 }),
            json!({ "equals": "{\"phase\": \"Ready\"}" }),
            json!({ "not_equals": "nothing" }),
            json!({ "json_path": { "path": "$.phase", "equals": "Ready" } }),
        ];
        for a in holds {
            assert_eq!(assertions(&[assertion(a.clone())], &out), None, "{a}");
        }
        let fails = [
            json!({ "contains": "Failed" }),
            json!({ "not_contains": "Ready" }),
            json!({ "matches": "^nope$" }),
            json!({ "exit_code": 1 }),
            json!({ "equals": "Ready" }),
            json!({ "not_equals": "{\"phase\": \"Ready\"}" }),
            json!({ "json_path": { "path": "$.phase", "equals": "Failed" } }),
            json!({ "json_path": { "path": "$.missing", "equals": "x" } }),
            json!({ "matches": "(" }),
            json!({}),
        ];
        for a in fails {
            let failed = assertions(&[assertion(a.clone())], &out);
            assert!(
                failed.as_deref().is_some_and(|f| f.starts_with("assertions[0]")),
                "{a}: {failed:?}"
            );
        }
    }

    #[test]
    fn a_failed_step_is_not_settled_into_a_success() {
        let step: Step = serde_json::from_value(json!({
            "id": "s", "pointer": "/steps/0", "type": "cli", "argv": ["true"],
            "legacy": { "assertions": [{ "exit_code": 0 }] }
        }))
        .expect("a step");
        let failed = (StepStatus::Failed, Map::new(), Some(Failure::new("tool", "boom")));
        assert_eq!(settle(&step, failed.clone()), failed);
        let ok = (StepStatus::Success, outputs(json!({ "code": 2, "stdout": "" })), None);
        let (status, _, failure) = settle(&step, ok);
        assert_eq!(status, StepStatus::Failed);
        assert_eq!(failure.map(|f| f.kind), Some("assertion".to_owned()));
    }
}
