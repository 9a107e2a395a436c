//! What an executable step will do, worked out before it does it: its contract, what
//! governance says, its inputs rendered. The same plan is what a reviewer is shown while the
//! step waits, so they approve exactly what will run.

use std::borrow::Cow;

use jig_model::runbook::kernel::{AssertionType, GovernanceAction, KernelAssertion};
use jig_model::runbook::legacy::{ChoiceConfig, EvidenceRequirement};
use jig_model::runbook::{RunbookGovernance, Step, StepKind};
use serde_json::{Map, Value, json};

use super::Interpreter;
use crate::contract;
use crate::governance::{Verdict, decide};
use crate::host::{Contract, ToolAnswer, ToolCall};
use crate::journal::{Failure, StepStatus};
use crate::outcome::{Need, Waiting};
use crate::render;
use crate::trace::{Actor, TraceKind};
use crate::vars::State;
use crate::visibility;

/// What the step does.
pub(crate) enum Action {
    Tool(Box<ToolCall>),
    Manual { required: Vec<EvidenceRequirement>, choices: Option<ChoiceConfig> },
    Assert(Vec<KernelAssertion>),
    Extension(String),
}

/// What a step's kind makes it do: the contract it runs under, the tool it calls, its action.
type Planned = (Option<Contract>, Option<String>, Action);

/// A step ready to run.
pub(crate) struct Plan {
    /// What a reviewer sees while it waits (its `need` is filled in by whoever waits).
    pub view: Waiting,
    pub verdict: Option<Verdict>,
    pub action: Action,
}

/// What running a step once produced.
pub(crate) enum Ran {
    Done { status: StepStatus, outputs: Map<String, Value>, failure: Option<Failure> },
    Wait(Need),
}

impl Ran {
    fn failed(status: StepStatus, kind: &str, message: impl Into<String>) -> Self {
        Self::Done { status, outputs: Map::new(), failure: Some(Failure::new(kind, message)) }
    }
}

/// A waiting step as the reviewer sees it, before anything is rendered.
pub(crate) fn waiting_view(step: &Step, id: &str, key: &str, need: Need) -> Waiting {
    Waiting {
        key: key.to_owned(),
        step_id: id.to_owned(),
        step_type: step_type(step).to_owned(),
        title: step.title.clone(),
        need,
        instructions: None,
        tool: None,
        inputs: None,
        contract: None,
    }
}

fn step_type(step: &Step) -> &'static str {
    match &step.kind {
        StepKind::Tool { .. } => "tool",
        StepKind::Cli { .. } => "cli",
        StepKind::Manual { .. } => "manual",
        StepKind::Invoke { .. } => "invoke",
        StepKind::Assert { .. } => "assert",
        StepKind::Branch { .. } => "branch",
        StepKind::Parallel { .. } => "parallel",
        StepKind::Repeat { .. } => "repeat",
        StepKind::End { .. } => "end",
        StepKind::Extension { .. } => "extension",
    }
}

/// A tool's contract, tightened by what the step declares (which may only restrict it).
fn tightened(
    tool: &Contract,
    declared: Option<&jig_model::gert_tool::Contract>,
) -> Result<Contract, (StepStatus, Failure)> {
    match declared {
        Some(declared) => contract::tighten(tool, declared)
            .map_err(|e| (StepStatus::Error, Failure::new("contract_violation", e))),
        None => Ok(tool.clone()),
    }
}

