//! Each construct of kernel-v0.md on its own.

use jig_runbook::{Entry, Need, RunStatus, RunbookError, ToolAnswer};
use serde_json::{Map, json};

use crate::support::{TestHost, advance, ok, runbook, tool, try_advance};

fn probe() -> Vec<(String, jig_runbook::ToolInfo)> {
    vec![
        tool("probe.check", false, &["network"], &[]),
        tool("restart.run", true, &[], &["service"]),
    ]
}

#[tokio::test]
async fn tool_inputs_render_from_inputs_and_constants_and_outputs_become_variables() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "inputs": { "host": { "type": "string", "required": true } }, "constants": { "path": "/healthz" } },
        "tools": ["probe"],
        "steps": [
            { "id": "check", "type": "tool", "tool": "probe", "action": "check", "inputs": { "url": "https://{{ .host }}{{ .path }}" } },
            { "id": "done", "type": "end", "outcome": { "category": "no_action", "code": "ok",
              "meta": { "global": "{{ .status }}", "by_step": "{{ .check.status }}", "namespaced": "{{ .step.check.status }}" } } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({ "status": 200 })));
    let progress = advance(&rb, &host, json!({ "host": "srv1" }), false).await;
    assert_eq!(progress.status, RunStatus::Completed);
    assert_eq!(host.calls()[0].inputs["url"], "https://srv1/healthz");
    assert_eq!(host.calls()[0].tool, "probe.check");
    let outcome = progress.outcome.expect("outcome");
    assert_eq!(outcome.code.as_deref(), Some("ok"));
    assert_eq!(outcome.meta["global"], 200, "a single action keeps its type");
    assert_eq!(outcome.meta["by_step"], 200);
    assert_eq!(outcome.meta["namespaced"], 200);
    assert_eq!(progress.visited, ["check", "done"]);
}

#[tokio::test]
async fn inputs_are_checked_before_anything_runs() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "inputs": {
            "host": { "type": "string", "required": true },
            "count": { "type": "int", "default": 3 },
            "mode": { "type": "string", "enum": ["fast", "slow"], "default": "fast" } } },
        "tools": ["probe"],
        "steps": [
            { "id": "check", "type": "tool", "tool": "probe", "action": "check", "inputs": { "n": "{{ .count }}", "m": "{{ .mode }}" } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let missing = try_advance(&rb, &host, json!({}), false).await.expect_err("host is required");
    assert!(matches!(&missing, RunbookError::Input { name, .. } if name == "host"), "{missing}");
    assert!(host.calls().is_empty(), "nothing ran");
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let bad = try_advance(&rb, &host, json!({ "host": "a", "mode": "medium" }), false)
        .await
        .expect_err("enum");
    assert!(bad.to_string().contains("not one of fast, slow"), "{bad}");
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let bad = try_advance(&rb, &host, json!({ "host": "a", "count": "many" }), false)
        .await
        .expect_err("int");
    assert!(bad.to_string().contains("not a whole number"), "{bad}");
    let host = TestHost::new(probe(), |_| ok(json!({})));
    advance(&rb, &host, json!({ "host": "a", "count": "7" }), false).await;
    assert_eq!(
        host.calls()[0].inputs["n"],
        7,
        "text from a command line becomes the declared type"
    );
    assert_eq!(host.calls()[0].inputs["m"], "fast");
}

#[tokio::test]
async fn when_false_skips_the_step_and_its_next() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "constants": { "go": false } },
        "tools": ["probe"],
        "steps": [
            { "id": "maybe", "type": "tool", "tool": "probe", "action": "check", "when": "{{ .go }}", "next": "last" },
            { "id": "middle", "type": "tool", "tool": "probe", "action": "check" },
            { "id": "last", "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.visited, ["middle", "last"]);
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn a_failed_assert_halts_unless_continue_on_fail() {
    let steps = |continue_on_fail: bool| {
        runbook(json!({
            "apiVersion": "kernel/v0",
            "meta": { "name": "t", "constants": { "code": "503" } },
            "steps": [
                { "id": "healthy", "type": "assert", "continue_on_fail": continue_on_fail,
                  "assert": [{ "type": "equals", "value": "{{ .code }}", "expected": "200", "message": "not healthy" }] },
                { "id": "route", "type": "branch", "branches": [
                    { "condition": "{{ .healthy.passed }}", "label": "up", "steps": [{ "id": "up", "type": "end", "outcome": { "category": "no_action" } }] },
                    { "condition": "default", "label": "down", "steps": [{ "id": "down", "type": "end", "outcome": { "category": "escalated" } }] }
                ] }
            ]
        }))
    };
    let host = TestHost::new(vec![], |_| ok(json!({})));
    let halted = advance(&steps(false), &host, json!({}), false).await;
    assert_eq!(halted.status, RunStatus::Failed);
    let failure = halted.failure.expect("failure");
    assert_eq!((failure.key.as_str(), failure.failure.kind.as_str()), ("healthy", "assertion"));
    assert!(failure.failure.message.contains("not healthy"));
    let host = TestHost::new(vec![], |_| ok(json!({})));
    let probed = advance(&steps(true), &host, json!({}), false).await;
    assert_eq!(probed.status, RunStatus::Completed);
    assert_eq!(probed.visited, ["healthy", "route", "down"]);
    assert!(host.trace_kinds().contains(&"branch_enter".to_owned()));
}

#[tokio::test]
async fn exactly_one_end_runs_and_running_out_of_steps_is_an_error() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "first_end", "type": "end", "outcome": { "category": "resolved", "code": "early" } },
            { "id": "never", "type": "tool", "tool": "probe", "action": "check" }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.outcome.expect("outcome").code.as_deref(), Some("early"));
    assert!(host.calls().is_empty());
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [{ "id": "only", "type": "tool", "tool": "probe", "action": "check" }]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert_eq!(progress.failure.expect("failure").failure.kind, "no_end");
}

