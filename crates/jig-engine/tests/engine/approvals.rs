//! Approvals: pending calls, one-time tokens bound to the exact request, expiry, self-approval.

use jig_audit::ApprovalState;
use jig_engine::{CallContext, EngineError};
use serde_json::json;

use crate::{Project, approval_id, caller, code, kinds, read, request};

fn with_token(token: &str) -> CallContext {
    CallContext { approval_token: Some(token.to_owned()), ..caller("s1", "alice") }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_waits_for_approval_runs_once_with_its_token_then_replays() {
    let project = Project::new("");
    let engine = project.engine().await;
    let args = json!({ "path": "notes/todo.txt", "content": "ship it\n", "create_dirs": true });

    let asked = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    assert_eq!(code(&asked), "E_POLICY");
    assert!(!project.path("notes/todo.txt").exists());
    let id = approval_id(&asked);
    assert_eq!(
        kinds(&engine, &asked.request_id).await,
        ["tool.call.request", "tool.call.decision", "tool.call.pending_approval"]
    );
    let pending = engine.history().approvals(true).await.expect("approvals");
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].request["args"]["path"], "notes/todo.txt",
        "the full request is shown to the reviewer"
    );
    let run = engine.store().run_of_request(&asked.request_id).await.expect("run").expect("run");
    assert_eq!(run.state.as_str(), "pending_approval");

    let token = engine.approve(&id[..8], "bob", None).await.expect("approve by a unique prefix");
    let approved = engine.dispatch(request("file_write", args.clone()), with_token(&token)).await;
    assert!(approved.ok, "{approved:?}");
    assert_eq!(read(&project.path("notes/todo.txt")), "ship it\n");
    assert_eq!(engine.approval(&id).await.state, ApprovalState::Consumed);

    // The same write again, without a token: the recorded result, nothing written.
    std::fs::write(project.path("notes/todo.txt"), "changed by hand").expect("write");
    let repeat = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    assert!(repeat.ok && repeat.replayed, "{repeat:?}");
    assert_eq!(read(&project.path("notes/todo.txt")), "changed by hand");

    // The token was for one use.
    let reused = engine
        .dispatch(
            request("file_write", json!({ "path": "b.txt", "content": "b" })),
            with_token(&token),
        )
        .await;
    assert_eq!(code(&reused), "E_POLICY");
    let packets = crate::packets(&engine, &reused.request_id).await;
    let decision =
        packets.iter().find(|p| p.kind == "tool.call.decision").expect("the refusal is audited");
    assert_eq!(decision.data["rule"], "approval.token");
    assert!(!project.path("b.txt").exists());
}

trait ApprovalOf {
    async fn approval(&self, id: &str) -> jig_audit::ApprovalRecord;
}

impl ApprovalOf for jig_engine::Engine {
    async fn approval(&self, id: &str) -> jig_audit::ApprovalRecord {
        self.store().approval(id).await.expect("approval").expect("exists")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_is_bound_to_the_exact_request() {
    let project = Project::new("");
    let engine = project.engine().await;
    let args = json!({ "path": "a.txt", "content": "approved content" });
    let asked = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    let token = engine.approve(&approval_id(&asked), "bob", None).await.expect("approve");

    // Other content, another tool, another session: all refused, and the token survives them.
    let tampered = engine
        .dispatch(
            request("file_write", json!({ "path": "a.txt", "content": "evil" })),
            with_token(&token),
        )
        .await;
    assert_eq!(code(&tampered), "E_POLICY");
    assert!(
        tampered.errors[0].message.contains("different request"),
        "{}",
        tampered.errors[0].message
    );
    let other_session =
        CallContext { approval_token: Some(token.clone()), ..caller("s2", "alice") };
    assert_eq!(
        code(&engine.dispatch(request("file_write", args.clone()), other_session).await),
        "E_POLICY"
    );
    assert!(!project.path("a.txt").exists());

    let right = engine.dispatch(request("file_write", args), with_token(&token)).await;
    assert!(right.ok, "{right:?}");
    assert_eq!(read(&project.path("a.txt")), "approved content");
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_and_expired_tokens_are_refused() {
    let project = Project::new("approvals: { ttl_seconds: 1 }");
    let engine = project.engine().await;
    let args = json!({ "path": "a.txt", "content": "x" });
    let forged =
        engine.dispatch(request("file_write", args.clone()), with_token(&"f".repeat(64))).await;
    assert_eq!(code(&forged), "E_POLICY");
    assert!(forged.errors[0].message.contains("no approval"), "{}", forged.errors[0].message);

    let asked = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    let token = engine.approve(&approval_id(&asked), "bob", None).await.expect("approve");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let late = engine.dispatch(request("file_write", args), with_token(&token)).await;
    assert_eq!(code(&late), "E_POLICY");
    assert!(late.errors[0].message.contains("expired"), "{}", late.errors[0].message);
    assert!(!project.path("a.txt").exists());
    let denied = engine
        .store()
        .runs(10)
        .await
        .expect("runs")
        .into_iter()
        .filter(|r| r.state.as_str() == "denied")
        .count();
    assert_eq!(denied, 2, "both refusals are recorded as denied runs");
}

#[tokio::test(flavor = "multi_thread")]
async fn self_approval_can_be_forbidden() {
    let project = Project::new("approvals: { self_approval: false }");
    let engine = project.engine().await;
    let asked = engine
        .dispatch(
            request("file_write", json!({ "path": "a", "content": "x" })),
            caller("s1", "alice"),
        )
        .await;
    let id = approval_id(&asked);
    let error = engine.approve(&id, "alice", None).await.unwrap_err();
    assert!(matches!(error, EngineError::SelfApproval { .. }), "{error}");
    assert_eq!(
        engine.approval(&id).await.state,
        ApprovalState::Pending,
        "still waiting for someone else"
    );
    let refused = engine.store().packets(0, 100).await.expect("packets");
    assert!(
        refused.iter().any(|p| p.kind == "approval.decided" && p.data["verdict"] == "refused"),
        "the attempt is audited"
    );
    engine.approve(&id, "bob", None).await.expect("another reviewer may");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_call_stays_denied_and_decisions_are_final() {
    let project = Project::new("");
    let engine = project.engine().await;
    let asked = engine
        .dispatch(
            request("file_write", json!({ "path": "a", "content": "x" })),
            caller("s1", "alice"),
        )
        .await;
    let id = approval_id(&asked);
    engine.deny(&id, "bob", None).await.expect("deny");
    assert_eq!(engine.approval(&id).await.state, ApprovalState::Denied);
    assert!(matches!(
        engine.approve(&id, "carol", None).await,
        Err(EngineError::AlreadyDecided { .. })
    ));
    assert!(matches!(
        engine.deny(&id, "carol", None).await,
        Err(EngineError::AlreadyDecided { .. })
    ));
    assert!(matches!(engine.approve("nope", "carol", None).await, Err(EngineError::NoApproval(_))));
    assert!(!project.path("a").exists());
}
