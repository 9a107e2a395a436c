//! Idempotency and replay: claiming a side effect's key before it runs, and answering a
//! repeat — the same key, a deterministic run, a reused request id — from the record, after
//! checking the record against the chain.

use super::*;

impl Call<'_> {
    /// Take the idempotency key of a side-effecting call before it runs, or learn whose it is.
    pub(super) async fn claim(&mut self, tool: &ToolDef) -> Result<Claim, Box<ToolResponse>> {
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

    /// Seed 003's idempotency key (thread, tool, arguments), narrowed to this call's replay
    /// identity ([`Call::replay_identity`]): a key is never shared by calls that may not answer
    /// each other — another run id (an edited input, another policy), another definition of
    /// the tool, another person.
    pub(super) fn key(&self, tool: &ToolDef) -> String {
        let thread = self.context.thread_id.as_deref().unwrap_or(&self.session);
        let identity = self.replay_identity(tool);
        let scope = sha256_hex(
            json!([identity.run_id, identity.definition, identity.person]).to_string().as_bytes(),
        );
        format!("{}:{}", idempotency_key(thread, &tool.id, &self.args_hash), &scope[..32])
    }

    /// What a recorded run must share with this call to answer it: the run id, the tool's
    /// definition, and the person who asks — unless the policy's `replay.shared` names the
    /// tool.
    pub(super) fn replay_identity<'a>(&'a self, tool: &'a ToolDef) -> ReplayIdentity<'a> {
        let shared = self
            .registry
            .policy
            .config()
            .replay
            .shared
            .iter()
            .any(|pattern| jig_policy::governance::glob_match(pattern, &tool.id));
        ReplayIdentity {
            run_id: self.run_id.as_deref().unwrap_or_default(),
            definition: &self.definition,
            person: (!shared).then_some(self.person.as_str()),
        }
    }

    /// Answer with the response recorded for an idempotency key, if this store vouched for it;
    /// refuse otherwise (its side effect may or may not have happened: it is not run again).
    pub(super) async fn replay_key(&mut self, record: KeyRecord) -> ToolResponse {
        let recorded = record.response.clone().unwrap_or(Value::Null);
        match self.vouched(&record.request_id, &recorded).await {
            Ok(true) => self.replay(&record.request_id, &recorded).await,
            Ok(false) => {
                let error = ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "an identical call (`{}`) is on record, but not as this store recorded it (it came with the store file, or was recorded before results were vouched for): it is neither replayed nor run again; call with another thread id",
                        record.request_id
                    ),
                )
                .with_details(json!({ "idempotency_key": record.key, "recorded_by": record.request_id }));
                self.fail(error, RunState::Failed).await
            }
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    /// Answer a deterministic tool's call with the latest succeeded run of the same identity,
    /// if this store vouched for its result; `None` (run it) otherwise: a deterministic call
    /// without side effects costs a run, where a result planted in a store handed over would
    /// be served as the tool's.
    pub(super) async fn replay_run(&mut self, source: RunRecord) -> Option<ToolResponse> {
        let recorded = source.response.unwrap_or(Value::Null);
        match self.vouched(&source.request_id, &recorded).await {
            Ok(true) => Some(self.replay(&source.request_id, &recorded).await),
            Ok(false) => {
                tracing::warn!(source = %source.request_id, tool = %self.request.tool, "a recorded result this store did not vouch for is not replayed; the call runs");
                None
            }
            Err(error) => Some(self.internal(&error.to_string()).await),
        }
    }

    /// Whether the chain holds how `source` ended as this store recorded it — vouched for
    /// under its key ([`jig_audit::BindingKey::vouch`]), intact, and saying what the side
    /// tables' `recorded` response says. The side tables are not trusted alone, and neither is
    /// a chain that came with the file: its author can write any chain.
    pub(super) async fn vouched(
        &self,
        source: &str,
        recorded: &Value,
    ) -> Result<bool, jig_audit::AuditError> {
        let key = self.engine.store.binding_key();
        let succeeded = recorded.get("ok").and_then(Value::as_bool) == Some(true);
        let packets = self.engine.store.packets_of(source).await?;
        Ok(packets.iter().any(|p| {
            let says = match PacketKind::parse(&p.kind) {
                Some(PacketKind::CallResult | PacketKind::CallSubmitted) => {
                    succeeded
                        && p.data.get("ok") == Some(&Value::Bool(true))
                        && p.data.get("data") == recorded.get("data")
                }
                Some(PacketKind::CallFailed) => !succeeded,
                _ => false,
            };
            says && p.data.get("replayed_from").is_none()
                && p.expected_hash() == p.hash
                && key.vouches(p)
        }))
    }

    /// Answer with `recorded`, the response of `source` (vouched for: [`Call::vouched`]).
    pub(super) async fn replay(&mut self, source: &str, recorded: &Value) -> ToolResponse {
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
        match self.commit_answer(&response).await {
            Ok(_) => response,
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    /// Seed 003's fallback idempotency key: a request id used before gets its recorded answer.
    /// It is noticed when the run's row is refused by its unique key (no lookup on the common
    /// path); everything this call tried to record was rolled back with it.
    pub(super) async fn answer_repeat(&mut self) -> Option<ToolResponse> {
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
    pub(super) async fn repeat_of(&mut self, previous: RunRecord) -> ToolResponse {
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
        match self.vouched(&previous.request_id, recorded).await {
            Ok(true) => {}
            Ok(false) => {
                let error = ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "request id `{}` is on record, but not as this store recorded it (it came with the store file, or was recorded before results were vouched for); send a new request id",
                        self.request.request_id
                    ),
                )
                .with_details(json!({ "request_id": self.request.request_id }));
                return self.fail(error, RunState::Failed).await;
            }
            Err(error) => return self.internal(&error.to_string()).await,
        }
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

    /// A recorded response, answered again for this request.
    /// A recorded response as an answer, its result read back from its blob when it has one.
    pub(super) async fn recorded(
        &self,
        recorded: &Value,
    ) -> Result<ToolResponse, jig_audit::AuditError> {
        let ok = recorded.get("ok").and_then(Value::as_bool).unwrap_or(false);
        let data =
            self.engine.store.inflate(recorded.get("data").cloned().unwrap_or(Value::Null)).await?;
        let errors = recorded
            .get("errors")
            .and_then(|e| serde_json::from_value(e.clone()).ok())
            .unwrap_or_default();
        let mut response = self.response(ok, data, errors, true);
        response.job = recorded.get("job").and_then(|j| serde_json::from_value(j.clone()).ok());
        Ok(response)
    }
}
