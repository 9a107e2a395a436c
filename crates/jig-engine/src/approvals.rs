//! Approvals: who may decide, what a decision records, and how a waiting call ends — approved
//! (and then run by whichever process holds it, [`crate::background`]), denied with a
//! reason, expired, or withdrawn by its caller. Every decision is conditional on the approval
//! still pending, so two people (or two instances) deciding at once record one decision.

use jig_audit::{
    ApprovalDecided, ApprovalRecord, ApprovalState, NewPacket, Op, Outcome, PacketKind,
};
use jig_model::{ApprovalId, Verdict};
use serde_json::Value;

use crate::engine::{Approval, Engine};
use crate::error::EngineError;
use crate::events::{ApprovalEvent, Event};
use crate::identity::{canonical_principal, new_token, sha256_hex};

impl Engine {
    /// The hash an approval of calling `tool` with `args` in `session` by `principal` is bound
    /// to (the tool's definition and code as they are now included); `None` for an unknown tool.
    pub fn approval_hash(
        &self,
        tool: &str,
        args: &Value,
        session: &str,
        principal: &str,
    ) -> Option<String> {
        let def = self.get(tool)?;
        let code = crate::identity::code_identity(&def, self.workspace.root());
        Some(crate::identity::request_hash(
            self.store.binding_key(),
            tool,
            &code,
            args,
            session,
            principal,
        ))
    }

    /// Approve a pending call. Once everyone it needs has approved (one person, unless a
    /// runbook's `min_approvers` asks for more, each a different person), the one-time token,
    /// valid for that exact request until the policy's `approvals.ttl_seconds` pass; only its
    /// hash is stored. `asserted_by` is who named `principal` when it was not known (`--as`).
    pub async fn approve(
        &self,
        id: &str,
        principal: &str,
        asserted_by: Option<&str>,
    ) -> Result<Approval, EngineError> {
        let approval = self.pending_approval(id).await?;
        let approval_id = approval.id.clone();
        let approved = self.approve_pending(approval, principal, asserted_by, None).await?;
        if matches!(approved, Approval::Granted(_)) {
            self.decided(&approval_id, Verdict::Approved, principal, None);
        }
        Ok(approved)
    }

    /// Approve `approval`, already read and pending, with the approver's `note` (a comment
    /// kept in the chain and shown to who asked) when the approval is granted.
    pub(crate) async fn approve_pending(
        &self,
        approval: ApprovalRecord,
        principal: &str,
        asserted_by: Option<&str>,
        note: Option<&str>,
    ) -> Result<Approval, EngineError> {
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        let policy = self.policy();
        if !policy.config().approvals.self_approval
            && approval.principal.as_deref().map(canonical_principal)
                == Some(canonical_principal(principal))
        {
            self.record_decision(
                &approval,
                principal,
                Verdict::Refused,
                "self-approval is forbidden",
            )
            .await?;
            return Err(EngineError::SelfApproval { principal: principal.to_owned() });
        }
        // Several approvals are several people: one counts once, however they are spelt.
        let me = canonical_principal(principal);
        if approval.approvers.iter().any(|a| canonical_principal(a) == me) {
            return Err(EngineError::ApprovedAlready {
                id: approval.id,
                principal: principal.to_owned(),
            });
        }
        let mut approvers = approval.approvers.clone();
        approvers.push(principal.to_owned());
        let required = approval.required.max(1);
        if u32::try_from(approvers.len()).unwrap_or(u32::MAX) < required {
            return self.second(approval, principal, asserted_by, approvers).await;
        }
        let token = new_token();
        let ttl_us = i64::try_from(policy.config().approvals.ttl_seconds)
            .unwrap_or(i64::MAX / 2_000_000)
            * 1_000_000;
        let expires_us = jig_audit::time::now_us().saturating_add(ttl_us);
        let token_hash = sha256_hex(token.as_bytes());
        let mut decided = decision(
            &approval,
            Verdict::Approved,
            &format!("valid until {}", jig_audit::time::rfc3339(expires_us)),
        );
        // The chain holds what the token is bound to, so a forged approvals row (state, token
        // hash) has no packet to match and is refused when the token is used.
        decided.token_hash = Some(token_hash);
        decided.request_hash = Some(approval.request_hash.clone());
        decided.note = note.map(str::to_owned);
        let decision =
            Decision { expires_us: Some(expires_us), approvers, reason: note.map(str::to_owned) };
        if !self.record_decision_of(&approval, principal, asserted_by, decision, decided).await? {
            return Err(EngineError::AlreadyDecided {
                id: approval.id,
                state: ApprovalState::Approved,
            });
        }
        self.notify(&decided_notice(&approval, Verdict::Approved, principal, note));
        // Announced by the caller, which knows whether the call runs here now.
        Ok(Approval::Granted(token))
    }

