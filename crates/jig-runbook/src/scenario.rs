//! Recorded scenarios (gert's `tool_responses` replay): a runbook run with its tool steps
//! answered from `scenario.yaml` and its manual steps from the scenario's evidence, then
//! checked against `test.yaml`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

use async_trait::async_trait;
use jig_model::runbook::Runbook;
use jig_model::scenario::{RecordedResponse, RunStatus, Scenario, ScenarioTest};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::RunbookError;
use crate::host::{Host, HostError, ToolAnswer, ToolCall, ToolInfo};
use crate::interp::{Interpreter, Run};
use crate::journal::{Entry, Journal, keys};
use crate::outcome::{Need, Progress};
use crate::trace::TraceEvent;

/// Resolves a runbook's tool references (the registry, for real projects).
pub type Resolver = Box<dyn Fn(&str, Option<&str>) -> Result<ToolInfo, String> + Send + Sync>;

/// The resolver of a loaded project's runbook: its references as the loader resolved them,
/// the tools from the project's registry.
pub fn resolver(
    snapshot: std::sync::Arc<jig_load::Snapshot>,
    entry: &jig_load::RunbookEntry,
) -> Resolver {
    let resolved = entry.tools.clone();
    Box::new(move |reference, action| {
        crate::registry::resolve(&resolved, reference, action, |id| {
            snapshot.get(id).map(std::sync::Arc::as_ref)
        })
    })
}

/// A host answering tool steps from a scenario, keeping the journal and trace in memory.
pub struct ReplayHost {
    resolve: Resolver,
    runbooks: Option<std::sync::Arc<jig_load::Snapshot>>,
    responses: Mutex<BTreeMap<String, VecDeque<RecordedResponse>>>,
    approvals: BTreeMap<String, bool>,
    journal: Mutex<Journal>,
    trace: Mutex<Vec<TraceEvent>>,
    traced: Mutex<std::collections::HashSet<String>>,
    /// Dry-run: the project's policy, and each tool call as it would be made with its decision.
    decide: Option<Decider>,
}

/// What a dry run decides with: the policy and the tools it decides on.
struct Decider {
    policy: std::sync::Arc<jig_policy::Policy>,
    snapshot: std::sync::Arc<jig_load::Snapshot>,
    planned: Mutex<Vec<PlannedCall>>,
}

/// A tool call a dry run rendered and decided, but did not make.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlannedCall {
    /// The step instance.
    pub key: String,
    /// The registry tool.
    pub tool: String,
    /// The inputs, rendered as they would be sent.
    pub inputs: serde_json::Map<String, serde_json::Value>,
    /// `allow`, `require-approval` or `deny`.
    pub action: String,
    /// The rule that decided.
    pub rule: String,
    /// Why.
    pub reason: String,
}

impl ReplayHost {
    /// A host for `scenario`, resolving tools with `resolve`.
    pub fn new(scenario: &Scenario, resolve: Resolver) -> Self {
        Self {
            resolve,
            runbooks: None,
            responses: Mutex::new(
                scenario
                    .tool_responses
                    .iter()
                    .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
                    .collect(),
            ),
            approvals: scenario.approvals.clone(),
            journal: Mutex::new(Journal::new()),
            trace: Mutex::new(Vec::new()),
            traced: Mutex::new(std::collections::HashSet::new()),
            decide: None,
        }
    }

    /// Dry-run: decide every tool call with `policy` as `jig call` would (its rule, its
    /// reason), and keep it with its rendered inputs; answers still come from the scenario,
    /// so nothing runs.
    pub fn deciding(
        mut self,
        policy: std::sync::Arc<jig_policy::Policy>,
        snapshot: std::sync::Arc<jig_load::Snapshot>,
    ) -> Self {
        self.decide = Some(Decider { policy, snapshot, planned: Mutex::new(Vec::new()) });
        self
    }

    /// The calls a dry run decided, in order.
    pub fn planned(&self) -> Vec<PlannedCall> {
        self.decide
            .as_ref()
            .and_then(|d| d.planned.lock().ok().map(|p| p.clone()))
            .unwrap_or_default()
    }

    /// Let `invoke` steps run the project's runbooks (answered from the same scenario).
    pub fn with_runbooks(mut self, snapshot: std::sync::Arc<jig_load::Snapshot>) -> Self {
        self.runbooks = Some(snapshot);
        self
    }

