//! Runbook runs over the engine: the stepping API every surface calls (the terminal, the
//! workbench's HTTP API, the MCP server).
//!
//! A run is its journal in the audit store. Every call here walks the run again from its
//! journal (see [`crate::journal`]), so any process can act on any run: a run paused at a
//! manual step in the workbench resumes from the terminal after a restart. What people do —
//! evidence, go-aheads, choices, retries — is recorded first-writer-wins: when two reviewers act
//! on one step, one wins and the other gets `E_CONFLICT`.

mod attachments;
mod host;
mod record;
mod step_spans;

pub use record::Recorded;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use jig_audit::{ApprovalState, NewPacket, PacketKind, RunbookRunRecord};
use jig_engine::WalkRecord;
use jig_engine::{Engine, RunbookEvent, canonical_principal};
use jig_model::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::RunbookError;
use crate::interp::{Interpreter, Run};
use crate::journal::{Entry, Journal, keys};
use crate::outcome::{Need, Progress, RunStatus};
use host::EngineHost;

/// A runbook of the project, as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookSummary {
    /// Its reference name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// `kernel/v0`, `runbook/v1` …
    pub api_version: String,
    /// Its file, relative to the project root.
    pub file: String,
    /// Its inputs: name → declaration.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub inputs: Value,
    /// How many steps, counting those inside branches and loops.
    pub steps: usize,
    /// Its recorded scenarios.
    pub scenarios: Vec<String>,
}

/// A run as people see it: where it stands and what it waits for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunView {
    /// The run's id.
    pub id: String,
    /// The runbook.
    pub runbook: String,
    /// Who started it.
    pub started_by: Option<String>,
    /// When it began (µs since the epoch).
    pub created_us: i64,
    /// When it last moved.
    pub updated_us: i64,
    /// Where it stands.
    pub progress: Progress,
    /// What the policy will decide for each waiting tool step's call, by step instance: the
    /// reviewer sees the verdict before giving the go-ahead.
    pub verdicts: BTreeMap<String, jig_engine::Preview>,
    /// Who paused the run, while it holds for a pause (the latest pause when there were several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<String>,
}

/// A runbook with the graph of its steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunbookDetail {
    /// What the list shows.
    #[serde(flatten)]
    pub summary: RunbookSummary,
    /// Its steps and how control moves between them.
    pub graph: crate::graph::Graph,
}

/// What a person does to a waiting step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Run the step (a go-ahead).
    Run,
    /// Skip it.
    Skip {
        /// Why, for the record.
        reason: String,
    },
    /// Supply a manual step's evidence.
    Evidence {
        /// Evidence name → value.
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        values: Map<String, Value>,
    },
    /// Answer a step's choice.
    Choose {
        /// The option's value.
        value: String,
    },
    /// Approve the exact tool call the step waits to make.
    Approve,
    /// Deny it: the call is refused, and the run stops.
    Deny,
    /// Run a failed step again.
    Retry,
    /// Accept a failed step's failure: the run ends failed.
    Abort,
    /// Hold the run before its next step that would do something (the whole run's, whatever
    /// step it names); a go-ahead at the step where it holds resumes it.
    Pause,
    /// Continue an ended run with the runbook its outcome names (recorded by [`Runbooks::follow`]).
    Follow,
}

/// Why the service refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// No such runbook or run.
    #[error("{0}")]
    NotFound(String),
    /// What a person gave is not what the step takes (an attachment that is not one).
    #[error("{0}")]
    Invalid(String),
    /// Someone else acted first, or the step does not wait for this.
    #[error("{0}")]
    Conflict(String),
    /// The policy refuses this person this action.
    #[error("{0}")]
    Forbidden(String),
    /// The runbook refuses to run (inputs, a parallel conflict, a changed runbook).
    #[error(transparent)]
    Runbook(#[from] RunbookError),
    /// The engine refused (an approval it would not grant).
    #[error(transparent)]
    Engine(#[from] jig_engine::EngineError),
    /// The audit store failed.
    #[error("audit store: {0}")]
    Store(#[from] jig_audit::AuditError),
}

impl ServiceError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Invalid(_) => ErrorCode::ValidationFail,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Forbidden(_) => ErrorCode::Policy,
            Self::Runbook(e) => e.code(),
            Self::Engine(e) => e.code(),
            Self::Store(_) => ErrorCode::Internal,
        }
    }
}