#[tokio::test]
async fn a_bounded_backward_next_loops_with_a_retry_count() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe", "restart"],
        "steps": [
            { "id": "restart", "type": "tool", "tool": "restart", "action": "run" },
            { "id": "verify", "type": "tool", "tool": "probe", "action": "check",
              "next": { "step": "restart", "max": 2 } },
            { "id": "done", "type": "end", "outcome": { "category": "resolved", "meta": { "retries": "{{ .restart.retry_count }}" } } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({ "status": 503 })));
    let progress = advance(&rb, &host, json!({}), false).await;
    let tools: Vec<String> = host.calls().iter().map(|c| c.tool.clone()).collect();
    assert_eq!(
        tools,
        ["restart.run", "probe.check", "restart.run", "probe.check", "restart.run", "probe.check"]
    );
    assert_eq!(progress.outcome.expect("outcome").meta["retries"], 2);
    let keys: Vec<String> = host.calls().iter().map(|c| c.key.clone()).collect();
    assert_eq!(
        keys,
        ["restart", "verify", "restart@2", "verify@2", "restart@3", "verify@3"],
        "each visit is its own instance"
    );
}

#[tokio::test]
async fn for_each_collects_outputs_as_a_list_or_keyed_map() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "constants": { "nodes": [{ "id": "a" }, { "id": "b" }] } },
        "tools": ["probe"],
        "steps": [
            { "id": "each", "type": "tool", "tool": "probe", "action": "check",
              "for_each": { "as": "node", "over": "{{ .nodes }}" }, "inputs": { "host": "{{ .node.id }}" } },
            { "id": "keyed", "type": "tool", "tool": "probe", "action": "check",
              "for_each": { "as": "node", "over": "{{ .nodes }}", "key": "{{ .node.id }}" }, "inputs": { "host": "{{ .node.id }}" } },
            { "type": "end", "outcome": { "category": "no_action",
              "meta": { "second": "{{ index .each 1 \"seen\" }}", "b": "{{ .keyed.b.seen }}", "count": "{{ len .each }}" } } }
        ]
    }));
    let host = TestHost::new(probe(), |call| ok(json!({ "seen": call.inputs["host"] })));
    let progress = advance(&rb, &host, json!({}), false).await;
    let meta = progress.outcome.expect("outcome").meta;
    assert_eq!(
        (meta["second"].clone(), meta["b"].clone(), meta["count"].clone()),
        (json!("b"), json!("b"), json!(2))
    );
    let keys: Vec<String> = host.calls().iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys, ["each[0]", "each[1]", "keyed[a]", "keyed[b]"]);
    assert!(progress.variables.get("node").is_none(), "the loop variable is gone after the loop");
}

