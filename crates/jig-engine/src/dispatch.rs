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

use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_audit::{
    AuditError, KeyRecord, KeyState, NewPacket, Op, Outcome, PacketKind, RunRecord, RunState,
    RunUpdate,
};
use jig_model::canonical::{params_hash, run_id};
use jig_model::envelope::{EventMessage, ResponseError, ToolRequest, ToolResponse};
use jig_model::runbook::kernel::GovernanceAction;
use jig_model::{ErrorCode, ToolDef};
use jig_policy::Decision;
use jig_policy::redact::{redact_declared, redact_text, redact_value};
use jig_tools::{Events, Execution, Invocation, ToolError};
use serde_json::{Value, json};

use crate::engine::{CallContext, Engine, Registry};
use crate::events::Event;
use crate::identity::{canonical_principal, idempotency_key, new_id, request_hash, sha256_hex};
use crate::metrics::CallRecord;

/// How much of an unknown tool's arguments the audit keeps.
const UNKNOWN_TOOL_MAX_INPUT: u64 = 64 * 1024;

/// How often a call waiting on another call's idempotency key looks again.
const KEY_POLL: Duration = Duration::from_millis(20);

impl Engine {
    /// Seed 003 `tools.dispatch`: run one call through the whole pipeline. Always answers; a
    /// failure is a `ToolResponse` with `ok: false` and a stable error code.
    pub async fn dispatch(&self, request: ToolRequest, context: CallContext) -> ToolResponse {
        let started = Instant::now();
        let session = request.session_id.clone().unwrap_or_else(|| context.session_id.clone());
        tracing::info!(name: "tools.dispatch.started", tool = %request.tool, request_id = %request.request_id, session = %session, "tools.dispatch.started");
        self.enter(&session);
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
        if response.ok {
            tracing::info!(name: "tools.dispatch.completed", tool = %request.tool, request_id = %request.request_id, replayed = response.replayed, duration_ms = response.duration_ms, "tools.dispatch.completed");
        } else {
            let code = response.errors.first().map_or("", |e| e.code.as_str());
            tracing::info!(name: "tools.dispatch.failed", tool = %request.tool, request_id = %request.request_id, code, "tools.dispatch.failed");
        }
        response
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
    bytes_in: u64,
    bytes_out: u64,
    files_touched: u64,
    denied: bool,
    pending: bool,
    /// A record was refused by a unique key: maybe this request id was used before.
    repeated: bool,
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
            bytes_in: 0,
            bytes_out: 0,
            files_touched: 0,
            denied: false,
            pending: false,
            repeated: false,
        }
    }

    async fn run(&mut self) -> ToolResponse {
        let tool = self.registry.get(&self.request.tool);
        self.bytes_in = serde_json::to_vec(&self.request.args).map_or(0, |b| b.len() as u64);
        self.record_request(tool.as_deref());
        let Some(tool) = tool else {
            let ids: Vec<String> = self.registry.all().iter().map(|t| t.id.clone()).collect();
            let hint = jig_load::did_you_mean(&self.request.tool, ids.iter().map(String::as_str));
            let mut error =
                ToolError::new(ErrorCode::NotFound, format!("no tool `{}`", self.request.tool));
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

        let policy = Arc::clone(&self.registry.policy);
        let run_id = run_id(&tool.id, &tool.version, policy.hash(), &self.args_hash);
        self.run_id = Some(run_id.clone());
        self.ops.push(Op::CreateRun(Box::new(self.run_record(&tool, &run_id, policy.hash()))));
        self.publish_state(RunState::Created);

        let mut decision = policy.decide(&tool, &self.request.args);
        if let Some(budgets) = policy.config().budgets {
            match self.engine.budget(&self.session).await {
                Ok((usage, _)) => {
                    if let Err(denial) = jig_policy::budget::check(&budgets, &usage, self.bytes_in)
                    {
                        decision = decision.strictest(denial.into());
                    }
                }
                Err(error) => return self.internal(&error.to_string()).await,
            }
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
                    // A repeat of a call that already ran needs no approval: replaying it has no
                    // side effect. Only the same principal's repeat: another caller still needs
                    // the decision (and must not be handed someone else's result).
                    if tool.has_side_effects() {
                        let key = self.engine.store.key(&self.key(&tool)).await;
                        let same_caller = match &key {
                            Ok(Some(record)) => self.asked_by_caller(&record.request_id).await,
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
            GovernanceAction::Allow => {}
        }
        self.record_decision(&decision, "");

        if tool.deterministic {
            match self.engine.store.replay_source(&run_id).await {
                Ok(Some(source)) => return self.replay_run(source).await,
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
        let sink: Arc<dyn Fn(EventMessage) + Send + Sync> =
            Arc::new(move |mut message: EventMessage| {
                // What a tool prints may contain secrets too.
                if let Some(data) = message.data.take() {
                    message.data = Some(redact_value(&data));
                }
                engine_events.publish(Event::Message(message));
            });
        let timeout = Duration::from_millis(tool.timeout_ms);
        let invocation = Invocation {
            tool,
            args: &self.request.args,
            workspace: &self.engine.workspace,
            policy: &self.registry.policy,
            timeout,
            cancel: self.context.cancel.clone(),
            events: Events::new(self.request.request_id.clone(), sink),
        };
        // The executor enforces the limit itself (killing what it started); this is a backstop.
        let outcome =
            tokio::time::timeout(timeout + Duration::from_secs(2), executor.execute(invocation))
                .await;
        let result = match outcome {
            Err(_) => Err(ToolError::new(
                ErrorCode::Timeout,
                format!("`{}` did not finish within {} ms", tool.id, tool.timeout_ms),
            )),
            Ok(Err(error)) => Err(error),
            Ok(Ok(Execution::Submitted { handle })) => Err(ToolError::new(
                ErrorCode::Internal,
                format!(
                    "`{}` was submitted as job {handle}; collecting jobs is not supported yet",
                    tool.id
                ),
            )),
            Ok(Ok(Execution::Done(output))) => {
                self.files_touched = output.files_touched.len() as u64;
                // What a tool returns reaches screens and logs: secrets in it are redacted
                // there too, not only in the audit (seed 002 §7, `sec.shell.allowlist`).
                self.check_output(tool, output.data).map(|data| redact_value(&data))
            }
        };
        self.finish(tool, result, claimed).await
    }

    fn check_output(&mut self, tool: &ToolDef, data: Value) -> Result<Value, ToolError> {
        self.bytes_out = serde_json::to_vec(&data).map_or(0, |b| b.len() as u64);
        if self.bytes_out > tool.limits.max_output_bytes {
            return Err(ToolError::new(
                ErrorCode::Limit,
                format!("the result is {} bytes; `{}` may return at most {}", self.bytes_out, tool.id, tool.limits.max_output_bytes),
            )
            .with_details(json!({ "limit": "maxOutputBytes", "size": self.bytes_out, "max": tool.limits.max_output_bytes })));
        }
        let problems = self.engine.validators.check(tool, false, &data);
        if !problems.is_empty() {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!("`{}` returned a result that does not match its output schema", tool.id),
            )
            .with_details(json!({ "problems": problems })));
        }
        Ok(data)
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
        if let Some(key) = claimed {
            self.ops.push(Op::SettleKey {
                key,
                request_id: self.request.request_id.clone(),
                state: KeyState::Done,
                response: Some(stored),
            });
        }
        self.ops.push(Op::AddUsage {
            session_id: self.session.clone(),
            principal: Some(self.context.principal.clone()),
            calls: 1,
            bytes: i64::try_from(self.bytes_in + self.bytes_out).unwrap_or(i64::MAX),
            wall_ms: i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX),
        });
        self.publish_state(state);
        match self.commit().await {
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

    /// The response as the store keeps it. A successful result was redacted when the tool
    /// returned it; errors and their details are redacted here. A large result becomes a
    /// content-addressed blob (queued as an op) and the stored response names it, so the data
    /// is neither copied for the record nor stored twice.
    fn stored(&mut self, response: &mut ToolResponse) -> Result<Value, jig_audit::AuditError> {
        if !response.ok {
            response.data = redact_value(&response.data);
        }
        let mut stored = match jig_audit::blob::Blob::of_large(&response.data)? {
            Some((blob, reference)) => {
                self.ops.push(Op::PutBlob(blob));
                let data = std::mem::replace(&mut response.data, reference);
                let stored = serde_json::to_value(&*response).unwrap_or(Value::Null);
                response.data = data;
                stored
            }
            None => serde_json::to_value(&*response).unwrap_or(Value::Null),
        };
        stored["errors"] = redact_value(&stored["errors"]);
        Ok(stored)
    }

    /// Take the idempotency key of a side-effecting call before it runs, or learn whose it is.
    async fn claim(&mut self, tool: &ToolDef) -> Result<Claim, Box<ToolResponse>> {
        let key = self.key(tool);
        let deadline =
            Instant::now() + Duration::from_millis(tool.timeout_ms) + Duration::from_secs(5);
        loop {
            self.ops.push(Op::SetRun(RunUpdate {
                request_id: self.request.request_id.clone(),
                state: Some(RunState::Running),
                ..RunUpdate::default()
            }));
            self.ops.push(Op::ClaimKey {
                key: key.clone(),
                request_id: self.request.request_id.clone(),
            });
            let outcomes = match self.commit().await {
                Ok(outcomes) => outcomes,
                Err(error) => return Err(Box::new(self.internal(&error.to_string()).await)),
            };
            match outcomes.last() {
                Some(Outcome::Claimed) => return Ok(Claim::Mine(key)),
                Some(Outcome::KeyTaken(record)) if record.state == KeyState::Done => {
                    return Ok(Claim::Replay(record.clone()));
                }
                Some(Outcome::KeyTaken(_)) => {
                    // Another call with the same key is running: wait (queued) for its result.
                    self.ops.push(Op::SetRun(RunUpdate {
                        request_id: self.request.request_id.clone(),
                        state: Some(RunState::Queued),
                        ..RunUpdate::default()
                    }));
                    if let Err(error) = self.commit().await {
                        return Err(Box::new(self.internal(&error.to_string()).await));
                    }
                    self.publish_state(RunState::Queued);
                    loop {
                        if Instant::now() > deadline {
                            let error = ToolError::new(
                                ErrorCode::Conflict,
                                "an identical call is still running; try again later",
                            )
                            .with_details(json!({ "idempotency_key": key }));
                            return Err(Box::new(self.fail(error, RunState::Failed).await));
                        }
                        tokio::time::sleep(KEY_POLL).await;
                        match self.engine.store.key(&key).await {
                            Ok(Some(record)) if record.state == KeyState::Pending => continue,
                            Ok(Some(record)) if record.state == KeyState::Done => {
                                return Ok(Claim::Replay(record));
                            }
                            Ok(_) => break, // its holder died: try to take it over
                            Err(error) => {
                                return Err(Box::new(self.internal(&error.to_string()).await));
                            }
                        }
                    }
                }
                _ => {
                    return Err(Box::new(
                        self.internal("unexpected answer to an idempotency claim").await,
                    ));
                }
            }
        }
    }

    fn key(&self, tool: &ToolDef) -> String {
        let thread = self.context.thread_id.as_deref().unwrap_or(&self.session);
        idempotency_key(thread, &tool.id, &self.args_hash)
    }

    /// Answer with the response recorded for an idempotency key.
    async fn replay_key(&mut self, record: KeyRecord) -> ToolResponse {
        let recorded = record.response.unwrap_or(Value::Null);
        self.replay(&record.request_id, &recorded).await
    }

    /// Answer a deterministic tool's call with the first succeeded run of the same identity.
    async fn replay_run(&mut self, source: RunRecord) -> ToolResponse {
        let recorded = source.response.unwrap_or(Value::Null);
        self.replay(&source.request_id, &recorded).await
    }

    async fn replay(&mut self, source: &str, recorded: &Value) -> ToolResponse {
        // The side tables are not trusted alone: what is replayed must be what the chain says
        // the source call answered.
        match self.engine.store.packets_of(source).await {
            Ok(packets) => {
                let matches = packets.iter().any(|p| {
                    (p.kind == PacketKind::CallResult.as_str()
                        || p.kind == PacketKind::CallFailed.as_str())
                        && p.data.get("replayed_from").is_none()
                        && p.expected_hash() == p.hash
                        && p.data.get("data") == recorded.get("data")
                        && p.data.get("ok") == recorded.get("ok")
                });
                if !matches {
                    let error = ToolError::new(
                        ErrorCode::Internal,
                        format!(
                            "the recorded result of `{source}` does not match its audit packet; it is not replayed (run `jig audit verify`)"
                        ),
                    );
                    return self.fail(error, RunState::Failed).await;
                }
            }
            Err(error) => return self.internal(&error.to_string()).await,
        }
        let response = match self.recorded(recorded).await {
            Ok(response) => response,
            Err(error) => return self.internal(&error.to_string()).await,
        };
        let ok = response.ok;
        self.record(PacketKind::CallResult, json!({ "state": "succeeded", "ok": ok, "replayed_from": source, "duration_ms": response.duration_ms }));
        // The run keeps the recorded form (a blob stays a reference): a replay stores nothing
        // new of the result.
        let mut stored = json!({
            "type": "ToolResponse",
            "ok": ok,
            "tool": response.tool,
            "request_id": response.request_id,
            "duration_ms": response.duration_ms,
            "data": recorded.get("data").cloned().unwrap_or(Value::Null),
            "errors": recorded.get("errors").cloned().unwrap_or(json!([])),
            "replayed": true,
        });
        if let Some(run_id) = &response.run_id {
            stored["run_id"] = json!(run_id);
        }
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: self.request.request_id.clone(),
            state: Some(RunState::Succeeded),
            duration_ms: Some(i64::try_from(response.duration_ms).unwrap_or(0)),
            response: Some(stored),
            replayed_from: Some(source.to_owned()),
            ..RunUpdate::default()
        }));
        self.publish_state(RunState::Succeeded);
        match self.commit().await {
            Ok(_) => response,
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    /// The `tool.call.request` packet. Arguments over the limit are refused later; the audit
    /// keeps their size and digest, not the bytes (a flood of huge requests must not grow the
    /// store without bound).
    fn record_request(&mut self, tool: Option<&ToolDef>) {
        let limit = tool.map_or(UNKNOWN_TOOL_MAX_INPUT, |t| t.limits.max_input_bytes);
        let args = if self.bytes_in > limit {
            json!({ "omitted": true, "bytes": self.bytes_in, "params_hash": self.args_hash })
        } else {
            // Exactly what was asked, declared secrets aside (seen by auditors as it ran).
            redact_declared(&self.request.args)
        };
        let mut data =
            json!({ "tool": self.request.tool, "args": args, "timestamp": self.request.timestamp });
        if let Some(asserted_by) = &self.context.asserted_by {
            data["asserted_by"] = json!(asserted_by);
        }
        self.record(PacketKind::CallRequest, data);
    }

    /// Seed 003's fallback idempotency key: a request id used before gets its recorded answer.
    /// It is noticed when the run's row is refused by its unique key (no lookup on the common
    /// path); everything this call tried to record was rolled back with it.
    async fn answer_repeat(&mut self) -> Option<ToolResponse> {
        let previous = self.engine.store.run_of_request(&self.request.request_id).await.ok()??;
        self.ops.clear();
        self.repeated = false;
        self.run_id = None;
        let tool = self.registry.get(&self.request.tool);
        self.record_request(tool.as_deref());
        Some(self.repeat_of(previous).await)
    }

    /// Answer a request whose id was used before: with its recorded response if it is the same
    /// call and finished, with `E_CONFLICT` otherwise (its run record is left as it is).
    async fn repeat_of(&mut self, previous: RunRecord) -> ToolResponse {
        let same_call =
            previous.tool == self.request.tool && previous.params_hash == self.args_hash;
        let finished = !matches!(
            previous.state,
            RunState::Created | RunState::Queued | RunState::Running | RunState::PendingApproval
        );
        let recorded = previous.response.filter(|_| same_call && finished);
        let Some(recorded) = &recorded else {
            let why = if same_call {
                format!("is still {}", previous.state)
            } else {
                format!("was used for another call (`{}`)", previous.tool)
            };
            let error = ToolError::new(
                ErrorCode::Conflict,
                format!("request id `{}` {why}; send a new request id", self.request.request_id),
            )
            .with_details(
                json!({ "request_id": self.request.request_id, "state": previous.state }),
            );
            return self.fail(error, RunState::Failed).await;
        };
        self.run_id = Some(previous.run_id.clone());
        let response = match self.recorded(recorded).await {
            Ok(response) => response,
            Err(error) => return self.internal(&error.to_string()).await,
        };
        let ok = response.ok;
        self.record(PacketKind::CallResult, json!({ "state": previous.state, "ok": ok, "replayed_from": previous.request_id, "repeated_request": true }));
        match self.commit().await {
            Ok(_) => response,
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    /// Use an approval token; on refusal, the call is denied and answered here.
    async fn consume_token(
        &mut self,
        tool: &ToolDef,
        token: &str,
    ) -> Result<String, Box<ToolResponse>> {
        // Bound to who asked too: another principal's token does not fit this request.
        let bound_to =
            request_hash(&tool.id, &self.request.args, &self.session, &self.context.principal);
        self.ops.push(Op::ConsumeApproval {
            token_hash: sha256_hex(token.as_bytes()),
            request_hash: bound_to,
        });
        let outcomes = match self.commit().await {
            Ok(outcomes) => outcomes,
            Err(error) => return Err(Box::new(self.internal(&error.to_string()).await)),
        };
        match outcomes.last() {
            Some(Outcome::Consumed(id)) => Ok(id.clone()),
            Some(Outcome::TokenRefused(refusal)) => {
                let decision = Decision::deny("approval.token", refusal.describe());
                Err(Box::new(self.deny(tool, &decision).await))
            }
            _ => Err(Box::new(self.internal("unexpected answer to an approval token").await)),
        }
    }

    /// Whether the run of `request_id` was asked for by this call's principal.
    async fn asked_by_caller(&self, request_id: &str) -> bool {
        let caller = canonical_principal(&self.context.principal);
        matches!(
            self.engine.store.run(request_id).await,
            Ok(Some(run)) if run.principal.as_deref().map(canonical_principal) == Some(caller)
        )
    }

    /// What a reviewer is shown: the arguments as they will run (declared secrets aside) and,
    /// for a command, the argv exactly as it will be tokenised.
    fn approval_request(&self, tool: &ToolDef) -> Value {
        let mut request = json!({
            "tool": tool.id,
            "args": redact_declared(&self.request.args),
            "session_id": self.session,
            "request_id": self.request.request_id,
        });
        if tool.id == "shell_exec"
            && let Some(cmd) = self.request.args.get("cmd").and_then(Value::as_str)
            && let Ok(argv) = self.registry.policy.check_command(cmd)
        {
            request["argv"] = json!(argv);
        }
        request
    }

    /// Record a pending approval and answer that the call waits for it.
    async fn ask_approval(&mut self, tool: &ToolDef, decision: &Decision) -> ToolResponse {
        self.pending = true;
        let id = new_id();
        self.record_decision(decision, "");
        self.ops.push(Op::CreateApproval(Box::new(jig_audit::ApprovalRecord {
            id: id.clone(),
            request_hash: request_hash(
                &tool.id,
                &self.request.args,
                &self.session,
                &self.context.principal,
            ),
            tool: tool.id.clone(),
            session_id: Some(self.session.clone()),
            principal: Some(self.context.principal.clone()),
            request: self.approval_request(tool),
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            state: jig_audit::ApprovalState::Pending,
            expires_us: None,
            decided_by: None,
            created_us: 0,
            decided_us: None,
            consumed_us: None,
        })));
        self.record(
            PacketKind::CallPendingApproval,
            json!({ "approval_id": id, "rule": decision.rule, "reason": decision.reason }),
        );
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: self.request.request_id.clone(),
            state: Some(RunState::PendingApproval),
            rule: Some(decision.rule.clone()),
            ..RunUpdate::default()
        }));
        self.publish_state(RunState::PendingApproval);
        let error = ResponseError {
            code: ErrorCode::Policy,
            message: format!("`{}` needs approval: {}", tool.id, decision.reason),
            details: Some(
                json!({ "approval_id": id, "rule": decision.rule, "reason": decision.reason }),
            ),
        };
        let response = self.response(false, Value::Null, vec![error], false);
        match self.commit().await {
            Ok(_) => response,
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    async fn deny(&mut self, tool: &ToolDef, decision: &Decision) -> ToolResponse {
        self.denied = true;
        self.record_decision(decision, "");
        let code = if decision.rule.starts_with("budgets.") {
            ErrorCode::Limit
        } else {
            ErrorCode::Policy
        };
        let error =
            ToolError::new(code, format!("`{}` is not allowed: {}", tool.id, decision.reason))
                .with_details(json!({ "rule": decision.rule, "reason": decision.reason }));
        self.fail(error, RunState::Denied).await
    }

    /// Answer with `error` before anything ran.
    async fn fail(&mut self, error: ToolError, state: RunState) -> ToolResponse {
        let response = self.response(false, Value::Null, vec![response_error(&error)], false);
        self.record(PacketKind::CallFailed, json!({ "state": state, "errors": redact_value(&serde_json::to_value(&response.errors).unwrap_or(Value::Null)) }));
        if self.run_id.is_some() {
            self.ops.push(Op::SetRun(RunUpdate {
                request_id: self.request.request_id.clone(),
                state: Some(state),
                error: Some(format!("{}: {}", error.code, redact_text(&error.message))),
                response: Some(redact_value(
                    &serde_json::to_value(&response).unwrap_or(Value::Null),
                )),
                duration_ms: Some(i64::try_from(response.duration_ms).unwrap_or(0)),
                rule: error
                    .details
                    .as_ref()
                    .and_then(|d| d.get("rule"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                ..RunUpdate::default()
            }));
            self.publish_state(state);
        }
        match self.commit().await {
            Ok(_) => response,
            Err(audit) => {
                self.response(false, Value::Null, vec![internal_error(&audit.to_string())], false)
            }
        }
    }

    async fn internal(&mut self, message: &str) -> ToolResponse {
        // A repeated request id is answered from its record instead (see `answer_repeat`).
        if !self.repeated {
            tracing::error!(tool = %self.request.tool, message, "internal error during dispatch");
        }
        self.ops.clear();
        self.response(false, Value::Null, vec![internal_error(message)], false)
    }

    fn record(&mut self, kind: PacketKind, data: Value) {
        self.ops.push(Op::Append(NewPacket {
            kind,
            session_id: Some(self.session.clone()),
            thread_id: self.context.thread_id.clone(),
            principal: Some(self.context.principal.clone()),
            request_id: Some(self.request.request_id.clone()),
            run_id: self.run_id.clone(),
            tool: Some(self.request.tool.clone()),
            args_hash: Some(self.args_hash.clone()),
            data,
        }));
    }

    fn record_decision(&mut self, decision: &Decision, note: &str) {
        let mut data = json!({ "action": decision.action, "rule": decision.rule, "reason": decision.reason, "policy_hash": self.registry.policy.hash() });
        if !note.is_empty() {
            data["note"] = json!(note);
        }
        self.record(PacketKind::CallDecision, data);
    }

    async fn commit(&mut self) -> Result<Vec<Outcome>, AuditError> {
        let ops = std::mem::take(&mut self.ops);
        let result = self.engine.store.apply(ops).await;
        if result.as_ref().is_err_and(AuditError::is_unique_violation) {
            self.repeated = true;
        }
        result
    }

    fn run_record(&self, tool: &ToolDef, run_id: &str, policy_hash: &str) -> RunRecord {
        // Long enough to wait for an identical call, run, and hit the backstop; after it, any
        // process may declare the run abandoned.
        let budget_ms = tool.timeout_ms.saturating_mul(2).saturating_add(70_000);
        let deadline_us = jig_audit::time::now_us()
            .saturating_add(i64::try_from(budget_ms.saturating_mul(1000)).unwrap_or(i64::MAX / 2));
        RunRecord {
            request_id: self.request.request_id.clone(),
            run_id: run_id.to_owned(),
            tool: tool.id.clone(),
            version: tool.version.clone(),
            session_id: Some(self.session.clone()),
            thread_id: self.context.thread_id.clone(),
            principal: Some(self.context.principal.clone()),
            params_hash: self.args_hash.clone(),
            policy_hash: policy_hash.to_owned(),
            deterministic: tool.deterministic,
            state: RunState::Created,
            rule: None,
            created_us: 0,
            updated_us: 0,
            duration_ms: None,
            response: None,
            error: None,
            replayed_from: None,
            owner: Some(jig_audit::owner::current().to_owned()),
            deadline_us: Some(deadline_us),
        }
    }

    /// A recorded response, answered again for this request.
    /// A recorded response as an answer, its result read back from its blob when it has one.
    async fn recorded(&self, recorded: &Value) -> Result<ToolResponse, jig_audit::AuditError> {
        let ok = recorded.get("ok").and_then(Value::as_bool).unwrap_or(false);
        let data =
            self.engine.store.inflate(recorded.get("data").cloned().unwrap_or(Value::Null)).await?;
        let errors = recorded
            .get("errors")
            .and_then(|e| serde_json::from_value(e.clone()).ok())
            .unwrap_or_default();
        Ok(self.response(ok, data, errors, true))
    }

    fn response(
        &self,
        ok: bool,
        data: Value,
        errors: Vec<ResponseError>,
        replayed: bool,
    ) -> ToolResponse {
        ToolResponse {
            kind: Default::default(),
            ok,
            tool: self.request.tool.clone(),
            request_id: self.request.request_id.clone(),
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            data,
            errors,
            run_id: self.run_id.clone(),
            replayed,
        }
    }

    fn publish_state(&self, state: RunState) {
        self.engine.events.publish(Event::Message(EventMessage {
            kind: Default::default(),
            event: "RunStateChanged".to_owned(),
            request_id: self.request.request_id.clone(),
            progress: None,
            data: Some(json!({ "state": state, "tool": self.request.tool, "run_id": self.run_id })),
        }));
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
