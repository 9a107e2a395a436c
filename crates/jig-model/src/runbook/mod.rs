//! Runbooks: the three file formats and the one representation they are read into.
//!
//! `runbook/v0` and `runbook/v1` share [`legacy::LegacyRunbook`]; `kernel/v0` is
//! [`kernel::KernelRunbook`]. Both convert into [`Runbook`], a tree of [`Step`]s, which is what
//! the validator, the runner and the UI work on. Each step remembers the JSON pointer it came
//! from, so a problem found later can still name the file position.

pub mod kernel;
pub mod legacy;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::gert_tool::{Contract, FieldType};
use kernel::{
    ForEach, KernelAssertion, KernelGovernance, KernelOutcome, KernelRunbook, KernelStep,
    KernelStepType, NextSpec,
};
use legacy::{
    ApprovalRequirement, ChoiceConfig, EvidenceRequirement, Gate, LegacyApi, LegacyAssertion,
    LegacyGovernance, LegacyOutcome, LegacyRunbook, LegacyStep, LegacyStepType, Precondition,
    RunbookKind, ToolList, TreeNode,
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

    /// Convert a v0/v1 file. Returns the runbook and any shape problems found on the way.
    pub fn from_legacy(file: LegacyRunbook) -> (Self, Vec<ShapeError>) {
        let mut problems = Vec::new();
        let (tools, tool_paths) = match file.tools {
            None => (Vec::new(), BTreeMap::new()),
            Some(ToolList::List(list)) => (list, BTreeMap::new()),
            Some(ToolList::Map(map)) => (map.keys().cloned().collect(), map),
        };
        let imports = match file.imports {
            None => Vec::new(),
            Some(legacy::Imports::List(list)) => list,
            Some(legacy::Imports::Map(map)) => map.into_values().collect(),
        };
        let mut steps: Vec<Step> = file
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, step)| legacy_step(step, format!("/steps/{i}"), &mut problems))
            .collect();
        steps.extend(
            file.tree
                .into_iter()
                .enumerate()
                .filter_map(|(i, node)| tree_node(node, &format!("/tree/{i}"), &mut problems)),
        );
        let meta = file.meta;
        let runbook = Runbook {
            api_version: match file.api_version {
                LegacyApi::V0 => RunbookApi::V0,
                LegacyApi::V1 => RunbookApi::V1,
            },
            name: meta.name,
            description: meta.description,
            kind: meta.kind,
            inputs: meta
                .inputs
                .into_iter()
                .map(|(name, input)| {
                    let converted = RunbookInput {
                        input_type: None,
                        required: input.default.is_none(),
                        default: input.default.map(Value::String),
                        description: input.description,
                        pattern: input.pattern,
                        allowed: None,
                        from: Some(input.from),
                    };
                    (name, converted)
                })
                .collect(),
            constants: meta.vars.into_iter().map(|(k, v)| (k, Value::String(v))).collect(),
            tools,
            tool_paths,
            imports,
            governance: meta.governance.map(RunbookGovernance::Legacy),
            secrets: Vec::new(),
            extensions: Map::new(),
            steps,
        };
        (runbook, problems)
    }

    /// Convert a kernel/v0 file. Returns the runbook and any shape problems found on the way.
    pub fn from_kernel(file: KernelRunbook) -> (Self, Vec<ShapeError>) {
        let mut problems = Vec::new();
        let steps = kernel_steps(file.steps, "/steps", &mut problems);
        let meta = file.meta;
        let runbook = Runbook {
            api_version: RunbookApi::KernelV0,
            name: meta.name,
            description: meta.description,
            kind: meta.kind,
            inputs: meta
                .inputs
                .into_iter()
                .map(|(name, input)| {
                    let converted = RunbookInput {
                        input_type: input.input_type,
                        required: input.required,
                        default: input.default,
                        description: input.description,
                        pattern: input.pattern,
                        allowed: input.allowed,
                        from: None,
                    };
                    (name, converted)
                })
                .collect(),
            constants: meta.constants,
            tools: file.tools,
            tool_paths: BTreeMap::new(),
            imports: Vec::new(),
            governance: meta.governance.map(RunbookGovernance::Rules),
            secrets: meta.secrets,
            extensions: meta.extensions,
            steps,
        };
        (runbook, problems)
    }
}

