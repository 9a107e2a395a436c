//! Runbooks: the three file formats and the one representation they are read into.
//!
//! `runbook/v0` and `runbook/v1` share [`legacy::LegacyRunbook`]; `kernel/v0` is
//! [`kernel::KernelRunbook`]. Both convert into [`Runbook`], a tree of [`Step`]s, which is what
//! the validator, the runner and the UI work on. Each step remembers the JSON pointer it came
//! from, so a problem found later can still name the file position.

mod convert;
pub mod kernel;
pub mod legacy;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::gert_tool::{Contract, FieldType};
use kernel::{ForEach, KernelAssertion, KernelGovernance, KernelOutcome, NextSpec};
use legacy::{
    ApprovalRequirement, ChoiceConfig, EvidenceRequirement, Gate, LegacyAssertion,
    LegacyGovernance, LegacyOutcome, Precondition, RunbookKind,
};

/// Outcome categories (kernel-v0 §5; the `state` of v0/v1 outcomes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutcomeCategory {
    /// Problem fixed.
    Resolved,
    /// Handed off.
    Escalated,
    /// Nothing needed.
    NoAction,
    /// Mitigated, root cause unknown.
    NeedsRca,
}

impl OutcomeCategory {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Resolved => "resolved",
            Self::Escalated => "escalated",
            Self::NoAction => "no_action",
            Self::NeedsRca => "needs_rca",
        }
    }
}

/// Which format a runbook was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RunbookApi {
    /// `runbook/v0`.
    #[serde(rename = "runbook/v0")]
    V0,
    /// `runbook/v1`.
    #[serde(rename = "runbook/v1")]
    V1,
    /// `kernel/v0`.
    #[serde(rename = "kernel/v0")]
    KernelV0,
}

impl RunbookApi {
    /// The apiVersion string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0 => "runbook/v0",
            Self::V1 => "runbook/v1",
            Self::KernelV0 => "kernel/v0",
        }
    }

    /// Every accepted apiVersion.
    pub const ALL: [RunbookApi; 3] = [Self::V0, Self::V1, Self::KernelV0];
}

/// A runbook in the one representation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Runbook {
    /// The format it was written in.
    pub api_version: RunbookApi,
    /// `meta.name`.
    pub name: String,
    /// `meta.description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `meta.kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<RunbookKind>,
    /// Inputs, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, RunbookInput>,
    /// Constants (kernel/v0) and vars (v0/v1).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub constants: Map<String, Value>,
    /// Tool references steps may use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// v0 map form of `tools`: name → path of the tool file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_paths: BTreeMap<String, String>,
    /// v0 `imports`, as paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<String>,
    /// Runbook-level governance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<RunbookGovernance>,
    /// Environment variables its tools need (kernel/v0 `meta.secrets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<kernel::SecretRef>,
    /// Uninterpreted metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extensions: Map<String, Value>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// A runbook input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunbookInput {
    /// The value's type, when declared.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<FieldType>,
    /// Whether the caller must provide it.
    #[serde(default)]
    pub required: bool,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A regex the value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// v0/v1: where the value comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// Governance declared by the runbook itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RunbookGovernance {
    /// kernel/v0 rules.
    Rules(KernelGovernance),
    /// v0/v1 command lists and redaction.
    Legacy(LegacyGovernance),
}

/// One step, of any format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// The id; structural steps may have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where it is in its file (JSON pointer).
    pub pointer: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A longer description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Jump after the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<NextSpec>,
    /// Iteration modifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEach>,
    /// Failure does not halt the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_fail: bool,
    /// Time limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Export outputs to the global namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub export: Vec<String>,
    /// A namespace for the step's outputs (`round/0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Which variables the step may see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<kernel::Visibility>,
    /// Who performs the step, when the runbook says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<kernel::Principal>,
    /// v0/v1 details (preconditions, outcomes, captures, assertions, gates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy: Option<Box<LegacyDetails>>,
    /// What the step does.
    #[serde(flatten)]
    pub kind: StepKind,
}

/// v0/v1 step fields with no kernel/v0 counterpart.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct LegacyDetails {
    /// A check that may skip the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Precondition>,
    /// Outcomes decided after the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<LegacyOutcome>,
    /// Captured variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, String>,
    /// Output checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<LegacyAssertion>,
    /// Stop conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// Wait before running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// Approvals needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalRequirement>,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum StepKind {
    /// Run a tool (an action of a tool/v0 tool, or a toolpack).
    Tool {
        /// The tool reference, as written.
        tool: String,
        /// The action (tool/v0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<String>,
        /// Inputs, templated.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        inputs: Map<String, Value>,
        /// Objects spread into `inputs`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        inputs_from: Vec<String>,
        /// A tightening contract.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contract: Option<Contract>,
    },
    /// v0/v1: run a command.
    Cli {
        /// The command.
        argv: Vec<String>,
    },
    /// A human action.
    Manual {
        /// What to do.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        /// Evidence to collect.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        required_evidence: Vec<EvidenceRequirement>,
        /// A choice to make.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choices: Option<ChoiceConfig>,
        /// A tightening contract.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contract: Option<Contract>,
    },
    /// Run another runbook.
    Invoke {
        /// The runbook reference.
        runbook: String,
        /// Its inputs.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        inputs: Map<String, Value>,
    },
    /// Evaluate assertions.
    Assert {
        /// The assertions.
        assertions: Vec<KernelAssertion>,
    },
    /// One arm runs.
    Branch {
        /// The arms.
        arms: Vec<Arm>,
    },
    /// All arms run concurrently.
    Parallel {
        /// The arms.
        arms: Vec<Arm>,
    },
    /// A bounded loop (kernel `repeat`, v0/v1 `iterate`).
    Repeat {
        /// Maximum iterations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
        /// Stop condition.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<String>,
        /// v0/v1: list to iterate over.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        over: Option<String>,
        /// v0/v1: loop variable.
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        as_var: Option<String>,
        /// The body.
        steps: Vec<Step>,
    },
    /// Structured outcome; stops the run.
    End {
        /// The outcome.
        outcome: KernelOutcome,
    },
    /// Custom behaviour with a declared contract.
    Extension {
        /// The extension's name.
        extension: String,
        /// Inputs.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        inputs: Map<String, Value>,
        /// Its contract.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contract: Option<Contract>,
    },
}

/// An arm of a branch or parallel step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Arm {
    /// Condition (`default` for the fallback); none for parallel arms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The arm's steps.
    pub steps: Vec<Step>,
}

/// A structural problem found while converting a file into a [`Runbook`]: a step that lacks
/// what its type needs. Located by JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// Where.
    pub pointer: String,
    /// What.
    pub message: String,
}

impl Runbook {
    /// Every step, depth-first in file order, including those inside arms and loops.
    pub fn walk(&self) -> Vec<&Step> {
        let mut out = Vec::new();
        fn visit<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
            for step in steps {
                out.push(step);
                match &step.kind {
                    StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                        for arm in arms {
                            visit(&arm.steps, out);
                        }
                    }
                    StepKind::Repeat { steps, .. } => visit(steps, out),
                    _ => {}
                }
            }
        }
        visit(&self.steps, &mut out);
        out
    }
}
