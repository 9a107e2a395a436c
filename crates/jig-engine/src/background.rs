//! Calls that answer at once: a surface starts a call and follows it on the event bus (its
//! progress, its output, then its `ToolResponse`), as the browser and the desktop do.
//!
//! A call that waits for approval is kept here, exactly as it was asked, in the process that
//! started it. When its approval is granted — by a person on this process, another `jig serve`
//! instance, the CLI or an MCP client, which this process hears through the store
//! ([`crate::follow`]) — this process runs that very request, in the name of who asked; the
//! approval is used by the request itself (`CallContext::retry_approved`), so no token travels
//! and the approver never holds one for someone else's call. Exactly once: using an approval
//! is conditional in the store. When this process is gone, the approval stays granted and the
//! caller's next identical call uses it. A denial or expiry drops the kept request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jig_model::envelope::ToolRequest;
use jig_model::{ApprovalId, Verdict};

use crate::events::{ApprovalEvent, Event};
use crate::identity::new_id;
use crate::{Approval, CallContext, Engine, EngineError};

/// Requests waiting for approval, by approval id.
#[derive(Debug, Default)]
pub(crate) struct Parked(Mutex<HashMap<ApprovalId, (ToolRequest, CallContext)>>);

impl Parked {
    fn park(&self, approval_id: ApprovalId, request: ToolRequest, context: CallContext) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(approval_id, (request, context));
        }
    }

    fn take(&self, approval_id: &ApprovalId) -> Option<(ToolRequest, CallContext)> {
        self.0.lock().ok()?.remove(approval_id)
    }

    pub(crate) fn forget(&self, approval_id: &ApprovalId) {
        self.take(approval_id);
    }
}

/// How many calls started in the background ([`Engine::start`]) run at once, unless the
/// engine's options say otherwise. A caller that starts calls faster than they finish (an
/// agent's burst on `POST /api/calls`) waits for a free slot instead of piling up calls in
/// flight, each holding its arguments, its result and its pipeline's state (and, for a tool
/// with a process, the process) until it ends. The figure is a ceiling, not a tuning: fewer
/// slots left less memory after a burst but cost calls/s (docs/benchmarks.md).
pub const BACKGROUND_CALLS: usize = 256;

/// How long a start waits for one of the [`BACKGROUND_CALLS`] places before it is refused
/// ([`EngineError::Busy`]). Calls hold a place until they end, and a tool's own timeout can be
/// long: without a limit here, calls that hang would hold every caller's next request with them.
pub const START_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Engine {
    /// Start `request` and return its request id as soon as it runs (at once, unless
    /// [`BACKGROUND_CALLS`] are running). Its events and finally its `ToolResponse`
    /// ([`Event::Response`]) arrive on the bus; a call that needs approval is kept to run
    /// when approved. When no place frees within [`START_WAIT`], the call is refused as busy
    /// before anything of it ran or was recorded: the caller may send it again.
    pub async fn start(
        self: &Arc<Self>,
        request: ToolRequest,
        context: CallContext,
    ) -> Result<String, EngineError> {
        let acquire = Arc::clone(&self.slots).acquire_owned();
        let slot = match tokio::time::timeout(self.start_wait, acquire).await {
            Ok(slot) => slot.ok(),
            Err(_) => {
                return Err(EngineError::Busy {
                    running: self.background_calls,
                    waited: self.start_wait,
                });
            }
        };
        Ok(self.spawn_call(request, context, slot))
    }

    /// Run `request` on a task of its own, in `slot` (or in the next free one).
    fn spawn_call(
        self: &Arc<Self>,
        request: ToolRequest,
        context: CallContext,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> String {
        let request_id = request.request_id.clone();
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            let _slot = match slot {
                Some(slot) => Some(slot),
                None => Arc::clone(&engine.slots).acquire_owned().await.ok(),
            };
            let principal = context.principal.clone();
            let response = engine.dispatch(request.clone(), context.clone()).await;
            if let Some(approval_id) = response.waits_for() {
                engine.parked.park(approval_id, request, context);
            }
            engine.events.publish_to(&principal, Event::Response(Box::new(response)));
        });
        request_id
    }

    /// Approve a pending call as `principal`, with their `note`. Once granted, a request this process kept is run
    /// now in the name of who asked; one kept elsewhere runs there (or at its caller's next
    /// identical call). Returns what the approval did and, when it runs here, the request
    /// that runs it.
    pub async fn approve_and_run(
        self: &Arc<Self>,
        id: &str,
        principal: &str,
        asserted_by: Option<&str>,
        note: Option<&str>,
    ) -> Result<(Approval, Option<String>), EngineError> {
        let approval = self.pending_approval(id).await?;
        let approval_id = approval.id.clone();
        let approved = self.approve_pending(approval, principal, asserted_by, note).await?;
        let resumed = match &approved {
            Approval::Granted(_) => {
                let resumed = self.on_approval_decided(&approval_id, Verdict::Approved, principal);
                // Not kept here: the news alone (the process holding it runs it).
                if resumed.is_none() {
                    self.decided(&approval_id, Verdict::Approved, principal, None);
                }
                resumed
            }
            Approval::Seconded { .. } => None,
        };
        Ok((approved, resumed))
    }

    /// What this process does when approval `id` was decided, here or by another process: run
    /// the request it kept for it (approved), or forget it (denied, expired, withdrawn).
    /// Returns the request that now runs the call, when it runs here.
    pub(crate) fn on_approval_decided(
        self: &Arc<Self>,
        id: &ApprovalId,
        verdict: Verdict,
        by: &str,
    ) -> Option<String> {
        self.metrics.decided(id, verdict);
        match verdict {
            Verdict::Approved => {
                let (mut request, mut context) = self.parked.take(id)?;
                request.request_id = new_id();
                context.approval_token = None;
                context.retry_approved = true;
                context.resumes_approval = Some(id.to_string());
                context.cancel = jig_exec::Cancel::new();
                let resumed = request.request_id.clone();
                // Tell subscribers which request now carries the call before it starts: a quick
                // call's response must not arrive before the news of the request it answers.
                self.events.publish(Event::Approval(ApprovalEvent {
                    approval_id: id.clone(),
                    verdict: Verdict::Approved,
                    by: by.to_owned(),
                    reason: None,
                    resumed_as: Some(resumed.clone()),
                }));
                self.spawn_call(request, context, None);
                Some(resumed)
            }
            Verdict::Denied | Verdict::Expired | Verdict::Withdrawn => {
                self.parked.take(id);
                None
            }
            Verdict::Seconded | Verdict::Refused => None,
        }
    }
}
