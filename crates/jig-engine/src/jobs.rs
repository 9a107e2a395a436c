//! Following seed 001's batch jobs after the call that submitted them has answered.
//!
//! A job is in the store ([`jig_audit::JobRecord`]) until its run is final, so any process on
//! the store may follow it: `jig serve`, `jig mcp` and the desktop poll open jobs in the
//! background; `jig call --wait` and `jig runs …` poll the ones they look at. Each change —
//! queued → running, then succeeded, failed or cancelled — is one conditional transition in
//! the store with its packet, so two processes following the same job record it once. A
//! finished job's result goes through the same output checks as any call's (size, schema,
//! redaction) before it is recorded.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use jig_audit::{JobRecord, NewPacket, Op, Outcome, PacketKind, RunRecord, RunState, RunUpdate};
use jig_exec::{Job, JobStatus, ToolError};
use jig_model::duration::parse_duration;
use jig_model::envelope::{ResponseError, ToolResponse};
use jig_model::{ErrorCode, ToolDef};
use jig_policy::redact::{redact_in_place, redact_value};
use serde_json::{Value, json};

use crate::events::Event;
use crate::telemetry::JobTrace;
use crate::{Engine, EngineError};

/// How often open jobs are polled when the policy does not say.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// Who records a job's transitions.
const JIG: &str = "jig";

impl Engine {
    /// Poll every open job once; how many are still open.
    pub async fn poll_jobs(&self) -> Result<usize, EngineError> {
        let jobs = self.store.open_jobs().await?;
        let mut open = 0;
        for job in &jobs {
            if !self.poll_one(job).await?.is_some_and(|run| run.state.is_final()) {
                open += 1;
            }
        }
        Ok(open)
    }

    /// Poll the job of `request_id`, if it has an open one; the run as it stands after.
    pub async fn poll_job(&self, request_id: &str) -> Result<Option<RunRecord>, EngineError> {
        match self.store.job(request_id).await? {
            Some(job) if job.open => self.poll_one(&job).await,
            _ => Ok(self.store.run_of_request(request_id).await?),
        }
    }

    /// Cancel the job of `request_id` on its scheduler and record the run cancelled. `by` is
    /// who asks (only the principal who made the call, unless `None`). Whether there was an
    /// open job.
    pub async fn cancel_job(
        &self,
        request_id: &str,
        by: Option<&str>,
    ) -> Result<bool, EngineError> {
        let Some(job) = self.store.job(request_id).await?.filter(|job| job.open) else {
            return Ok(false);
        };
        let Some(run) = self.store.run_of_request(request_id).await? else { return Ok(false) };
        if let Some(by) = by.filter(|by| run.principal.as_deref() != Some(*by)) {
            return Err(EngineError::NotYours {
                request_id: request_id.to_owned(),
                by: by.to_owned(),
            });
        }
        let tool = tool_of(&job)?;
        if let Some(executor) = self.executors.for_tool(&tool) {
            // A job that already ended cannot be cancelled; record it cancelled all the same
            // only when the scheduler accepted the request.
            executor.cancel_job(&self.policy(), &to_job(&job)).await.map_err(tool_failure)?;
        }
        let error = ToolError::new(
            ErrorCode::Internal,
            "cancelled on request; the job was stopped on its scheduler",
        );
        self.settle(&job, &run, &tool, Err(error), RunState::Cancelled).await?;
        Ok(true)
    }

    /// The response recorded for `request_id` (its result read back from its blob), if any:
    /// a job's final answer once it is collected, its queued answer before.
    pub async fn response_of(&self, request_id: &str) -> Result<Option<ToolResponse>, EngineError> {
        let Some(run) = self.store.run_of_request(request_id).await? else { return Ok(None) };
        let Some(mut recorded) = run.response else { return Ok(None) };
        recorded["data"] = self.store.inflate(recorded["data"].take()).await?;
        Ok(serde_json::from_value(recorded).ok())
    }