    /// The trace so far.
    pub fn trace(&self) -> Vec<TraceEvent> {
        self.trace.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The journal so far.
    pub fn journal(&self) -> Journal {
        self.journal.lock().map(|j| j.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Host for ReplayHost {
    fn tool(&self, reference: &str, action: Option<&str>) -> Result<ToolInfo, String> {
        (self.resolve)(reference, action)
    }

    fn runbook(&self, reference: &str) -> Option<Runbook> {
        self.runbooks.as_ref()?.runbook(reference).map(|entry| entry.runbook.clone())
    }

    async fn call_tool(&self, call: &ToolCall) -> ToolAnswer {
        if let Some(decider) = &self.decide {
            decider.plan(call);
        }
        if call.approval_required_by.is_some() && self.approvals.get(&call.step_id) == Some(&false)
        {
            return ToolAnswer::Denied {
                rule: "scenario.approvals".to_owned(),
                reason: format!("the scenario rejects `{}`", call.step_id),
            };
        }
        let name = match &call.action {
            Some(action) => format!("{}:{action}", call.reference),
            None => call.reference.clone(),
        };
        // gert falls back to the tool's name alone when no `tool:action` key was recorded.
        let next = self.responses.lock().ok().and_then(|mut r| {
            let key = if r.contains_key(&name) { name.clone() } else { call.reference.clone() };
            r.get_mut(&key).and_then(VecDeque::pop_front)
        });
        let Some(response) = next else {
            return ToolAnswer::Error {
                code: "E_NOT_FOUND".to_owned(),
                message: format!("the scenario has no more responses for `{name}`"),
            };
        };
        let mut outputs = response.outputs.clone();
        let declared = self
            .tool(&call.reference, call.action.as_deref())
            .map(|i| i.outputs)
            .unwrap_or_default();
        // A recorded response in gert's shape (streams, no outputs) gives the outputs the tool
        // declares: its streams and exit code by name (`shell_exec`), or its one output.
        let streams = [
            ("stdout", response.stdout.clone().map(Value::String)),
            ("stderr", response.stderr.clone().map(Value::String)),
            ("code", Some(Value::from(response.exit_code))),
            ("exit_code", Some(Value::from(response.exit_code))),
        ];
        let by_name = declared.iter().any(|d| streams.iter().any(|(name, _)| d == name));
        if outputs.is_empty() && by_name {
            for (name, value) in streams {
                if let Some(value) = value.filter(|_| declared.iter().any(|d| d == name)) {
                    outputs.insert(name.to_owned(), value);
                }
            }
        } else if outputs.is_empty()
            && let [only] = declared.as_slice()
            && let Some(stdout) = &response.stdout
        {
            outputs.insert(only.clone(), Value::String(stdout.trim().to_owned()));
        }
        // A tool that reports its exit code answers with it, whatever it is (`shell_exec`: a
        // non-zero exit is what the command said, not a failed call).
        let exit_is_data = declared.iter().any(|d| d == "code" || d == "exit_code");
        if response.exit_code == 0 || exit_is_data {
            ToolAnswer::Succeeded { outputs }
        } else {
            ToolAnswer::Failed {
                code: "E_SHELL".to_owned(),
                message: format!(
                    "exited with code {}{}",
                    response.exit_code,
                    response.stderr.map(|e| format!(": {}", e.trim())).unwrap_or_default()
                ),
                outputs,
            }
        }
    }

    fn waits(&self) -> bool {
        false // a recorded run is replayed as fast as it goes
    }

    async fn record(&self, key: &str, entry: Entry) -> Result<Entry, HostError> {
        let mut journal = self.journal.lock().map_err(|_| HostError {
            code: "E_INTERNAL".to_owned(),
            message: "journal lock".to_owned(),
        })?;
        Ok(journal.insert(key.to_owned(), entry).clone())
    }

    async fn trace(&self, event: TraceEvent) -> Result<(), HostError> {
        let fresh = self.traced.lock().map(|mut t| t.insert(event.key.clone())).unwrap_or(false);
        if fresh && let Ok(mut trace) = self.trace.lock() {
            trace.push(event);
        }
        Ok(())
    }
}

/// Walks allowed before a scenario is declared stuck (each walk answers at least one need).
const MAX_WALKS: usize = 10_000;

/// Run `runbook` under `scenario`: advance, answer what the scenario answers (evidence,
/// choices), advance again, until the run ends or waits for something the scenario lacks.
pub async fn play(
    runbook: &Runbook,
    name: &str,
    hash: &str,
    scenario: &Scenario,
    host: &ReplayHost,
) -> Result<Progress, RunbookError> {
    let start = Entry::Start {
        runbook: name.to_owned(),
        hash: hash.to_owned(),
        inputs: scenario.inputs.clone(),
        stepwise: false,
        by: "scenario".to_owned(),
        definition: None,
    };
    host.record(keys::START, start).await?;
    for _ in 0..MAX_WALKS {
        let run = Run { runbook, name, hash, run_id: "scenario", host, tokens: HashMap::new() };
        let progress = Interpreter::new(run, host.journal()).advance().await?;
        if progress.status != RunStatus::Paused {
            return Ok(progress);
        }
        let mut answered = false;
        for waiting in &progress.waiting {
            let given = scenario.evidence.get(&waiting.step_id);
            let entry = match (&waiting.need, given) {
                (Need::Evidence { .. }, Some(values)) => {
                    Entry::Evidence { values: values.clone(), by: "scenario".to_owned() }
                }
                (Need::Evidence { required }, None) if required.is_empty() => {
                    Entry::Evidence { values: Map::new(), by: "scenario".to_owned() }
                }
                (Need::Choice { options, .. }, Some(values)) => {
                    let chosen = values
                        .values()
                        .next()
                        .map(jig_expr::text)
                        .or_else(|| options.first().map(|o| o.value.clone()));
                    match chosen {
                        Some(value) => Entry::Choice { value, by: "scenario".to_owned() },
                        None => continue,
                    }
                }
                (Need::Go { .. }, _)
                    if scenario.approvals.get(&waiting.step_id) != Some(&false) =>
                {
                    Entry::Go { skip: None, by: "scenario".to_owned() }
                }
                (Need::Go { .. }, _) => Entry::Go {
                    skip: Some("the scenario rejects it".to_owned()),
                    by: "scenario".to_owned(),
                },
                _ => continue,
            };
            let key = match &waiting.need {
                Need::Evidence { .. } => keys::evidence(&waiting.key),
                Need::Choice { .. } => keys::choice(&waiting.key),
                // Where several people must say go, the scenario says it for each.
                Need::Go { approved_by, .. } => keys::go_nth(&waiting.key, approved_by.len() + 1),
                _ => keys::go(&waiting.key),
            };
            host.record(&key, entry).await?;
            answered = true;
        }
        if !answered {
            return Ok(progress);
        }
    }
    Err(RunbookError::Host(HostError {
        code: "E_LIMIT".to_owned(),
        message: format!("the scenario did not finish within {MAX_WALKS} walks"),
    }))
}

/// One expectation of `test.yaml` that did not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Which expectation (`expected_outcome`, `must_reach` …).
    pub field: String,
    /// What it asked for.
    pub expected: Value,
    /// What the run did.
    pub actual: Value,
}

/// Check a finished run against `test.yaml`.
pub fn check(test: &ScenarioTest, progress: &Progress) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut differ = |field: &str, expected: Value, actual: Value| {
        out.push(Mismatch { field: field.to_owned(), expected, actual })
    };
    if let Some(status) = test.expected_status
        && status != progress.status
    {
        differ("expected_status", json(&status), json(&progress.status));
    }
    let category = progress.outcome.as_ref().map(|o| o.category);
    if let Some(expected) = test.expected_outcome
        && Some(expected) != category
    {
        differ("expected_outcome", json(&expected), json(&category));
    }
    let code = progress.outcome.as_ref().and_then(|o| o.code.clone());
    if let Some(expected) = &test.expected_code
        && Some(expected) != code.as_ref()
    {
        differ("expected_code", json(expected), json(&code));
    }
    for step in &test.must_reach {
        if !progress.visited.contains(step) {
            differ("must_reach", Value::String(step.clone()), json(&progress.visited));
        }
    }
    for step in &test.must_not_reach {
        if progress.visited.contains(step) {
            differ("must_not_reach", Value::String(step.clone()), json(&progress.visited));
        }
    }
    for (name, expected) in &test.expected_outputs {
        let actual = progress.variables.get(name).cloned().unwrap_or(Value::Null);
        if jig_expr::text(&actual) != jig_expr::text(expected)
            || actual.is_null() != expected.is_null()
        {
            differ(&format!("expected_outputs.{name}"), expected.clone(), actual);
        }
    }
    out
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Decider {
    fn plan(&self, call: &ToolCall) {
        let args = serde_json::Value::Object(call.inputs.clone());
        let (action, rule, reason) = match self.snapshot.get(&call.tool) {
            Some(tool) => {
                let decision = self.policy.decide(tool, &args);
                let action = serde_json::to_value(decision.action)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                (action, decision.rule, decision.reason)
            }
            None => ("deny".to_owned(), "registry".to_owned(), "no such tool".to_owned()),
        };
        let planned = PlannedCall {
            key: call.key.clone(),
            tool: call.tool.clone(),
            inputs: call.inputs.clone(),
            action,
            rule,
            reason,
        };
        if let Ok(mut list) = self.planned.lock() {
            list.push(planned);
        }
    }
}
