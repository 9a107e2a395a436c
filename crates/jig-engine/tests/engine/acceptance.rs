//! Seed 003's `acceptance.required`, one test per line.

use jig_audit::PacketKind;
use jig_engine::{EngineError, Intent};
use jig_model::SideEffect;
use serde_json::json;

use crate::{Project, call, caller, code, kinds, request};

/// "Tools are registered once and discoverable via tags"
#[tokio::test(flavor = "multi_thread")]
async fn tools_are_registered_once_and_discoverable_via_tags() {
    let project = Project::new("");
    let engine = project.engine().await;
    let mut tool = (*engine.get("t.echo").expect("t.echo")).clone();
    tool.id = "t.shout".to_owned();
    tool.tags = vec!["loud".to_owned()];
    engine.register(tool.clone()).expect("first registration");
    assert!(matches!(engine.register(tool), Err(EngineError::Duplicate(id)) if id == "t.shout"));
    let loaded = (*engine.get("file_read").expect("file_read")).clone();
    assert!(
        matches!(engine.register(loaded), Err(EngineError::Duplicate(_))),
        "a loaded tool cannot be registered again"
    );

    let loud: Vec<String> =
        engine.list(Some(&["loud".to_owned()]), None).iter().map(|t| t.id.clone()).collect();
    assert_eq!(loud, ["t.shout"]);
    let demo: Vec<String> =
        engine.list(Some(&["demo".to_owned()]), None).iter().map(|t| t.id.clone()).collect();
    assert_eq!(demo, ["t.count", "t.echo", "t.leak", "t.sleep"], "sorted by id");
    let pure: Vec<String> = engine
        .list(Some(&["demo".to_owned()]), Some(&[SideEffect::None]))
        .iter()
        .map(|t| t.id.clone())
        .collect();
    assert_eq!(pure, ["t.echo", "t.leak", "t.sleep"], "t.count writes");
    assert_eq!(engine.metrics().registry_size, engine.list(None, None).len() as u64);

    // A registered tool is dispatched like a loaded one.
    let response = call(&engine, "t.shout", json!({ "text": "hey" })).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["stdout"], "hey");
}

/// "Selector emits a persisted ToolSelection record"
#[tokio::test(flavor = "multi_thread")]
async fn selector_emits_a_persisted_tool_selection_record() {
    let project = Project::new("");
    let engine = project.engine().await;
    let intent = Intent {
        summary: "print a text back".into(),
        tags: vec!["text".into()],
        args: Some(json!({ "text": "hi" })),
        ..Intent::default()
    };
    let selection = engine.select(&intent, &caller("s1", "alice"), None).await.expect("selection");
    assert_eq!(selection.selected_tool, "t.echo");
    let packets = engine.store().packets_of(&selection.selection_id).await.expect("packets");
    let kinds: Vec<&str> = packets.iter().map(|p| p.kind.as_str()).collect();
    assert_eq!(kinds, [PacketKind::SelectRequest.as_str(), PacketKind::SelectResult.as_str()]);
    let stored = &packets[1].data["selection"];
    for field in [
        "intent_summary",
        "candidate_tools",
        "selected_tool",
        "args",
        "why_selected",
        "expected_side_effects",
        "rollback_plan",
        "confidence",
    ] {
        assert!(stored.get(field).is_some(), "the persisted record lacks `{field}`: {stored}");
    }
    assert_eq!(stored["selected_tool"], "t.echo");
    assert_eq!(packets[0].data["intent"]["summary"], "print a text back");
    assert!(engine.store().verify().await.expect("verify").first_broken.is_none());
    assert_eq!(engine.metrics().select_latency_ms.count, 1);
}