    /// Poll open jobs in the background for as long as the engine lives: what the long-lived
    /// surfaces (`jig serve`, `jig mcp`, the desktop app) call once, so that jobs submitted by
    /// any process are collected while they run. A one-shot command polls what it looks at.
    pub fn watch_jobs(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let engine: Weak<Self> = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                let interval = match engine.upgrade() {
                    Some(engine) => {
                        if let Err(error) = engine.poll_jobs().await {
                            tracing::warn!(%error, "polling the open jobs failed");
                        }
                        engine.poll_interval()
                    }
                    None => return,
                };
                tokio::time::sleep(interval).await;
            }
        });
    }

    fn poll_interval(&self) -> Duration {
        let policy = self.policy();
        policy
            .config()
            .plans
            .slurm
            .poll
            .as_deref()
            .and_then(parse_duration)
            .filter(|d| !d.is_zero())
            .unwrap_or(DEFAULT_POLL)
    }

    async fn poll_one(&self, job: &JobRecord) -> Result<Option<RunRecord>, EngineError> {
        // One poll of a job at a time in this process (the background watcher and a command
        // may ask together); another process may poll it too, which the store's conditional
        // transitions settle.
        let Some(_polling) = Polling::start(&self.polling, &job.request_id) else {
            return Ok(self.store.run_of_request(&job.request_id).await?);
        };
        let Some(run) = self.store.run_of_request(&job.request_id).await? else { return Ok(None) };
        if run.state.is_final() {
            return Ok(Some(run));
        }
        let tool = tool_of(job)?;
        let Some(executor) = self.executors.for_tool(&tool) else {
            let error = ToolError::new(
                ErrorCode::Internal,
                format!("this version of Jig cannot follow `{}` jobs", job.engine),
            );
            self.settle(job, &run, &tool, Err(error), RunState::Failed).await?;
            return Ok(self.store.run_of_request(&job.request_id).await?);
        };
        let status =
            executor.poll(&tool, &self.policy(), self.workspace.root(), &to_job(job)).await;
        match status {
            // The scheduler could not be asked (down, unreachable): the job stays open.
            Err(error) => {
                tracing::warn!(request_id = %job.request_id, job = %job.handle, error = %error.message, "could not poll a job");
                return Ok(Some(run));
            }
            Ok(JobStatus::Queued(_)) => {}
            Ok(JobStatus::Running) => {
                if run.state != RunState::Running {
                    let packet = self.packet(&run, PacketKind::CallState, json!({ "state": "running", "job": { "engine": job.engine, "id": job.handle } }));
                    let update = RunUpdate {
                        request_id: run.request_id.clone(),
                        state: Some(RunState::Running),
                        ..RunUpdate::default()
                    };
                    self.move_run(update, packet).await?;
                    self.announce(&run, RunState::Running);
                }
            }
            Ok(JobStatus::Cancelled) => {
                let error =
                    ToolError::new(ErrorCode::Internal, "the job was cancelled on its scheduler");
                self.settle(job, &run, &tool, Err(error), RunState::Cancelled).await?;
            }
            Ok(JobStatus::Finished(result)) => {
                let result = result.and_then(|output| self.check_output(&tool, output.data));
                let state = if result.is_ok() { RunState::Succeeded } else { RunState::Failed };
                self.settle(job, &run, &tool, result, state).await?;
            }
        }
        Ok(self.store.run_of_request(&job.request_id).await?)
    }

    /// The output checks of every result (`Engine::check_result`), then redaction.
    fn check_output(&self, tool: &ToolDef, mut data: Value) -> Result<Value, ToolError> {
        self.check_result(tool, &data)?;
        redact_in_place(&mut data);
        Ok(data)
    }

    /// Record a job's run final: its response, its packet, the job closed.
    async fn settle(
        &self,
        job: &JobRecord,
        run: &RunRecord,
        tool: &ToolDef,
        result: Result<Value, ToolError>,
        state: RunState,
    ) -> Result<(), EngineError> {
        let duration_ms =
            u64::try_from((jig_audit::time::now_us() - run.created_us) / 1000).unwrap_or(0);
        let (ok, data, errors) = match result {
            Ok(data) => (true, data, Vec::new()),
            Err(error) => {
                let details = redact_value(&error.details.clone().unwrap_or(Value::Null));
                let error = ResponseError {
                    code: error.code,
                    message: error.message,
                    details: error.details.map(|d| redact_value(&d)),
                };
                (false, details, vec![error])
            }
        };
        let response = ToolResponse {
            kind: Default::default(),
            ok,
            tool: tool.id.clone(),
            request_id: run.request_id.clone(),
            duration_ms,
            data,
            errors,
            run_id: Some(run.run_id.clone()),
            replayed: false,
            job: None,
        };
        let mut ops = Vec::new();
        let stored = match jig_audit::blob::Blob::of_large(&response.data)? {
            Some((blob, reference)) => {
                ops.push(Op::PutBlob(blob));
                let mut stored = serde_json::to_value(&response).unwrap_or(Value::Null);
                stored["data"] = reference;
                stored
            }
            None => serde_json::to_value(&response).unwrap_or(Value::Null),
        };
        let kind = if ok { PacketKind::CallResult } else { PacketKind::CallFailed };
        let packet = self.packet(
            run,
            kind,
            json!({ "state": state, "ok": ok, "data": stored["data"], "errors": stored["errors"], "duration_ms": duration_ms, "job": { "engine": job.engine, "id": job.handle } }),
        );
        ops.push(Op::MoveJobRun {
            update: RunUpdate {
                request_id: run.request_id.clone(),
                state: Some(state),
                duration_ms: Some(i64::try_from(duration_ms).unwrap_or(i64::MAX)),
                error: response.errors.first().map(|e| format!("{}: {}", e.code, e.message)),
                response: Some(stored),
                ..RunUpdate::default()
            },
            packet,
        });
        let outcomes = self.store.apply(ops).await?;
        if outcomes.iter().any(|o| *o == Outcome::Moved(true)) {
            self.send_job_span(job, run, state, response.errors.first()).await;
            self.announce(run, state);
            if let Some(principal) = &run.principal {
                self.events.publish_to(principal, Event::Response(Box::new(response)));
            }
            // The run directory served the job; its outputs are artifacts now.
            let _ = fs_err::remove_dir_all(&job.dir);
        }
        Ok(())
    }

    /// The job's span, from its submission to now, when traces are exported and the call
    /// that submitted it named one (in its `submitted` packet).
    async fn send_job_span(
        &self,
        job: &JobRecord,
        run: &RunRecord,
        state: RunState,
        error: Option<&ResponseError>,
    ) {
        if !crate::telemetry::exporting() {
            return;
        }
        let Ok(packets) = self.store.packets_of(&run.request_id).await else { return };
        let trace = packets
            .iter()
            .find(|p| p.kind == PacketKind::CallSubmitted.as_str())
            .and_then(|p| serde_json::from_value::<JobTrace>(p.data["job"]["trace"].clone()).ok());
        if let Some(trace) = trace {
            let error = error.map(|e| (e.code.as_str(), e.message.as_str()));
            trace.end(&run.tool, (&job.engine, &job.handle), run.created_us, state.as_str(), error);
        }
    }

    async fn move_run(&self, update: RunUpdate, packet: NewPacket) -> Result<bool, EngineError> {
        let outcomes = self.store.apply(vec![Op::MoveJobRun { update, packet }]).await?;
        Ok(outcomes.iter().any(|o| *o == Outcome::Moved(true)))
    }

    fn packet(&self, run: &RunRecord, kind: PacketKind, data: Value) -> NewPacket {
        run_packet(run, kind, JIG, data)
    }

    fn announce(&self, run: &RunRecord, state: RunState) {
        if let Some(principal) = &run.principal {
            self.publish_run_state(principal, &run.request_id, &run.tool, Some(&run.run_id), state);
        }
    }
}

