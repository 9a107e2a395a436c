//! What people do to a run: act on a waiting step (a go-ahead, a skip, evidence, a choice, a
//! decision on an approval, a retry, an abort), pause it, continue it with the next runbook —
//! each recorded first-writer-wins with its packet in the chain, then the run walks on.

use std::collections::HashMap;

use jig_audit::{ApprovalState, NewPacket, PacketKind, RunbookRunRecord};
use jig_engine::canonical_principal;
use serde_json::{Map, Value, json};

use super::{Action, RunView, Runbooks, ServiceError, find, saved_progress, saved_status};
use crate::RunbookError;
use crate::journal::{Entry, keys};
use crate::outcome::{Need, Progress, RunStatus};

/// The step a person acts on, and the run as it stood.
#[derive(Clone, Copy)]
struct Step<'a> {
    id: &'a str,
    key: &'a str,
    principal: &'a str,
    current: &'a RunView,
}

/// A decision on a step's approval, to record in the run under `journal_key`; the token
/// when it was granted.
struct Decided {
    journal_key: String,
    entry: Entry,
    token: Option<String>,
}

impl Runbooks {
    /// A person acts on a waiting step; then the run walks on.
    pub async fn act(
        &self,
        id: &str,
        key: &str,
        action: Action,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        match action {
            Action::Pause => return self.pause(id, principal).await,
            Action::Follow => return self.follow(id, Map::new(), principal).await,
            _ => {}
        }
        let record = self.record(id).await?;
        let current = self.shown(record.clone()).await?;
        let mut tokens = HashMap::new();
        let step = Step { id, key, principal, current: &current };
        let (journal_key, entry) = match &action {
            Action::Approve | Action::Deny => {
                match self.decide(&step, matches!(action, Action::Approve)).await? {
                    Some(Decided { journal_key, entry, token }) => {
                        if let Some(token) = token {
                            tokens.insert(key.to_owned(), token);
                        }
                        (journal_key, entry)
                    }
                    // One of several approvals: the step waits for the others, and the
                    // approval record says who has approved.
                    None => return self.show(id).await,
                }
            }
            action => self.entry_for(&step, action).await?,
        };
        // The record shows the evidence as kept: attachments by reference, not their bytes.
        let action = match (&entry, action) {
            (Entry::Evidence { values, .. }, Action::Evidence { .. }) => {
                Action::Evidence { values: values.clone() }
            }
            (_, action) => action,
        };
        let (inserted, kept) =
            self.record_person(&record, key, &journal_key, &entry, &action).await?;
        if !inserted {
            let who = who(kept);
            return Err(ServiceError::Conflict(format!(
                "step `{key}` was already acted on by {who}"
            )));
        }
        self.walk(id, tokens).await
    }