impl Interpreter<'_> {
    /// Work out what `step` will do at `key`. `Err` is a step that cannot even be planned: the
    /// failure to record.
    pub(super) async fn plan(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        state: &State,
    ) -> Result<Plan, (StepStatus, Failure)> {
        let vars = self.visible(step, id, key, state).await;
        let mut view = waiting_view(step, id, key, Need::Paused);
        let (contract, tool, mut action) = self.action(step, id, key, &vars, &mut view)?;
        let verdict = self.govern(step, id, key, contract.as_ref(), tool.as_deref()).await;
        if let (Action::Tool(call), Some(v)) = (&mut action, &verdict)
            && v.action == GovernanceAction::RequireApproval
        {
            call.approval_required_by = Some(v.rule.clone());
            call.approvers_required = v.approvers;
        }
        if let Action::Tool(call) = &mut action {
            call.timeout_ms = timeout_ms(step)?;
            view.inputs = Some(call.inputs.clone());
        }
        view.tool = tool;
        view.contract = contract;
        Ok(Plan { view, verdict, action })
    }

    /// The variables the step may see: all of them, or its `visibility`'s view (traced).
    async fn visible<'s>(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        state: &'s State,
    ) -> Cow<'s, Value> {
        match &step.visibility {
            Some(visibility) => {
                let seen = visibility::view(state.vars(), visibility);
                let data = json!({ "step_id": id, "allow": visibility.allow, "deny": visibility.deny, "filtered_view_hash": crate::hash_of(&seen) });
                let _ = self
                    .trace(
                        &format!("visibility:{key}"),
                        TraceKind::VisibilityApplied,
                        Some(key),
                        Actor::system(),
                        data,
                    )
                    .await;
                Cow::Owned(seen)
            }
            // Borrowed: a run's variables grow with every step, and copying them per step made
            // long runs quadratic.
            None => Cow::Borrowed(state.vars()),
        }
    }

    /// What the step's kind makes it do, with the contract it runs under and the tool it calls.
    fn action(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        vars: &Value,
        view: &mut Waiting,
    ) -> Result<Planned, (StepStatus, Failure)> {
        let template_error =
            |e: render::RenderError| (StepStatus::Error, Failure::new("template", e.to_string()));
        let planned = match &step.kind {
            StepKind::Tool { tool, action, inputs, inputs_from, contract: tightening } => {
                let info = self
                    .run()
                    .host
                    .tool(tool, action.as_deref())
                    .map_err(|e| (StepStatus::Error, Failure::new("tool_not_found", e)))?;
                let contract = tightened(&info.contract, tightening.as_ref())?;
                let mut inputs = spread(inputs_from, inputs, vars).map_err(template_error)?;
                if let Some(accepts) = &info.accepts {
                    inputs.retain(|name, _| accepts.contains(name));
                }
                let call = self.call(id, key, tool, action.clone(), &info.id, inputs);
                (Some(contract), Some(info.id), Action::Tool(Box::new(call)))
            }
            StepKind::Cli { argv } => {
                let rendered = render::argv("argv", argv, vars).map_err(template_error)?;
                let info = self
                    .run()
                    .host
                    .tool("shell_exec", None)
                    .map_err(|e| (StepStatus::Error, Failure::new("tool_not_found", e)))?;
                let inputs = Map::from_iter([(
                    "cmd".to_owned(),
                    Value::String(jig_policy::command::render(&rendered)),
                )]);
                let call = self.call(id, key, "shell_exec", None, &info.id, inputs);
                (Some(info.contract), Some(info.id), Action::Tool(Box::new(call)))
            }
            StepKind::Manual { instructions, required_evidence, choices, contract: declared } => {
                if let Some(text) = instructions {
                    view.instructions =
                        Some(render::text("instructions", text, vars).map_err(template_error)?);
                }
                let contract = declared
                    .as_ref()
                    .map_or_else(contract::manual, |d| contract::declared(contract::manual(), d));
                (
                    Some(contract),
                    None,
                    Action::Manual {
                        required: required_evidence.clone(),
                        choices: choices.clone(),
                    },
                )
            }
            StepKind::Assert { assertions } => {
                (Some(contract::assertion()), None, Action::Assert(assertions.clone()))
            }
            StepKind::Extension { extension, inputs, contract: declared } => {
                // A runner the project names makes the step a call of that tool: its own
                // contract, tightened by the step's declared one, and the engine's policy.
                match self.run().host.extension_runner(extension) {
                    Some(runner) => {
                        let info = self.run().host.tool(&runner, None).map_err(|e| {
                            let message = format!("extension `{extension}` runs as {e}");
                            (StepStatus::Error, Failure::new("tool_not_found", message))
                        })?;
                        let contract = tightened(&info.contract, declared.as_ref())?;
                        let inputs = render::map("inputs", inputs, vars).map_err(template_error)?;
                        let call = self.call(id, key, &runner, None, &info.id, inputs);
                        (Some(contract), Some(info.id), Action::Tool(Box::new(call)))
                    }
                    None => {
                        let contract =
                            declared.as_ref().map(|d| contract::declared(Contract::default(), d));
                        (contract, None, Action::Extension(extension.clone()))
                    }
                }
            }
            StepKind::Invoke { .. }
            | StepKind::Branch { .. }
            | StepKind::Parallel { .. }
            | StepKind::Repeat { .. }
            | StepKind::End { .. } => {
                return Err((
                    StepStatus::Error,
                    Failure::new("internal", "a structural step is not executable"),
                ));
            }
        };
        Ok(planned)
    }

    /// The runbook's governance on the step's contract (traced with the contract it judged).
    async fn govern(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        contract: Option<&Contract>,
        tool: Option<&str>,
    ) -> Option<Verdict> {
        let verdict = contract.map(|c| {
            let rules = match &self.run().runbook.governance {
                Some(RunbookGovernance::Rules(g)) => g.rules.as_slice(),
                _ => &[],
            };
            crate::governance::raise(decide(rules, tool, c), step, id)
        });
        if let (Some(c), Some(v)) = (contract, &verdict) {
            let data = json!({ "step_id": id, "resolved_contract": c });
            let _ = self
                .trace(
                    &format!("contract:{key}"),
                    TraceKind::ContractEvaluated,
                    Some(key),
                    Actor::system(),
                    data,
                )
                .await;
            let data = json!({ "step_id": id, "risk_level": contract::risk(c).as_str(), "decision": v.action.as_str(), "rule": v.rule });
            let _ = self
                .trace(
                    &format!("governance:{key}"),
                    TraceKind::GovernanceDecision,
                    Some(key),
                    Actor::system(),
                    data,
                )
                .await;
        }
        verdict
    }

    /// The call a tool step makes: its approval token and the go-ahead's author from this walk.
    pub(super) fn call(
        &self,
        id: &str,
        key: &str,
        reference: &str,
        action: Option<String>,
        tool: &str,
        inputs: Map<String, Value>,
    ) -> ToolCall {
        ToolCall {
            run_id: self.run().run_id.to_owned(),
            key: key.to_owned(),
            step_id: id.to_owned(),
            reference: reference.to_owned(),
            action,
            tool: tool.to_owned(),
            inputs,
            approval_required_by: None,
            approvers_required: 1,
            approval_token: self.run().tokens.get(key).cloned(),
            by: self
                .entry(&crate::journal::keys::go(key))
                .as_ref()
                .and_then(crate::journal::Entry::by)
                .map(str::to_owned),
            timeout_ms: None,
        }
    }

    /// Do what the plan says.
    pub(super) async fn execute(&self, plan: &Plan, key: &str, state: &State) -> Ran {
        match &plan.action {
            Action::Tool(call) => {
                let answer = self.run().host.call_tool(call).await;
                match (answer.entry(), answer) {
                    (Some(crate::journal::Entry::Done { status, outputs, failure }), _) => {
                        Ran::Done { status, outputs, failure }
                    }
                    (_, ToolAnswer::PendingApproval { approval_id, rule }) => {
                        Ran::Wait(Need::Approval { approval_id, rule })
                    }
                    (_, other) => Ran::failed(
                        StepStatus::Error,
                        "internal",
                        format!("no result for {other:?}"),
                    ),
                }
            }
            Action::Manual { required, choices } => self.manual(required, choices.as_ref(), key),
            Action::Assert(assertions) => assert(assertions, state.vars()),
            Action::Extension(name) => Ran::failed(
                StepStatus::Error,
                "extension",
                format!(
                    "no runner for extension `{name}` is configured: name the tool that runs it in the manifest's `config.extensions`"
                ),
            ),
        }
    }

    fn manual(
        &self,
        required: &[EvidenceRequirement],
        choices: Option<&ChoiceConfig>,
        key: &str,
    ) -> Ran {
        use crate::journal::{Entry, keys};
        let mut outputs = Map::new();
        if let Some(choices) = choices {
            match self.entry(&keys::choice(key)) {
                Some(Entry::Choice { value, .. }) => {
                    outputs.insert(choices.variable.clone(), Value::String(value));
                }
                _ => {
                    return Ran::Wait(Need::Choice {
                        prompt: choices.prompt.clone(),
                        options: choices.options.clone(),
                    });
                }
            }
        }
        if !required.is_empty() || choices.is_none() {
            match self.entry(&keys::evidence(key)) {
                Some(Entry::Evidence { values, .. }) => {
                    if let Some(missing) = required.iter().find(|r| !values.contains_key(&r.name)) {
                        return Ran::failed(
                            StepStatus::Error,
                            "evidence",
                            format!("the evidence lacks `{}`", missing.name),
                        );
                    }
                    outputs.extend(values);
                }
                _ => return Ran::Wait(Need::Evidence { required: required.to_vec() }),
            }
        }
        Ran::Done { status: StepStatus::Success, outputs, failure: None }
    }
}

