//! One executable step (tool, cli, manual, assert, extension, invoke) at one instance key:
//! which attempt is current, whether a person must say go first, running it once and
//! recording the result, and what the result means for the run.

use jig_model::runbook::Step;
use jig_model::runbook::kernel::GovernanceAction;
use serde_json::{Map, Value, json};

use super::plan::{Plan, Ran};
use super::{Flow, Interpreter, stop};
use crate::journal::{Entry, Failure, StepStatus, keys};
use crate::outcome::{Need, RunStatus, StepFailure};
use crate::trace::{Actor, TraceKind};
use crate::vars::State;

impl Interpreter<'_> {
    pub(super) async fn executable(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        // A retried step runs again under a new key: `key`, `key~2`, `key~3` …
        let mut attempt = key.to_owned();
        let mut n = 1;
        while let Some(Entry::Done { status: StepStatus::Failed | StepStatus::Error, .. }) =
            self.entry(&keys::done(&attempt))
        {
            if self.entry(&keys::retry(&attempt)).is_none() {
                break;
            }
            n += 1;
            attempt = format!("{key}~{n}");
        }
        let recorded = match self.entry(&keys::done(&attempt)) {
            Some(Entry::Done { status, outputs, failure }) => (status, outputs, failure),
            _ => match self.attempt(step, id, &attempt, state).await {
                Ok(done) => done,
                Err(flow) => return flow,
            },
        };
        // v0/v1 captures and assertions: worked out from the recorded result on every walk.
        let recorded = super::legacy::settle(step, recorded);
        self.apply(step, id, &attempt, state, recorded).await
    }

    /// Plan, wait for a go-ahead if one is needed, run, record.
    async fn attempt(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        state: &State,
    ) -> Result<(StepStatus, Map<String, Value>, Option<Failure>), Flow> {
        // A person asked the run to pause: it holds here, before anything new happens (not
        // even rendering), until someone resumes it; skipping the step moves the hold on.
        if self.paused().await {
            if let Some(Entry::Go { skip: Some(reason), by }) = self.entry(&keys::go(key)) {
                let failure = Failure::new("skipped", format!("skipped by {by}: {reason}"));
                return self.keep(key, StepStatus::Skipped, Map::new(), Some(failure)).await;
            }
            let held = super::plan::waiting_view(step, id, key, Need::Paused);
            return Err(Flow::Wait(vec![held]));
        }
        let plan = match self.plan(step, id, key, state).await {
            Ok(plan) => plan,
            Err((status, failure)) => {
                return self.keep(key, status, Map::new(), Some(failure)).await;
            }
        };
        if let Some(verdict) = &plan.verdict
            && verdict.action == GovernanceAction::Deny
        {
            let failure = Failure::new(
                "denied",
                format!("the runbook's governance ({}) denies this step", verdict.rule),
            );
            return self.keep(key, StepStatus::Skipped, Map::new(), Some(failure)).await;
        }
        // A person says go first: in a step-by-step run (except at a manual step, where the
        // person's evidence is the go-ahead), and where the runbook's governance asks for
        // approval of a step that is not a tool call (those go to the engine's queue).
        let governance_asks =
            plan.verdict.as_ref().is_some_and(|v| v.action == GovernanceAction::RequireApproval)
                && !matches!(plan.action, super::plan::Action::Tool(_));
        let manual = matches!(plan.action, super::plan::Action::Manual { .. });
        if (self.stepwise() && !manual) || governance_asks {
            // Where governance asks for approval, `min_approvers` (or a v0/v1 step's
            // `approvals.min`) different people say go, each under a key of their own.
            let required = match &plan.verdict {
                Some(v) if governance_asks => v.approvers.max(1),
                _ => 1,
            };
            let mut approved_by = Vec::new();
            for n in 1..=required as usize {
                match self.entry(&keys::go_nth(key, n)) {
                    Some(Entry::Go { skip: Some(reason), by }) => {
                        let failure = Failure::new("skipped", format!("skipped by {by}: {reason}"));
                        return self
                            .keep(key, StepStatus::Skipped, Map::new(), Some(failure))
                            .await;
                    }
                    Some(Entry::Go { skip: None, by }) => approved_by.push(by),
                    _ => break,
                }
            }
            if approved_by.len() < required as usize {
                let reason = match &plan.verdict {
                    Some(v) if governance_asks => format!("approval required by {}", v.rule),
                    _ => "stepwise".to_owned(),
                };
                return Err(self.wait(plan, Need::Go { reason, required, approved_by }));
            }
        }
        // v0/v1: a precondition that holds skips the step; a delay comes before it.
        if let Some(skip) = self.precondition(step, &plan, id, key, state).await? {
            return self.keep(key, StepStatus::Skipped, Map::new(), Some(skip)).await;
        }
        self.delay(step, key).await?;
        let data = json!({ "step_id": id, "type": plan.view.step_type, "tool": plan.view.tool, "inputs": plan.view.inputs });
        if let Err(e) = self
            .trace(&format!("start:{key}"), TraceKind::StepStart, Some(key), Actor::system(), data)
            .await
        {
            return Err(Flow::Fatal(e));
        }
        match self.execute(&plan, key, state).await {
            Ran::Done { status, outputs, failure } => {
                self.keep(key, status, outputs, failure).await
            }
            Ran::Wait(need) => Err(self.wait(plan, need)),
        }
    }

    /// Record a step's result; the recorded one (maybe another walk's) is what counts.
    pub(super) async fn keep(
        &self,
        key: &str,
        status: StepStatus,
        outputs: Map<String, Value>,
        failure: Option<Failure>,
    ) -> Result<(StepStatus, Map<String, Value>, Option<Failure>), Flow> {
        match self.record(keys::done(key), Entry::Done { status, outputs, failure }).await {
            Ok(Entry::Done { status, outputs, failure }) => Ok((status, outputs, failure)),
            Ok(other) => Err(stop(
                key,
                "journal",
                format!("the journal holds {other:?} where a result belongs"),
                RunStatus::Error,
            )),
            Err(e) => Err(Flow::Fatal(e.into())),
        }
    }

    fn wait(&self, plan: Plan, need: Need) -> Flow {
        let mut view = plan.view;
        view.need = need;
        Flow::Wait(vec![view])
    }

    /// What a recorded result means: outputs into the variables, and go on, stop or wait.
    async fn apply(
        &self,
        step: &Step,
        id: &str,
        key: &str,
        state: &mut State,
        (status, outputs, failure): (StepStatus, Map<String, Value>, Option<Failure>),
    ) -> Flow {
        let actor = self.actor_of(step, key);
        let data =
            json!({ "step_id": id, "status": status, "outputs": outputs, "failure": failure });
        if let Err(e) = self
            .trace(&format!("complete:{key}"), TraceKind::StepComplete, Some(key), actor, data)
            .await
        {
            return Flow::Fatal(e);
        }
        // Reached, whatever became of it (as gert counts: after `when`, before governance).
        state.visited.push(id.to_owned());
        // A scope may be templated (`round/{{ .repeat.index }}`).
        let scope = match step
            .scope
            .as_deref()
            .map(|s| crate::render::text("scope", s, state.vars()))
            .transpose()
        {
            Ok(scope) => scope,
            Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
        };
        if matches!(status, StepStatus::Success | StepStatus::Failed)
            && let Err(message) = state.outputs(id, scope.as_deref(), &outputs)
        {
            return stop(key, "contract_violation", message, RunStatus::Error);
        }
        if status == StepStatus::Success && !step.export.is_empty() && step.for_each.is_none() {
            if let Err(message) = state.export(id, &step.export, &outputs) {
                return stop(key, "export", message, RunStatus::Error);
            }
            let data = json!({ "step_id": id, "scope": scope, "exported_vars": step.export });
            if let Err(e) = self
                .trace(
                    &format!("export:{key}"),
                    TraceKind::ScopeExport,
                    Some(key),
                    Actor::system(),
                    data,
                )
                .await
            {
                return Flow::Fatal(e);
            }
        }
        let failure =
            failure.unwrap_or_else(|| Failure::new(status.as_str(), "the step did not succeed"));
        match status {
            StepStatus::Success => self.legacy_outcome(step, key, state).await,
            StepStatus::Skipped if failure.kind == "denied" => {
                Flow::Stop(StepFailure { key: key.to_owned(), failure }, RunStatus::Denied)
            }
            StepStatus::Skipped => Flow::Next,
            StepStatus::Failed | StepStatus::Error if step.continue_on_fail => Flow::Next,
            StepStatus::Failed | StepStatus::Error => {
                let run_status =
                    if status == StepStatus::Failed { RunStatus::Failed } else { RunStatus::Error };
                if self.stepwise() && self.entry(&keys::abort(key)).is_none() {
                    let mut view =
                        super::plan::waiting_view(step, id, key, Need::Failed { failure });
                    view.title.clone_from(&step.title);
                    return Flow::Wait(vec![view]);
                }
                Flow::Stop(StepFailure { key: key.to_owned(), failure }, run_status)
            }
        }
    }

    /// Who a step's completion is attributed to: the person whose evidence or go-ahead it
    /// used, else the step's declared principal, else the kernel.
    fn actor_of(&self, step: &Step, key: &str) -> Actor {
        for journal_key in [keys::evidence(key), keys::choice(key), keys::go(key)] {
            if let Some(by) = self.entry(&journal_key).as_ref().and_then(Entry::by) {
                return Actor::human(by);
            }
        }
        match &step.principal {
            Some(p) => Actor {
                kind: match p.kind {
                    jig_model::runbook::kernel::PrincipalKind::System => "system",
                    jig_model::runbook::kernel::PrincipalKind::Human => "human",
                    jig_model::runbook::kernel::PrincipalKind::Agent => "agent",
                }
                .to_owned(),
                id: p.id.clone(),
                role: p.role.clone(),
            },
            None => Actor::system(),
        }
    }

    /// v0/v1 `outcomes`: the first whose `when` holds ends the run.
    pub(super) async fn legacy_outcome(&self, step: &Step, key: &str, state: &mut State) -> Flow {
        let Some(details) = &step.legacy else { return Flow::Next };
        for (i, outcome) in details.outcomes.iter().enumerate() {
            let holds = match &outcome.when {
                None => true,
                Some(when) => match crate::render::condition(
                    &format!("outcomes[{i}].when"),
                    when,
                    state.vars(),
                ) {
                    Ok(holds) => holds,
                    Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
                },
            };
            if !holds {
                continue;
            }
            let mut meta = Map::new();
            if let Some(recommendation) = &outcome.recommendation {
                meta.insert("recommendation".to_owned(), Value::String(recommendation.clone()));
            }
            if let Some(next) = &outcome.next_runbook {
                // What to continue with, ready to start: the project's name for it (the file
                // may be a v0 path relative to this runbook) and its inputs, rendered now.
                let mut inputs = Map::new();
                for (name, template) in &next.inputs {
                    let field = format!("outcomes[{i}].next_runbook.inputs.{name}");
                    match crate::render::text(&field, template, state.vars()) {
                        Ok(text) => inputs.insert(name.clone(), Value::String(text)),
                        Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
                    };
                }
                let mut next_meta = Map::new();
                next_meta.insert("file".to_owned(), Value::String(next.file.clone()));
                if let Some(name) = self.run().host.runbook_name(&next.file) {
                    next_meta.insert("runbook".to_owned(), Value::String(name));
                }
                next_meta.insert("inputs".to_owned(), Value::Object(inputs));
                meta.insert("next_runbook".to_owned(), Value::Object(next_meta));
            }
            let resolved = crate::outcome::Outcome {
                category: outcome.state,
                code: None,
                meta,
                step: key.to_owned(),
            };
            let data = json!({ "step_id": step.id, "structured_outcome": resolved });
            if let Err(e) = self
                .trace("outcome", TraceKind::OutcomeResolved, Some(key), Actor::system(), data)
                .await
            {
                return Flow::Fatal(e);
            }
            return Flow::End(resolved);
        }
        Flow::Next
    }
}
