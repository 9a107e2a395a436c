//! The host of real runs: tools through the engine (validation, policy, approvals, replay and
//! the audit, exactly as `jig call`), the journal in the audit store, trace events as packets
//! in the same hash chain.

use std::sync::Arc;

use async_trait::async_trait;
use jig_audit::{ApprovalState, NewPacket, Outcome, PacketKind};
use jig_engine::WalkRecord;
use jig_engine::{CallContext, CommitHook, Engine, ToolRequest, ToolResponse};
use jig_model::ErrorCode;
use serde_json::{Value, json};

use crate::host::{Host, HostError, ToolAnswer, ToolCall, ToolInfo};
use crate::journal::Entry;
use crate::trace::{TraceEvent, TraceKind};

/// A run's host over the engine.
pub(crate) struct EngineHost {
    pub engine: Arc<Engine>,
    pub run_id: String,
    pub runbook: String,
    /// Who started the run: tool steps run in their name unless a person's go-ahead names
    /// someone else.
    pub started_by: String,
    /// What the runbook's tool references resolved to.
    pub tools: crate::registry::Resolved,
    /// Trace events held back to be committed with the next journal entry: one transaction
    /// instead of one per event.
    pub pending: std::sync::Mutex<Vec<WalkRecord>>,
    /// Step results already committed with their calls, by journal key.
    pub hooked: std::sync::Mutex<std::collections::HashMap<String, Entry>>,
    /// When the store was last asked for pauses, and how many it had: a pause asked for from
    /// another request or process reaches a walk under way within [`PAUSE_POLL`].
    pub pause_poll: std::sync::Mutex<(std::time::Instant, usize)>,
    /// This walk's span, when traces are exported: the calls of its tool steps are its
    /// children. It ends with the walk.
    pub span: jig_engine::telemetry::Span,
    /// The spans of the steps this walk runs, inside [`Self::span`].
    pub steps: super::step_spans::StepSpans,
}

/// How often a walk under way asks the store whether someone paused the run.
pub(crate) const PAUSE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

impl EngineHost {
    fn error(e: impl std::fmt::Display) -> HostError {
        HostError { code: ErrorCode::Internal.as_str().to_owned(), message: e.to_string() }
    }

    fn packet(
        &self,
        kind: PacketKind,
        step: Option<&str>,
        principal: &str,
        data: Value,
    ) -> NewPacket {
        NewPacket {
            kind,
            session_id: Some(self.run_id.clone()),
            thread_id: step.map(str::to_owned),
            principal: Some(principal.to_owned()),
            request_id: None,
            run_id: Some(self.run_id.clone()),
            tool: Some(format!("runbook:{}", self.runbook)),
            args_hash: None,
            data,
        }
    }

    /// Record under `key` unless something is there; the packet goes into the chain with it
    /// (after the trace events held back, in the same transaction).
    pub(crate) async fn journal(
        &self,
        key: &str,
        entry: Value,
        packet: Option<NewPacket>,
    ) -> Result<(bool, Value), HostError> {
        let mut ops = self.take_pending();
        ops.push(WalkRecord::Journal {
            run_id: self.run_id.clone(),
            key: key.to_owned(),
            entry,
            packet,
        });
        match self.engine.record_walk(ops).await.map_err(Self::error)?.pop() {
            Some(Outcome::Journaled { inserted, entry }) => Ok((inserted, entry)),
            other => Err(Self::error(format!("unexpected answer from the store: {other:?}"))),
        }
    }

    fn take_pending(&self) -> Vec<WalkRecord> {
        self.pending.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default()
    }

    async fn write_pending(&self) -> Result<(), HostError> {
        let ops = self.take_pending();
        if !ops.is_empty() {
            self.engine.record_walk(ops).await.map_err(Self::error)?;
        }
        Ok(())
    }
}

/// The packet kind a trace event is recorded as.
fn packet_kind(kind: TraceKind) -> PacketKind {
    match kind {
        TraceKind::RunStart | TraceKind::RunComplete | TraceKind::Paused => PacketKind::RunbookRun,
        TraceKind::StepStart
        | TraceKind::StepComplete
        | TraceKind::ContractEvaluated
        | TraceKind::GovernanceDecision
        | TraceKind::VisibilityApplied
        | TraceKind::ScopeExport => PacketKind::RunbookStep,
        TraceKind::BranchEnter
        | TraceKind::BranchExit
        | TraceKind::ParallelFork
        | TraceKind::ParallelMerge
        | TraceKind::ForEachStart
        | TraceKind::ForEachItem
        | TraceKind::RepeatStart
        | TraceKind::RepeatIteration => PacketKind::RunbookFlow,
        TraceKind::Evidence | TraceKind::Approval => PacketKind::RunbookPerson,
        TraceKind::OutcomeResolved => PacketKind::RunbookOutcome,
    }
}