/// The runbook service.
#[derive(Clone)]
pub struct Runbooks {
    engine: Arc<Engine>,
    /// Who named the principal its callers act as, when it was not known (the CLI's `--as`):
    /// recorded with every decision they make here, as the queue records it.
    asserted_by: Option<String>,
}

impl Runbooks {
    /// Runbooks of `engine`'s project.
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { engine, asserted_by: None }
    }

    /// The same, for a person whose name `asserted_by` asserted (`jig --as bob`).
    #[must_use]
    pub fn asserted_by(mut self, asserted_by: Option<String>) -> Self {
        self.asserted_by = asserted_by;
        self
    }

    /// Every runbook, by name.
    pub fn list(&self) -> Vec<RunbookSummary> {
        self.engine.snapshot().runbooks().map(|entry| summary(entry)).collect()
    }

    /// One runbook with its step graph.
    pub fn detail(&self, name: &str) -> Result<RunbookDetail, ServiceError> {
        let snapshot = self.engine.snapshot();
        let entry = find(&snapshot, name)?;
        Ok(RunbookDetail { summary: summary(entry), graph: crate::graph::of(&entry.runbook) })
    }

    /// Start a run of `name` with `inputs` (checked before anything is recorded) and walk it
    /// as far as it goes. `stepwise`: every step waits for a person's go-ahead.
    pub async fn start(
        &self,
        name: &str,
        inputs: Map<String, Value>,
        stepwise: bool,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        let id = uuid::Uuid::new_v4().to_string();
        self.start_as(&id, name, inputs, stepwise, principal).await
    }

    /// Start run `id` of `name` (inputs checked before anything is recorded) and walk it.
    async fn start_as(
        &self,
        id: &str,
        name: &str,
        inputs: Map<String, Value>,
        stepwise: bool,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        let id = id.to_owned();
        let snapshot = self.engine.snapshot();
        let entry = find(&snapshot, name)?;
        crate::inputs::resolve(&entry.runbook, &inputs)?;
        let host = self.host(&id, name, principal);
        let start = Entry::Start {
            runbook: name.to_owned(),
            hash: entry.hash.clone(),
            inputs: inputs.clone(),
            stepwise,
            by: principal.to_owned(),
            definition: serde_json::to_value(&entry.runbook).ok(),
        };
        let record = RunbookRunRecord {
            id: id.clone(),
            runbook: name.to_owned(),
            hash: entry.hash.clone(),
            status: "paused".to_owned(),
            started_by: Some(principal.to_owned()),
            created_us: 0,
            updated_us: 0,
            summary: None,
        };
        self.engine.record_walk(vec![WalkRecord::SaveRun(Box::new(record))]).await?;
        host.journal(keys::START, serde_json::to_value(&start).unwrap_or(Value::Null), None)
            .await
            .map_err(RunbookError::Host)?;
        self.walk(&id, HashMap::new()).await
    }

    /// Walk a run again: go on from where its journal stands.
    pub async fn resume(&self, id: &str) -> Result<RunView, ServiceError> {
        self.walk(id, HashMap::new()).await
    }

    /// A run as last walked (nothing runs).
    pub async fn show(&self, id: &str) -> Result<RunView, ServiceError> {
        self.shown(self.record(id).await?).await
    }

    /// The view of a run's record as last walked.
    async fn shown(&self, record: RunbookRunRecord) -> Result<RunView, ServiceError> {
        let progress = saved_progress(&record).ok_or_else(|| {
            ServiceError::NotFound(format!("run `{}` has not been walked yet", record.id))
        })?;
        Ok(self.view(record, progress).await)
    }

    /// A run's trace: the packets it appended to the audit chain (kernel-v0 §11's events and
    /// the people's acts), in order, each with its principal.
    pub async fn trace(&self, id: &str) -> Result<Vec<jig_audit::Packet>, ServiceError> {
        let record = self.record(id).await?;
        Ok(self.engine.store().packets_of_run(&record.id).await?)
    }

    /// The latest runs.
    pub async fn runs(&self, limit: i64) -> Result<Vec<RunbookRunRecord>, ServiceError> {
        Ok(self.engine.store().runbook_runs(limit).await?)
    }

    /// A person acts on a waiting step; then the run walks on.
    pub async fn act(
        &self,
        id: &str,
        key: &str,
        action: Action,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        match action {
            Action::Pause => return self.pause(id, principal).await,
            Action::Follow => return self.follow(id, Map::new(), principal).await,
            _ => {}
        }
        let record = self.record(id).await?;
        let current = self.shown(record.clone()).await?;
        let waiting = current.progress.waiting.iter().find(|w| w.key == key);
        let failed_here = current.progress.failure.as_ref().is_some_and(|f| f.key == key);
        let by = principal.to_owned();
        let mut tokens = HashMap::new();
        let (journal_key, entry) = match (&action, waiting.map(|w| &w.need)) {
            (Action::Run, Some(Need::Paused)) => {
                let resumed = self.engine.store().runbook_journal_count(id, keys::RESUME).await?;
                (keys::resume(resumed + 1), Entry::Go { skip: None, by })
            }
            (Action::Run, Some(need @ Need::Go { .. })) => {
                let mut slot = 1;
                if let Need::Go { reason, approved_by, required } = need {
                    self.refuse_self_approval(reason_of(waiting), &current, principal, reason)?;
                    let me = canonical_principal(principal);
                    if approved_by.iter().any(|p| canonical_principal(p) == me) {
                        return Err(ServiceError::Conflict(format!(
                            "{principal} has already said go to step `{key}`: {} of {required} go-aheads given, each from a different person",
                            approved_by.len()
                        )));
                    }
                    slot = approved_by.len() + 1;
                }
                (keys::go_nth(key, slot), Entry::Go { skip: None, by })
            }
            (Action::Skip { reason }, Some(need @ (Need::Go { .. } | Need::Paused))) => {
                let slot = match need {
                    Need::Go { approved_by, .. } => approved_by.len() + 1,
                    _ => 1,
                };
                (keys::go_nth(key, slot), Entry::Go { skip: Some(reason.clone()), by })
            }
            (Action::Evidence { values }, Some(Need::Evidence { required })) => {
                if let Some(missing) = required.iter().find(|r| !values.contains_key(&r.name)) {
                    return Err(ServiceError::Conflict(format!(
                        "step `{key}` needs evidence `{}`",
                        missing.name
                    )));
                }
                let values = self.store_attachments(required, values).await?;
                (keys::evidence(key), Entry::Evidence { values, by })
            }
            (Action::Choose { value }, Some(Need::Choice { options, .. })) => {
                if !options.iter().any(|o| &o.value == value) {
                    let known: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                    return Err(ServiceError::Conflict(format!(
                        "`{value}` is not an option of step `{key}` ({})",
                        known.join(", ")
                    )));
                }
                (keys::choice(key), Entry::Choice { value: value.clone(), by })
            }
            (Action::Approve, Some(Need::Approval { approval_id, .. })) => {
                let asserted_by = self.asserted_by.as_deref();
                let token = match self.engine.approve(approval_id, principal, asserted_by).await? {
                    jig_engine::Approval::Granted(token) => token,
                    // One of several approvals: the step waits for the others, and the
                    // approval record says who has approved.
                    jig_engine::Approval::Seconded { .. } => return self.show(id).await,
                };
                tokens.insert(key.to_owned(), token);
                let decision =
                    Entry::Decision { approval_id: approval_id.clone(), approved: true, by };
                (keys::decision(key, approval_id), decision)
            }
            (Action::Deny, Some(Need::Approval { approval_id, .. })) => {
                self.engine.deny(approval_id, principal, None, self.asserted_by.as_deref()).await?;
                let decision =
                    Entry::Decision { approval_id: approval_id.clone(), approved: false, by };
                (keys::decision(key, approval_id), decision)
            }
            (Action::Retry, Some(Need::Failed { .. })) | (Action::Retry, None)
                if failed_here || waiting.is_some() =>
            {
                (keys::retry(key), Entry::Retry { by })
            }
            (Action::Abort, Some(Need::Failed { .. })) => (keys::abort(key), Entry::Abort { by }),
            (action, need) => {
                return Err(ServiceError::Conflict(match need {
                    Some(need) => format!(
                        "step `{key}` waits for {}, not {}",
                        need_name(need),
                        action_name(action)
                    ),
                    None => format!("run `{id}` is not waiting at step `{key}`"),
                }));
            }
        };
        // The record shows the evidence as kept: attachments by reference, not their bytes.
        let action = match (&entry, action) {
            (Entry::Evidence { values, .. }, Action::Evidence { .. }) => {
                Action::Evidence { values: values.clone() }
            }
            (_, action) => action,
        };
        let (inserted, kept) =
            self.record_person(&record, key, &journal_key, &entry, &action).await?;
        if !inserted {
            let who = who(kept);
            return Err(ServiceError::Conflict(format!(
                "step `{key}` was already acted on by {who}"
            )));
        }
        self.walk(id, tokens).await
    }

    /// A person asks a run to hold before its next step that would do something: at once when
    /// it waits for people (the hold replaces what it waited for), and within
    /// a quarter of a second when a walk is under way here or in another process. A go-ahead at
    /// the step where it holds resumes it; skipping that step holds it at the next.
    pub async fn pause(&self, id: &str, principal: &str) -> Result<RunView, ServiceError> {
        let record = self.record(id).await?;
        let progress = saved_progress(&record);
        if let Some(progress) = &progress {
            if progress.waiting.iter().any(|w| matches!(w.need, Need::Paused)) {
                return Err(ServiceError::Conflict(format!("run `{id}` is paused already")));
            }
            if progress.waiting.is_empty() && progress.status != RunStatus::Paused {
                return Err(ServiceError::Conflict(format!(
                    "run `{id}` has ended ({}): there is nothing to pause",
                    saved_status(progress)
                )));
            }
        }
        let asked = self.engine.store().runbook_journal_count(id, keys::PAUSE).await?;
        let entry = Entry::Pause { by: principal.to_owned() };
        let key = keys::pause(asked + 1);
        let (inserted, kept) =
            self.record_person(&record, "", &key, &entry, &Action::Pause).await?;
        if !inserted {
            let who = who(kept);
            return Err(ServiceError::Conflict(format!("run `{id}` was just paused by {who}")));
        }
        match progress {
            // Waiting for people, no walk is under way: this one holds it at once.
            Some(progress) if !progress.waiting.is_empty() => self.walk(id, HashMap::new()).await,
            // A walk under way holds it and saves where; until then the run reads as before.
            Some(progress) => Ok(self.view(record, progress).await),
            None => Ok(self.view(record, Progress::not_walked()).await),
        }
    }

    /// Continue an ended run with the runbook its outcome names (a v0/v1 `next_runbook`): a new
    /// run of it, started in `principal`'s name, step by step when this one was, with the
    /// inputs the outcome rendered and `inputs` over them. Once per run: whoever continues it
    /// later is given the run that continues it.
    pub async fn follow(
        &self,
        id: &str,
        inputs: Map<String, Value>,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        let record = self.record(id).await?;
        let journal = self.engine.store().runbook_journal(id).await?;
        let entry = |key: &str| {
            journal
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| serde_json::from_value::<Entry>(v.clone()).ok())
        };
        if let Some(Entry::Next { run_id, .. }) = entry(keys::NEXT) {
            return self.show(&run_id).await;
        }
        let progress = saved_progress(&record);
        let next = progress
            .as_ref()
            .and_then(|p| p.outcome.as_ref())
            .and_then(|o| o.meta.get("next_runbook"))
            .cloned()
            .ok_or_else(|| {
                ServiceError::Conflict(format!(
                    "run `{id}` has not ended with an outcome that names a next runbook"
                ))
            })?;
        let name = next["runbook"].as_str().ok_or_else(|| {
            ServiceError::NotFound(format!(
                "run `{id}` continues with `{}`, which is not a runbook of this project",
                next["file"].as_str().unwrap_or_default()
            ))
        })?;
        let mut given = next["inputs"].as_object().cloned().unwrap_or_default();
        given.extend(inputs);
        let snapshot = self.engine.snapshot();
        let entry_of_next = find(&snapshot, name)?;
        // Checked now (text the outcome rendered becomes the declared types): a refused
        // continuation records nothing.
        crate::inputs::resolve(&entry_of_next.runbook, &given)?;
        let stepwise = matches!(entry(keys::START), Some(Entry::Start { stepwise: true, .. }));
        let new_id = uuid::Uuid::new_v4().to_string();
        let link = Entry::Next { run_id: new_id.clone(), by: principal.to_owned() };
        let (inserted, kept) =
            self.record_person(&record, "", keys::NEXT, &link, &Action::Follow).await?;
        if !inserted {
            return match serde_json::from_value::<Entry>(kept) {
                Ok(Entry::Next { run_id, .. }) => self.show(&run_id).await,
                _ => Err(ServiceError::Conflict(format!("run `{id}` was continued already"))),
            };
        }
        self.start_as(&new_id, name, given, stepwise, principal).await
    }

    /// Record what a person did to a step, with its packet in the chain (first writer wins):
    /// whether it was recorded, and what is recorded under the key.
    async fn record_person(
        &self,
        run: &RunbookRunRecord,
        key: &str,
        journal_key: &str,
        entry: &Entry,
        action: &Action,
    ) -> Result<(bool, Value), ServiceError> {
        let by = entry.by().unwrap_or("unknown");
        let host = self.host(&run.id, &run.runbook, run.started_by.as_deref().unwrap_or("unknown"));
        let data = json!({ "event": "person", "key": key, "action": action, "by": by });
        let packet = NewPacket {
            kind: PacketKind::RunbookPerson,
            session_id: Some(run.id.clone()),
            thread_id: Some(key.to_owned()),
            principal: Some(by.to_owned()),
            request_id: None,
            run_id: Some(run.id.clone()),
            tool: Some(format!("runbook:{}", run.runbook)),
            args_hash: None,
            data,
        };
        let value = serde_json::to_value(entry).unwrap_or(Value::Null);
        Ok(host.journal(journal_key, value, Some(packet)).await.map_err(RunbookError::Host)?)
    }

    /// An approval decided outside the run (the Approvals view, `jig approve`, another
    /// instance): the run whose step waits on it walks on — its call using the approval when
    /// approved, to its denial when denied or ended. `None` when the approval is no runbook
    /// step's, or is not decided yet.
    pub async fn approval_decided(
        &self,
        approval_id: &str,
    ) -> Result<Option<RunView>, ServiceError> {
        let Some(approval) = self.engine.store().approval(approval_id).await? else {
            return Ok(None);
        };
        let approved = match approval.state {
            ApprovalState::Approved | ApprovalState::Consumed => true,
            ApprovalState::Denied | ApprovalState::Expired | ApprovalState::Withdrawn => false,
            // Still pending (one approval of several): nothing moves yet.
            ApprovalState::Pending => return Ok(None),
        };
        let Some(run_id) = approval.session_id else { return Ok(None) };
        let Some(run) = self.engine.store().runbook_run(&run_id).await? else { return Ok(None) };
        let Ok(current) = self.shown(run.clone()).await else { return Ok(None) };
        let waiting = current.progress.waiting.iter().find(|w| {
            matches!(&w.need, Need::Approval { approval_id: waiting, .. } if *waiting == approval.id)
        });
        let Some(waiting) = waiting else { return Ok(None) };
        let entry = Entry::Decision {
            approval_id: approval.id.clone(),
            approved,
            by: approval.decided_by.clone().unwrap_or_default(),
        };
        let action = if approved { Action::Approve } else { Action::Deny };
        let journal_key = keys::decision(&waiting.key, &approval.id);
        self.record_person(&run, &waiting.key, &journal_key, &entry, &action).await?;
        // The step's call uses the approval itself when it runs again (no token travels).
        self.walk(&run.id, HashMap::new()).await.map(Some)
    }

    /// A go-ahead that is governance's approval may not come from who started the run when
    /// the policy forbids self-approval.
    fn refuse_self_approval(
        &self,
        approval: bool,
        run: &RunView,
        principal: &str,
        reason: &str,
    ) -> Result<(), ServiceError> {
        let forbidden = !self.engine.policy().config().approvals.self_approval;
        let same = run
            .started_by
            .as_deref()
            .is_some_and(|s| canonical_principal(s) == canonical_principal(principal));
        if approval && forbidden && same {
            return Err(ServiceError::Forbidden(format!(
                "{principal} started this run and may not approve its step ({reason}): self-approval is forbidden"
            )));
        }
        Ok(())
    }

    async fn record(&self, id: &str) -> Result<RunbookRunRecord, ServiceError> {
        self.engine
            .store()
            .runbook_run(id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("no runbook run `{id}`")))
    }

    fn host(&self, id: &str, runbook: &str, started_by: &str) -> EngineHost {
        let snapshot = self.engine.snapshot();
        let tools = snapshot
            .runbook(runbook)
            .map(|entry| crate::registry::references(&snapshot, entry))
            .unwrap_or_default();
        EngineHost {
            engine: Arc::clone(&self.engine),
            run_id: id.to_owned(),
            runbook: runbook.to_owned(),
            started_by: started_by.to_owned(),
            tools,
            pending: std::sync::Mutex::new(Vec::new()),
            hooked: std::sync::Mutex::new(std::collections::HashMap::new()),
            pause_poll: std::sync::Mutex::new((std::time::Instant::now(), 0)),
            // Only a walk has a span (`walk` starts it): writing a person's act does not.
            span: jig_engine::telemetry::Span::off(),
            steps: step_spans::StepSpans::default(),
        }
    }

    /// Walk a run with its journal from the store, and save where it stands.
    async fn walk(
        &self,
        id: &str,
        tokens: HashMap<String, String>,
    ) -> Result<RunView, ServiceError> {
        let record = self.record(id).await?;
        let (traced, entries): (Vec<_>, Vec<_>) = self
            .engine
            .store()
            .runbook_journal_checked(id)
            .await?
            .into_iter()
            .partition(|(key, _)| key.starts_with("trace:"));
        let journal: Journal = entries
            .into_iter()
            .filter_map(|(key, value)| {
                serde_json::from_value::<Entry>(value).ok().map(|e| (key, e))
            })
            .collect();
        // The version the run began with: the project's if unchanged, else the one recorded.
        let snapshot = self.engine.snapshot();
        let runbook = match snapshot.runbook(&record.runbook).filter(|e| e.hash == record.hash) {
            Some(entry) => entry.runbook.clone(),
            None => match journal.get(keys::START) {
                Some(Entry::Start { definition: Some(definition), .. }) => {
                    serde_json::from_value(definition.clone()).map_err(|e| {
                        ServiceError::NotFound(format!(
                            "run `{id}`: its recorded runbook cannot be read ({e})"
                        ))
                    })?
                }
                _ => {
                    return Err(ServiceError::NotFound(format!(
                        "runbook `{}` of run `{id}` is no longer in the project",
                        record.runbook
                    )));
                }
            },
        };
        let mut host =
            self.host(id, &record.runbook, record.started_by.as_deref().unwrap_or("unknown"));
        host.steps.earlier = traced.into_iter().map(|(key, _)| key).collect();
        // A walk continues the trace of whoever started it from the command line
        // (`TRACEPARENT`); it is a trace of its own otherwise.
        host.span = jig_engine::telemetry::Span::start(
            format!("runbook {}", record.runbook),
            &jig_engine::telemetry::TraceOrigin::from_env(),
            &[
                ("jig.runbook", &record.runbook),
                ("jig.runbook.run_id", id),
                ("jig.principal", record.started_by.as_deref().unwrap_or("unknown")),
            ],
        );
        let run = Run {
            runbook: &runbook,
            name: &record.runbook,
            hash: &record.hash,
            run_id: id,
            host: &host,
            tokens,
        };
        let progress = Interpreter::new(run, journal).advance().await?;
        let status = saved_status(&progress);
        let saved =
            RunbookRunRecord { status, summary: serde_json::to_value(&progress).ok(), ..record };
        self.engine.record_walk(vec![WalkRecord::SaveRun(Box::new(saved))]).await?;
        let record = self.record(id).await?;
        let view = self.view(record, progress).await;
        self.engine.announce_runbook(RunbookEvent {
            run_id: view.id.clone(),
            runbook: view.runbook.clone(),
            status: saved_status(&view.progress),
        });
        Ok(view)
    }

    /// A run as people see it, with the policy's verdict on each waiting tool call.
    async fn view(&self, record: RunbookRunRecord, progress: Progress) -> RunView {
        let mut verdicts = BTreeMap::new();
        for waiting in &progress.waiting {
            if let (Some(tool), Some(inputs)) = (&waiting.tool, &waiting.inputs) {
                let args = Value::Object(inputs.clone());
                // A tool gone from the registry has no verdict; the step says so when it runs.
                if let Ok(preview) = self.engine.preview(tool, &args, &record.id).await {
                    verdicts.insert(waiting.key.clone(), preview);
                }
            }
        }
        let held = progress.waiting.iter().any(|w| matches!(w.need, Need::Paused));
        let paused_by = if held { self.paused_by(&record.id).await } else { None };
        RunView {
            id: record.id,
            runbook: record.runbook,
            started_by: record.started_by,
            created_us: record.created_us,
            updated_us: record.updated_us,
            progress,
            verdicts,
            paused_by,
        }
    }

    /// Who asked for the run's latest pause. Read only while a run holds (the whole journal):
    /// a person reading "paused by you" knows the hold is theirs to lift.
    async fn paused_by(&self, id: &str) -> Option<String> {
        let journal = self.engine.store().runbook_journal(id).await.ok()?;
        journal
            .into_iter()
            .filter_map(|(key, entry)| {
                let n: usize = key.strip_prefix(keys::PAUSE)?.parse().ok()?;
                Some((n, entry))
            })
            .max_by_key(|(n, _)| *n)
            .and_then(|(_, entry)| serde_json::from_value::<Entry>(entry).ok())
            .and_then(|entry| entry.by().map(str::to_owned))
    }
}

