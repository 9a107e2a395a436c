//! The interpreter: walks a runbook's steps against the journal (see [`crate::journal`]).
//!
//! `advance` always starts at the first step. Steps already in the journal are answered from
//! it (no tool runs twice, no person is asked twice); the walk stops at the first steps that
//! need something new from a person, or at the end. Trace events are keyed the same way on
//! every walk, so the host records each once.

mod attempt;
mod blocks;
pub(crate) mod conflicts;
mod for_each;
mod legacy;
mod plan;

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use jig_model::runbook::{Runbook, Step, StepKind};
use serde_json::{Value, json};

use crate::error::RunbookError;
use crate::host::{Host, HostError};
use crate::journal::{Entry, Failure, Journal, keys};
use crate::outcome::{Outcome, Progress, RunStatus, StepFailure, Waiting};
use crate::render;
use crate::trace::{Actor, TraceEvent, TraceKind};
use crate::vars::State;

/// What a run is, besides its journal.
pub struct Run<'a> {
    /// The runbook.
    pub runbook: &'a Runbook,
    /// Its reference name.
    pub name: &'a str,
    /// Its hash (a journal begun on another version of it is refused).
    pub hash: &'a str,
    /// The run's id.
    pub run_id: &'a str,
    /// Tools, the journal's store, the trace.
    pub host: &'a dyn Host,
    /// One-time approval tokens for step instances, from approvals given just now.
    pub tokens: HashMap<String, String>,
}

/// How a list of steps (or one step) ended.
pub(crate) enum Flow {
    /// Go on with the next step.
    Next,
    /// An `end` step was reached.
    End(Outcome),
    /// A step stopped the run.
    Stop(StepFailure, RunStatus),
    /// Steps wait for people.
    Wait(Vec<Waiting>),
    /// The host failed: nothing can go on.
    Fatal(RunbookError),
}

/// Walks one run.
pub struct Interpreter<'a> {
    run: Run<'a>,
    journal: Mutex<Journal>,
    stepwise: bool,
}

impl<'a> Interpreter<'a> {
    /// An interpreter for `run`, with what its journal holds so far (it must hold the start).
    pub fn new(run: Run<'a>, journal: Journal) -> Self {
        let stepwise =
            matches!(journal.get(keys::START), Some(Entry::Start { stepwise: true, .. }));
        Self { run, journal: Mutex::new(journal), stepwise }
    }

    /// The journal as it is now, with what this walk recorded.
    pub fn journal(&self) -> Journal {
        self.journal.lock().map(|j| j.clone()).unwrap_or_default()
    }

    /// Walk the run as far as it can go.
    pub async fn advance(&self) -> Result<Progress, RunbookError> {
        let Some(Entry::Start { inputs, hash, by, .. }) = self.entry(keys::START) else {
            return Err(RunbookError::Host(HostError {
                code: "E_NOT_FOUND".to_owned(),
                message: format!("run `{}` has no start in its journal", self.run.run_id),
            }));
        };
        if hash != self.run.hash {
            return Err(RunbookError::Changed {
                recorded: hash,
                current: self.run.hash.to_owned(),
            });
        }
        conflicts::check(self.run.runbook, self.run.host)?;
        let inputs = crate::inputs::resolve(self.run.runbook, &inputs)?;
        self.trace(
            "run_start",
            TraceKind::RunStart,
            None,
            Actor::human(&by),
            json!({ "runbook": self.run.name, "inputs": inputs, "constants": self.run.runbook.constants }),
        )
        .await?;
        let mut state = State::new(inputs, &self.run.runbook.constants);
        let flow = self.list(&self.run.runbook.steps, "", &mut state).await;
        let legacy = self.run.runbook.api_version != jig_model::runbook::RunbookApi::KernelV0;
        let mut progress = Progress {
            status: RunStatus::Completed,
            outcome: None,
            waiting: Vec::new(),
            failure: None,
            // Steps without an id are not anyone's to name in a test.
            visited: state.visited.iter().filter(|v| !is_stand_in(v)).cloned().collect(),
            variables: state.vars().clone(),
        };
        match flow {
            Flow::Fatal(error) => return Err(error),
            Flow::End(outcome) => progress.outcome = Some(outcome),
            Flow::Next if legacy => {}
            Flow::Next => {
                progress.status = RunStatus::Error;
                progress.failure = Some(StepFailure {
                    key: String::new(),
                    failure: Failure::new(
                        "no_end",
                        "the steps ran out without reaching an `end` step",
                    ),
                });
            }
            Flow::Stop(failure, status) => {
                progress.status = status;
                progress.failure = Some(failure);
            }
            Flow::Wait(waiting) => {
                progress.status = RunStatus::Paused;
                progress.waiting = waiting;
            }
        }
        let data = json!({
            "status": progress.status,
            "outcome": progress.outcome,
            "failure": progress.failure,
            "waiting": progress.waiting.iter().map(|w| &w.key).collect::<Vec<_>>(),
        });
        match progress.status {
            RunStatus::Paused => {
                let at: Vec<&str> = progress.waiting.iter().map(|w| w.key.as_str()).collect();
                let key = format!("paused:{}", at.join(","));
                self.trace(&key, TraceKind::Paused, None, Actor::system(), data).await?;
            }
            _ => {
                self.trace("run_complete", TraceKind::RunComplete, None, Actor::system(), data)
                    .await?
            }
        }
        self.run.host.flush().await?;
        Ok(progress)
    }