impl EngineHost {
    /// The answer of a step already waiting on a person's decision on exactly this request:
    /// still pending (walking the run again asks nobody twice), or denied. `None`: call.
    async fn asked_before(&self, call: &ToolCall, principal: &str) -> Option<ToolAnswer> {
        if call.approval_token.is_some() {
            return None;
        }
        let args = Value::Object(call.inputs.clone());
        // Only a call the policy (or the runbook's governance) sends to a person can have been
        // asked about; for the rest the store is not asked (a round trip per step). A tool the
        // registry no longer knows is looked up as before.
        let asks = call.approval_required_by.is_some()
            || self.engine.snapshot().get(&call.tool).is_none_or(|tool| {
                self.engine.policy().decide(tool, &args).action
                    == jig_model::runbook::kernel::GovernanceAction::RequireApproval
            });
        if !asks {
            return None;
        }
        let hash = self.engine.approval_hash(&call.tool, &args, &self.run_id, principal)?;
        let approval = self.engine.walk_reads().approval_for_request(&hash).await.ok()??;
        match approval.state {
            ApprovalState::Pending => {
                Some(ToolAnswer::PendingApproval { approval_id: approval.id, rule: approval.rule })
            }
            ApprovalState::Denied => Some(ToolAnswer::Denied {
                rule: approval.rule,
                reason: format!(
                    "{} denied the approval",
                    approval.decided_by.as_deref().unwrap_or("a reviewer")
                ),
            }),
            _ => None,
        }
    }
}

#[async_trait]
impl Host for EngineHost {
    fn tool(&self, reference: &str, action: Option<&str>) -> Result<ToolInfo, String> {
        let snapshot = self.engine.snapshot();
        crate::registry::resolve(&self.tools, reference, action, |id| {
            snapshot.get(id).map(Arc::as_ref)
        })
    }

    async fn call_tool(&self, call: &ToolCall) -> ToolAnswer {
        let principal = call.by.clone().unwrap_or_else(|| self.started_by.clone());
        if let Some(answer) = self.asked_before(call, &principal).await {
            return answer;
        }
        // The engine's idempotency key is thread + tool + arguments: a walk that repeats this
        // step after a crash gets the recorded result instead of a second execution.
        let request = ToolRequest {
            kind: Default::default(),
            tool: call.tool.clone(),
            args: Value::Object(call.inputs.clone()),
            request_id: uuid::Uuid::new_v4().to_string(),
            session_id: Some(self.run_id.clone()),
            timestamp: None,
        };
        // The step's held-back trace (its start) goes in before the call's own records, its
        // result after them, in the call's transaction: one commit per step.
        let before = self.take_pending();
        let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hook = {
            let (before, fired) = (before.clone(), Arc::clone(&fired));
            let (run_id, key) = (self.run_id.clone(), crate::journal::keys::done(&call.key));
            CommitHook(Arc::new(move |response: &ToolResponse| {
                fired.store(true, std::sync::atomic::Ordering::SeqCst);
                let after = answer_of(response)
                    .entry()
                    .and_then(|entry| serde_json::to_value(entry).ok())
                    .map(|entry| WalkRecord::Journal {
                        run_id: run_id.clone(),
                        key: key.clone(),
                        entry,
                        packet: None,
                    })
                    .into_iter()
                    .collect();
                (before.clone(), after)
            }))
        };
        let context = CallContext {
            session_id: self.run_id.clone(),
            thread_id: Some(format!("runbook:{}:{}", self.run_id, call.key)),
            principal,
            approval_token: call.approval_token.clone(),
            required_approval: call.approval_required_by.clone(),
            required_approvers: call.approvers_required,
            commit_with: Some(hook),
            timeout: call.timeout_ms.map(std::time::Duration::from_millis),
            // A step a person approved (anywhere) runs with that approval when walked again.
            retry_approved: true,
            trace: self.steps.origin(&call.key).unwrap_or_else(|| self.span.origin()),
            ..CallContext::default()
        };
        let response = self.engine.dispatch(request, context).await;
        let answer = answer_of(&response);
        let committed = fired.load(std::sync::atomic::Ordering::SeqCst)
            && response.errors.first().is_none_or(|e| e.code != ErrorCode::Internal);
        match (committed, answer.entry()) {
            (true, Some(entry)) => {
                if let Ok(mut hooked) = self.hooked.lock() {
                    hooked.insert(crate::journal::keys::done(&call.key), entry);
                }
            }
            (true, None) => {}
            // The call's outcome was not committed with the step's records: write them later.
            (false, _) => {
                if let Ok(mut pending) = self.pending.lock() {
                    let later = std::mem::take(&mut *pending);
                    *pending = before.into_iter().chain(later).collect();
                }
            }
        }
        answer
    }

