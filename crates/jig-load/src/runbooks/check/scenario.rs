//! A runbook's recorded scenarios against the runbook: the inputs they give, the tools they
//! answer for, the steps they give evidence and approvals to, and the steps their tests
//! expect reached or not.

use std::collections::BTreeMap;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::runbook::{Step, StepKind};
use jig_model::scenario::{Scenario, ScenarioTest};

use super::super::file::ScenarioFiles;
use super::{Checker, ToolRef};
use crate::located::{Located, Suggest};
use crate::toolfile::ToolFileKind;

/// The runbook's steps by id.
type Steps<'a> = BTreeMap<&'a str, &'a Step>;

impl Checker<'_> {
    pub(super) fn scenario(
        &self,
        scenario: &ScenarioFiles,
        tools: &BTreeMap<String, ToolRef>,
        out: &mut Vec<Diagnostic>,
    ) {
        let steps: BTreeMap<&str, &Step> = self
            .runbook
            .walk()
            .into_iter()
            .filter_map(|s| s.id.as_deref().map(|id| (id, s)))
            .collect();
        if let Some((located, data)) = &scenario.scenario {
            self.scenario_inputs(located, data, out);
            self.scenario_responses(located, data, tools, out);
            self.scenario_steps(located, data, &steps, out);
        }
        if let Some((located, test)) = &scenario.test {
            self.scenario_test(located, test, &steps, out);
        }
    }

    /// The inputs a scenario gives: each one the runbook has, every required one.
    fn scenario_inputs(&self, located: &Located, data: &Scenario, out: &mut Vec<Diagnostic>) {
        for name in data.inputs.keys() {
            if !self.runbook.inputs.contains_key(name) {
                let mut diagnostic = Diagnostic::error(
                    codes::SCENARIO,
                    format!("runbook `{}` has no input `{name}`", self.runbook.name),
                );
                diagnostic =
                    diagnostic.suggest(name, self.runbook.inputs.keys().map(String::as_str));
                out.push(located.at_key(diagnostic, &crate::yaml::pointer_push("/inputs", name)));
            }
        }
        for (name, input) in &self.runbook.inputs {
            if input.required && input.default.is_none() && !data.inputs.contains_key(name) {
                out.push(located.at(
                    Diagnostic::error(
                        codes::SCENARIO,
                        format!("the scenario does not give the required input `{name}`"),
                    ),
                    "/inputs",
                ));
            }
        }
    }

    /// The tools a scenario answers for: each on the runbook's list, each action the tool's.
    fn scenario_responses(
        &self,
        located: &Located,
        data: &Scenario,
        tools: &BTreeMap<String, ToolRef>,
        out: &mut Vec<Diagnostic>,
    ) {
        for key in data.tool_responses.keys() {
            let pointer = crate::yaml::pointer_push("/tool_responses", key);
            // `tool:action` for a tool/v0 tool; a tool without actions (a toolpack tool,
            // a built-in) is keyed by its reference alone unless its step names an action,
            // as the replay looks it up.
            let (tool, action) = match key.rsplit_once(':') {
                Some((tool, action)) => (tool, Some(action)),
                None => (key.as_str(), None),
            };
            let gert = matches!(tools.get(tool), Some(ToolRef::File(file)) if matches!(&file.kind, Some(ToolFileKind::Gert(_))));
            if gert && action.is_none() {
                // gert's replay falls back to the tool's name when no `tool:action` key
                // was recorded: such responses answer every action of the tool, in turn.
                let message = format!(
                    "response key `{key}` answers every action of `{tool}` in turn; `{tool}:ACTION` keeps each action's responses apart"
                );
                out.push(located.at_key(Diagnostic::warning(codes::SCENARIO, message), &pointer));
                continue;
            }
            let action = action.unwrap_or_default();
            match tools.get(tool) {
                // A runbook this one invokes answers from the same scenario.
                None if self.invoked_tools().contains(tool) => {}
                // `cli` steps and preconditions run as `shell_exec` calls.
                None if tool == "shell_exec" && action.is_empty() && self.runs_commands() => {}
                None => {
                    let mut diagnostic = Diagnostic::error(
                        codes::SCENARIO,
                        format!("`{tool}` is not in the runbook's `tools` list"),
                    );
                    diagnostic =
                        diagnostic.suggest(tool, self.runbook.tools.iter().map(String::as_str));
                    out.push(located.at_key(diagnostic, &pointer));
                }
                Some(ToolRef::File(file)) if matches!(&file.kind, Some(ToolFileKind::Gert(g)) if !g.actions.contains_key(action)) =>
                {
                    let Some(ToolFileKind::Gert(gert)) = &file.kind else { continue };
                    let mut diagnostic = Diagnostic::error(
                        codes::SCENARIO,
                        format!("tool `{tool}` has no action `{action}`"),
                    );
                    diagnostic =
                        diagnostic.suggest(action, gert.actions.keys().map(String::as_str));
                    out.push(located.at_key(diagnostic, &pointer));
                }
                Some(_) => {}
            }
        }
    }

    /// The steps a scenario gives evidence and approvals to: each one the runbook's, evidence
    /// only to manual steps.
    fn scenario_steps(
        &self,
        located: &Located,
        data: &Scenario,
        steps: &Steps<'_>,
        out: &mut Vec<Diagnostic>,
    ) {
        for step_id in data.evidence.keys().chain(data.approvals.keys()) {
            match steps.get(step_id.as_str()) {
                None => out.push(located.at_key(
                    Diagnostic::error(
                        codes::SCENARIO,
                        format!("runbook `{}` has no step `{step_id}`", self.runbook.name),
                    ),
                    &crate::yaml::pointer_push(
                        if data.evidence.contains_key(step_id) {
                            "/evidence"
                        } else {
                            "/approvals"
                        },
                        step_id,
                    ),
                )),
                Some(step)
                    if data.evidence.contains_key(step_id)
                        && !matches!(step.kind, StepKind::Manual { .. }) =>
                {
                    out.push(located.at_key(
                        Diagnostic::error(
                            codes::SCENARIO,
                            format!("step `{step_id}` is not a manual step; it takes no evidence"),
                        ),
                        &crate::yaml::pointer_push("/evidence", step_id),
                    ));
                }
                Some(_) => {}
            }
        }
    }

    /// The steps a scenario's test expects reached and not reached: each one the runbook's,
    /// none in both lists.
    fn scenario_test(
        &self,
        located: &Located,
        test: &ScenarioTest,
        steps: &Steps<'_>,
        out: &mut Vec<Diagnostic>,
    ) {
        for (field, list) in
            [("must_reach", &test.must_reach), ("must_not_reach", &test.must_not_reach)]
        {
            for (i, id) in list.iter().enumerate() {
                // `invoke_step/child_step` names a step of the runbook an `invoke` runs.
                let (head, inner) =
                    id.split_once('/').map_or((id.as_str(), false), |(h, _)| (h, true));
                let known = steps
                    .get(head)
                    .is_some_and(|step| !inner || matches!(step.kind, StepKind::Invoke { .. }));
                if !known {
                    let mut diagnostic = Diagnostic::error(
                        codes::SCENARIO,
                        format!("runbook `{}` has no step `{id}`", self.runbook.name),
                    );
                    diagnostic = diagnostic.suggest(id, steps.keys().copied());
                    out.push(located.at(diagnostic, &format!("/{field}/{i}")));
                }
            }
        }
        for (i, id) in test.must_not_reach.iter().enumerate() {
            if test.must_reach.contains(id) {
                out.push(located.at(
                    Diagnostic::error(
                        codes::SCENARIO,
                        format!("`{id}` is in both `must_reach` and `must_not_reach`"),
                    ),
                    &format!("/must_not_reach/{i}"),
                ));
            }
        }
    }
}