/// A step's `timeout` in milliseconds (it tightens its call's limit).
fn timeout_ms(step: &Step) -> Result<Option<u64>, (StepStatus, Failure)> {
    let Some(text) = step.timeout.as_deref() else { return Ok(None) };
    match jig_model::duration::parse_duration(text) {
        Some(limit) => Ok(Some(u64::try_from(limit.as_millis()).unwrap_or(u64::MAX))),
        None => Err((
            StepStatus::Error,
            Failure::new(
                "timeout",
                format!("`timeout: {text}` is not a duration (`30s`, `5m`, `1h`)"),
            ),
        )),
    }
}

/// `inputs_from` spread left to right, then `inputs` over them, all rendered.
fn spread(
    from: &[String],
    inputs: &Map<String, Value>,
    vars: &Value,
) -> Result<Map<String, Value>, render::RenderError> {
    let mut out = Map::new();
    for name in from {
        let source = vars.get(name).cloned().unwrap_or(Value::Null);
        let Value::Object(object) = render::value(&format!("inputs_from.{name}"), &source, vars)?
        else {
            return Err(render::RenderError {
                field: "inputs_from".to_owned(),
                message: format!(
                    "`{name}` is not a map of inputs (a constant or step output that is an object)"
                ),
            });
        };
        out.extend(object);
    }
    out.extend(render::map("inputs", inputs, vars)?);
    Ok(out)
}

