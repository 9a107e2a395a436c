//! Approvals: pending calls, one-time tokens bound to the exact request, expiry, self-approval.

use jig_audit::ApprovalState;
use jig_engine::{CallContext, EngineError};
use serde_json::json;

use crate::{Project, approval_id, caller, code, granted, kinds, read, request};

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
    let bob = jig_engine::Reader { person: "bob".into(), may_approve: true };
    let pending = engine.history().approvals(true, &bob).await.expect("approvals");
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].request["args"]["path"], "notes/todo.txt",
        "the full request is shown to the reviewer"
    );
    let run = engine.store().run_of_request(&asked.request_id).await.expect("run").expect("run");
    assert_eq!(run.state.as_str(), "pending_approval");

    let token =
        granted(engine.approve(&id[..8], "bob", None).await.expect("approve by a unique prefix"));
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
    let token = granted(engine.approve(&approval_id(&asked), "bob", None).await.expect("approve"));

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
    let token = granted(engine.approve(&approval_id(&asked), "bob", None).await.expect("approve"));
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
    engine.deny(&id, "bob", Some("not this one"), None).await.expect("deny");
    assert_eq!(engine.approval(&id).await.state, ApprovalState::Denied);
    assert!(matches!(
        engine.approve(&id, "carol", None).await,
        Err(EngineError::AlreadyDecided { .. })
    ));
    assert!(matches!(
        engine.deny(&id, "carol", None, None).await,
        Err(EngineError::AlreadyDecided { .. })
    ));
    assert!(matches!(engine.approve("nope", "carol", None).await, Err(EngineError::NoApproval(_))));
    assert!(!project.path("a").exists());
}

/// A call whose rule asks for two approvers (a runbook's `min_approvers: 2`): granted only when
/// two different people other than who asked have approved; each step is in the chain.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_needing_two_approvers_runs_only_after_two_different_people_approve() {
    let project = Project::new("approvals: { self_approval: false }");
    let engine = project.engine().await;
    let args = json!({ "path": "two.txt", "content": "both said yes\n" });
    let asking = CallContext {
        required_approval: Some("meta.governance.rules[0]".to_owned()),
        required_approvers: 2,
        ..caller("s1", "alice")
    };
    let asked = engine.dispatch(request("file_write", args.clone()), asking).await;
    assert_eq!(code(&asked), "E_POLICY");
    let id = approval_id(&asked);
    let record = engine.approval(&id).await;
    assert_eq!((record.required, record.approvers.len()), (2, 0));

    let first = engine.approve(&id, "bob", None).await.expect("bob approves");
    assert_eq!(
        first,
        jig_engine::Approval::Seconded { approvers: vec!["bob".to_owned()], required: 2 }
    );
    assert_eq!(engine.approval(&id).await.state, ApprovalState::Pending, "one is not enough");
    // The same person twice, however spelt, is still one person; nor may who asked approve.
    let again = engine.approve(&id, " Bob ", None).await.expect_err("bob again");
    assert_eq!(again.code().as_str(), "E_CONFLICT", "{again}");
    let own = engine.approve(&id, "alice", None).await.expect_err("self");
    assert!(matches!(own, EngineError::SelfApproval { .. }), "{own}");
    // Without a token nothing runs yet.
    let early = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    assert!(!early.ok, "{early:?}");
    assert!(!project.path("two.txt").exists());

    let token = granted(engine.approve(&id, "carol", None).await.expect("carol approves"));
    let record = engine.approval(&id).await;
    assert_eq!(record.state, ApprovalState::Approved);
    assert_eq!(record.approvers, ["bob", "carol"]);
    assert_eq!(record.decided_by.as_deref(), Some("carol"));
    let ran = engine.dispatch(request("file_write", args), with_token(&token)).await;
    assert!(ran.ok, "{ran:?}");
    assert_eq!(read(&project.path("two.txt")), "both said yes\n");

    let packets = engine.store().packets(0, 1000).await.expect("packets");
    let verdicts: Vec<(&str, &str)> = packets
        .iter()
        .filter(|p| p.kind == "approval.decided" && p.data["approval_id"] == id.as_str())
        .map(|p| (p.principal.as_deref().unwrap_or(""), p.data["verdict"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        verdicts,
        [("bob", "seconded"), ("alice", "refused"), ("carol", "approved")],
        "each approver in the chain, in order"
    );
}

/// Issue #26: `shell_exec` with `cmd: "echo ghp_…"` kept the token in the request packet (only
/// declared secret keys were redacted), and so in the timeline, the exports and every screen.
/// The reviewer still sees exactly what will run; the record, and everyone else, does not.
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_typed_into_a_command_is_shown_to_deciders_only_and_never_recorded() {
    let project = Project::new("shell_allow: ['^echo(\\s|$)']");
    let engine = project.engine().await;
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    let args = json!({ "cmd": format!("echo {secret}") });
    let asked = engine.dispatch(request("shell_exec", args.clone()), caller("s1", "alice")).await;
    assert_eq!(code(&asked), "E_POLICY");
    let id = approval_id(&asked);
    // The reviewer, and alice who asked, see the command as it will run.
    let bob = jig_engine::Reader { person: "bob".into(), may_approve: true };
    let shown = engine.history().approvals(true, &bob).await.expect("approvals");
    assert_eq!(shown[0].request["args"]["cmd"], format!("echo {secret}"));
    assert_eq!(shown[0].request["argv"], json!(["echo", secret]));
    let alice = jig_engine::Reader { person: "Alice".into(), may_approve: false };
    let own = engine.history().approvals(true, &alice).await.expect("approvals");
    assert_eq!(own[0].request["args"]["cmd"], format!("echo {secret}"));
    // A viewer does not, nor does any serialized record.
    let vic = jig_engine::Reader { person: "vic".into(), may_approve: false };
    let hidden = engine.history().approvals(true, &vic).await.expect("approvals");
    assert!(!serde_json::to_string(&hidden).expect("json").contains(secret));
    // Approved, it runs exactly that command, with the token bound to the clear request.
    let token = granted(engine.approve(&id, "bob", None).await.expect("approve"));
    let mut with = caller("s1", "alice");
    with.approval_token = Some(token);
    let ran = engine.dispatch(request("shell_exec", args.clone()), with).await;
    assert!(ran.ok, "{ran:?}");
    // A token for the redacted form does not fit the clear request, and vice versa.
    let redacted = json!({ "cmd": "echo [REDACTED]" });
    let other = engine.dispatch(request("shell_exec", redacted), caller("s1", "alice")).await;
    assert_eq!(code(&other), "E_POLICY");
    // Nothing of the secret is in the chain, the store's approvals, or an export.
    let packets = engine.store().packets(0, 10_000).await.expect("packets");
    let chain = serde_json::to_string(&packets).expect("json");
    assert!(!chain.contains(secret), "the chain holds the secret");
    assert!(chain.contains("[REDACTED]"));
    let all = engine.history().approvals(false, &bob).await.expect("approvals");
    assert!(!serde_json::to_string(&all).expect("json").contains(secret));
    assert!(engine.store().verify().await.expect("verify").first_broken.is_none());
}