    /// Run `steps` in order, following `next` jumps; instance keys start with `prefix`.
    pub(crate) fn list<'s>(
        &'s self,
        steps: &'s [Step],
        prefix: &'s str,
        state: &'s mut State,
    ) -> BoxFuture<'s, Flow> {
        Box::pin(async move {
            let mut visits: HashMap<String, u32> = HashMap::new();
            let mut jumps: HashMap<String, u32> = HashMap::new();
            let mut i = 0;
            while i < steps.len() {
                let step = &steps[i];
                let id = id_of(step, i);
                let visit = visits.entry(id.clone()).or_insert(0);
                *visit += 1;
                let key = if *visit == 1 {
                    format!("{prefix}{id}")
                } else {
                    format!("{prefix}{id}@{visit}")
                };
                let (flow, ran) = self.step(step, &id, &key, state).await;
                match flow {
                    Flow::Next => {}
                    other => return other,
                }
                let Some(next) = step.next.as_ref().filter(|_| ran) else {
                    i += 1;
                    continue;
                };
                let target = next.target();
                let Some(j) = steps.iter().position(|s| s.id.as_deref() == Some(target)) else {
                    return stop(
                        &key,
                        "next",
                        format!("`next` names `{target}`, which is not a step of this list"),
                        RunStatus::Error,
                    );
                };
                if j > i {
                    i = j;
                    continue;
                }
                let max = match next.max() {
                    None => 0,
                    Some(max) => match render::value("next.max", max, state.vars())
                        .map(|v| jig_expr::text(&v).parse::<u32>())
                    {
                        Ok(Ok(max)) => max,
                        Ok(Err(_)) => {
                            return stop(
                                &key,
                                "next",
                                "`next.max` is not a whole number",
                                RunStatus::Error,
                            );
                        }
                        Err(e) => return stop(&key, "template", e.to_string(), RunStatus::Error),
                    },
                };
                let count = jumps.entry(target.to_owned()).or_insert(0);
                if *count >= max {
                    i += 1; // the bound is reached: carry on past the jump
                    continue;
                }
                *count += 1;
                state.retry_count(target, *count);
                i = j;
            }
            Flow::Next
        })
    }

    /// Run one step; also says whether it ran (a `when` that is false skips it and its `next`).
    async fn step(&self, step: &Step, id: &str, key: &str, state: &mut State) -> (Flow, bool) {
        if let Some(when) = &step.when {
            match render::condition("when", when, state.vars()) {
                Ok(true) => {}
                Ok(false) => {
                    let data = json!({ "step_id": id, "status": "skipped", "reason": "when", "when": when });
                    return (self.skipped(key, data).await, false);
                }
                Err(e) => return (stop(key, "template", e.to_string(), RunStatus::Error), false),
            }
        }
        if let Some(for_each) = &step.for_each {
            return (self.for_each(step, for_each, id, key, state).await, true);
        }
        (self.once(step, id, key, state).await, true)
    }

    /// One step, without its `for_each`.
    pub(crate) fn once<'s>(
        &'s self,
        step: &'s Step,
        id: &'s str,
        key: &'s str,
        state: &'s mut State,
    ) -> BoxFuture<'s, Flow> {
        Box::pin(async move {
            match &step.kind {
                StepKind::Branch { arms } => self.branch(arms, id, key, state).await,
                StepKind::Parallel { arms } => self.parallel(arms, id, key, state).await,
                StepKind::Repeat { max, until, steps, over, as_var } => {
                    self.repeat(
                        blocks::Repeat {
                            max: *max,
                            until: until.as_deref(),
                            over: over.as_deref(),
                            as_var: as_var.as_deref(),
                            steps,
                        },
                        id,
                        key,
                        state,
                    )
                    .await
                }
                StepKind::End { outcome } => self.end(outcome, id, key, state).await,
                StepKind::Invoke { runbook, inputs } => {
                    self.invoke(step, runbook, inputs, id, key, state).await
                }
                _ => self.executable(step, id, key, state).await,
            }
        })
    }

    /// A step that completes without running (a `when` that is false, a gate that skips it):
    /// its completion traced, and the run goes on.
    pub(crate) async fn skipped(&self, key: &str, data: Value) -> Flow {
        let traced = self
            .trace(
                &format!("complete:{key}"),
                TraceKind::StepComplete,
                Some(key),
                Actor::system(),
                data,
            )
            .await;
        traced.err().map_or(Flow::Next, Flow::Fatal)
    }

    pub(crate) fn entry(&self, key: &str) -> Option<Entry> {
        self.journal.lock().ok().and_then(|j| j.get(key).cloned())
    }

    /// Record an entry through the host; the host's answer (the first writer's) is kept.
    pub(crate) async fn record(&self, key: String, entry: Entry) -> Result<Entry, HostError> {
        let kept = self.run.host.record(&key, entry).await?;
        if let Ok(mut journal) = self.journal.lock() {
            journal.insert(key, kept.clone());
        }
        Ok(kept)
    }

    pub(crate) async fn trace(
        &self,
        key: &str,
        kind: TraceKind,
        step: Option<&str>,
        actor: Actor,
        data: Value,
    ) -> Result<(), RunbookError> {
        let event =
            TraceEvent { key: key.to_owned(), kind, step: step.map(str::to_owned), actor, data };
        self.run.host.trace(event).await.map_err(RunbookError::Host)
    }

    /// Whether the run holds for a pause no one has resumed yet: those in the journal, and
    /// those the host learned of since the walk began.
    pub(crate) async fn paused(&self) -> bool {
        let (asked, resumed) = self
            .journal
            .lock()
            .map(|j| (j.count_prefixed(keys::PAUSE), j.count_prefixed(keys::RESUME)))
            .unwrap_or_default();
        if asked > resumed {
            return true;
        }
        self.run.host.pauses().await > resumed
    }

    pub(crate) fn stepwise(&self) -> bool {
        self.stepwise
    }

    pub(crate) fn run(&self) -> &Run<'a> {
        &self.run
    }
}

/// A step's id, or a stable stand-in for steps without one.
pub(crate) fn id_of(step: &Step, index: usize) -> String {
    step.id.clone().unwrap_or_else(|| format!("_{index}"))
}

/// Whether `id` is [`id_of`]'s stand-in for a step without an id.
fn is_stand_in(id: &str) -> bool {
    let last = id.rsplit('/').next().unwrap_or(id);
    last.strip_prefix('_').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A flow that stops the run at `key`.
pub(crate) fn stop(key: &str, kind: &str, message: impl Into<String>, status: RunStatus) -> Flow {
    Flow::Stop(StepFailure { key: key.to_owned(), failure: Failure::new(kind, message) }, status)
}