fn tree_node(node: TreeNode, pointer: &str, problems: &mut Vec<ShapeError>) -> Option<Step> {
    let count = usize::from(node.step.is_some())
        + usize::from(node.iterate.is_some())
        + usize::from(node.branches.is_some());
    if count != 1 {
        problems.push(ShapeError {
            pointer: pointer.to_owned(),
            message: "a tree node needs exactly one of `step`, `iterate` or `branches`".into(),
        });
    }
    if let Some(step) = node.step {
        return Some(legacy_step(step, format!("{pointer}/step"), problems));
    }
    if let Some(iterate) = node.iterate {
        let body = iterate
            .steps
            .into_iter()
            .enumerate()
            .filter_map(|(i, n)| tree_node(n, &format!("{pointer}/iterate/steps/{i}"), problems))
            .collect();
        return Some(structural(
            format!("{pointer}/iterate"),
            StepKind::Repeat {
                max: iterate.max,
                until: iterate.until,
                over: iterate.over,
                as_var: iterate.as_var,
                steps: body,
            },
        ));
    }
    let branches = node.branches?;
    let arms = branches
        .into_iter()
        .enumerate()
        .map(|(b, branch)| Arm {
            condition: Some(branch.condition),
            label: branch.label,
            steps: branch
                .steps
                .into_iter()
                .enumerate()
                .filter_map(|(i, n)| {
                    tree_node(n, &format!("{pointer}/branches/{b}/steps/{i}"), problems)
                })
                .collect(),
        })
        .collect();
    Some(structural(format!("{pointer}/branches"), StepKind::Branch { arms }))
}

fn structural(pointer: String, kind: StepKind) -> Step {
    Step {
        id: None,
        pointer,
        title: None,
        description: None,
        when: None,
        next: None,
        for_each: None,
        continue_on_fail: false,
        timeout: None,
        export: Vec::new(),
        scope: None,
        visibility: None,
        principal: None,
        legacy: None,
        kind,
    }
}

fn legacy_step(step: LegacyStep, pointer: String, problems: &mut Vec<ShapeError>) -> Step {
    let mut need = |field: &str, what: &str| {
        problems.push(ShapeError {
            pointer: pointer.clone(),
            message: format!("a `{what}` step needs `{field}`"),
        });
    };
    let kind = match step.step_type {
        LegacyStepType::Tool => match step.tool {
            Some(tool) => StepKind::Tool {
                tool: tool.name,
                action: Some(tool.action),
                inputs: tool.args.into_iter().map(|(k, v)| (k, Value::String(v))).collect(),
                inputs_from: Vec::new(),
                contract: None,
            },
            None => {
                need("tool", "tool");
                StepKind::Tool {
                    tool: String::new(),
                    action: None,
                    inputs: Map::new(),
                    inputs_from: Vec::new(),
                    contract: None,
                }
            }
        },
        LegacyStepType::Cli => {
            let argv = step.with_cli.map(|w| w.argv).unwrap_or_default();
            if argv.is_empty() {
                need("with.argv", "cli");
            }
            StepKind::Cli { argv }
        }
        LegacyStepType::Manual => StepKind::Manual {
            instructions: step.instructions,
            required_evidence: step.required_evidence,
            choices: step.choices,
            contract: None,
        },
        LegacyStepType::Invoke => match step.invoke {
            Some(legacy::InvokeConfig::Name(runbook)) => {
                StepKind::Invoke { runbook, inputs: Map::new() }
            }
            Some(legacy::InvokeConfig::Full(target)) => StepKind::Invoke {
                runbook: target.runbook,
                inputs: target.inputs.into_iter().map(|(k, v)| (k, Value::String(v))).collect(),
            },
            None => {
                need("invoke", "invoke");
                StepKind::Invoke { runbook: String::new(), inputs: Map::new() }
            }
        },
    };
    let details = LegacyDetails {
        precondition: step.precondition,
        outcomes: step.outcomes,
        capture: step.capture,
        assertions: step.assertions,
        gate: step.gate,
        delay: step.delay,
        approvals: step.approvals,
    };
    Step {
        id: Some(step.id),
        pointer,
        title: step.title,
        description: None,
        when: step.when,
        next: None,
        for_each: None,
        continue_on_fail: false,
        timeout: step.timeout,
        export: Vec::new(),
        scope: None,
        visibility: None,
        principal: None,
        legacy: (details != LegacyDetails::default()).then(|| Box::new(details)),
        kind,
    }
}

