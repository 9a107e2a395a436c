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
//! This file is the pipeline; `replay` holds idempotency and replay, `approval` the approval
//! steps, `record` what a call writes and answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_audit::{
    AuditError, Flush, KeyRecord, KeyState, NewPacket, Op, Outcome, PacketKind, ReplayIdentity,
    RunRecord, RunState, RunUpdate,
};
use jig_exec::{Events, Execution, Invocation, ToolError};
use jig_model::canonical::{params_hash, run_id};
use jig_model::envelope::{EventMessage, ResponseError, ToolRequest, ToolResponse};
use jig_model::policy::Durability;
use jig_model::prepared::PreparedJson;
use jig_model::runbook::kernel::GovernanceAction;
use jig_model::{ErrorCode, ToolDef};
use jig_policy::Decision;
use jig_policy::redact::{redact_in_place, redact_text, redact_value};
use serde_json::{Value, json};

use crate::engine::{CallContext, Engine, Registry};
use crate::events::Event;
use crate::identity::{
    canonical_principal, code_hash, code_identity, idempotency_key, new_id, request_hash,
    sha256_hex,
};
use crate::metrics::CallRecord;
use crate::telemetry::CallSpan;

mod approval;
mod record;
mod replay;
mod submit;

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
        if let Some(approval_id) = response.pending_approval().filter(|_| call.pending) {
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

    async fn run(&mut self) -> ToolResponse {
        let tool = self.registry.get(&self.request.tool);
        // A call that changes nothing may be synced with the next group (docs/policy.md,
        // "Durability"); anything else, and an unknown tool, is synced before it is answered.
        let deferred = self.registry.policy.config().audit.durability == Durability::Effects
            && tool.as_ref().is_some_and(|tool| !tool.has_side_effects());
        if deferred {
            self.sync = Flush::Soon;
        }
        self.bytes_in = serde_json::to_vec(&self.request.args).map_or(0, |b| b.len() as u64);
        self.record_request(tool.as_deref());
        let Some(tool) = tool else {
            let ids: Vec<String> = self.registry.all().iter().map(|t| t.id.clone()).collect();
            let hint = jig_load::did_you_mean(&self.request.tool, ids.iter().map(String::as_str));
            let message = crate::upstream::no_tool(&self.registry.snapshot, &self.request.tool);
            let mut error = ToolError::new(ErrorCode::NotFound, message);
            if let Some(hint) = hint {
                error = error.with_details(json!({ "did_you_mean": hint }));
            }
            return self.fail(error, RunState::Failed).await;
        };
        if self.bytes_in > tool.limits.max_input_bytes {
            let error = ToolError::new(
                ErrorCode::Limit,
                format!("the arguments are {} bytes; `{}` accepts at most {}", self.bytes_in, tool.id, tool.limits.max_input_bytes),
            )
            .with_details(json!({ "limit": "maxInputBytes", "size": self.bytes_in, "max": tool.limits.max_input_bytes }));
            return self.fail(error, RunState::Failed).await;
        }
        let problems = self.engine.validators.check(&tool, true, &self.request.args);
        if !problems.is_empty() {
            let error = ToolError::new(
                ErrorCode::ValidationFail,
                format!("the arguments do not match `{}`'s input schema", tool.id),
            )
            .with_details(json!({ "problems": problems }));
            return self.fail(error, RunState::Failed).await;
        }

        self.code = code_identity(&tool, self.engine.workspace.root());
        self.definition = code_hash(&tool, &self.code);
        let policy = Arc::clone(&self.registry.policy);
        // Seed 001: a plan's identity is its canonical params — its inputs by content, its
        // definition (image digest, script) by hash — not the names it was given.
        let identity = if tool.execution.is_plan() {
            let pinned = json!({ "definition": tool.hash });
            match jig_exec::rundir::canonical_params(
                &tool,
                &self.request.args,
                &self.engine.workspace,
                &pinned,
            ) {
                Ok(params) => params_hash(&params),
                Err(error) => return self.fail(error, RunState::Failed).await,
            }
        } else {
            self.args_hash.clone()
        };
        let run_id = run_id(&tool.id, &tool.version, policy.hash(), &identity);
        self.run_id = Some(run_id.clone());
        self.ops.push(Op::CreateRun(Box::new(self.run_record(&tool, &run_id, policy.hash()))));
        self.publish_state(RunState::Created);

        let decided =
            self.engine.decide(&policy, &tool, &self.request.args, &self.session, self.bytes_in);
        let mut decision = match decided.await {
            Ok(decision) => decision,
            Err(error) => return self.internal(&error.to_string()).await,
        };
        if let Some(rule) = &self.context.required_approval
            && decision.action == GovernanceAction::Allow
        {
            decision = Decision::require_approval(
                rule.clone(),
                format!("{rule} asks for a person's approval ({})", decision.reason),
            );
        }
        tracing::info!(name: "tools.dispatch.decision", tool = %tool.id, action = ?decision.action, rule = %decision.rule, "tools.dispatch.decision");

        match decision.action {
            GovernanceAction::Deny => return self.deny(&tool, &decision).await,
            GovernanceAction::RequireApproval => {
                if let Some(token) = self.context.approval_token.clone() {
                    match self.consume_token(&tool, &token).await {
                        Ok(approval_id) => {
                            decision = Decision::allow(
                                "approval",
                                format!("approved ({approval_id}); {}", decision.reason),
                            );
                        }
                        Err(response) => return *response,
                    }
                } else {
                    match self.approved_before(&tool, &decision).await {
                        Err(answer) => return *answer,
                        Ok(Some(approval_id)) => {
                            decision = Decision::allow(
                                "approval",
                                format!("approved ({approval_id}); {}", decision.reason),
                            );
                        }
                        Ok(None) => {
                            // A repeat of a call that already ran needs no approval: replaying it has no
                            // side effect. Only the same principal's repeat: another caller still needs
                            // the decision (and must not be handed someone else's result).
                            if tool.has_side_effects() {
                                let key = self.engine.store.key(&self.key(&tool)).await;
                                // The caller's own, and recorded by this store (a key that
                                // came with the file is no proof the call ran).
                                let same_caller = match &key {
                                    Ok(Some(record)) => {
                                        self.asked_by_caller(&record.request_id).await
                                            && self
                                                .vouched(
                                                    &record.request_id,
                                                    record
                                                        .response
                                                        .as_ref()
                                                        .unwrap_or(&Value::Null),
                                                )
                                                .await
                                                .unwrap_or(false)
                                    }
                                    _ => false,
                                };
                                match key {
                                    Ok(Some(record))
                                        if record.state == KeyState::Done
                                            && record.response.is_some()
                                            && same_caller =>
                                    {
                                        self.record_decision(
                                            &decision,
                                            "satisfied by replaying the recorded result",
                                        );
                                        return self.replay_key(record).await;
                                    }
                                    Ok(_) => {}
                                    Err(error) => return self.internal(&error.to_string()).await,
                                }
                            }
                            return self.ask_approval(&tool, &decision).await;
                        }
                    }
                }
            }
            GovernanceAction::Allow => {}
        }
        self.record_decision(&decision, "");

        // Seed 001's replay rules: a batch job is never submitted twice for one run id (a
        // queued, running or succeeded run answers); anything else deterministic replays a
        // succeeded run only.
        if tool.execution.is_batch() {
            match self.engine.store.batch_replay_source(&self.replay_identity(&tool)).await {
                Ok(Some(source)) => {
                    if let Some(answer) = self.replay_run(source).await {
                        return answer;
                    }
                }
                Ok(None) => {}
                Err(error) => return self.internal(&error.to_string()).await,
            }
        } else if tool.deterministic {
            match self.engine.store.replay_source(&self.replay_identity(&tool)).await {
                Ok(Some(source)) => {
                    if let Some(answer) = self.replay_run(source).await {
                        return answer;
                    }
                }
                Ok(None) => {}
                Err(error) => return self.internal(&error.to_string()).await,
            }
        }

        let claimed = if tool.has_side_effects() {
            match self.claim(&tool).await {
                Ok(Claim::Mine(key)) => Some(key),
                Ok(Claim::Replay(record)) => return self.replay_key(record).await,
                Err(response) => return *response,
            }
        } else {
            if tool.execution.kind() != "builtin" {
                // Another process will run it, which is worth a record before it starts even
                // without side effects: the store then shows it running, and a crash leaves a
                // trace that start-up recovery marks incomplete. In-process built-ins skip this:
                // they stop with Jig, and their records are committed together after them.
                self.ops.push(Op::SetRun(RunUpdate {
                    request_id: self.request.request_id.clone(),
                    state: Some(RunState::Running),
                    ..RunUpdate::default()
                }));
                if let Err(error) = self.commit().await {
                    return self.internal(&error.to_string()).await;
                }
            }
            None
        };
        self.execute(&tool, claimed).await
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
