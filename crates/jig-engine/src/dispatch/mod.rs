//! Dispatch: the one path every call takes.
//!
//! size limit → schema validation (before governance, seed 003) → policy decision (approvals,
//! budgets) → replay of a deterministic run / idempotency claim of a side effect → execution
//! with timeout and cancellation → output checks (size, schema) → result.
//!
//! Every stage is recorded as packets. Durability: before a side effect starts, its request,
//! decision, `running` state and claimed idempotency key are committed; a response is returned
//! only after its result is committed. A call without side effects that runs another process is
//! committed as `running` before it starts too. An in-process built-in without side effects has
//! nothing to protect and stops with Jig, so all its records are committed together after it
//! (one transaction). Nothing runs if its records cannot be written.
//!
//! This file is the pipeline; `stages` holds its stages up to execution (admission, identity,
//! governance, replay, the claim), `replay` idempotency and replay, `approval` the approval
//! steps, `record` what a call writes and answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_audit::{
    AuditError, Flush, KeyRecord, KeyState, NewPacket, Op, Outcome, PacketKind, ReplayIdentity,
    RunRecord, RunState, RunUpdate,
};
use jig_exec::{Events, Execution, Invocation, ToolError};
use jig_model::canonical::params_hash;
use jig_model::envelope::{EventMessage, ResponseError, ToolRequest, ToolResponse};
use jig_model::prepared::PreparedJson;
use jig_model::{ErrorCode, ToolDef};
use jig_policy::Decision;
use jig_policy::redact::{redact_in_place, redact_text, redact_value};
use serde_json::{Value, json};

use crate::engine::{CallContext, Engine, Registry};
use crate::events::Event;
use crate::identity::{canonical_principal, idempotency_key, new_id, request_hash, sha256_hex};
use crate::metrics::CallRecord;
use crate::telemetry::CallSpan;

mod approval;
mod record;
mod replay;
mod stages;
mod submit;

use stages::Early;

/// How much of an unknown tool's arguments the audit keeps.
const UNKNOWN_TOOL_MAX_INPUT: u64 = 64 * 1024;

/// How often a call waiting on another call's idempotency key looks again.
const KEY_POLL: Duration = Duration::from_millis(20);

impl Engine {
    /// Seed 003 `tools.dispatch`: run one call through the whole pipeline. Always answers; a
    /// failure is a `ToolResponse` with `ok: false` and a stable error code.
    pub async fn dispatch(&self, request: ToolRequest, context: CallContext) -> ToolResponse {
        let (mut response, prepared) = self.dispatch_prepared(request, context).await;
        if let Some(prepared) = prepared {
            match prepared.to_value() {
                Ok(data) => response.data = data,
                Err(e) => {
                    response.ok = false;
                    response.errors.push(internal_error(&format!("reading the result: {e}")));
                }
            }
        }
        response
    }

    /// [`Engine::dispatch`] for a surface that forwards a result without reading it: when the
    /// context asks for it (`prepared_results`), a large result a built-in wrote as canonical
    /// JSON comes back as that text (and the response's `data` is null) — stored, hashed and
    /// printed without ever becoming a value.
    pub async fn dispatch_prepared(
        &self,
        request: ToolRequest,
        context: CallContext,
    ) -> (ToolResponse, Option<PreparedJson>) {
        let started = Instant::now();
        let session = request.session_id.clone().unwrap_or_else(|| context.session_id.clone());
        tracing::info!(name: "tools.dispatch.started", tool = %request.tool, request_id = %request.request_id, session = %session, "tools.dispatch.started");
        self.enter(&session);
        let _tracked = self.running.track(&request.request_id, &context.cancel, &context.principal);
        let mut call = Call::new(self, &request, &context, session.clone(), started);
        let mut response = call.run().await;
        if call.repeated
            && let Some(repeat) = call.answer_repeat().await
        {
            response = repeat;
        }
        self.leave(&session);
        self.metrics.record_call(
            &session,
            CallRecord {
                elapsed: started.elapsed(),
                ok: response.ok,
                denied: call.denied,
                replayed: response.replayed,
                pending_approval: call.pending,
                bytes_in: call.bytes_in,
                bytes_out: call.bytes_out,
                files_touched: call.files_touched,
            },
        );
        if let Some(approval_id) = response.waits_for().filter(|_| call.pending) {
            self.metrics.waiting(approval_id);
        }
        if response.ok {
            tracing::info!(name: "tools.dispatch.completed", tool = %request.tool, request_id = %request.request_id, replayed = response.replayed, duration_ms = response.duration_ms, "tools.dispatch.completed");
        } else {
            let code = response.errors.first().map_or("", |e| e.code.as_str());
            tracing::info!(name: "tools.dispatch.failed", tool = %request.tool, request_id = %request.request_id, code, "tools.dispatch.failed");
        }
        let state = match () {
            _ if call.pending => "pending_approval",
            _ if call.denied => "denied",
            _ if context.cancel.is_cancelled() => "cancelled",
            _ if !response.ok => "failed",
            _ if response.job.is_some() => "queued",
            _ => "succeeded",
        };
        std::mem::replace(&mut call.span, CallSpan::off()).end(&response, state);
        crate::telemetry::record_call(
            &request.tool,
            state,
            response.errors.first().map(|e| e.code.as_str()),
            started.elapsed(),
        );
        // Only a result this very call produced and recorded goes out as prepared text.
        let prepared = call.prepared.take().filter(|_| response.ok && !response.replayed);
        (response, prepared)
    }
}