#[tokio::test]
async fn a_failing_item_stops_a_sequential_for_each_and_each_item_is_a_visit() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "constants": { "xs": ["a", "bad", "c"] } },
        "tools": ["probe"],
        "steps": [
            { "id": "before", "type": "tool", "tool": "probe", "action": "check", "inputs": { "host": "first" } },
            { "id": "each", "type": "tool", "tool": "probe", "action": "check",
              "for_each": { "as": "x", "over": "{{ .xs }}" }, "inputs": { "host": "{{ .x }}" } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |call| {
        if call.inputs["host"] == "bad" {
            ToolAnswer::Failed {
                code: "E_TOOL".to_owned(),
                message: "bad host".to_owned(),
                outputs: Map::new(),
            }
        } else {
            ok(json!({ "seen": call.inputs["host"] }))
        }
    });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Failed, "{progress:?}");
    let keys: Vec<String> = host.calls().iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys, ["before", "each[0]", "each[1]"], "the item after the failure never ran");
    assert_eq!(progress.visited, ["before", "each", "each"], "the run's visits, once per item");
}

#[tokio::test]
async fn for_each_key_collisions_are_errors() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "xs": ["same", "same"] } }, "tools": ["probe"],
        "steps": [
            { "id": "each", "type": "tool", "tool": "probe", "action": "check", "for_each": { "as": "x", "over": "{{ .xs }}", "key": "{{ .x }}" } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert!(
        progress
            .failure
            .expect("failure")
            .failure
            .message
            .contains("two items have the key `same`")
    );
    assert!(host.calls().is_empty());
}

#[tokio::test]
async fn repeat_runs_rounds_until_its_condition_and_exports_carry_between_rounds() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "debate", "type": "repeat", "repeat": { "max": 5, "until": "{{ eq .consensus \"reached\" }}" }, "steps": [
                { "id": "argue", "type": "tool", "tool": "probe", "action": "check", "scope": "round/{{ .repeat.index }}",
                  "inputs": { "round": "{{ .repeat.round }}" }, "export": ["consensus"] }
            ] },
            { "type": "end", "outcome": { "category": "resolved", "meta": { "final": "{{ .consensus }}" } } }
        ]
    }));
    let host = TestHost::new(probe(), |call| {
        let round = call.inputs["round"].as_u64().unwrap_or(0);
        ok(json!({ "consensus": if round >= 2 { "reached" } else { "open" } }))
    });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(host.calls().len(), 3, "rounds 0, 1, 2; stops when `until` holds");
    assert_eq!(progress.outcome.expect("outcome").meta["final"], "reached");
    let kinds = host.trace_kinds();
    assert_eq!(kinds.iter().filter(|k| *k == "repeat_iteration").count(), 3);
    assert!(kinds.contains(&"scope_export".to_owned()));
}

#[tokio::test]
async fn inputs_from_spreads_an_object_and_explicit_inputs_win() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "t", "inputs": { "host": { "type": "string", "default": "h1" } },
               "constants": { "target": { "hostname": "{{ .host }}", "port": 443 }, "auth": { "port": 8443, "user": "ops" } } },
        "tools": ["probe"],
        "steps": [
            { "id": "c", "type": "tool", "tool": "probe", "action": "check", "inputs_from": ["target", "auth"], "inputs": { "user": "admin" } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    advance(&rb, &host, json!({}), false).await;
    assert_eq!(
        serde_json::Value::Object(host.calls()[0].inputs.clone()),
        json!({ "hostname": "h1", "port": 8443, "user": "admin" })
    );
}

#[tokio::test]
async fn scoped_outputs_stay_in_their_scope_and_constants_are_immutable() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "a", "type": "tool", "tool": "probe", "action": "check", "scope": "round/0" },
            { "type": "end", "outcome": { "category": "no_action", "meta": { "scoped": "{{ .scope.round.0.answer }}" } } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({ "answer": "yes" })));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.outcome.expect("outcome").meta["scoped"], "yes");
    assert!(progress.variables.get("answer").is_none(), "not promoted without `export`");

    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "answer": "fixed" } }, "tools": ["probe"],
        "steps": [
            { "id": "a", "type": "tool", "tool": "probe", "action": "check" },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({ "answer": "changed" })));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert!(progress.failure.expect("failure").failure.message.contains("is a constant"));
}

