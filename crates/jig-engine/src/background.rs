//! Calls that answer at once: a surface starts a call and follows it on the event bus (its
//! progress, its output, then its `ToolResponse`), as the browser and the desktop do.
//!
//! A call that waits for approval is kept here, exactly as it was asked, so that approving it
//! ([`Engine::approve_and_run`]) runs that very request in the name of who asked, with the
//! one-time token. Kept requests live in memory: after a restart the caller asks again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jig_model::envelope::ToolRequest;

use crate::events::{ApprovalEvent, Event};
use crate::identity::new_id;
use crate::{Approval, CallContext, Engine, EngineError};

/// Requests waiting for approval, by approval id.
#[derive(Debug, Default)]
pub(crate) struct Parked(Mutex<HashMap<String, (ToolRequest, CallContext)>>);

impl Parked {
    fn park(&self, approval_id: String, request: ToolRequest, context: CallContext) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(approval_id, (request, context));
        }
    }

    fn take(&self, approval_id: &str) -> Option<(ToolRequest, CallContext)> {
        self.0.lock().ok()?.remove(approval_id)
    }

    pub(crate) fn forget(&self, approval_id: &str) {
        self.take(approval_id);
    }
}

impl Engine {
    /// Start `request` and return its request id at once. Its events and finally its
    /// `ToolResponse` ([`Event::Response`]) arrive on the bus; a call that needs approval is
    /// kept to run when approved.
    pub fn start(self: &Arc<Self>, request: ToolRequest, context: CallContext) -> String {
        let request_id = request.request_id.clone();
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            let principal = context.principal.clone();
            let response = engine.dispatch(request.clone(), context.clone()).await;
            let approval_id = response
                .errors
                .first()
                .and_then(|e| e.details.as_ref())
                .and_then(|d| d.get("approval_id"))
                .and_then(|id| id.as_str())
                .map(str::to_owned);
            if let Some(approval_id) = approval_id {
                engine.parked.park(approval_id, request, context);
            }
            engine.events.publish_to(&principal, Event::Response(Box::new(response)));
        });
        request_id
    }

    /// Approve a pending call as `principal` and, once it is granted and the engine kept the
    /// request ([`Engine::start`]), run it now with the token in the name of who asked.
    /// Returns what the approval did and the new request id of the run.
    pub async fn approve_and_run(
        self: &Arc<Self>,
        id: &str,
        principal: &str,
    ) -> Result<(Approval, Option<String>), EngineError> {
        let approval = self.pending_approval(id).await?;
        let approval_id = approval.id.clone();
        let approved = self.approve_pending(approval, principal, None).await?;
        let Approval::Granted(token) = &approved else { return Ok((approved, None)) };
        let token = token.clone();
        let parked = self.parked.take(&approval_id).map(|(mut request, mut context)| {
            request.request_id = new_id();
            context.approval_token = Some(token.clone());
            context.cancel = jig_exec::Cancel::new();
            (request, context)
        });
        let resumed = parked.as_ref().map(|(request, _)| request.request_id.clone());
        // Tell subscribers which request now carries the call before it starts: a quick call's
        // response must not arrive before the news of the request it answers.
        self.events.publish(Event::Approval(ApprovalEvent {
            approval_id,
            verdict: "approved".to_owned(),
            by: principal.to_owned(),
            resumed_as: resumed.clone(),
        }));
        if let Some((request, context)) = parked {
            self.start(request, context);
        }
        Ok((approved, resumed))
    }
}