/// One call in progress.
struct Call<'e> {
    engine: &'e Engine,
    registry: Registry,
    request: &'e ToolRequest,
    context: &'e CallContext,
    session: String,
    started: Instant,
    /// Records not yet committed.
    ops: Vec<Op>,
    run_id: Option<String>,
    args_hash: String,
    /// The tool as defined now and the code in the project it starts ([`code_identity`]):
    /// read once, when the tool is known, for the replay identity and for approvals alike.
    code: Value,
    /// What ran, as a recorded run must share it to answer this call ([`code_hash`]).
    definition: String,
    /// Who asks, as principals are compared.
    person: String,
    /// The call that waited for approval this one runs: it ends as this one does.
    resumes: Option<String>,
    bytes_in: u64,
    bytes_out: u64,
    files_touched: u64,
    denied: bool,
    pending: bool,
    /// A record was refused by a unique key: maybe this request id was used before.
    repeated: bool,
    /// When this call's records must be on disk (`audit.durability`, by the tool's effects).
    sync: Flush,
    /// The result as a built-in prepared it, when the caller takes it so (`data` is null).
    prepared: Option<PreparedJson>,
    /// The call's span, when traces are exported.
    span: CallSpan,
}

impl<'e> Call<'e> {
    fn new(
        engine: &'e Engine,
        request: &'e ToolRequest,
        context: &'e CallContext,
        session: String,
        started: Instant,
    ) -> Self {
        Self {
            engine,
            registry: engine.registry(),
            request,
            context,
            session,
            started,
            ops: Vec::new(),
            run_id: None,
            args_hash: params_hash(&request.args),
            code: Value::Null,
            definition: String::new(),
            person: canonical_principal(&context.principal),
            resumes: None,
            bytes_in: 0,
            bytes_out: 0,
            files_touched: 0,
            denied: false,
            pending: false,
            repeated: false,
            sync: Flush::Now,
            prepared: None,
            span: CallSpan::start(
                &request.tool,
                &request.request_id,
                &context.principal,
                &context.trace,
            ),
        }
    }

    /// The pipeline, stage by stage; a stage that answers early (refused, waiting, replayed)
    /// ends it with that answer.
    async fn run(&mut self) -> ToolResponse {
        match self.stages().await {
            Ok(response) | Err(Early(response)) => response,
        }
    }

    async fn stages(&mut self) -> Result<ToolResponse, Early> {
        let tool = self.admit().await?;
        let policy = self.identify(&tool).await?;
        self.govern(&tool, &policy).await?;
        self.replay_recorded(&tool).await?;
        let claimed = self.claim_or_mark_running(&tool).await?;
        Ok(self.execute(&tool, claimed).await)
    }