/// "Selector never selects unregistered tools"
#[tokio::test(flavor = "multi_thread")]
async fn selector_never_selects_unregistered_tools() {
    let project = Project::new("");
    let engine = project.engine().await;
    // Asked to choose among names only one of which exists, with an intent that names the
    // missing one exactly.
    let intent = Intent {
        summary: "ghost deploy".into(),
        keywords: vec!["ghost".into(), "deploy".into(), "text".into()],
        args: Some(json!({ "text": "x" })),
        ..Intent::default()
    };
    let candidates = vec!["ghost.deploy".to_owned(), "t.echo".to_owned()];
    let selection =
        engine.select(&intent, &caller("s1", "alice"), Some(&candidates)).await.expect("selection");
    assert_eq!(selection.selected_tool, "t.echo");
    assert!(selection.candidate_tools.iter().all(|c| c.tool != "ghost.deploy"));

    // Only unregistered names: nothing is selected, and the refusal is recorded too.
    let only_ghosts = vec!["ghost.deploy".to_owned()];
    let error =
        engine.select(&intent, &caller("s1", "alice"), Some(&only_ghosts)).await.unwrap_err();
    assert!(matches!(error, EngineError::NoSelection(_)), "{error}");
    let last = engine.store().packets(0, 100).await.expect("packets");
    assert_eq!(last.last().expect("a packet").kind, "tool.select.result");
    assert_eq!(last.last().expect("a packet").data["ok"], false);

    // Over many intents, whatever is selected is registered and among the candidates.
    let words = [
        "file", "read", "write", "git", "status", "text", "print", "demo", "sleep", "grep", "list",
        "secret",
    ];
    for (i, a) in words.iter().enumerate() {
        for b in &words[i..] {
            let intent = Intent { summary: format!("{a} {b}"), ..Intent::default() };
            if let Ok(selection) = engine.select(&intent, &caller("s1", "alice"), None).await {
                assert!(
                    engine.get(&selection.selected_tool).is_some(),
                    "{a} {b}: {}",
                    selection.selected_tool
                );
                assert!(
                    selection.candidate_tools.iter().any(|c| c.tool == selection.selected_tool)
                );
                let validation =
                    engine.validate(&selection.selected_tool, &selection.args).expect("tool");
                assert!(validation.valid, "{a} {b}: args {} do not validate", selection.args);
            }
        }
    }
}

/// "Dispatch validates args before governance"
#[tokio::test(flavor = "multi_thread")]
async fn dispatch_validates_args_before_governance() {
    let project = Project::new("rules:\n  - { tools: [file_write], action: deny }");
    let engine = project.engine().await;
    // file_write is denied by policy, but malformed arguments are reported first, and no
    // decision is made or recorded for them.
    let bad = request("file_write", json!({ "path": "a.txt" }));
    let response = engine.dispatch(bad.clone(), caller("s1", "alice")).await;
    assert_eq!(code(&response), "E_VALIDATION_FAIL", "{response:?}");
    let problems = &response.errors[0].details.as_ref().expect("details")["problems"];
    assert!(problems.to_string().contains("content"), "names the missing field: {problems}");
    assert_eq!(kinds(&engine, &bad.request_id).await, ["tool.call.request", "tool.call.failed"]);
    let anyone = jig_engine::Reader { person: "anyone".into(), may_approve: false };
    assert!(engine.history().approvals(false, &anyone).await.expect("approvals").is_empty());

    let good = request("file_write", json!({ "path": "a.txt", "content": "x" }));
    let response = engine.dispatch(good.clone(), caller("s1", "alice")).await;
    assert_eq!(code(&response), "E_POLICY");
    assert_eq!(
        kinds(&engine, &good.request_id).await,
        ["tool.call.request", "tool.call.decision", "tool.call.failed"]
    );
    assert!(!project.path("a.txt").exists());
}

