//! The pipeline's stages before execution, in order: admit the request (the tool exists, the
//! arguments fit its size limit and its schema), give the call its identity (the code it
//! runs, its run id), govern it (the policy's decision, approvals), replay a recorded run
//! where the seed says so, and claim a side effect's idempotency key. Each either lets the
//! call go on or ends it with its answer ([`Early`]), already recorded.

use std::sync::Arc;

use jig_audit::{KeyState, Op, RunState, RunUpdate};
use jig_exec::ToolError;
use jig_model::canonical::{params_hash, run_id};
use jig_model::envelope::ToolResponse;
use jig_model::runbook::kernel::GovernanceAction;
use jig_model::{ErrorCode, ToolDef};
use jig_policy::{Decision, Policy};
use serde_json::{Value, json};

use super::Call;
use super::Claim;
use crate::identity::{code_hash, code_identity};

/// The call ends here, with this answer.
pub(super) struct Early(pub(super) ToolResponse);

impl From<Box<ToolResponse>> for Early {
    fn from(response: Box<ToolResponse>) -> Self {
        Self(*response)
    }
}

impl Call<'_> {
    /// The tool asked for, once the request is recorded and its arguments fit it.
    pub(super) async fn admit(&mut self) -> Result<Arc<ToolDef>, Early> {
        let tool = self.registry.get(&self.request.tool);
        // A call that changes nothing may be synced with the next group (docs/policy.md,
        // "Durability"); anything else, and an unknown tool, is synced before it is answered.
        let deferred = self.registry.policy.config().audit.durability
            == jig_model::policy::Durability::Effects
            && tool.as_ref().is_some_and(|tool| !tool.has_side_effects());
        if deferred {
            self.sync = jig_audit::Flush::Soon;
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
            return Err(Early(self.fail(error, RunState::Failed).await));
        };
        if self.bytes_in > tool.limits.max_input_bytes {
            let error = ToolError::new(
                ErrorCode::Limit,
                format!("the arguments are {} bytes; `{}` accepts at most {}", self.bytes_in, tool.id, tool.limits.max_input_bytes),
            )
            .with_details(json!({ "limit": "maxInputBytes", "size": self.bytes_in, "max": tool.limits.max_input_bytes }));
            return Err(Early(self.fail(error, RunState::Failed).await));
        }
        let problems = self.engine.validators.check(&tool, true, &self.request.args);
        if !problems.is_empty() {
            let error = ToolError::new(
                ErrorCode::ValidationFail,
                format!("the arguments do not match `{}`'s input schema", tool.id),
            )
            .with_details(json!({ "problems": problems }));
            return Err(Early(self.fail(error, RunState::Failed).await));
        }
        Ok(tool)
    }

    /// The call's identity — the code it runs and its run id — recorded as a created run; the
    /// policy it is decided under.
    pub(super) async fn identify(&mut self, tool: &Arc<ToolDef>) -> Result<Arc<Policy>, Early> {
        self.code = code_identity(tool, self.engine.workspace.root());
        self.definition = code_hash(tool, &self.code);
        let policy = Arc::clone(&self.registry.policy);
        // Seed 001: a plan's identity is its canonical params — its inputs by content, its
        // definition (image digest, script) by hash — not the names it was given.
        let identity = if tool.execution.is_plan() {
            let pinned = json!({ "definition": tool.hash });
            match jig_exec::rundir::canonical_params(
                tool,
                &self.request.args,
                &self.engine.workspace,
                &pinned,
            ) {
                Ok(params) => params_hash(&params),
                Err(error) => return Err(Early(self.fail(error, RunState::Failed).await)),
            }
        } else {
            self.args_hash.clone()
        };
        let run_id = run_id(&tool.id, &tool.version, policy.hash(), &identity);
        self.run_id = Some(run_id.clone());
        self.ops.push(Op::CreateRun(Box::new(self.run_record(tool, &run_id, policy.hash()))));
        self.publish_state(RunState::Created);
        Ok(policy)
    }

    /// The policy's decision, recorded: denied and waiting calls end here; one that needs an
    /// approval goes on with the approval it has (a token, or one given to exactly this
    /// request before).
    pub(super) async fn govern(&mut self, tool: &ToolDef, policy: &Policy) -> Result<(), Early> {
        let decided =
            self.engine.decide(policy, tool, &self.request.args, &self.session, self.bytes_in);
        let mut decision = match decided.await {
            Ok(decision) => decision,
            Err(error) => return Err(Early(self.internal(&error.to_string()).await)),
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
            GovernanceAction::Deny => return Err(Early(self.deny(tool, &decision).await)),
            GovernanceAction::RequireApproval => {
                let approval_id = match self.context.approval_token.clone() {
                    Some(token) => Some(self.consume_token(tool, &token).await?),
                    None => self.approved_before(tool, &decision).await?,
                };
                let Some(approval_id) = approval_id else {
                    return Err(self.without_approval(tool, &decision).await);
                };
                decision = Decision::allow(
                    "approval",
                    format!("approved ({approval_id}); {}", decision.reason),
                );
            }
            GovernanceAction::Allow => {}
        }
        self.record_decision(&decision, "");
        Ok(())
    }

    /// A call that needs an approval it does not have: asked for, unless it repeats a call of
    /// the same caller that already ran — replaying that has no side effect. Only the same
    /// principal's repeat: another caller still needs the decision (and must not be handed
    /// someone else's result).
    async fn without_approval(&mut self, tool: &ToolDef, decision: &Decision) -> Early {
        if tool.has_side_effects() {
            let key = self.engine.store.key(&self.key(tool)).await;
            // The caller's own, and recorded by this store (a key that came with the file is
            // no proof the call ran).
            let same_caller = match &key {
                Ok(Some(record)) => {
                    let response = record.response.as_ref().unwrap_or(&Value::Null);
                    self.asked_by_caller(&record.request_id).await
                        && self.vouched(&record.request_id, response).await.unwrap_or(false)
                }
                _ => false,
            };
            match key {
                Ok(Some(record))
                    if record.state == KeyState::Done
                        && record.response.is_some()
                        && same_caller =>
                {
                    self.record_decision(decision, "satisfied by replaying the recorded result");
                    return Early(self.replay_key(record).await);
                }
                Ok(_) => {}
                Err(error) => return Early(self.internal(&error.to_string()).await),
            }
        }
        Early(self.ask_approval(tool, decision).await)
    }

    /// Seed 001's replay rules: a batch job is never submitted twice for one run id (a queued,
    /// running or succeeded run answers); anything else deterministic replays a succeeded run
    /// only.
    pub(super) async fn replay_recorded(&mut self, tool: &ToolDef) -> Result<(), Early> {
        let source = if tool.execution.is_batch() {
            self.engine.store.batch_replay_source(&self.replay_identity(tool)).await
        } else if tool.deterministic {
            self.engine.store.replay_source(&self.replay_identity(tool)).await
        } else {
            return Ok(());
        };
        match source {
            Ok(Some(source)) => match self.replay_run(source).await {
                Some(answer) => Err(Early(answer)),
                None => Ok(()),
            },
            Ok(None) => Ok(()),
            Err(error) => Err(Early(self.internal(&error.to_string()).await)),
        }
    }

    /// A side effect's idempotency key, claimed (or the recorded answer of the call that
    /// claimed it); any other call run by another process is recorded as running first.
    pub(super) async fn claim_or_mark_running(
        &mut self,
        tool: &ToolDef,
    ) -> Result<Option<String>, Early> {
        if tool.has_side_effects() {
            return match self.claim(tool).await? {
                Claim::Mine(key) => Ok(Some(key)),
                Claim::Replay(record) => Err(Early(self.replay_key(record).await)),
            };
        }
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
                return Err(Early(self.internal(&error.to_string()).await));
            }
        }
        Ok(None)
    }
}
