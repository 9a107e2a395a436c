//! What a call writes: its packets, run and key updates, usage, events, and the response —
//! queued as ops and committed together at the points the pipeline chooses.

use super::*;

impl Call<'_> {
    /// The response as the store keeps it. A successful result was redacted when the tool
    /// returned it; errors and their details are redacted here. A large result becomes a
    /// content-addressed blob (queued as an op) and the stored response names it, so the data
    /// is neither copied for the record nor stored twice.
    pub(super) fn stored(
        &mut self,
        response: &mut ToolResponse,
    ) -> Result<Value, jig_audit::AuditError> {
        if !response.ok {
            response.data = redact_value(&response.data);
        }
        let blob = match self.prepared.as_ref().filter(|_| response.ok) {
            Some(prepared) => Some(jig_audit::blob::Blob::of_canonical(prepared.text())?),
            None => jig_audit::blob::Blob::of_large(&response.data)?,
        };
        let mut stored = match blob {
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

    /// The `tool.call.request` packet. Arguments over the limit are refused later; the audit
    /// keeps their size and digest, not the bytes (a flood of huge requests must not grow the
    /// store without bound).
    pub(super) fn record_request(&mut self, tool: Option<&ToolDef>) {
        let limit = tool.map_or(UNKNOWN_TOOL_MAX_INPUT, |t| t.limits.max_input_bytes);
        let args = if self.bytes_in > limit {
            json!({ "omitted": true, "bytes": self.bytes_in, "params_hash": self.args_hash })
        } else {
            // What was asked, with secrets redacted by name and by value: a token typed into a
            // command line stays out of the record, its exports and every screen. (The
            // reviewer saw it in clear while deciding; the approval is bound to it by a keyed
            // hash.)
            redact_value(&self.request.args)
        };
        let mut data =
            json!({ "tool": self.request.tool, "args": args, "timestamp": self.request.timestamp });
        if let Some(asserted_by) = &self.context.asserted_by {
            data["asserted_by"] = json!(asserted_by);
        }
        self.record(PacketKind::CallRequest, data);
    }

    /// Answer with `error` before anything ran.
    pub(super) async fn fail(&mut self, error: ToolError, state: RunState) -> ToolResponse {
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
        match self.commit_answer(&response).await {
            Ok(_) => response,
            Err(audit) => {
                self.response(false, Value::Null, vec![internal_error(&audit.to_string())], false)
            }
        }
    }

    pub(super) async fn internal(&mut self, message: &str) -> ToolResponse {
        // A repeated request id is answered from its record instead (see `answer_repeat`).
        if !self.repeated {
            tracing::error!(tool = %self.request.tool, message, "internal error during dispatch");
        }
        self.ops.clear();
        self.response(false, Value::Null, vec![internal_error(message)], false)
    }

    pub(super) fn record(&mut self, kind: PacketKind, data: Value) {
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

    pub(super) fn record_decision(&mut self, decision: &Decision, note: &str) {
        self.span.decided(decision.action.as_str(), &decision.rule, &decision.reason);
        let decided = jig_audit::CallDecided {
            action: decision.action,
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            policy_hash: self.registry.policy.hash().to_owned(),
            note: (!note.is_empty()).then(|| note.to_owned()),
            layer: decision.layer,
        };
        self.record(PacketKind::CallDecision, decided.to_data());
    }

    /// Commit the call's outcome, with what the caller asked to commit with it.
    pub(super) async fn commit_answer(
        &mut self,
        response: &ToolResponse,
    ) -> Result<Vec<Outcome>, AuditError> {
        if let Some(hook) = self.context.commit_with.clone() {
            let (before, after) = (hook.0)(response);
            let (before, after) =
                (crate::walk_records::ops_of(before)?, crate::walk_records::ops_of(after)?);
            let own = std::mem::take(&mut self.ops);
            self.ops = before.into_iter().chain(own).chain(after).collect();
        }
        self.commit().await
    }

    pub(super) async fn commit(&mut self) -> Result<Vec<Outcome>, AuditError> {
        let ops = std::mem::take(&mut self.ops);
        let result = self.engine.store.apply_with(ops, self.sync).await;
        if result.as_ref().is_err_and(AuditError::is_unique_violation) {
            self.repeated = true;
        }
        result
    }

    pub(super) fn run_record(&self, tool: &ToolDef, run_id: &str, policy_hash: &str) -> RunRecord {
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
            person: Some(canonical_principal(&self.context.principal)),
            definition: Some(self.definition.clone()),
            resumed_as: None,
            resumes: None,
        }
    }

    /// The call this one resumed (it waited for approval) ends as this one did: what happened
    /// to it is this run's state, response and time (DESIGN.md §7).
    pub(super) fn end_waiting(&mut self, state: RunState, stored: &Value, duration_ms: u64) {
        let Some(waiting) = self.resumes.clone() else { return };
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: waiting,
            state: Some(state),
            duration_ms: Some(i64::try_from(duration_ms).unwrap_or(i64::MAX)),
            response: Some(stored.clone()),
            ..RunUpdate::default()
        }));
    }

    pub(super) fn response(
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
            job: None,
        }
    }

    /// Give the claimed idempotency key (if any) the stored response, and count the call in
    /// its session's usage.
    pub(super) fn settle_and_count(&mut self, claimed: Option<String>, stored: Value) {
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
    }

    pub(super) fn publish_state(&self, state: RunState) {
        self.engine.publish_run_state(
            &self.context.principal,
            &self.request.request_id,
            &self.request.tool,
            self.run_id.as_deref(),
            state,
        );
    }
}
