//! A call while it runs: the engine's events for it become MCP notifications (progress when
//! the client sent a progress token, the tool's log lines at the level the client set), and
//! the client's `notifications/cancelled` stops it through the engine, which records it.

#![allow(deprecated)] // MCP logging: deprecated by a later revision, current in 2025-11-25.

use std::sync::Arc;

use jig_app::{Actor, App, AppError, CallSpec, Called};
use jig_engine::{CallContext, Engine, Event, Subscription, ToolResponse};
use jig_model::envelope::EventMessage;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the client asked to hear about a call.
#[derive(Debug, Clone)]
pub struct Listener {
    /// Where notifications go.
    pub peer: Peer<RoleServer>,
    /// The request's progress token, when it sent one.
    pub progress: Option<ProgressToken>,
    /// The least severe log level the client wants, when it set one.
    pub log_level: Option<LoggingLevel>,
}

impl Listener {
    fn wants_events(&self) -> bool {
        self.progress.is_some() || self.log_level.is_some()
    }
}

/// Run `spec` for `actor` through the application layer, forwarding its events to `listener`
/// and stopping it when `stop` fires (the client cancelled, or went away).
pub async fn dispatch(
    app: &App,
    actor: &Actor,
    spec: &CallSpec,
    context: CallContext,
    stop: &CancellationToken,
    listener: &Listener,
) -> Result<Called, AppError> {
    let engine = app.engine();
    // Subscribed before the call starts, so no event of it is missed.
    let mut events = listener.wants_events().then(|| engine.subscribe());
    let request_id = spec.request_id.clone().unwrap_or_default();
    let cancel = context.cancel.clone();
    let principal = context.principal.clone();
    let mut forwarder = Forwarder { listener, request_id, step: 0.0 };
    let call = app.run_call(actor, spec, context);
    tokio::pin!(call);
    let mut stopped = false;
    loop {
        tokio::select! {
            biased;
            called = &mut call => {
                // What the call emitted just before it answered is still queued: send it first.
                if let Some(events) = events.as_mut() {
                    while let Ok(event) = events.try_recv() {
                        forwarder.forward(event).await;
                    }
                }
                return match called? {
                    Called::Answered(response) if response.job.is_some() && !stopped => {
                        let followed =
                            follow_job(engine, response, stop, &mut forwarder, &principal).await;
                        Ok(Called::of(followed))
                    }
                    called => Ok(called),
                };
            }
            () = stop.cancelled(), if !stopped => {
                cancel.cancel();
                stopped = true;
            }
            Some(event) = next(&mut events) => forwarder.forward(event).await,
        }
    }
}

/// Wait for the job a call handed to a scheduler (a slurm or hybrid plan): each change of its
/// state is a progress notification, and the answer is the job's collected result. A client
/// that cancels cancels the job. After [`JOB_WAIT`] the call answers that the job goes on (an
/// error result, since there is no result yet): calling again with the same arguments answers
/// with the job's result once it is collected (seed 001's replay), without a second job.
async fn follow_job(
    engine: &Arc<Engine>,
    queued: ToolResponse,
    stop: &CancellationToken,
    forwarder: &mut Forwarder<'_>,
    principal: &str,
) -> ToolResponse {
    let Some(job) = queued.job.clone() else { return queued };
    let deadline = tokio::time::Instant::now() + JOB_WAIT;
    let mut last = None;
    loop {
        if let Ok(Some(run)) = engine.poll_job(&job.request_id).await {
            if last != Some(run.state) {
                last = Some(run.state);
                forwarder
                    .note(format!("{}: {} job {}", run.state.as_str(), job.engine, job.id))
                    .await;
            }
            if run.state.is_final() {
                return match engine.response_of(&job.request_id).await {
                    Ok(Some(response)) => response,
                    _ => queued,
                };
            }
        }
        tokio::select! {
            () = tokio::time::sleep(JOB_POLL) => {}
            () = stop.cancelled() => {
                let _ = engine.cancel_job(&job.request_id, Some(principal)).await;
                return engine.response_of(&job.request_id).await.ok().flatten().unwrap_or(queued);
            }
        }
        if tokio::time::Instant::now() > deadline {
            return still_running(queued, &job);
        }
    }
}

/// How long an MCP call waits for its job before answering that it goes on.
const JOB_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// How often an MCP call polls its job.
const JOB_POLL: std::time::Duration = std::time::Duration::from_millis(500);

fn still_running(
    mut queued: ToolResponse,
    job: &jig_model::envelope::SubmittedJob,
) -> ToolResponse {
    let message = format!(
        "still on {} (job {}) after {} s; it goes on: call again with the same arguments for its result once collected, or read jig://runs/{}",
        job.engine,
        job.id,
        JOB_WAIT.as_secs(),
        job.request_id
    );
    queued.ok = false;
    queued.errors = vec![jig_model::envelope::ResponseError {
        code: jig_model::ErrorCode::Timeout,
        message,
        details: Some(serde_json::json!({ "job": job, "still_running": true })),
    }];
    queued
}

async fn next(events: &mut Option<Subscription>) -> Option<Event> {
    match events {
        Some(events) => loop {
            match events.recv().await {
                Ok(event) => return Some(event),
                // A slow client lost some events; later ones still come.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return std::future::pending().await;
                }
            }
        },
        None => std::future::pending().await,
    }
}

struct Forwarder<'a> {
    listener: &'a Listener,
    request_id: String,
    /// Progress without a percentage still has to increase.
    step: f64,
}

impl Forwarder<'_> {
    async fn forward(&mut self, event: Event) {
        let Event::Message(message) = event else { return };
        if message.request_id != self.request_id {
            return;
        }
        match message.event.as_str() {
            "TaskProgress" => self.progress(message).await,
            "OutputChunk" => self.log(message).await,
            _ => {}
        }
    }

    /// A progress notification with a message only (a job's state).
    async fn note(&mut self, text: String) {
        self.progress(EventMessage {
            kind: Default::default(),
            event: "TaskProgress".to_owned(),
            request_id: self.request_id.clone(),
            progress: Some(jig_model::envelope::Progress { pct: None, message: Some(text) }),
            data: None,
        })
        .await;
    }

    async fn progress(&mut self, message: EventMessage) {
        let Some(token) = &self.listener.progress else { return };
        let progress =
            message.progress.unwrap_or(jig_model::envelope::Progress { pct: None, message: None });
        let (value, total) = match progress.pct {
            Some(pct) => (pct.max(self.step), Some(100.0)),
            None => (self.step + 1.0, None),
        };
        self.step = value;
        let mut param = ProgressNotificationParam::new(token.clone(), value);
        param.total = total;
        param.message = progress.message.filter(|m| !m.is_empty());
        let _ = self.listener.peer.notify_progress(param).await;
    }

    async fn log(&self, message: EventMessage) {
        let Some(wanted) = self.listener.log_level else { return };
        let data = message.data.unwrap_or_default();
        // A tool's own log lines are info; what it printed besides is debug.
        let level = match data.get("stream").and_then(Value::as_str) {
            Some("log") => LoggingLevel::Info,
            _ => LoggingLevel::Debug,
        };
        if severity(level) < severity(wanted) {
            return;
        }
        let text = data.get("text").and_then(Value::as_str).unwrap_or_default();
        let param = LoggingMessageNotificationParam::new(level, Value::String(text.to_owned()))
            .with_logger(self.request_id.clone());
        let _ = self.listener.peer.notify_logging_message(param).await;
    }
}

/// RFC 5424's order of MCP's levels, least severe first.
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