fn kernel_steps(steps: Vec<KernelStep>, base: &str, problems: &mut Vec<ShapeError>) -> Vec<Step> {
    steps
        .into_iter()
        .enumerate()
        .map(|(i, step)| kernel_step(step, format!("{base}/{i}"), problems))
        .collect()
}

fn kernel_step(step: KernelStep, pointer: String, problems: &mut Vec<ShapeError>) -> Step {
    let type_name = match step.step_type {
        KernelStepType::Tool => "tool",
        KernelStepType::Manual => "manual",
        KernelStepType::Assert => "assert",
        KernelStepType::Branch => "branch",
        KernelStepType::Parallel => "parallel",
        KernelStepType::End => "end",
        KernelStepType::Extension => "extension",
        KernelStepType::Invoke => "invoke",
        KernelStepType::Repeat => "repeat",
    };
    // Fields the step's type needs but the step lacks.
    let mut missing: Vec<&str> = Vec::new();
    let kind = match step.step_type {
        KernelStepType::Tool => {
            if step.tool.is_none() {
                missing.push("tool");
            }
            StepKind::Tool {
                tool: step.tool.unwrap_or_default(),
                action: step.action,
                inputs: step.inputs,
                inputs_from: step.inputs_from.map(|f| f.to_vec()).unwrap_or_default(),
                contract: step.contract,
            }
        }
        KernelStepType::Manual => StepKind::Manual {
            instructions: step.instructions,
            required_evidence: step.required_evidence,
            choices: None,
            contract: step.contract,
        },
        KernelStepType::Assert => {
            if step.assert.is_empty() {
                missing.push("assert");
            }
            StepKind::Assert { assertions: step.assert }
        }
        KernelStepType::Branch | KernelStepType::Parallel => {
            if step.branches.is_empty() {
                missing.push("branches");
            }
            let arms = step
                .branches
                .into_iter()
                .enumerate()
                .map(|(b, arm)| Arm {
                    condition: arm.condition,
                    label: arm.label,
                    steps: kernel_steps(
                        arm.steps,
                        &format!("{pointer}/branches/{b}/steps"),
                        problems,
                    ),
                })
                .collect();
            if step.step_type == KernelStepType::Branch {
                StepKind::Branch { arms }
            } else {
                StepKind::Parallel { arms }
            }
        }
        KernelStepType::End => match step.outcome {
            Some(outcome) => StepKind::End { outcome },
            None => {
                missing.push("outcome");
                StepKind::End {
                    outcome: KernelOutcome {
                        category: OutcomeCategory::Escalated,
                        code: None,
                        meta: Map::new(),
                    },
                }
            }
        },
        KernelStepType::Extension => {
            if step.extension.is_none() {
                missing.push("extension");
            }
            StepKind::Extension {
                extension: step.extension.unwrap_or_default(),
                inputs: step.inputs,
                contract: step.contract,
            }
        }
        KernelStepType::Invoke => {
            if step.invoke.is_none() {
                missing.push("invoke");
            }
            StepKind::Invoke { runbook: step.invoke.unwrap_or_default(), inputs: step.inputs }
        }
        KernelStepType::Repeat => {
            if step.repeat.is_none() {
                missing.push("repeat");
            }
            if step.steps.is_empty() {
                missing.push("steps");
            }
            let repeat = step.repeat;
            StepKind::Repeat {
                max: repeat.as_ref().map(|r| r.max),
                until: repeat.and_then(|r| r.until),
                over: None,
                as_var: None,
                steps: kernel_steps(step.steps, &format!("{pointer}/steps"), problems),
            }
        }
    };
    for field in missing {
        problems.push(ShapeError {
            pointer: pointer.clone(),
            message: format!("a `{type_name}` step needs `{field}`"),
        });
    }
    Step {
        id: step.id,
        pointer,
        title: step.title,
        description: step.description,
        when: step.when,
        next: step.next,
        for_each: step.for_each,
        continue_on_fail: step.continue_on_fail,
        timeout: step.timeout,
        export: step.export,
        scope: step.scope,
        visibility: step.visibility,
        principal: step.principal,
        legacy: None,
        kind,
    }
}
