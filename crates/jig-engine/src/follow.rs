//! Hearing the other processes on the store: what they record becomes events on this
//! process's bus, as if it had happened here — a call asked from the terminal shows in the
//! workbench, an approval given on another instance reaches the one holding the call
//! ([`Engine::on_approval_decided`]), a runbook run walked elsewhere redraws.
//!
//! The store's feed (`jig_audit::feed`) delivers the packets other processes appended, in
//! order; nothing is taken from a notification itself. This process's own packets are not
//! delivered (it announced them as it made them). The same task ends pending approvals whose
//! time is over (any process may; each is recorded once).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jig_audit::{Packet, PacketKind, RunState};
use jig_model::envelope::EventMessage;
use serde_json::json;

use crate::Engine;
use crate::events::{ApprovalAsk, ApprovalEvent, Event, RunbookEvent};

/// How often pending approvals are checked for expiry.
const EXPIRY_SWEEP: Duration = Duration::from_secs(5);

impl Engine {
    /// Follow the store for as long as the engine lives (`jig serve`, `jig mcp`, the desktop
    /// app call this once).
    pub fn follow_store(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            loop {
                let Some(engine) = weak.upgrade() else { return };
                match engine.store.feed().await {
                    Ok(feed) => {
                        drop(engine);
                        follow(&weak, feed).await;
                    }
                    Err(error) => tracing::warn!(%error, "cannot follow the store"),
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        });
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(EXPIRY_SWEEP);
            loop {
                tick.tick().await;
                let Some(engine) = weak.upgrade() else { return };
                if let Err(error) = engine.expire_approvals().await {
                    tracing::warn!(%error, "expiring approvals");
                }
            }
        });
    }

    /// Announce what another process recorded.
    async fn announce_recorded(self: &Arc<Self>, packets: Vec<Packet>) {
        let mut runbooks = BTreeSet::new();
        for packet in packets {
            if packet.kind.starts_with("runbook.") {
                runbooks.extend(packet.run_id.clone());
                continue;
            }
            self.announce_packet(&packet);
        }
        // A walk appends several packets per step: one redraw per run and batch.
        for run_id in runbooks {
            if let Ok(Some(run)) = self.store.runbook_run(&run_id).await {
                self.events.publish(Event::Runbook(RunbookEvent {
                    run_id: run.id,
                    runbook: run.runbook,
                    status: run.status,
                }));
            }
        }
    }

    fn announce_packet(self: &Arc<Self>, packet: &Packet) {
        let principal = packet.principal.clone().unwrap_or_default();
        let state = match PacketKind::parse(&packet.kind) {
            Some(PacketKind::CallRequest) => Some("created"),
            Some(PacketKind::CallPendingApproval) => {
                if let Some(waits) = packet.pending_approval() {
                    self.events.publish(Event::ApprovalAsked(ApprovalAsk {
                        approval_id: waits.approval_id,
                        tool: packet.tool.clone().unwrap_or_default(),
                        asked_by: principal.clone(),
                        rule: waits.rule,
                    }));
                }
                Some("pending_approval")
            }
            Some(PacketKind::CallResult | PacketKind::CallFailed | PacketKind::CallState) => {
                packet.call_moved().and_then(|moved| moved.state).map(RunState::as_str)
            }
            Some(PacketKind::CallSubmitted) => Some("queued"),
            Some(PacketKind::ApprovalDecided) => {
                if let Some(decided) = packet.approval_decided() {
                    self.heard_decision(&decided, &principal);
                }
                None
            }
            // Asked of whichever process runs it: this one stops it if it does (who may ask
            // was checked where it was asked). The run then records its own end.
            Some(PacketKind::CallCancelRequested) => {
                if let Some(request_id) = packet.request_id.as_deref()
                    && self.cancel(request_id, None).unwrap_or(false)
                {
                    tracing::info!(request_id, by = %principal, "stopped at the request of another process");
                }
                None
            }
            _ => None,
        };
        if let (Some(state), Some(request_id)) = (state, packet.request_id.as_deref()) {
            self.events.publish_to(
                &principal,
                Event::Message(EventMessage {
                    kind: Default::default(),
                    event: "RunStateChanged".to_owned(),
                    request_id: request_id.to_owned(),
                    progress: None,
                    data: Some(
                        json!({ "state": state, "tool": packet.tool, "run_id": packet.run_id }),
                    ),
                }),
            );
        }
    }

    /// An approval decided elsewhere: tell this process's subscribers, and run or drop a
    /// request this process kept for it.
    fn heard_decision(self: &Arc<Self>, decided: &jig_audit::ApprovalDecided, by: &str) {
        let (id, verdict) = (&decided.approval_id, decided.verdict);
        self.events.publish(Event::Approval(ApprovalEvent {
            approval_id: id.clone(),
            verdict,
            by: by.to_owned(),
            reason: (verdict == jig_model::Verdict::Denied).then(|| decided.reason.clone()),
            resumed_as: None,
        }));
        self.on_approval_decided(id, verdict, by);
    }
}

/// Deliver the feed's packets until it fails or the engine goes.
async fn follow(weak: &std::sync::Weak<Engine>, mut feed: jig_audit::feed::Feed) {
    loop {
        let packets = match feed.next().await {
            Ok(packets) => packets,
            Err(error) => {
                tracing::warn!(%error, "reading the store's changes");
                return;
            }
        };
        let Some(engine) = weak.upgrade() else { return };
        engine.announce_recorded(packets).await;
    }
}