    /// Record `decision` on pending `approval` by `principal` (who `asserted_by` named), with
    /// the chain's account of it (`decided`); `false` when it was no longer pending (someone
    /// decided first).
    async fn record_decision_of(
        &self,
        approval: &ApprovalRecord,
        principal: &str,
        asserted_by: Option<&str>,
        decision: Decision,
        mut decided: ApprovalDecided,
    ) -> Result<bool, EngineError> {
        decided.asserted_by = asserted_by.map(str::to_owned);
        let packet = decision_packet(approval, principal, &decided);
        let outcomes = self
            .store
            .apply(vec![Op::DecideApproval {
                id: approval.id.to_string(),
                // Only an approval grants a token; the packet and the row name the same one.
                approve: decided.token_hash.is_some(),
                token_hash: decided.token_hash,
                expires_us: decision.expires_us,
                decided_by: Some(principal.to_owned()),
                approvers: decision.approvers,
                reason: decision.reason,
                packet: Box::new(packet),
            }])
            .await?;
        Ok(matches!(outcomes.first(), Some(Outcome::Decided(true))))
    }

    /// Record one approval of several, before the last: the approval stays pending.
    async fn second(
        &self,
        approval: ApprovalRecord,
        principal: &str,
        asserted_by: Option<&str>,
        approvers: Vec<String>,
    ) -> Result<Approval, EngineError> {
        let required = approval.required.max(1);
        let reason = format!("{} of {required} approvals", approvers.len());
        let mut decided = decision(&approval, Verdict::Seconded, &reason);
        decided.approvers = Some(approvers.clone());
        decided.required = Some(required);
        decided.asserted_by = asserted_by.map(str::to_owned);
        let packet = decision_packet(&approval, principal, &decided);
        let outcomes = self
            .store
            .apply(vec![Op::SecondApproval {
                id: approval.id.to_string(),
                before: approval.approvers.clone(),
                after: approvers.clone(),
                packet: Box::new(packet),
            }])
            .await?;
        if !matches!(outcomes.first(), Some(Outcome::Decided(true))) {
            // Decided, or another person approved at the same moment: read it again.
            return Err(EngineError::ApprovalMoved { id: approval.id });
        }
        self.decided(&approval.id, Verdict::Seconded, principal, None);
        Ok(Approval::Seconded { approvers, required })
    }

    /// Deny a pending call, with the reason shown to who asked (kept in the chain); a request
    /// kept to run when approved ([`Engine::start`]) is dropped, and the waiting run ends
    /// denied.
    pub async fn deny(
        &self,
        id: &str,
        principal: &str,
        reason: Option<&str>,
        asserted_by: Option<&str>,
    ) -> Result<(), EngineError> {
        let approval = self.pending_approval(id).await?;
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        let decided =
            decision(&approval, Verdict::Denied, reason.unwrap_or("denied by a reviewer"));
        let decision =
            Decision { expires_us: None, approvers: Vec::new(), reason: reason.map(str::to_owned) };
        if !self.record_decision_of(&approval, principal, asserted_by, decision, decided).await? {
            return Err(EngineError::AlreadyDecided {
                id: approval.id,
                state: ApprovalState::Denied,
            });
        }
        self.notify(&decided_notice(&approval, Verdict::Denied, principal, reason));
        self.decided(&approval.id, Verdict::Denied, principal, reason);
        Ok(())
    }

    /// Withdraw the approval the call `request_id` waits for, as its caller `principal` (or
    /// anyone who may cancel it): the approval and the run end withdrawn. `false` when nothing
    /// was pending for it.
    pub async fn withdraw(&self, request_id: &str, principal: &str) -> Result<bool, EngineError> {
        let Some(approval) = self.store.approval_waited_for(request_id).await? else {
            return Ok(false);
        };
        if approval.state != ApprovalState::Pending {
            return Ok(false);
        }
        let decided = decision(&approval, Verdict::Withdrawn, "withdrawn by its caller");
        let packet = decision_packet(&approval, principal, &decided);
        let closed = self.close(&approval.id, true, packet).await?;
        if closed {
            self.notify(&decided_notice(&approval, Verdict::Withdrawn, principal, None));
            self.decided(&approval.id, Verdict::Withdrawn, principal, None);
        }
        Ok(closed)
    }