/// Evaluate an assert step's assertions: the step's `passed` output says whether all held.
fn assert(assertions: &[KernelAssertion], vars: &Value) -> Ran {
    let mut failures = Vec::new();
    for (i, a) in assertions.iter().enumerate() {
        let value = match render::value(&format!("assert[{i}].value"), &a.value, vars) {
            Ok(v) => v,
            Err(e) => return Ran::failed(StepStatus::Error, "template", e.to_string()),
        };
        let expected = match a
            .expected
            .as_ref()
            .map(|e| render::value(&format!("assert[{i}].expected"), e, vars))
            .transpose()
        {
            Ok(e) => e.unwrap_or(Value::Null),
            Err(e) => return Ran::failed(StepStatus::Error, "template", e.to_string()),
        };
        let (text, wanted) = (jig_expr::text(&value), jig_expr::text(&expected));
        let held = match a.assertion_type {
            AssertionType::Equals => text == wanted,
            AssertionType::NotEquals => text != wanted,
            AssertionType::Contains => text.contains(&wanted),
            AssertionType::NotContains => !text.contains(&wanted),
            AssertionType::Matches => {
                match regex::Regex::new(a.pattern.as_deref().unwrap_or(&wanted)) {
                    Ok(re) => re.is_match(&text),
                    Err(e) => {
                        return Ran::failed(
                            StepStatus::Error,
                            "assertion",
                            format!("assert[{i}]: `{wanted}` is not a regex: {e}"),
                        );
                    }
                }
            }
            AssertionType::Exists => !value.is_null() && !text.is_empty(),
            AssertionType::True => jig_expr::truthy(&value) && text != "false",
            AssertionType::False => !jig_expr::truthy(&value) || text == "false",
        };
        if !held {
            failures.push(a.message.clone().unwrap_or_else(|| {
                format!("assert[{i}]: `{text}` {:?} `{wanted}` does not hold", a.assertion_type)
            }));
        }
    }
    let passed = failures.is_empty();
    Ran::Done {
        status: if passed { StepStatus::Success } else { StepStatus::Failed },
        outputs: Map::from_iter([("passed".to_owned(), Value::Bool(passed))]),
        failure: (!passed).then(|| Failure::new("assertion", failures.join("; "))),
    }
}
