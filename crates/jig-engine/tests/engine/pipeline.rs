//! The pipeline's stages: not found, limits, timeouts, cancellation, events, budgets, redaction,
//! metrics.

use std::time::{Duration, Instant};

use jig_engine::{CallContext, Event};
use serde_json::json;

use crate::{Project, call, caller, code, kinds, request};

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_not_found_with_a_hint_and_recorded() {
    let project = Project::new("");
    let engine = project.engine().await;
    let response = call(&engine, "t.ecko", json!({})).await;
    assert_eq!(code(&response), "E_NOT_FOUND");
    assert_eq!(response.errors[0].details.as_ref().expect("details")["did_you_mean"], "t.echo");
    assert_eq!(
        kinds(&engine, &response.request_id).await,
        ["tool.call.request", "tool.call.failed"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_tool_is_killed_at_its_timeout() {
    let project = Project::new("");
    let engine = project.engine().await;
    let started = Instant::now();
    let response = call(&engine, "t.sleep", json!({ "secs": "30" })).await;
    assert_eq!(code(&response), "E_TIMEOUT", "{response:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    let run = engine.store().run_of_request(&response.request_id).await.expect("run").expect("run");
    assert_eq!(run.state.as_str(), "failed");
    // The whole process group died: the shell never got to write its file.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!project.path("slept.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_stops_and_is_recorded_as_cancelled() {
    let project = Project::new("");
    let engine = project.engine().await;
    let context = caller("s1", "alice");
    let cancel = context.cancel.clone();
    let req = request("t.sleep", json!({ "secs": "30" }));
    let task = tokio::spawn({
        let engine = engine.clone();
        let req = req.clone();
        async move { engine.dispatch(req, context).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let response = task.await.expect("join");
    assert!(!response.ok);
    let run = engine.store().run_of_request(&req.request_id).await.expect("run").expect("run");
    assert_eq!(run.state.as_str(), "cancelled", "{response:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn subscribers_see_state_changes_and_output() {
    let project = Project::new("");
    let engine = project.engine().await;
    let mut first = engine.subscribe();
    let mut second = engine.subscribe();
    let response = call(&engine, "t.echo", json!({ "text": "streamed" })).await;
    assert!(response.ok);
    for receiver in [&mut first, &mut second] {
        let mut states = Vec::new();
        let mut output = String::new();
        while let Ok(event) = receiver.try_recv() {
            let Event::Message(message) = event else { continue };
            assert_eq!(message.request_id, response.request_id);
            match message.event.as_str() {
                "RunStateChanged" => states
                    .push(message.data.expect("data")["state"].as_str().expect("state").to_owned()),
                "OutputChunk" => output
                    .push_str(message.data.expect("data")["text"].as_str().unwrap_or_default()),
                _ => {}
            }
        }
        assert_eq!(states, ["created", "running", "succeeded"]);
        assert_eq!(output, "streamed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn session_budgets_are_enforced_and_queryable() {
    let project = Project::new("budgets: { max_calls: 2 }");
    let engine = project.engine().await;
    assert!(call(&engine, "t.echo", json!({ "text": "1" })).await.ok);
    assert!(call(&engine, "t.echo", json!({ "text": "2" })).await.ok);
    let (used, left) = engine.budget("s1").await.expect("budget");
    assert_eq!(used.calls, 2);
    assert_eq!(left.calls, Some(0));
    let third = call(&engine, "t.echo", json!({ "text": "3" })).await;
    assert_eq!(code(&third), "E_LIMIT", "{third:?}");
    assert_eq!(third.errors[0].details.as_ref().expect("details")["rule"], "budgets.max_calls");
    // Another session has its own budget.
    assert!(
        engine.dispatch(request("t.echo", json!({ "text": "4" })), caller("s2", "alice")).await.ok
    );
}

/// `max_bytes` (arguments plus results) and `max_wall_ms` stop a session once used up.
#[tokio::test(flavor = "multi_thread")]
async fn byte_and_time_budgets_are_enforced() {
    let project = Project::new("budgets: { max_bytes: 200 }");
    let engine = project.engine().await;
    let first = call(&engine, "t.echo", json!({ "text": "x".repeat(150) })).await;
    assert!(first.ok, "{first:?}");
    let (used, _) = engine.budget("s1").await.expect("budget");
    assert!(used.bytes > 200, "arguments and result counted: {}", used.bytes);
    let over = call(&engine, "t.echo", json!({ "text": "y" })).await;
    assert_eq!(code(&over), "E_LIMIT", "{over:?}");
    assert_eq!(over.errors[0].details.as_ref().expect("details")["rule"], "budgets.max_bytes");

    let project = Project::new("budgets: { max_wall_ms: 100 }");
    let engine = project.engine().await;
    let slow = call(&engine, "t.sleep", json!({ "secs": "0.3" })).await;
    assert!(slow.ok, "{slow:?}");
    let after = call(&engine, "t.echo", json!({ "text": "z" })).await;
    assert_eq!(code(&after), "E_LIMIT", "{after:?}");
    assert_eq!(after.errors[0].details.as_ref().expect("details")["rule"], "budgets.max_wall_ms");
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_the_store() {
    let project = Project::new("");
    let engine = project.engine().await;
    let response = call(&engine, "t.leak", json!({ "password": "hunter2-hunter2" })).await;
    assert!(response.ok, "{response:?}");
    // Neither the caller nor the audit sees the token the tool printed.
    let stdout = response.data["stdout"].as_str().expect("stdout");
    assert_eq!(stdout, "export GITHUB_TOKEN=[REDACTED]");
    let packets = crate::packets(&engine, &response.request_id).await;
    let stored = serde_json::to_string(&packets).expect("json");
    assert!(!stored.contains("hunter2"), "{stored}");
    assert!(!stored.contains("ghp_abcdefghij"), "{stored}");
    drop(engine);
    let bytes = std::fs::read(project.path(".jig/audit.db")).expect("db");
    let wal = std::fs::read(project.path(".jig/audit.db-wal")).unwrap_or_default();
    for file in [&bytes, &wal] {
        assert!(!contains(file, b"hunter2"), "the password is on disk");
        assert!(!contains(file, b"ghp_abcdefghij"), "the token is on disk");
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_calls_errors_and_latency() {
    let project = Project::new("");
    let engine = project.engine().await;
    call(&engine, "t.echo", json!({ "text": "a" })).await;
    call(&engine, "t.echo", json!({ "text": 1 })).await;
    let waits = call(&engine, "t.count", json!({ "label": "x" })).await;
    let metrics = engine.metrics();
    assert_eq!(metrics.calls, 3);
    assert_eq!(metrics.errors, 2);
    assert_eq!(metrics.pending_approval, 1);
    assert_eq!(metrics.denied, 0);
    // bob denies it: the call waits no more, and it was denied (issue #42: it stayed "waiting"
    // and "not denied" for ever).
    let approval = waits.waits_for().expect("waits").to_string();
    engine.deny(&approval, "bob", Some("not now"), None).await.expect("deny");
    let after = engine.metrics();
    assert_eq!((after.pending_approval, after.denied), (0, 1));
    assert_eq!(after.waited_approval, 1, "it did wait");
    assert!((metrics.dispatch_error_rate - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(metrics.dispatch_latency_ms.count, 3);
    assert!(
        metrics.dispatch_latency_ms.p99.expect("p99")
            >= metrics.dispatch_latency_ms.p50.expect("p50")
    );
    let names = serde_json::to_value(&metrics).expect("json");
    for name in [
        "tools.select.latency_ms",
        "tools.dispatch.latency_ms",
        "tools.dispatch.error_rate",
        "tools.registry.size",
    ] {
        assert!(names.get(name).is_some(), "{name}");
    }
}

/// Another engine starting on the same store (another `jig call`) leaves a live call alone;
/// `jig-cli`'s tests kill a process with SIGKILL to check that a dead one's call is recovered.
#[tokio::test(flavor = "multi_thread")]
async fn start_up_recovery_leaves_live_calls_alone() {
    let project = Project::new("");
    let engine = project.engine().await;
    let req = request("t.sleep", json!({ "secs": "30" }));
    let context = CallContext::default();
    let cancel = context.cancel.clone();
    let task = tokio::spawn({
        let engine = engine.clone();
        let req = req.clone();
        async move { engine.dispatch(req, context).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let other = project.engine().await;
    let run = other.store().run_of_request(&req.request_id).await.expect("run").expect("run");
    assert_eq!(run.state.as_str(), "running", "a live call was recovered: {:?}", run.error);
    assert_eq!(run.owner.as_deref(), Some(jig_audit::owner::current()));
    cancel.cancel();
    assert!(!task.await.expect("join").ok);
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_with_calls_in_flight_get_heartbeats() {
    let project = Project::new("");
    let options = jig_engine::EngineOptions {
        project: project.root.clone(),
        heartbeat: Some(Duration::from_millis(50)),
        ..jig_engine::EngineOptions::default()
    };
    let engine = jig_engine::Engine::open(options).await.expect("open");
    let mut events = engine.subscribe();
    let context = caller("busy-session", "alice");
    let cancel = context.cancel.clone();
    let task = tokio::spawn({
        let engine = engine.clone();
        async move { engine.dispatch(request("t.sleep", json!({ "secs": "30" })), context).await }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut beats = 0;
    while beats < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(Event::Heartbeat(beat))) => {
                assert_eq!(beat.session_id, "busy-session");
                beats += 1;
            }
            Ok(Ok(_)) => {}
            other => panic!("no heartbeat: {other:?}"),
        }
    }
    cancel.cancel();
    task.await.expect("join");
    // Nothing in flight: no more heartbeats.
    tokio::time::sleep(Duration::from_millis(120)).await;
    while events.try_recv().is_ok() {}
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !matches!(events.try_recv(), Ok(Event::Heartbeat(_))),
        "a heartbeat for an idle session"
    );
}

/// A start that finds every place taken for longer than it waits is refused as busy, with
/// nothing of it run or recorded; the places are not lost, and the next start after a call
/// ends runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_that_waits_too_long_for_a_place_is_refused_as_busy_and_records_nothing() {
    let project = Project::new("");
    let options = jig_engine::EngineOptions {
        project: project.root.clone(),
        background_calls: Some(1),
        start_wait: Some(Duration::from_millis(300)),
        ..jig_engine::EngineOptions::default()
    };
    let engine = jig_engine::Engine::open(options).await.expect("open");
    let slow = caller("burst", "alice");
    let cancel = slow.cancel.clone();
    engine.start(request("t.sleep", json!({ "secs": "30" })), slow).await.expect("start");
    let refused = request("t.sleep", json!({ "secs": "0" }));
    let refused_id = refused.request_id.clone();
    let started = Instant::now();
    let busy = engine.start(refused, caller("burst", "bob")).await.expect_err("busy");
    assert!(started.elapsed() >= Duration::from_millis(300), "it waited first");
    assert!(started.elapsed() < Duration::from_secs(5), "and not for long");
    assert_eq!(busy.code(), jig_model::ErrorCode::Limit);
    assert!(busy.to_string().contains("busy: all 1 places"), "{busy}");
    assert!(
        engine.history().run(&refused_id).await.expect("read").is_none(),
        "a refused start left a record"
    );
    cancel.cancel();
    let mut events = engine.subscribe();
    let next = engine
        .start(request("t.sleep", json!({ "secs": "0" })), caller("burst", "bob"))
        .await
        .expect("a place is free again once the first call ended");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(Event::Response(response))) if response.request_id == next => break,
            Ok(Ok(_)) => {}
            other => panic!("no answer: {other:?}"),
        }
    }
}

/// A caller that starts calls faster than they finish waits for a free slot: at most
/// `background_calls` run at once, and the next starts when one ends (not piled up in memory).
#[tokio::test(flavor = "multi_thread")]
async fn calls_started_in_the_background_wait_for_a_free_slot() {
    let project = Project::new("");
    let options = jig_engine::EngineOptions {
        project: project.root.clone(),
        background_calls: Some(1),
        ..jig_engine::EngineOptions::default()
    };
    let engine = jig_engine::Engine::open(options).await.expect("open");
    let mut events = engine.subscribe();
    let slow = caller("burst", "alice");
    let cancel = slow.cancel.clone();
    let first =
        engine.start(request("t.sleep", json!({ "secs": "30" })), slow).await.expect("start");
    // The only slot is taken: the next start waits.
    let next = tokio::spawn({
        let engine = engine.clone();
        async move {
            engine.start(request("t.sleep", json!({ "secs": "0" })), caller("burst", "alice")).await
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!next.is_finished(), "a second call started while the only slot was taken");
    // The first ends (stopped): the second gets its slot and runs.
    cancel.cancel();
    let second = tokio::time::timeout(Duration::from_secs(10), next)
        .await
        .expect("the second call started once the slot was free")
        .expect("join")
        .expect("started");
    let mut answered = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while answered.len() < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(Event::Response(response))) => answered.push(response.request_id.clone()),
            Ok(Ok(_)) => {}
            other => panic!("no answer: {other:?} (got {answered:?})"),
        }
    }
    assert_eq!(answered, [first, second], "in the order they were started");
}