    /// What a person's go-ahead, skip, evidence, choice, retry or abort at `step` records.
    async fn entry_for(
        &self,
        step: &Step<'_>,
        action: &Action,
    ) -> Result<(String, Entry), ServiceError> {
        let Step { id, key, principal, current } = *step;
        let waiting = current.progress.waiting.iter().find(|w| w.key == key);
        let failed_here = current.progress.failure.as_ref().is_some_and(|f| f.key == key);
        let by = principal.to_owned();
        Ok(match (action, waiting.map(|w| &w.need)) {
            (Action::Run, Some(Need::Paused)) => {
                let resumed = self.engine.walk_reads().journal_count(id, keys::RESUME).await?;
                (keys::resume(resumed + 1), Entry::Go { skip: None, by })
            }
            (Action::Run, Some(Need::Go { reason, approved_by, required })) => {
                self.refuse_self_approval(reason_of(waiting), current, principal, reason)?;
                let me = canonical_principal(principal);
                if approved_by.iter().any(|p| canonical_principal(p) == me) {
                    return Err(ServiceError::Conflict(format!(
                        "{principal} has already said go to step `{key}`: {} of {required} go-aheads given, each from a different person",
                        approved_by.len()
                    )));
                }
                (keys::go_nth(key, approved_by.len() + 1), Entry::Go { skip: None, by })
            }
            (Action::Skip { reason }, Some(need @ (Need::Go { .. } | Need::Paused))) => {
                let slot = match need {
                    Need::Go { approved_by, .. } => approved_by.len() + 1,
                    _ => 1,
                };
                (keys::go_nth(key, slot), Entry::Go { skip: Some(reason.clone()), by })
            }
            (Action::Evidence { values }, Some(Need::Evidence { required })) => {
                if let Some(missing) = required.iter().find(|r| !values.contains_key(&r.name)) {
                    return Err(ServiceError::Conflict(format!(
                        "step `{key}` needs evidence `{}`",
                        missing.name
                    )));
                }
                let values = self.store_attachments(required, values).await?;
                (keys::evidence(key), Entry::Evidence { values, by })
            }
            (Action::Choose { value }, Some(Need::Choice { options, .. })) => {
                if !options.iter().any(|o| &o.value == value) {
                    let known: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                    return Err(ServiceError::Conflict(format!(
                        "`{value}` is not an option of step `{key}` ({})",
                        known.join(", ")
                    )));
                }
                (keys::choice(key), Entry::Choice { value: value.clone(), by })
            }
            (Action::Retry, Some(Need::Failed { .. })) | (Action::Retry, None)
                if failed_here || waiting.is_some() =>
            {
                (keys::retry(key), Entry::Retry { by })
            }
            (Action::Abort, Some(Need::Failed { .. })) => (keys::abort(key), Entry::Abort { by }),
            (action, need) => return Err(not_waiting_for(id, key, action, need)),
        })
    }

    /// Approve (`approve`) or deny the call `step` waits to make, as its person; `None` when
    /// the approval was one of several (nothing to record in the run yet).
    async fn decide(
        &self,
        step: &Step<'_>,
        approve: bool,
    ) -> Result<Option<Decided>, ServiceError> {
        let Step { id, key, principal, current } = *step;
        let waiting = current.progress.waiting.iter().find(|w| w.key == key);
        let need = waiting.map(|w| &w.need);
        let Some(Need::Approval { approval_id, .. }) = need else {
            let action = if approve { Action::Approve } else { Action::Deny };
            return Err(not_waiting_for(id, key, &action, need));
        };
        let asserted_by = self.asserted_by.as_deref();
        let token = if approve {
            match self.engine.approve(approval_id.as_str(), principal, asserted_by).await? {
                jig_engine::Approval::Granted(token) => Some(token),
                jig_engine::Approval::Seconded { .. } => return Ok(None),
            }
        } else {
            self.engine.deny(approval_id.as_str(), principal, None, asserted_by).await?;
            None
        };
        let entry = Entry::Decision {
            approval_id: approval_id.clone(),
            approved: approve,
            by: principal.to_owned(),
        };
        Ok(Some(Decided { journal_key: keys::decision(key, approval_id.as_str()), entry, token }))
    }

    /// A person asks a run to hold before its next step that would do something: at once when
    /// it waits for people (the hold replaces what it waited for), and within
    /// a quarter of a second when a walk is under way here or in another process. A go-ahead at
    /// the step where it holds resumes it; skipping that step holds it at the next.
    pub async fn pause(&self, id: &str, principal: &str) -> Result<RunView, ServiceError> {
        let record = self.record(id).await?;
        let progress = saved_progress(&record);
        if let Some(progress) = &progress {
            if progress.waiting.iter().any(|w| matches!(w.need, Need::Paused)) {
                return Err(ServiceError::Conflict(format!("run `{id}` is paused already")));
            }
            if progress.waiting.is_empty() && progress.status != RunStatus::Paused {
                return Err(ServiceError::Conflict(format!(
                    "run `{id}` has ended ({}): there is nothing to pause",
                    saved_status(progress)
                )));
            }
        }
        let asked = self.engine.walk_reads().journal_count(id, keys::PAUSE).await?;
        let entry = Entry::Pause { by: principal.to_owned() };
        let key = keys::pause(asked + 1);
        let (inserted, kept) =
            self.record_person(&record, "", &key, &entry, &Action::Pause).await?;
        if !inserted {
            let who = who(kept);
            return Err(ServiceError::Conflict(format!("run `{id}` was just paused by {who}")));
        }
        match progress {
            // Waiting for people, no walk is under way: this one holds it at once.
            Some(progress) if !progress.waiting.is_empty() => self.walk(id, HashMap::new()).await,
            // A walk under way holds it and saves where; until then the run reads as before.
            Some(progress) => Ok(self.view(record, progress).await),
            None => Ok(self.view(record, Progress::not_walked()).await),
        }
    }

