//! Approvals: who may decide, what a decision records, and how a waiting call ends — approved
//! (and then run by whichever process holds it, [`crate::background`]), denied with a
//! reason, expired, or withdrawn by its caller. Every decision is conditional on the approval
//! still pending, so two people (or two instances) deciding at once record one decision.

use jig_audit::{ApprovalRecord, ApprovalState, NewPacket, Op, Outcome, PacketKind};
use serde_json::{Value, json};

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
            self.decided(&approval_id, "approved", principal, None);
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
            self.record_decision(&approval, principal, "refused", "self-approval is forbidden")
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
        let mut packet = decision_packet(
            &approval,
            principal,
            "approved",
            &format!("valid until {}", jig_audit::time::rfc3339(expires_us)),
        );
        // The chain holds what the token is bound to, so a forged approvals row (state, token
        // hash) has no packet to match and is refused when the token is used.
        packet.data["token_hash"] = json!(token_hash);
        packet.data["request_hash"] = json!(approval.request_hash);
        if let Some(note) = note {
            packet.data["note"] = json!(note);
        }
        let verdict = Verdict {
            token_hash: Some(token_hash),
            expires_us: Some(expires_us),
            approvers,
            reason: note.map(str::to_owned),
        };
        if !self.record_verdict(&approval.id, principal, asserted_by, verdict, packet).await? {
            return Err(EngineError::AlreadyDecided {
                id: approval.id,
                state: ApprovalState::Approved,
            });
        }
        self.notify(&decided_notice(&approval, "approved", principal, note));
        // Announced by the caller, which knows whether the call runs here now.
        Ok(Approval::Granted(token))
    }

    /// Record `verdict` on pending approval `id` by `principal` (who `asserted_by` named),
    /// with its `packet`; `false` when it was no longer pending (someone decided first).
    async fn record_verdict(
        &self,
        id: &str,
        principal: &str,
        asserted_by: Option<&str>,
        verdict: Verdict,
        mut packet: NewPacket,
    ) -> Result<bool, EngineError> {
        if let Some(asserted_by) = asserted_by {
            packet.data["asserted_by"] = json!(asserted_by);
        }
        let outcomes = self
            .store
            .apply(vec![Op::DecideApproval {
                id: id.to_owned(),
                approve: verdict.token_hash.is_some(),
                token_hash: verdict.token_hash,
                expires_us: verdict.expires_us,
                decided_by: Some(principal.to_owned()),
                approvers: verdict.approvers,
                reason: verdict.reason,
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
        let mut packet = decision_packet(&approval, principal, "seconded", &reason);
        packet.data["approvers"] = json!(approvers);
        packet.data["required"] = json!(required);
        if let Some(asserted_by) = asserted_by {
            packet.data["asserted_by"] = json!(asserted_by);
        }
        let outcomes = self
            .store
            .apply(vec![Op::SecondApproval {
                id: approval.id.clone(),
                before: approval.approvers.clone(),
                after: approvers.clone(),
                packet: Box::new(packet),
            }])
            .await?;
        if !matches!(outcomes.first(), Some(Outcome::Decided(true))) {
            // Decided, or another person approved at the same moment: read it again.
            return Err(EngineError::ApprovalMoved { id: approval.id });
        }
        self.decided(&approval.id, "seconded", principal, None);
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
        let packet = decision_packet(
            &approval,
            principal,
            "denied",
            reason.unwrap_or("denied by a reviewer"),
        );
        let verdict = Verdict {
            token_hash: None,
            expires_us: None,
            approvers: Vec::new(),
            reason: reason.map(str::to_owned),
        };
        if !self.record_verdict(&approval.id, principal, asserted_by, verdict, packet).await? {
            return Err(EngineError::AlreadyDecided {
                id: approval.id,
                state: ApprovalState::Denied,
            });
        }
        self.notify(&decided_notice(&approval, "denied", principal, reason));
        self.decided(&approval.id, "denied", principal, reason);
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
        let packet = decision_packet(&approval, principal, "withdrawn", "withdrawn by its caller");
        let closed = self.close(&approval.id, true, packet).await?;
        if closed {
            self.notify(&decided_notice(&approval, "withdrawn", principal, None));
            self.decided(&approval.id, "withdrawn", principal, None);
        }
        Ok(closed)
    }

    /// End every pending approval whose time is over as expired, with its waiting run; each
    /// is recorded once, whichever process gets there first. Returns how many this call ended.
    pub async fn expire_approvals(&self) -> Result<usize, EngineError> {
        let now = jig_audit::time::now_us();
        let mut ended = 0;
        for approval in self.store.approvals_expired(now).await? {
            let packet = decision_packet(&approval, "jig", "expired", "nobody decided in time");
            if self.close(&approval.id, false, packet).await? {
                self.notify(&decided_notice(&approval, "expired", "jig", None));
                self.decided(&approval.id, "expired", "jig", None);
                ended += 1;
            }
        }
        Ok(ended)
    }

    async fn close(
        &self,
        id: &str,
        withdrawn: bool,
        packet: NewPacket,
    ) -> Result<bool, EngineError> {
        let outcomes = self
            .store
            .apply(vec![Op::CloseApproval {
                id: id.to_owned(),
                withdrawn,
                packet: Box::new(packet),
            }])
            .await?;
        Ok(matches!(outcomes.first(), Some(Outcome::Closed(true))))
    }

    /// Tell everyone that approval `id` was decided (or ended), and drop a request this
    /// process kept for it that will never run. (One that may run now is run by
    /// [`Engine::approve_and_run`], or, decided elsewhere, when this process hears of it.)
    pub(crate) fn decided(&self, id: &str, verdict: &str, by: &str, reason: Option<&str>) {
        self.metrics.decided(id, verdict);
        if matches!(verdict, "denied" | "expired" | "withdrawn") {
            self.parked.forget(id);
        }
        self.events.publish(Event::Approval(ApprovalEvent {
            approval_id: id.to_owned(),
            verdict: verdict.to_owned(),
            by: by.to_owned(),
            reason: reason.map(str::to_owned),
            resumed_as: None,
        }));
    }

    pub(crate) async fn pending_approval(&self, id: &str) -> Result<ApprovalRecord, EngineError> {
        let approval =
            self.store.approval(id).await?.ok_or_else(|| EngineError::NoApproval(id.to_owned()))?;
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
        verdict: &str,
        reason: &str,
    ) -> Result<(), EngineError> {
        self.store
            .apply(vec![Op::Append(decision_packet(approval, principal, verdict, reason))])
            .await?;
        Ok(())
    }
}

/// A decision to record: approved (with the token's hash and validity, and everyone who
/// approved) or denied (with why).
struct Verdict {
    token_hash: Option<String>,
    expires_us: Option<i64>,
    approvers: Vec<String>,
    reason: Option<String>,
}

fn decision_packet(
    approval: &ApprovalRecord,
    principal: &str,
    verdict: &str,
    reason: &str,
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
        data: json!({ "approval_id": approval.id, "verdict": verdict, "reason": reason, "requested_by": approval.principal }),
    }
}

/// The notice of `approval` ended as `verdict` by `by` (recorded by this process).
fn decided_notice(
    approval: &ApprovalRecord,
    verdict: &str,
    by: &str,
    reason: Option<&str>,
) -> crate::notify::Notice {
    crate::notify::Notice::ApprovalDecided {
        approval_id: approval.id.clone(),
        tool: approval.tool.clone(),
        verdict: verdict.to_owned(),
        by: by.to_owned(),
        reason: reason.map(str::to_owned),
    }
}