    async fn record(&self, key: &str, entry: Entry) -> Result<Entry, HostError> {
        if let Some(kept) = self.hooked.lock().ok().and_then(|mut hooked| hooked.remove(key)) {
            return Ok(kept);
        }
        let value = serde_json::to_value(&entry).map_err(Self::error)?;
        let (_, kept) = self.journal(key, value, None).await?;
        serde_json::from_value(kept).map_err(Self::error)
    }

    async fn trace(&self, event: TraceEvent) -> Result<(), HostError> {
        // Where this walk left the run, and its steps, on their spans.
        match event.kind {
            TraceKind::Paused => {
                self.span.set("jig.runbook.state", "waiting");
                self.steps.waiting();
            }
            TraceKind::RunComplete => self.span.set("jig.runbook.state", "finished"),
            _ => self.steps.on(&self.span, &event),
        }
        let data = json!({ "event": event.kind.as_str(), "step": event.step, "actor": event.actor, "data": event.data });
        let packet =
            self.packet(packet_kind(event.kind), event.step.as_deref(), &event.actor.id, data);
        let op = WalkRecord::Journal {
            run_id: self.run_id.clone(),
            key: format!("trace:{}", event.key),
            entry: json!({ "event": event.kind.as_str() }),
            packet: Some(packet),
        };
        if let Ok(mut pending) = self.pending.lock() {
            pending.push(op);
        }
        Ok(())
    }

    async fn pauses(&self) -> usize {
        let (due, known) = match self.pause_poll.lock() {
            Ok(mut poll) if poll.0.elapsed() >= PAUSE_POLL => {
                poll.0 = std::time::Instant::now();
                (true, poll.1)
            }
            Ok(poll) => (false, poll.1),
            Err(_) => (false, 0),
        };
        if !due {
            return known;
        }
        let Ok(count) =
            self.engine.walk_reads().journal_count(&self.run_id, crate::journal::keys::PAUSE).await
        else {
            return known;
        };
        if let Ok(mut poll) = self.pause_poll.lock() {
            poll.1 = poll.1.max(count);
        }
        count.max(known)
    }

    async fn flush(&self) -> Result<(), HostError> {
        self.write_pending().await
    }

    fn extension_runner(&self, name: &str) -> Option<String> {
        self.engine.snapshot().extension_runner(name).map(str::to_owned)
    }

    fn runbook_name(&self, reference: &str) -> Option<String> {
        self.engine.snapshot().runbook(&self.runbook)?.next_runbooks.get(reference).cloned()
    }

    fn runbook(&self, reference: &str) -> Option<jig_model::runbook::Runbook> {
        self.engine.snapshot().runbook(reference).map(|entry| entry.runbook.clone())
    }
}

/// A call's response as a step's answer.
fn answer_of(response: &ToolResponse) -> ToolAnswer {
    if response.ok {
        let outputs = match &response.data {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            other => serde_json::Map::from_iter([("result".to_owned(), other.clone())]),
        };
        return ToolAnswer::Succeeded { outputs };
    }
    let Some(error) = response.errors.first() else {
        return ToolAnswer::Error {
            code: ErrorCode::Internal.as_str().to_owned(),
            message: "a failed call without an error".to_owned(),
        };
    };
    let detail = |name: &str| {
        error.details.as_ref().and_then(|d| d.get(name)).and_then(Value::as_str).map(str::to_owned)
    };
    match (error.code, error.approval_id()) {
        (ErrorCode::Policy, Some(approval_id)) => {
            ToolAnswer::PendingApproval { approval_id, rule: detail("rule").unwrap_or_default() }
        }
        (ErrorCode::Policy, None) => ToolAnswer::Denied {
            rule: detail("rule").unwrap_or_else(|| "policy".to_owned()),
            reason: error.message.clone(),
        },
        (
            ErrorCode::Shell
            | ErrorCode::Http
            | ErrorCode::Git
            | ErrorCode::Timeout
            | ErrorCode::FileIo,
            _,
        ) => ToolAnswer::Failed {
            code: error.code.as_str().to_owned(),
            message: error.message.clone(),
            outputs: serde_json::Map::new(),
        },
        (code, _) => {
            ToolAnswer::Error { code: code.as_str().to_owned(), message: error.message.clone() }
        }
    }
}
