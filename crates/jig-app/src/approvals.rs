//! Approvals: a decision recorded once, the waiting call run where it waits, a runbook step
//! walked on — and a token handed only to the person whose call it is.

use jig_engine::{Approval, ApprovalRecord, Reader};
use serde::Serialize;

use crate::{Actor, App, AppError};

/// What approving did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approved {
    /// Granted (`false`: recorded, more people must approve).
    pub granted: bool,
    /// Who has approved so far, while more must (empty once granted).
    pub approvers: Vec<String>,
    /// How many people must approve.
    pub required: u32,
    /// The request that runs the approved call, when it runs in this process.
    pub resumed_as: Option<String>,
    /// The runbook run that walked on, when the call was a runbook step's.
    pub runbook_run: Option<Walked>,
    /// The one-time token, only when the approver asked the call themselves (self-approval);
    /// anyone else's call runs where it waits, or at its caller's next identical call.
    pub token: Option<String>,
}

/// What denying did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denied {
    /// The runbook run that walked on, when the call was a runbook step's.
    pub runbook_run: Option<Walked>,
}

/// A runbook run that walked on after a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Walked {
    /// The run.
    pub id: String,
    /// Where it stands now (`completed`, `paused`, …).
    pub status: String,
}

impl App {
    /// Approve a pending call as `actor`.
    pub async fn approve(
        &self,
        actor: &Actor,
        id: &str,
        note: Option<&str>,
    ) -> Result<Approved, AppError> {
        self.may_approve(actor)?;
        let reader = Reader { person: actor.principal.clone(), may_approve: actor.may_approve };
        let asked_by = self.engine.history().approval(id, &reader).await.ok().flatten();
        let asked_by = asked_by.and_then(|a| a.principal);
        let (approval, resumed_as) = self
            .engine
            .approve_and_run(id, &actor.principal, actor.asserted_by.as_deref(), note)
            .await?;
        let (granted, approvers, required, token) = match approval {
            Approval::Granted(token) => (true, Vec::new(), 1, Some(token)),
            Approval::Seconded { approvers, required } => (false, approvers, required, None),
        };
        let runbook_run = if granted { self.walk_on(id).await? } else { None };
        let token = token.filter(|_| actor.asked(asked_by.as_deref()));
        Ok(Approved { granted, approvers, required, resumed_as, runbook_run, token })
    }

    /// Deny a pending call as `actor`, with `reason` shown to who asked.
    pub async fn deny(
        &self,
        actor: &Actor,
        id: &str,
        reason: Option<&str>,
    ) -> Result<Denied, AppError> {
        self.may_approve(actor)?;
        self.engine.deny(id, &actor.principal, reason, actor.asserted_by.as_deref()).await?;
        Ok(Denied { runbook_run: self.walk_on(id).await? })
    }

    /// Approvals, newest first, all or only those pending, as `actor` may see them.
    pub async fn approvals(
        &self,
        actor: &Actor,
        pending_only: bool,
    ) -> Result<Vec<ApprovalRecord>, AppError> {
        let reader = Reader { person: actor.principal.clone(), may_approve: actor.may_approve };
        Ok(self.engine.history().approvals(pending_only, &reader).await?)
    }

    /// A runbook step waiting on approval `id` walks on now, in this process (the run is in
    /// the store, wherever it was started).
    async fn walk_on(&self, id: &str) -> Result<Option<Walked>, AppError> {
        Ok(self.runbooks.approval_decided(id).await?.map(|run| Walked {
            status: serde_json::to_value(run.progress.status)
                .ok()
                .and_then(|s| s.as_str().map(str::to_owned))
                .unwrap_or_default(),
            id: run.id,
        }))
    }

    pub(crate) fn may_approve(&self, actor: &Actor) -> Result<(), AppError> {
        if actor.may_approve {
            Ok(())
        } else {
            Err(AppError::Forbidden(format!(
                "`{}` may not decide approvals here; this needs the approver role",
                actor.principal
            )))
        }
    }
}