/// "Side-effect tools are deny-by-default"
#[tokio::test(flavor = "multi_thread")]
async fn side_effect_tools_are_deny_by_default() {
    let project = Project::new("");
    let engine = project.engine().await;
    for (tool, args) in [
        ("file_write", json!({ "path": "a.txt", "content": "x" })),
        ("t.count", json!({ "label": "one" })),
    ] {
        let response = call(&engine, tool, args).await;
        assert!(!response.ok, "{tool} ran without governance allowing it");
        assert_eq!(code(&response), "E_POLICY");
        assert_eq!(
            response.errors[0].details.as_ref().expect("details")["rule"],
            "default.side_effects"
        );
    }
    assert!(!project.path("a.txt").exists());
    assert_eq!(project.executions(), 0);
    // A tool without side effects runs without a rule.
    assert!(call(&engine, "t.echo", json!({ "text": "ok" })).await.ok);
    // An explicit allow lets the side effect through.
    project.set_policy("rules:\n  - { tools: [t.count], action: allow }");
    let engine = project.engine().await;
    assert!(call(&engine, "t.count", json!({ "label": "one" })).await.ok);
    assert_eq!(project.executions(), 1);
}

/// "Every dispatch persists request + decision + result packets"
#[tokio::test(flavor = "multi_thread")]
async fn every_dispatch_persists_request_decision_and_result_packets() {
    let project = Project::new(
        "rules:\n  - { tools: [t.count], action: allow }\n  - { tools: [file_write], action: deny }",
    );
    let engine = project.engine().await;
    let cases = [
        ("t.echo", json!({ "text": "a" }), "tool.call.result"),
        ("t.count", json!({ "label": "a" }), "tool.call.result"),
        ("t.cat", json!({ "file": "missing.txt" }), "tool.call.failed"),
        ("file_write", json!({ "path": "x", "content": "y" }), "tool.call.failed"),
        ("file_read", json!({ "path": "../outside" }), "tool.call.failed"),
    ];
    for (tool, args, last) in cases {
        let req = request(tool, args);
        let response = engine.dispatch(req.clone(), caller("s1", "alice")).await;
        let packets = crate::packets(&engine, &req.request_id).await;
        let kinds: Vec<&str> = packets.iter().map(|p| p.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["tool.call.request", "tool.call.decision", last],
            "{tool}: {response:?}"
        );
        for packet in &packets {
            assert_eq!(packet.tool.as_deref(), Some(tool));
            assert_eq!(packet.principal.as_deref(), Some("alice"));
            assert_eq!(packet.session_id.as_deref(), Some("s1"));
        }
        assert_eq!(packets[1].run_id, response.run_id, "{tool}: the decision names the run");
        let run = engine
            .store()
            .run_of_request(&req.request_id)
            .await
            .expect("run")
            .expect("a run record");
        assert_eq!(
            run.state.as_str(),
            if response.ok {
                "succeeded"
            } else if tool == "file_write" || tool == "file_read" {
                // The path escape is refused by the policy's sandbox rule before file_read runs.
                "denied"
            } else {
                "failed"
            }
        );
    }
    let verification = engine.store().verify().await.expect("verify");
    assert!(verification.first_broken.is_none(), "{verification:?}");
    assert_eq!(verification.checked, 15);
}

/// "Idempotent calls return cached results"
#[tokio::test(flavor = "multi_thread")]
async fn idempotent_calls_return_cached_results() {
    let project = Project::new("rules:\n  - { tools: [t.count], action: allow }");
    let engine = project.engine().await;
    let first = call(&engine, "t.count", json!({ "label": "once" })).await;
    assert!(first.ok && !first.replayed, "{first:?}");
    let second = call(&engine, "t.count", json!({ "label": "once" })).await;
    assert!(second.ok && second.replayed, "{second:?}");
    assert_eq!(second.data, first.data);
    assert_eq!(project.executions(), 1, "the side effect happened once");
    // The key is thread + tool + params: other arguments, or another thread, run again.
    assert!(!call(&engine, "t.count", json!({ "label": "other" })).await.replayed);
    let mut elsewhere = caller("s1", "alice");
    elsewhere.thread_id = Some("t2".into());
    assert!(
        !engine.dispatch(request("t.count", json!({ "label": "once" })), elsewhere).await.replayed
    );
    assert_eq!(project.executions(), 3);
    // Surviving a restart: the key is in the store, not in memory.
    let engine = project.engine().await;
    assert!(call(&engine, "t.count", json!({ "label": "once" })).await.replayed);
    assert_eq!(project.executions(), 3);
    assert_eq!(engine.metrics().replayed, 1);
}
