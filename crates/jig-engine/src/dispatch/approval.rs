//! Approvals in the pipeline: asking for one (what the reviewer sees), using a token (bound to
//! the exact request and the principal who asked), and refusing.

use super::*;
use jig_model::ApprovalId;

impl Call<'_> {
    /// Use an approval token; on refusal, the call is denied and answered here.
    pub(super) async fn consume_token(
        &mut self,
        tool: &ToolDef,
        token: &str,
    ) -> Result<ApprovalId, Box<ToolResponse>> {
        // Bound to who asked too: another principal's token does not fit this request.
        let bound_to = self.request_hash(tool, &self.code);
        self.ops.push(Op::ConsumeApproval {
            token_hash: sha256_hex(token.as_bytes()),
            request_hash: bound_to,
            by_request: self.request.request_id.clone(),
        });
        let outcomes = match self.commit().await {
            Ok(outcomes) => outcomes,
            Err(error) => return Err(Box::new(self.internal(&error.to_string()).await)),
        };
        match outcomes.last() {
            Some(Outcome::Consumed { approval, waiting }) => {
                self.resuming(waiting.clone());
                Ok(approval.clone())
            }
            Some(Outcome::TokenRefused(refusal)) => {
                let decision = Decision::deny("approval.token", refusal.describe());
                Err(Box::new(self.deny(tool, &decision).await))
            }
            _ => Err(Box::new(self.internal("unexpected answer to an approval token").await)),
        }
    }

    /// This call runs the call `waiting` waited for approval: its run records that, and the
    /// waiting run takes this one's end state ([`Call::finish`]).
    fn resuming(&mut self, waiting: Option<String>) {
        let Some(waiting) = waiting.filter(|w| *w != self.request.request_id) else { return };
        self.ops.push(Op::SetRun(RunUpdate {
            request_id: self.request.request_id.clone(),
            resumes: Some(waiting.clone()),
            ..RunUpdate::default()
        }));
        self.resumes = Some(waiting);
    }

    /// Whether the run of `request_id` was asked for by this call's principal.
    pub(super) async fn asked_by_caller(&self, request_id: &str) -> bool {
        let caller = canonical_principal(&self.context.principal);
        matches!(
            self.engine.store.run(request_id).await,
            Ok(Some(run)) if run.principal.as_deref().map(canonical_principal) == Some(caller)
        )
    }

    /// The hash an approval of this call is bound to: the tool and its `code`, the arguments,
    /// the session and who asks.
    fn request_hash(&self, tool: &ToolDef, code: &Value) -> String {
        request_hash(
            self.engine.store.binding_key(),
            &tool.id,
            code,
            &self.request.args,
            &self.session,
            &self.context.principal,
        )
    }

    /// What a reviewer is shown: the arguments exactly as they will run, the tool's definition
    /// (where, and its content hash) and the files of its code with theirs, and, for a
    /// command, the argv exactly as it will be tokenised. This is the clear request, kept only
    /// while the approval is pending and shown only to who may decide it; the record keeps it
    /// with secrets redacted (by name and by value).
    fn approval_request(&self, tool: &ToolDef, code: &Value) -> Value {
        let mut request = json!({
            "tool": tool.id,
            "args": self.request.args,
            "session_id": self.session,
            "request_id": self.request.request_id,
            "definition": {
                "file": tool.source.file,
                "line": tool.source.line,
                "sha256": code["definition"],
            },
            "code_files": code["files"],
        });
        if tool.id == "shell_exec"
            && let Some(cmd) = self.request.args.get("cmd").and_then(Value::as_str)
            && let Ok(argv) = self.registry.policy.check_command(cmd)
        {
            request["argv"] = json!(argv);
        } else if let Some(argv) = self
            .engine
            .executors
            .for_tool(tool)
            .and_then(|executor| executor.command_line(tool, &self.request.args))
        {
            request["argv"] = json!(argv);
        }
        request
    }

    /// Record a pending approval and answer that the call waits for it.
    pub(super) async fn ask_approval(
        &mut self,
        tool: &ToolDef,
        decision: &Decision,
    ) -> ToolResponse {
        self.pending = true;
        let id = ApprovalId::new(new_id());
        self.record_decision(decision, "");
        // The entry files were read once, for the hash and for what the reviewer sees.
        let code = self.code.clone();
        let clear = self.approval_request(tool, &code);
        // Nobody deciding within the policy's time ends it expired (`Engine::expire_approvals`).
        let ttl_us = i64::try_from(self.registry.policy.config().approvals.ttl_seconds)
            .unwrap_or(i64::MAX / 2_000_000)
            .saturating_mul(1_000_000);
        self.ops.push(Op::CreateApproval(Box::new(jig_audit::ApprovalRecord {
            id: id.clone(),
            request_hash: self.request_hash(tool, &code),
            tool: tool.id.clone(),
            session_id: Some(self.session.clone()),
            principal: Some(self.context.principal.clone()),
            request: redact_value(&clear),
            clear_request: Some(clear),
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            state: jig_audit::ApprovalState::Pending,
            expires_us: Some(jig_audit::time::now_us().saturating_add(ttl_us)),
            decided_by: None,
            required: self.context.required_approvers.max(1),
            approvers: Vec::new(),
            created_us: 0,
            decided_us: None,
            consumed_us: None,
            note: None,
            request_id: Some(self.request.request_id.clone()),
        })));
        self.wait_for(tool, decision, id).await
    }

    /// Answer that this call waits for approval `id` (asked for now, or earlier for exactly
    /// this request).
    async fn wait_for(
        &mut self,
        tool: &ToolDef,
        decision: &Decision,
        id: ApprovalId,
    ) -> ToolResponse {
        let waits = jig_audit::CallPendingApproval {
            approval_id: id.clone(),
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
        };
        self.record(PacketKind::CallPendingApproval, waits.to_data());
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
            details: Some(details(decision, Some(&id))),
        };
        let response = self.response(false, Value::Null, vec![error], false);
        match self.commit_answer(&response).await {
            Ok(_) => {
                // Announced once recorded: whoever hears it and reads the queue finds it there.
                self.engine.notify(&crate::notify::Notice::ApprovalRequested {
                    approval_id: id.clone(),
                    tool: tool.id.clone(),
                    asked_by: self.context.principal.clone(),
                    rule: decision.rule.clone(),
                });
                self.engine.events.publish(crate::events::Event::ApprovalAsked(
                    crate::events::ApprovalAsk {
                        approval_id: id,
                        tool: tool.id.clone(),
                        asked_by: self.context.principal.clone(),
                        rule: decision.rule.clone(),
                    },
                ));
                response
            }
            Err(error) => self.internal(&error.to_string()).await,
        }
    }

    /// For a caller that retries instead of carrying a token ([`CallContext::retry_approved`]):
    /// the approval a person gave to exactly this request, used now (`Some(id)`); or the answer
    /// when that request still waits (the same approval, not a second one) or was denied.
    /// `None`: nobody was asked yet.
    ///
    /// [`CallContext::retry_approved`]: crate::CallContext::retry_approved
    pub(super) async fn approved_before(
        &mut self,
        tool: &ToolDef,
        decision: &Decision,
    ) -> Result<Option<ApprovalId>, Box<ToolResponse>> {
        if !self.context.retry_approved {
            return Ok(None);
        }
        let hash = self.request_hash(tool, &self.code);
        let asked = match self.engine.store.approval_for_request(&hash).await {
            Ok(asked) => asked,
            Err(error) => return Err(Box::new(self.internal(&error.to_string()).await)),
        };
        let Some(asked) = asked else { return Ok(None) };
        match asked.state {
            jig_audit::ApprovalState::Pending => {
                self.pending = true;
                self.record_decision(decision, "");
                Err(Box::new(self.wait_for(tool, decision, asked.id).await))
            }
            jig_audit::ApprovalState::Denied => {
                let by = asked.decided_by.as_deref().unwrap_or("a reviewer");
                let why = asked.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default();
                let denial = Decision::deny(
                    "approval.denied",
                    format!("{by} denied this exact request (approval {}){why}", asked.id),
                );
                Err(Box::new(self.deny(tool, &denial).await))
            }
            // Used by the caller's own identical call while this held one was being resumed:
            // the call ran, as that request; this one ends without asking again.
            jig_audit::ApprovalState::Consumed
                if self.context.resumes_approval.as_deref() == Some(asked.id.as_str()) =>
            {
                Err(Box::new(self.used_elsewhere(asked.id.as_str()).await))
            }
            // Used already: this is a new request for the same thing, which asks again.
            jig_audit::ApprovalState::Consumed => Ok(None),
            // Ended undecided: a new request asks again.
            jig_audit::ApprovalState::Expired | jig_audit::ApprovalState::Withdrawn => Ok(None),
            jig_audit::ApprovalState::Approved => {
                self.ops.push(Op::ConsumeApprovedRequest {
                    request_hash: hash,
                    by_request: self.request.request_id.clone(),
                });
                let outcomes = match self.commit().await {
                    Ok(outcomes) => outcomes,
                    Err(error) => return Err(Box::new(self.internal(&error.to_string()).await)),
                };
                match outcomes.last() {
                    Some(Outcome::Consumed { approval, waiting }) => {
                        self.resuming(waiting.clone());
                        Ok(Some(approval.clone()))
                    }
                    // Another request for this call used it between the read and now (the held
                    // call resumed, or its caller called again): the call runs once, as that one.
                    Some(Outcome::TokenRefused(jig_audit::TokenRefusal::Unknown)) => {
                        Err(Box::new(self.used_elsewhere(asked.id.as_str()).await))
                    }
                    Some(Outcome::TokenRefused(refusal)) => {
                        let denial = Decision::deny("approval.token", refusal.describe());
                        Err(Box::new(self.deny(tool, &denial).await))
                    }
                    _ => Err(Box::new(
                        self.internal("unexpected answer to an approved request").await,
                    )),
                }
            }
        }
    }

    /// This request's approval was used by another request for the same call: it did not run
    /// (the call runs once), and ends cancelled, saying so.
    async fn used_elsewhere(&mut self, approval: &str) -> ToolResponse {
        let error = ToolError::new(
            ErrorCode::Conflict,
            format!(
                "approval {approval} was used by another request for this call, which runs it; \
                 this request did not run"
            ),
        )
        .with_details(json!({ "approval_id": approval }));
        self.fail(error, RunState::Cancelled).await
    }

    pub(super) async fn deny(&mut self, tool: &ToolDef, decision: &Decision) -> ToolResponse {
        self.denied = true;
        self.record_decision(decision, "");
        let code = if decision.rule.starts_with("budgets.") {
            ErrorCode::Limit
        } else {
            ErrorCode::Policy
        };
        let error =
            ToolError::new(code, format!("`{}` is not allowed: {}", tool.id, decision.reason))
                .with_details(details(decision, None));
        self.fail(error, RunState::Denied).await
    }
}

/// What a refused or waiting call's error says of its decision (`details`): the rule, why, the
/// layer it came from and, while it waits, the approval.
fn details(decision: &Decision, approval: Option<&ApprovalId>) -> Value {
    let mut details =
        json!({ "rule": decision.rule, "reason": decision.reason, "layer": decision.layer });
    if let Some(id) = approval {
        details["approval_id"] = json!(id);
    }
    details
}
