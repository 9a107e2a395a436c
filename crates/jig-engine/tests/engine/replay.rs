//! Seed 001's replay semantics and DESIGN.md §5's run identity.

use jig_model::canonical::{params_hash, run_id};
use serde_json::json;

use crate::{Project, call, caller, code, request};

#[tokio::test(flavor = "multi_thread")]
async fn run_id_is_the_hash_of_tool_version_policy_and_params() {
    let project = Project::new("");
    let engine = project.engine().await;
    let args = json!({ "text": "same" });
    let response = call(&engine, "t.echo", args.clone()).await;
    let expected = run_id("t.echo", "1.0.0", engine.policy().hash(), &params_hash(&args));
    assert_eq!(response.run_id.as_deref(), Some(expected.as_str()));
    // Key order of the arguments does not matter (JCS).
    let a = call(&engine, "file_read", json!({ "path": "x", "max_bytes": 10 })).await;
    let b = call(&engine, "file_read", json!({ "max_bytes": 10, "path": "x" })).await;
    assert_eq!(a.run_id, b.run_id);
}

/// A deterministic tool replays a succeeded run instead of executing again: the replay shows the
/// recorded output even though the file changed since.
#[tokio::test(flavor = "multi_thread")]
async fn a_deterministic_tool_replays_a_succeeded_run() {
    let project = Project::new("");
    let engine = project.engine().await;
    std::fs::write(project.path("notes.txt"), "first").expect("write");
    let first = call(&engine, "t.cat", json!({ "file": "notes.txt" })).await;
    assert!(first.ok && !first.replayed, "{first:?}");
    std::fs::write(project.path("notes.txt"), "second").expect("write");
    let again = call(&engine, "t.cat", json!({ "file": "notes.txt" })).await;
    assert!(again.replayed);
    assert_eq!(again.data["stdout"], "first");
    assert_eq!(again.run_id, first.run_id);
    let run = engine.store().run_of_request(&again.request_id).await.expect("run").expect("run");
    assert!(run.replayed_from.is_some(), "the replay names its source");
}

/// Seed 001: replay short-circuits only on a previously succeeded run; a failed run executes
/// again.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_is_not_replayed() {
    let project = Project::new("");
    let engine = project.engine().await;
    let missing = call(&engine, "t.cat", json!({ "file": "later.txt" })).await;
    assert_eq!(code(&missing), "E_SHELL");
    std::fs::write(project.path("later.txt"), "now it exists").expect("write");
    let retry = call(&engine, "t.cat", json!({ "file": "later.txt" })).await;
    assert!(retry.ok && !retry.replayed, "{retry:?}");
    assert_eq!(retry.data["stdout"], "now it exists");
    assert_eq!(retry.run_id, missing.run_id, "same identity, new execution");
}

/// A changed policy is a different run identity: nothing recorded under the old policy replays.
#[tokio::test(flavor = "multi_thread")]
async fn a_policy_change_starts_a_new_identity() {
    let project = Project::new("");
    let engine = project.engine().await;
    let before = call(&engine, "t.echo", json!({ "text": "p" })).await;
    drop(engine);
    project.set_policy("budgets: { max_calls: 1000 }");
    let engine = project.engine().await;
    let after = call(&engine, "t.echo", json!({ "text": "p" })).await;
    assert_ne!(before.run_id, after.run_id);
    assert!(!after.replayed);
}

/// Seed 003's fallback key: a request id sent twice gets the recorded answer, and a request id
/// reused for a different call is a conflict.
#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_request_id_gets_its_recorded_answer() {
    let project = Project::new("");
    let engine = project.engine().await;
    let req = request("t.sleep", json!({ "secs": "0" }));
    let first = engine.dispatch(req.clone(), caller("s1", "alice")).await;
    assert!(first.ok, "{first:?}");
    std::fs::remove_file(project.path("slept.txt")).expect("it ran");
    let again = engine.dispatch(req.clone(), caller("s1", "alice")).await;
    assert!(again.ok && again.replayed);
    assert!(!project.path("slept.txt").exists(), "not executed again");

    let mut other = request("t.echo", json!({ "text": "x" }));
    other.request_id = req.request_id.clone();
    let clash = engine.dispatch(other, caller("s1", "alice")).await;
    assert_eq!(code(&clash), "E_CONFLICT");
    let run = engine.store().run_of_request(&req.request_id).await.expect("run").expect("run");
    assert_eq!(run.tool, "t.sleep", "the original record is untouched");
}