/// The runbook `name` of `snapshot`, or a not-found error with the nearest name.
fn find<'s>(
    snapshot: &'s jig_load::Snapshot,
    name: &str,
) -> Result<&'s std::sync::Arc<jig_load::RunbookEntry>, ServiceError> {
    snapshot.runbook(name).ok_or_else(|| {
        let known: Vec<&str> = snapshot.runbooks().map(|r| r.name.as_str()).collect();
        ServiceError::NotFound(match jig_load::did_you_mean(name, known) {
            Some(hint) => format!("no runbook `{name}`; did you mean `{hint}`?"),
            None => format!("no runbook `{name}`"),
        })
    })
}

fn summary(entry: &jig_load::RunbookEntry) -> RunbookSummary {
    RunbookSummary {
        name: entry.name.clone(),
        description: entry.runbook.description.clone(),
        api_version: entry.runbook.api_version.as_str().to_owned(),
        file: entry.file.clone(),
        inputs: serde_json::to_value(&entry.runbook.inputs).unwrap_or(Value::Null),
        steps: entry.runbook.walk().len(),
        scenarios: entry.scenarios.iter().map(|s| s.name.clone()).collect(),
    }
}

/// Where a run stood when last walked; `None` before its first walk finished.
fn saved_progress(record: &RunbookRunRecord) -> Option<Progress> {
    record.summary.as_ref().and_then(|s| Progress::deserialize(s).ok())
}