    /// Run the tool and record what happened.
    async fn execute(&mut self, tool: &Arc<ToolDef>, claimed: Option<String>) -> ToolResponse {
        let Some(executor) = self.engine.executors.for_tool(tool) else {
            let error = ToolError::new(
                ErrorCode::Internal,
                format!("this version of Jig cannot run `{}` tools", tool.execution.kind()),
            );
            return self.finish(tool, Err(error), claimed).await;
        };
        self.publish_state(RunState::Running);
        let engine_events = self.engine.events.clone();
        let owner = self.context.principal.clone();
        let sink: Arc<dyn Fn(EventMessage) + Send + Sync> =
            Arc::new(move |mut message: EventMessage| {
                // What a tool prints may contain secrets too.
                if let Some(data) = message.data.take() {
                    message.data = Some(redact_value(&data));
                }
                engine_events.publish_to(&owner, Event::Message(message));
            });
        // A caller may only tighten the tool's own limit.
        let timeout = Duration::from_millis(tool.timeout_ms);
        let timeout = self.context.timeout.map_or(timeout, |limit| limit.min(timeout));
        // A process of its own (not a built-in in Jig's): a span of its own, named to it. A
        // scheduler's job outlives the call: its span is sent when it is collected.
        let (process, traceparent, job_trace) = match tool.execution.kind() {
            "builtin" => (crate::telemetry::ProcessSpan::off(), None, None),
            _ if executor.submits_jobs() => {
                let job = self.span.job();
                let traceparent = job.as_ref().map(|job| job.traceparent.clone());
                (crate::telemetry::ProcessSpan::off(), traceparent, job)
            }
            kind => {
                let (process, traceparent) = self.span.process(&tool.id, kind);
                (process, traceparent, None)
            }
        };
        let invocation = Invocation {
            tool,
            args: &self.request.args,
            workspace: &self.engine.workspace,
            policy: &self.registry.policy,
            timeout,
            cancel: self.context.cancel.clone(),
            events: Events::new(self.request.request_id.clone(), sink),
            traceparent,
        };
        // The executor enforces the limit itself (killing what it started); this is a backstop.
        let outcome =
            tokio::time::timeout(timeout + Duration::from_secs(2), executor.execute(invocation))
                .await;
        process.end(match &outcome {
            Err(_) => Some(("E_TIMEOUT", "did not finish in time")),
            Ok(Err(error)) => Some((error.code.as_str(), error.message.as_str())),
            Ok(Ok(_)) => None,
        });
        let result = match outcome {
            Err(_) => Err(ToolError::new(
                ErrorCode::Timeout,
                format!("`{}` did not finish within {} ms", tool.id, timeout.as_millis()),
            )),
            Ok(Err(error)) => Err(error),
            Ok(Ok(Execution::Submitted(job))) => {
                return self.submitted(tool, job, claimed, job_trace).await;
            }
            Ok(Ok(Execution::Done(output))) => {
                self.files_touched = output.files_touched.len() as u64;
                match output.prepared {
                    // Large, and the caller forwards it: kept as the built-in wrote it.
                    Some(prepared)
                        if self.context.prepared_results
                            && prepared.text().len() > jig_audit::blob::INLINE_MAX =>
                    {
                        self.check_prepared(tool, prepared)
                    }
                    Some(prepared) => match prepared.to_value() {
                        Ok(data) => self.check_value(tool, data),
                        Err(e) => Err(ToolError::new(
                            ErrorCode::Internal,
                            format!("`{}` wrote a result that is not JSON: {e}", tool.id),
                        )),
                    },
                    None => self.check_value(tool, output.data),
                }
            }
        };
        self.finish(tool, result, claimed).await
    }

    /// The output checks, then redaction: what a tool returns reaches screens and logs, so
    /// secrets in it are redacted there too, not only in the audit (seed 002 §7).
    fn check_value(&mut self, tool: &ToolDef, mut data: Value) -> Result<Value, ToolError> {
        self.bytes_out = self.engine.check_result(tool, &data)?;
        redact_in_place(&mut data);
        Ok(data)
    }

    /// A prepared result's size limit. Its shape and redaction are its producer's promise
    /// (`PreparedJson`): a built-in's tests check its typed result against its output schema.
    fn check_prepared(
        &mut self,
        tool: &ToolDef,
        prepared: PreparedJson,
    ) -> Result<Value, ToolError> {
        let size = prepared.text().len() as u64;
        self.engine.check_size(tool, size)?;
        self.bytes_out = size;
        self.prepared = Some(prepared);
        Ok(Value::Null)
    }