    /// Continue an ended run with the runbook its outcome names (a v0/v1 `next_runbook`): a new
    /// run of it, started in `principal`'s name, step by step when this one was, with the
    /// inputs the outcome rendered and `inputs` over them. Once per run: whoever continues it
    /// later is given the run that continues it.
    pub async fn follow(
        &self,
        id: &str,
        inputs: Map<String, Value>,
        principal: &str,
    ) -> Result<RunView, ServiceError> {
        let record = self.record(id).await?;
        let journal = self.engine.walk_reads().journal(id).await?;
        let entry = |key: &str| {
            journal
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| serde_json::from_value::<Entry>(v.clone()).ok())
        };
        if let Some(Entry::Next { run_id, .. }) = entry(keys::NEXT) {
            return self.show(&run_id).await;
        }
        let progress = saved_progress(&record);
        let next = progress
            .as_ref()
            .and_then(|p| p.outcome.as_ref())
            .and_then(|o| o.meta.get("next_runbook"))
            .cloned()
            .ok_or_else(|| {
                ServiceError::Conflict(format!(
                    "run `{id}` has not ended with an outcome that names a next runbook"
                ))
            })?;
        let name = next["runbook"].as_str().ok_or_else(|| {
            ServiceError::NotFound(format!(
                "run `{id}` continues with `{}`, which is not a runbook of this project",
                next["file"].as_str().unwrap_or_default()
            ))
        })?;
        let mut given = next["inputs"].as_object().cloned().unwrap_or_default();
        given.extend(inputs);
        let snapshot = self.engine.snapshot();
        let entry_of_next = find(&snapshot, name)?;
        // Checked now (text the outcome rendered becomes the declared types): a refused
        // continuation records nothing.
        crate::inputs::resolve(&entry_of_next.runbook, &given)?;
        let stepwise = matches!(entry(keys::START), Some(Entry::Start { stepwise: true, .. }));
        let new_id = uuid::Uuid::new_v4().to_string();
        let link = Entry::Next { run_id: new_id.clone(), by: principal.to_owned() };
        let (inserted, kept) =
            self.record_person(&record, "", keys::NEXT, &link, &Action::Follow).await?;
        if !inserted {
            return match serde_json::from_value::<Entry>(kept) {
                Ok(Entry::Next { run_id, .. }) => self.show(&run_id).await,
                _ => Err(ServiceError::Conflict(format!("run `{id}` was continued already"))),
            };
        }
        self.start_as(&new_id, name, given, stepwise, principal).await
    }

    /// Record what a person did to a step, with its packet in the chain (first writer wins):
    /// whether it was recorded, and what is recorded under the key.
    async fn record_person(
        &self,
        run: &RunbookRunRecord,
        key: &str,
        journal_key: &str,
        entry: &Entry,
        action: &Action,
    ) -> Result<(bool, Value), ServiceError> {
        let by = entry.by().unwrap_or("unknown");
        let host = self.host(&run.id, &run.runbook, run.started_by.as_deref().unwrap_or("unknown"));
        let data = json!({ "event": "person", "key": key, "action": action, "by": by });
        let packet = NewPacket {
            kind: PacketKind::RunbookPerson,
            session_id: Some(run.id.clone()),
            thread_id: Some(key.to_owned()),
            principal: Some(by.to_owned()),
            request_id: None,
            run_id: Some(run.id.clone()),
            tool: Some(format!("runbook:{}", run.runbook)),
            args_hash: None,
            data,
        };
        let value = serde_json::to_value(entry).unwrap_or(Value::Null);
        Ok(host.journal(journal_key, value, Some(packet)).await.map_err(RunbookError::Host)?)
    }

    /// An approval decided outside the run (the Approvals view, `jig approve`, another
    /// instance): the run whose step waits on it walks on — its call using the approval when
    /// approved, to its denial when denied or ended. `None` when the approval is no runbook
    /// step's, or is not decided yet.
    pub async fn approval_decided(
        &self,
        approval_id: &str,
    ) -> Result<Option<RunView>, ServiceError> {
        let Some(approval) = self.engine.walk_reads().approval(approval_id).await? else {
            return Ok(None);
        };
        let approved = match approval.state {
            ApprovalState::Approved | ApprovalState::Consumed => true,
            ApprovalState::Denied | ApprovalState::Expired | ApprovalState::Withdrawn => false,
            // Still pending (one approval of several): nothing moves yet.
            ApprovalState::Pending => return Ok(None),
        };
        let Some(run_id) = approval.session_id else { return Ok(None) };
        let Some(run) = self.engine.walk_reads().run(&run_id).await? else { return Ok(None) };
        let Ok(current) = self.shown(run.clone()).await else { return Ok(None) };
        let waiting = current.progress.waiting.iter().find(|w| {
            matches!(&w.need, Need::Approval { approval_id: waiting, .. } if approval.id == waiting.as_str())
        });
        let Some(waiting) = waiting else { return Ok(None) };
        let entry = Entry::Decision {
            approval_id: approval.id.clone(),
            approved,
            by: approval.decided_by.clone().unwrap_or_default(),
        };
        let action = if approved { Action::Approve } else { Action::Deny };
        let journal_key = keys::decision(&waiting.key, approval.id.as_str());
        self.record_person(&run, &waiting.key, &journal_key, &entry, &action).await?;
        // The step's call uses the approval itself when it runs again (no token travels).
        self.walk(&run.id, HashMap::new()).await.map(Some)
    }

    /// A go-ahead that is governance's approval may not come from who started the run when
    /// the policy forbids self-approval.
    fn refuse_self_approval(
        &self,
        approval: bool,
        run: &RunView,
        principal: &str,
        reason: &str,
    ) -> Result<(), ServiceError> {
        let forbidden = !self.engine.policy().config().approvals.self_approval;
        let same = run
            .started_by
            .as_deref()
            .is_some_and(|s| canonical_principal(s) == canonical_principal(principal));
        if approval && forbidden && same {
            return Err(ServiceError::Forbidden(format!(
                "{principal} started this run and may not approve its step ({reason}): self-approval is forbidden"
            )));
        }
        Ok(())
    }
}