    /// End every pending approval whose time is over as expired, with its waiting run; each
    /// is recorded once, whichever process gets there first. Returns how many this call ended.
    pub async fn expire_approvals(&self) -> Result<usize, EngineError> {
        let now = jig_audit::time::now_us();
        let mut ended = 0;
        for approval in self.store.approvals_expired(now).await? {
            let decided = decision(&approval, Verdict::Expired, "nobody decided in time");
            let packet = decision_packet(&approval, "jig", &decided);
            if self.close(&approval.id, false, packet).await? {
                self.notify(&decided_notice(&approval, Verdict::Expired, "jig", None));
                self.decided(&approval.id, Verdict::Expired, "jig", None);
                ended += 1;
            }
        }
        Ok(ended)
    }

    async fn close(
        &self,
        id: &ApprovalId,
        withdrawn: bool,
        packet: NewPacket,
    ) -> Result<bool, EngineError> {
        let outcomes = self
            .store
            .apply(vec![Op::CloseApproval {
                id: id.to_string(),
                withdrawn,
                packet: Box::new(packet),
            }])
            .await?;
        Ok(matches!(outcomes.first(), Some(Outcome::Closed(true))))
    }

    /// Tell everyone that approval `id` was decided (or ended), and drop a request this
    /// process kept for it that will never run. (One that may run now is run by
    /// [`Engine::approve_and_run`], or, decided elsewhere, when this process hears of it.)
    pub(crate) fn decided(
        &self,
        id: &ApprovalId,
        verdict: Verdict,
        by: &str,
        reason: Option<&str>,
    ) {
        self.metrics.decided(id, verdict);
        if verdict.ends_the_request() {
            self.parked.forget(id);
        }
        self.events.publish(Event::Approval(ApprovalEvent {
            approval_id: id.clone(),
            verdict,
            by: by.to_owned(),
            reason: reason.map(str::to_owned),
            resumed_as: None,
        }));
    }

    /// The pending approval a person named: `reference` is what they typed (its id, or a
    /// prefix that names one approval), so it is text until the store resolves it.
    pub(crate) async fn pending_approval(
        &self,
        reference: &str,
    ) -> Result<ApprovalRecord, EngineError> {
        let approval = self
            .store
            .approval(reference)
            .await?
            .ok_or_else(|| EngineError::NoApproval(reference.to_owned()))?;
        if approval.state != ApprovalState::Pending {
            return Err(EngineError::AlreadyDecided { id: approval.id, state: approval.state });
        }
        // Past its time but not yet swept: it is expired, whoever notices first.
        if approval.expires_us.is_some_and(|t| t <= jig_audit::time::now_us()) {
            self.expire_approvals().await?;
            return Err(EngineError::AlreadyDecided {
                id: approval.id,
                state: ApprovalState::Expired,
            });
        }
        Ok(approval)
    }

    async fn record_decision(
        &self,
        approval: &ApprovalRecord,
        principal: &str,
        verdict: Verdict,
        reason: &str,
    ) -> Result<(), EngineError> {
        self.store
            .apply(vec![Op::Append(decision_packet(
                approval,
                principal,
                &decision(approval, verdict, reason),
            ))])
            .await?;
        Ok(())
    }
}

/// What the approvals row takes of a decision beside the chain's account of it: an approval's
/// validity and everyone who approved, a denial's reason as given (none when none was).
struct Decision {
    expires_us: Option<i64>,
    approvers: Vec<String>,
    reason: Option<String>,
}

/// The chain's account of deciding `approval` as `verdict`, for `reason`.
fn decision(approval: &ApprovalRecord, verdict: Verdict, reason: &str) -> ApprovalDecided {
    ApprovalDecided::new(&approval.id, verdict, reason, approval.principal.as_deref())
}

/// The packet recording `decided`, made by `principal`.
fn decision_packet(
    approval: &ApprovalRecord,
    principal: &str,
    decided: &ApprovalDecided,
) -> NewPacket {
    NewPacket {
        kind: PacketKind::ApprovalDecided,
        session_id: approval.session_id.clone(),
        thread_id: None,
        principal: Some(principal.to_owned()),
        request_id: approval.request_id.clone(),
        run_id: None,
        tool: Some(approval.tool.clone()),
        args_hash: None,
        data: decided.to_data(),
    }
}

/// The notice of `approval` ended as `verdict` by `by` (recorded by this process).
fn decided_notice(
    approval: &ApprovalRecord,
    verdict: Verdict,
    by: &str,
    reason: Option<&str>,
) -> crate::notify::Notice {
    crate::notify::Notice::ApprovalDecided {
        approval_id: approval.id.clone(),
        tool: approval.tool.clone(),
        verdict,
        by: by.to_owned(),
        reason: reason.map(str::to_owned),
    }
}
