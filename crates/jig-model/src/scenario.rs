//! Recorded scenarios for runbook tests: `scenario.yaml` (inputs and canned tool responses)
//! and `test.yaml` (what the run must do), as in gert's examples.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::runbook::OutcomeCategory;

/// `scenario.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Runbook scenario (scenario.yaml)")]
#[schemars(extend("$id" = "https://jig.dev/schemas/scenario.schema.json"))]
pub struct Scenario {
    /// What the scenario represents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The runbook's inputs.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub inputs: Map<String, Value>,
    /// Canned responses, keyed `tool:action`, consumed in order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_responses: BTreeMap<String, Vec<RecordedResponse>>,
    /// Evidence for manual steps: step id → evidence name → value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub evidence: BTreeMap<String, Map<String, Value>>,
    /// Answers to approval prompts: step id → approve?
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub approvals: BTreeMap<String, bool>,
}

/// One recorded tool response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedResponse {
    /// Process exit code.
    #[serde(default)]
    pub exit_code: i64,
    /// Standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The contract outputs the call produced.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub outputs: Map<String, Value>,
}

/// `test.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Runbook scenario expectations (test.yaml)")]
#[schemars(extend("$id" = "https://jig.dev/schemas/scenario-test.schema.json"))]
pub struct ScenarioTest {
    /// What the test checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `completed`, `failed`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_status: Option<RunStatus>,
    /// The outcome category of the `end` step reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_outcome: Option<OutcomeCategory>,
    /// The outcome code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_code: Option<String>,
    /// Step ids the run must reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_reach: Vec<String>,
    /// Step ids the run must not reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_reach: Vec<String>,
    /// Variables and their expected final values.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub expected_outputs: Map<String, Value>,
}

/// Final status of a runbook run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Reached an `end` step.
    Completed,
    /// A step failed.
    Failed,
    /// A step could not run.
    Error,
    /// Governance stopped it.
    Denied,
    /// Waiting for a person.
    Paused,
}