#[tokio::test]
async fn visibility_hides_variables_from_a_steps_templates() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "question": "q", "secret": "s" } }, "tools": ["probe"],
        "steps": [
            { "id": "ok", "type": "tool", "tool": "probe", "action": "check", "visibility": { "allow": ["question"] }, "inputs": { "q": "{{ .question }}" } },
            { "id": "peek", "type": "tool", "tool": "probe", "action": "check", "visibility": { "deny": ["secret"] }, "inputs": { "s": "{{ .secret }}" } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(host.calls().len(), 1, "the peeking step never ran");
    let failure = progress.failure.expect("failure");
    assert_eq!(failure.key, "peek");
    assert!(
        failure.failure.message.contains("undefined variable `.secret`"),
        "{}",
        failure.failure.message
    );
    assert!(host.trace_kinds().contains(&"visibility_applied".to_owned()));
}

#[tokio::test]
async fn runbook_governance_denies_asks_and_approves() {
    let rb = |action: &str| {
        runbook(json!({
            "apiVersion": "kernel/v0",
            "meta": { "name": "t", "governance": { "rules": [{ "contract": { "writes": ["service"] }, "action": action }, { "default": "allow" }] } },
            "tools": ["restart"],
            "steps": [
                { "id": "fix", "type": "tool", "tool": "restart", "action": "run" },
                { "type": "end", "outcome": { "category": "resolved" } }
            ]
        }))
    };
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let denied = advance(&rb("deny"), &host, json!({}), false).await;
    assert_eq!(denied.status, RunStatus::Denied);
    assert!(host.calls().is_empty());
    let host = TestHost::new(probe(), |call| match &call.approval_required_by {
        Some(rule) => {
            ToolAnswer::PendingApproval { approval_id: "ap-1".into(), rule: rule.clone() }
        }
        None => ok(json!({})),
    });
    let asked = advance(&rb("require-approval"), &host, json!({}), false).await;
    assert_eq!(asked.status, RunStatus::Paused);
    assert_eq!(
        asked.waiting[0].need,
        Need::Approval { approval_id: "ap-1".into(), rule: "meta.governance.rules[0]".to_owned() },
        "the engine's approval queue decides, bound to the exact call"
    );
}

#[tokio::test]
async fn a_step_may_tighten_but_never_relax_its_tools_contract() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["restart"],
        "steps": [
            { "id": "fix", "type": "tool", "tool": "restart", "action": "run", "contract": { "side_effects": false } },
            { "type": "end", "outcome": { "category": "resolved" } }
        ]
    }));
    let host = TestHost::new(probe(), |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert_eq!(progress.failure.expect("failure").failure.kind, "contract_violation");
    assert!(host.calls().is_empty());
}

#[tokio::test]
async fn a_manual_step_waits_for_evidence_then_goes_on() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "host": "srv" } },
        "steps": [
            { "id": "look", "type": "manual", "instructions": "Check {{ .host }}'s dashboard.", "contract": { "side_effects": false },
              "required_evidence": [{ "kind": "text", "name": "notes" }] },
            { "type": "end", "outcome": { "category": "escalated", "meta": { "notes": "{{ .notes }}" } } }
        ]
    }));
    let host = TestHost::new(vec![], |_| ok(json!({})));
    let paused = advance(&rb, &host, json!({}), false).await;
    assert_eq!(paused.status, RunStatus::Paused);
    let waiting = &paused.waiting[0];
    assert_eq!(waiting.instructions.as_deref(), Some("Check srv's dashboard."));
    assert!(matches!(&waiting.need, Need::Evidence { required } if required[0].name == "notes"));
    host.give(
        "evidence:look".to_owned(),
        Entry::Evidence {
            values: json!({ "notes": "all red" }).as_object().cloned().unwrap_or_default(),
            by: "bob".to_owned(),
        },
    );
    let done = advance(&rb, &host, json!({}), false).await;
    assert_eq!(done.outcome.expect("outcome").meta["notes"], "all red");
    let trace = host.trace.lock().expect("trace").clone();
    let completed =
        trace.iter().find(|e| e.kind == jig_runbook::TraceKind::StepComplete).expect("completed");
    assert_eq!(
        (completed.actor.kind.as_str(), completed.actor.id.as_str()),
        ("human", "bob"),
        "attributed to who gave the evidence"
    );
}

#[tokio::test]
async fn an_extension_without_a_runner_is_an_error_not_a_silent_skip() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" },
        "steps": [
            { "id": "agent", "type": "extension", "extension": "llm-agent", "contract": { "side_effects": false } },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(vec![], |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert!(progress.failure.expect("failure").failure.message.contains("llm-agent"));
}
