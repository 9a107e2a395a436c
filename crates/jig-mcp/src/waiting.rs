//! An agent's call that waits for a person who decides elsewhere: in the workbench, the CLI,
//! another instance on the same store. The request stays open (up to the policy's
//! `mcp.wait_for_approval_seconds`) and hears the decision the moment any process records it —
//! the engine follows the store — then the caller runs the call again, which uses the approval.
//! A client that sent a progress token hears that it waits, now and then; cancelling the
//! request ends the wait, and the approval stays pending for a later retry.

use std::time::Duration;

use jig_app::{Actor, App};
use jig_engine::{ApprovalState, Event};
use jig_model::envelope::{ResponseError, ToolResponse};
use jig_model::{ApprovalId, ErrorCode};
use rmcp::model::ProgressNotificationParam;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::live::Listener;

/// How often a waiting client hears that it still waits (and the store is read regardless).
const EVERY: Duration = Duration::from_secs(10);

/// The state approval `id` reached within `within`; `None` when it is still pending then, or
/// the client stopped waiting.
pub async fn decided(
    app: &App,
    actor: &Actor,
    id: &ApprovalId,
    within: Duration,
    stop: &CancellationToken,
    listener: &Listener,
) -> Option<ApprovalState> {
    // Subscribed before the store is read: a decision recorded in between is still heard.
    let mut events = app.engine().subscribe();
    let deadline = tokio::time::Instant::now() + within;
    let mut step = 0.0;
    loop {
        match app.approval(actor, id).await {
            Ok(Some(approval)) if approval.state != ApprovalState::Pending => {
                return Some(approval.state);
            }
            Ok(Some(_)) => {}
            // Gone, or the store cannot be read: nothing to wait for.
            _ => return None,
        }
        let tick = tokio::time::sleep(EVERY.min(deadline - tokio::time::Instant::now()));
        tokio::pin!(tick);
        let heard = loop {
            tokio::select! {
                () = stop.cancelled() => return None,
                () = &mut tick => break false,
                event = events.recv() => match event {
                    Ok(Event::Approval(decision)) if decision.approval_id == *id => break true,
                    Ok(_) => {}
                    // Missed some: read the store.
                    Err(RecvError::Lagged(_)) => break true,
                    Err(RecvError::Closed) => return None,
                },
            }
        };
        if !heard {
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            if let Some(token) = &listener.progress {
                step += 1.0;
                let mut param = ProgressNotificationParam::new(token.clone(), step);
                param.message = Some(format!("waiting for a person to approve ({id})"));
                let _ = listener.peer.notify_progress(param).await;
            }
        }
    }
}

/// The answer to a call whose approval ended without it running: denied (by whom, and their
/// reason), withdrawn, or expired undecided. `waiting` is the answer it had while it waited;
/// the store already ended its run in that state.
pub async fn ended(
    app: &App,
    actor: &Actor,
    id: &ApprovalId,
    state: ApprovalState,
    mut waiting: ToolResponse,
) -> ToolResponse {
    let approval = app.approval(actor, id).await.ok().flatten();
    let by = approval.as_ref().and_then(|a| a.decided_by.clone());
    let note = approval.as_ref().and_then(|a| a.note.clone());
    let why = note.map(|n| format!(": {n}")).unwrap_or_default();
    let message = match state {
        ApprovalState::Denied => format!(
            "{} denied this request (approval {id}){why}",
            by.as_deref().unwrap_or("a reviewer")
        ),
        ApprovalState::Withdrawn => format!("the request was withdrawn (approval {id}){why}"),
        _ => format!(
            "nobody decided this request before its approval expired (approval {id}); call again to ask again"
        ),
    };
    let details = serde_json::json!({ "approval_state": state.as_str(), "decided_by": by });
    waiting.ok = false;
    waiting.errors =
        vec![ResponseError { code: ErrorCode::Policy, message, details: Some(details) }];
    waiting
}