/// An in-process built-in records its run after it ran; a repeated request id is noticed
/// there (by the run's unique key) and answered from the first record all the same.
#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_request_id_of_a_built_in_gets_its_recorded_answer() {
    let project = Project::new("");
    let engine = project.engine().await;
    std::fs::write(project.path("a.txt"), "first").expect("write");
    let req = request("file_read", json!({ "path": "a.txt" }));
    let first = engine.dispatch(req.clone(), caller("s1", "alice")).await;
    assert!(first.ok && !first.replayed, "{first:?}");
    std::fs::write(project.path("a.txt"), "second").expect("write");
    let again = engine.dispatch(req.clone(), caller("s1", "alice")).await;
    assert!(again.ok && again.replayed, "{again:?}");
    assert_eq!(again.data["content"], "first");
    let kinds = crate::kinds(&engine, &req.request_id).await;
    assert_eq!(
        kinds,
        [
            "tool.call.request",
            "tool.call.decision",
            "tool.call.result",
            "tool.call.request",
            "tool.call.result"
        ]
    );
    assert!(engine.store().verify().await.expect("verify").first_broken.is_none());
}

/// Issue #26 (and stop 24's note): the same call on the same thread was answered with a result
/// recorded under an older definition of the tool, so someone who fixed a tool and retried got
/// the old answer. A replay is served only under the definition that produced it.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_definition_is_never_answered_with_the_old_result() {
    let project = Project::new("rules:\n  - { tools: [t.count], action: allow }");
    let engine = project.engine().await;
    let args = json!({ "label": "fixed" });
    let first = engine.dispatch(request("t.count", args.clone()), caller("s1", "alice")).await;
    assert!(first.ok && !first.replayed, "{first:?}");
    let repeat = engine.dispatch(request("t.count", args.clone()), caller("s1", "alice")).await;
    assert!(repeat.replayed, "the same call on the same thread is answered once");
    assert_eq!(project.executions(), 1);
    drop(engine);
    // The author fixes the tool: its definition changes, the call runs again.
    let path = project.path("tools/count.tool.yaml");
    let text = std::fs::read_to_string(&path).expect("read");
    std::fs::write(&path, text.replace("(counts executions)", "(counts executions, fixed)"))
        .expect("write");
    let engine = project.engine().await;
    let after = engine.dispatch(request("t.count", args), caller("s1", "alice")).await;
    assert!(after.ok && !after.replayed, "{after:?}");
    assert_eq!(project.executions(), 2);
}

/// Another person's identical call on the same thread gets its own decision and its own run,
/// never someone else's recorded result (docs/policy.md).
#[tokio::test(flavor = "multi_thread")]
async fn another_persons_identical_call_is_not_a_replay() {
    let project = Project::new("rules:\n  - { tools: [t.count, t.cat], action: allow }");
    let engine = project.engine().await;
    std::fs::write(project.path("notes.txt"), "first").expect("write");
    let mut bob = caller("s1", "bob");
    bob.thread_id = Some("shared-thread".to_owned());
    let mut alice = caller("s1", "alice");
    alice.thread_id = Some("shared-thread".to_owned());
    let args = json!({ "label": "x" });
    assert!(!engine.dispatch(request("t.count", args.clone()), alice.clone()).await.replayed);
    assert!(!engine.dispatch(request("t.count", args), bob.clone()).await.replayed);
    assert_eq!(project.executions(), 2);
    // A deterministic tool too.
    let read = json!({ "file": "notes.txt" });
    assert!(!engine.dispatch(request("t.cat", read.clone()), alice).await.replayed);
    std::fs::write(project.path("notes.txt"), "second").expect("write");
    let bobs = engine.dispatch(request("t.cat", read), bob).await;
    assert!(!bobs.replayed, "{bobs:?}");
    assert_eq!(bobs.data["stdout"], "second");
}