/// The conflict of acting with `action` on step `key` of run `id`, which waits for `need`.
fn not_waiting_for(id: &str, key: &str, action: &Action, need: Option<&Need>) -> ServiceError {
    ServiceError::Conflict(match need {
        Some(need) => {
            format!("step `{key}` waits for {}, not {}", need_name(need), action_name(action))
        }
        None => format!("run `{id}` is not waiting at step `{key}`"),
    })
}

/// Who made the entry the store kept (the first writer's), for a conflict's message.
fn who(kept: Value) -> String {
    serde_json::from_value::<Entry>(kept)
        .ok()
        .and_then(|e| e.by().map(str::to_owned))
        .unwrap_or_default()
}

/// Whether a waiting step's go-ahead is an approval (governance asked), not a step-by-step go.
fn reason_of(waiting: Option<&crate::Waiting>) -> bool {
    matches!(waiting.map(|w| &w.need), Some(Need::Go { reason, .. }) if reason != "stepwise")
}

fn need_name(need: &Need) -> &'static str {
    match need {
        Need::Go { .. } => "a go-ahead (run or skip)",
        Need::Evidence { .. } => "evidence",
        Need::Choice { .. } => "a choice",
        Need::Approval { .. } => "an approval (approve or deny)",
        Need::Failed { .. } => "a decision on its failure (retry or abort)",
        Need::Paused => "a go-ahead (it is paused)",
    }
}

fn action_name(action: &Action) -> &'static str {
    match action {
        Action::Run => "run",
        Action::Skip { .. } => "skip",
        Action::Evidence { .. } => "evidence",
        Action::Choose { .. } => "a choice",
        Action::Approve => "approve",
        Action::Deny => "deny",
        Action::Retry => "retry",
        Action::Abort => "abort",
        Action::Pause => "pause",
        Action::Follow => "follow",
    }
}