    /// Record the result (or failure), settle the key, count usage; then answer.
    async fn finish(
        &mut self,
        tool: &ToolDef,
        result: Result<Value, ToolError>,
        claimed: Option<String>,
    ) -> ToolResponse {
        let (response, state) = match result {
            Ok(data) => (self.response(true, data, Vec::new(), false), RunState::Succeeded),
            Err(error) => {
                let state = if self.context.cancel.is_cancelled() {
                    RunState::Cancelled
                } else {
                    RunState::Failed
                };
                let details = error.details.clone().unwrap_or(Value::Null);
                (self.response(false, details, vec![response_error(&error)], false), state)
            }
        };
        let mut response = response;
        let stored = match self.stored(&mut response) {
            Ok(stored) => stored,
            Err(error) => return self.internal(&error.to_string()).await,
        };
        let kind = if response.ok { PacketKind::CallResult } else { PacketKind::CallFailed };
        self.record(kind, json!({ "state": state, "ok": response.ok, "data": stored["data"], "errors": stored["errors"], "duration_ms": response.duration_ms }));
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: self.request.request_id.clone(),
            state: Some(state),
            duration_ms: Some(i64::try_from(response.duration_ms).unwrap_or(i64::MAX)),
            response: Some(stored.clone()),
            error: response.errors.first().map(|e| format!("{}: {}", e.code, e.message)),
            ..RunUpdate::default()
        }));
        self.settle_and_count(claimed, stored.clone());
        self.end_waiting(state, &stored, response.duration_ms);
        self.publish_state(state);
        match self.commit_answer(&response).await {
            Ok(_) => response,
            Err(error) => {
                let message =
                    format!("`{}` ran, but its result could not be recorded: {error}", tool.id);
                self.response(
                    false,
                    response.data,
                    vec![ResponseError { code: ErrorCode::Internal, message, details: None }],
                    false,
                )
            }
        }
    }
}

impl Engine {
    /// The output checks of every result — the tool's size limit, then its output schema —
    /// for a call that ran and for a job collected later; the result's size in bytes.
    pub(crate) fn check_result(&self, tool: &ToolDef, data: &Value) -> Result<u64, ToolError> {
        let size = json_size(data);
        self.check_size(tool, size)?;
        let problems = self.validators.check(tool, false, data);
        if !problems.is_empty() {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!("`{}` returned a result that does not match its output schema", tool.id),
            )
            .with_details(json!({ "problems": problems })));
        }
        Ok(size)
    }

    /// A result of `size` bytes of JSON against the tool's `maxOutputBytes`.
    fn check_size(&self, tool: &ToolDef, size: u64) -> Result<(), ToolError> {
        if size > tool.limits.max_output_bytes {
            return Err(ToolError::new(
                ErrorCode::Limit,
                format!("the result is {size} bytes; `{}` may return at most {}", tool.id, tool.limits.max_output_bytes),
            )
            .with_details(json!({ "limit": "maxOutputBytes", "size": size, "max": tool.limits.max_output_bytes })));
        }
        Ok(())
    }

    /// Tell `principal`'s surfaces that a run moved to `state`.
    pub(crate) fn publish_run_state(
        &self,
        principal: &str,
        request_id: &str,
        tool: &str,
        run_id: Option<&str>,
        state: RunState,
    ) {
        self.events.publish_to(
            principal,
            Event::Message(EventMessage {
                kind: Default::default(),
                event: "RunStateChanged".to_owned(),
                request_id: request_id.to_owned(),
                progress: None,
                data: Some(json!({ "state": state, "tool": tool, "run_id": run_id })),
            }),
        );
    }
}

enum Claim {
    /// This call holds the key and may run.
    Mine(String),
    /// An identical call already finished: replay its response.
    Replay(KeyRecord),
}

fn response_error(error: &ToolError) -> ResponseError {
    ResponseError {
        code: error.code,
        message: error.message.clone(),
        details: error.details.clone(),
    }
}

fn internal_error(message: &str) -> ResponseError {
    ResponseError { code: ErrorCode::Internal, message: message.to_owned(), details: None }
}

/// Bytes of `value` as compact JSON, counted without building the text.
fn json_size(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