/// Who made the entry the store kept (the first writer's), for a conflict's message.
fn who(kept: Value) -> String {
    serde_json::from_value::<Entry>(kept)
        .ok()
        .and_then(|e| e.by().map(str::to_owned))
        .unwrap_or_default()
}

fn saved_status(progress: &Progress) -> String {
    serde_json::to_value(progress.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Whether a waiting step's go-ahead is an approval (governance asked), not a step-by-step go.
fn reason_of(waiting: Option<&crate::Waiting>) -> bool {
    matches!(waiting.map(|w| &w.need), Some(Need::Go { reason, .. }) if reason != "stepwise")
}

fn need_name(need: &Need) -> &'static str {
    match need {
        Need::Go { .. } => "a go-ahead (run or skip)",
        Need::Evidence { .. } => "evidence",
        Need::Choice { .. } => "a choice",
        Need::Approval { .. } => "an approval (approve or deny)",
        Need::Failed { .. } => "a decision on its failure (retry or abort)",
        Need::Paused => "a go-ahead (it is paused)",
    }
}

fn action_name(action: &Action) -> &'static str {
    match action {
        Action::Run => "run",
        Action::Skip { .. } => "skip",
        Action::Evidence { .. } => "evidence",
        Action::Choose { .. } => "a choice",
        Action::Approve => "approve",
        Action::Deny => "deny",
        Action::Retry => "retry",
        Action::Abort => "abort",
        Action::Pause => "pause",
        Action::Follow => "follow",
    }
}