/// Jobs being polled in this process.
#[derive(Debug, Default)]
pub(crate) struct PollingSet(std::sync::Mutex<std::collections::HashSet<String>>);

/// A job marked as being polled until dropped.
struct Polling<'a> {
    set: &'a PollingSet,
    request_id: String,
}

impl<'a> Polling<'a> {
    fn start(set: &'a PollingSet, request_id: &str) -> Option<Self> {
        let mut jobs = set.0.lock().ok()?;
        jobs.insert(request_id.to_owned()).then(|| Self { set, request_id: request_id.to_owned() })
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        if let Ok(mut jobs) = self.set.0.lock() {
            jobs.remove(&self.request_id);
        }
    }
}

pub(crate) fn tool_of(job: &JobRecord) -> Result<Arc<ToolDef>, EngineError> {
    serde_json::from_value(job.tool.clone()).map(Arc::new).map_err(|e| {
        EngineError::Audit(jig_audit::AuditError::Corrupt(format!(
            "job {}: its tool: {e}",
            job.request_id
        )))
    })
}

pub(crate) fn to_job(job: &JobRecord) -> Job {
    Job { engine: job.engine.clone(), handle: job.handle.clone(), dir: PathBuf::from(&job.dir) }
}

fn tool_failure(error: ToolError) -> EngineError {
    EngineError::Scheduler { code: error.code, message: error.message }
}

/// A packet about the recorded call `run`, by `principal`.
pub(crate) fn run_packet(
    run: &RunRecord,
    kind: PacketKind,
    principal: &str,
    data: Value,
) -> NewPacket {
    NewPacket {
        kind,
        session_id: run.session_id.clone(),
        thread_id: run.thread_id.clone(),
        principal: Some(principal.to_owned()),
        request_id: Some(run.request_id.clone()),
        run_id: Some(run.run_id.clone()),
        tool: Some(run.tool.clone()),
        args_hash: Some(run.params_hash.clone()),
        data,
    }
}
