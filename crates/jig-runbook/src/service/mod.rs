//! Runbook runs over the engine: the stepping API every surface calls (the terminal, the
//! workbench's HTTP API, the MCP server).
//!
//! A run is its journal in the audit store. Every call here walks the run again from its
//! journal (see [`crate::journal`]), so any process can act on any run: a run paused at a
//! manual step in the workbench resumes from the terminal after a restart. What people do —
//! evidence, go-aheads, choices, retries — is recorded first-writer-wins: when two reviewers act
//! on one step, one wins and the other gets `E_CONFLICT`.

mod act;
mod attachments;
mod host;
mod record;
mod step_spans;
mod types;

pub use record::Recorded;
pub use types::{Action, RunView, RunbookDetail, RunbookSummary, ServiceError};

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use jig_audit::RunbookRunRecord;
use jig_engine::WalkRecord;
use jig_engine::{Engine, RunbookEvent};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::RunbookError;
use crate::interp::{Interpreter, Run};
use crate::journal::{Entry, Journal, keys};
use crate::outcome::{Need, Progress};
use host::EngineHost;

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
        Ok(self.engine.walk_reads().packets(&record.id).await?)
    }

    /// The latest runs.
    pub async fn runs(&self, limit: i64) -> Result<Vec<RunbookRunRecord>, ServiceError> {
        Ok(self.engine.walk_reads().runs(limit).await?)
    }

    /// A person acts on a waiting step; then the run walks on.
    async fn record(&self, id: &str) -> Result<RunbookRunRecord, ServiceError> {
        self.engine
            .walk_reads()
            .run(id)
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
            .walk_reads()
            .journal_checked(id)
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
        let journal = self.engine.walk_reads().journal(id).await.ok()?;
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

fn saved_status(progress: &Progress) -> String {
    serde_json::to_value(progress.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
