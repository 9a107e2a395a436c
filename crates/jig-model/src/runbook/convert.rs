//! Converting each file format into the one [`Runbook`] representation: v0/v1 (steps and
//! trees) and kernel/v0, each step remembering the JSON pointer it came from.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::kernel::{KernelOutcome, KernelRunbook, KernelStep, KernelStepType};
use super::legacy::{
    self, LegacyApi, LegacyRunbook, LegacyStep, LegacyStepType, ToolList, TreeNode,
};
use super::*;

impl Runbook {
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
    let type_name = type_name(step.step_type);
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
            let arms = kernel_arms(step.branches, &pointer, problems);
            if step.step_type == KernelStepType::Branch {
                StepKind::Branch { arms }
            } else {
                StepKind::Parallel { arms }
            }
        }
        KernelStepType::End => {
            if step.outcome.is_none() {
                missing.push("outcome");
            }
            // Without one, the run ends escalated: a person looks at what the file meant.
            let escalated = || KernelOutcome {
                category: OutcomeCategory::Escalated,
                code: None,
                meta: Map::new(),
            };
            StepKind::End { outcome: step.outcome.unwrap_or_else(escalated) }
        }
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
            let steps = kernel_steps(step.steps, &format!("{pointer}/steps"), problems);
            let repeat = step.repeat;
            let (max, until) = (repeat.as_ref().map(|r| r.max), repeat.and_then(|r| r.until));
            StepKind::Repeat { max, until, over: None, as_var: None, steps }
        }
    };
    let message = |field| format!("a `{type_name}` step needs `{field}`");
    problems.extend(
        missing.into_iter().map(|f| ShapeError { pointer: pointer.clone(), message: message(f) }),
    );
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

/// The name of a kernel step's type, as a file writes it.
fn type_name(step_type: KernelStepType) -> &'static str {
    match step_type {
        KernelStepType::Tool => "tool",
        KernelStepType::Manual => "manual",
        KernelStepType::Assert => "assert",
        KernelStepType::Branch => "branch",
        KernelStepType::Parallel => "parallel",
        KernelStepType::End => "end",
        KernelStepType::Extension => "extension",
        KernelStepType::Invoke => "invoke",
        KernelStepType::Repeat => "repeat",
    }
}

/// A branch's or a parallel step's arms, each with its steps located under the step.
fn kernel_arms(
    branches: Vec<super::kernel::KernelBranch>,
    pointer: &str,
    problems: &mut Vec<ShapeError>,
) -> Vec<Arm> {
    branches
        .into_iter()
        .enumerate()
        .map(|(b, arm)| Arm {
            condition: arm.condition,
            label: arm.label,
            steps: kernel_steps(arm.steps, &format!("{pointer}/branches/{b}/steps"), problems),
        })
        .collect()
}
