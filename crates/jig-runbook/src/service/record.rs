//! A finished run as a new scenario: its inputs, each tool step's answer in the order the calls
//! were made, the people's evidence, and what the run did as the test's expectations — with
//! secrets redacted, so a real run can be replayed by `jig runbook test` for ever after.

use std::collections::BTreeMap;

use jig_model::runbook::{Runbook, StepKind};
use jig_model::scenario::{RecordedResponse, RunStatus, Scenario, ScenarioTest};
use serde_json::{Map, Value};

use super::{Runbooks, ServiceError};
use crate::journal::{Entry, StepStatus, keys};

/// A recorded run: what `scenario.yaml` and `test.yaml` will say.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Inputs, answers and evidence.
    pub scenario: Scenario,
    /// What the run did.
    pub test: ScenarioTest,
}

impl Runbooks {
    /// Record the finished run `id` as a scenario. A run still waiting for people is refused:
    /// its end is not known yet.
    pub async fn record_scenario(&self, id: &str) -> Result<Recorded, ServiceError> {
        let view = self.show(id).await?;
        if view.progress.status == RunStatus::Paused {
            return Err(ServiceError::Conflict(format!(
                "run `{id}` is still waiting for people; record it once it has ended"
            )));
        }
        let reads = self.engine.walk_reads();
        let journal: BTreeMap<String, Entry> = reads
            .journal_checked(id)
            .await?
            .into_iter()
            .filter_map(|(key, value)| serde_json::from_value(value).ok().map(|e| (key, e)))
            .collect();
        let runbook = self.runbook_of(&view.runbook, &journal)?;
        // The order the steps finished in, from the chain (the journal itself is keyed).
        let order: Vec<String> = reads
            .packets(id)
            .await?
            .into_iter()
            .filter_map(|p| p.journal_seal().map(|seal| seal.key))
            .collect();
        let mut scenario = Scenario {
            description: Some(format!(
                "Recorded from run {id} of {}, started by {}.",
                view.runbook,
                view.started_by.as_deref().unwrap_or("unknown")
            )),
            inputs: match journal.get(keys::START) {
                Some(Entry::Start { inputs, .. }) => redact(inputs),
                _ => Map::new(),
            },
            tool_responses: BTreeMap::new(),
            evidence: BTreeMap::new(),
            approvals: BTreeMap::new(),
        };
        for key in &order {
            if let Some(step_key) = key.strip_prefix("done:")
                && let Some(Entry::Done { status, outputs, failure }) = journal.get(key)
                && let Some(reference) = tool_reference(&runbook, keys::step_id(step_key))
            {
                let failed = matches!(status, StepStatus::Failed | StepStatus::Error);
                let response = RecordedResponse {
                    exit_code: i64::from(failed),
                    stdout: None,
                    stderr: failure.as_ref().filter(|_| failed).map(|f| f.message.clone()),
                    outputs: redact(outputs),
                };
                scenario.tool_responses.entry(reference).or_default().push(response);
            }
            if let Some(step_key) = key.strip_prefix("evidence:")
                && let Some(Entry::Evidence { values, .. }) = journal.get(key)
            {
                scenario.evidence.insert(keys::step_id(step_key).to_owned(), redact(values));
            }
        }
        let mut reached: Vec<String> = Vec::new();
        for step in &view.progress.visited {
            if !reached.contains(step) {
                reached.push(step.clone());
            }
        }
        let test = ScenarioTest {
            description: Some(format!("What run {id} did.")),
            expected_status: Some(view.progress.status),
            expected_outcome: view.progress.outcome.as_ref().map(|o| o.category),
            expected_code: view.progress.outcome.as_ref().and_then(|o| o.code.clone()),
            must_reach: reached,
            must_not_reach: Vec::new(),
            expected_outputs: Map::new(),
        };
        Ok(Recorded { scenario, test })
    }

    /// The runbook as the run began with it.
    fn runbook_of(
        &self,
        name: &str,
        journal: &BTreeMap<String, Entry>,
    ) -> Result<Runbook, ServiceError> {
        if let Some(Entry::Start { definition: Some(definition), .. }) = journal.get(keys::START)
            && let Ok(runbook) = serde_json::from_value(definition.clone())
        {
            return Ok(runbook);
        }
        self.engine
            .snapshot()
            .runbook(name)
            .map(|entry| entry.runbook.clone())
            .ok_or_else(|| ServiceError::NotFound(format!("no runbook `{name}`")))
    }
}

/// How a scenario names a tool step's answers: `tool:action`, or the tool alone.
fn tool_reference(runbook: &Runbook, step_id: &str) -> Option<String> {
    runbook.walk().into_iter().find(|s| s.id.as_deref() == Some(step_id)).and_then(|step| {
        match &step.kind {
            StepKind::Tool { tool, action: Some(action), .. } => Some(format!("{tool}:{action}")),
            StepKind::Tool { tool, action: None, .. } => Some(tool.clone()),
            _ => None,
        }
    })
}

/// Values that look like secrets (tokens, keys, passwords by name) replaced.
fn redact(map: &Map<String, Value>) -> Map<String, Value> {
    match jig_policy::redact::redact_value(&Value::Object(map.clone())) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
