//! Parallel blocks: arms run at the same time, each on its own copy of the state; their
//! results merge; arms that contend for a resource are refused before anything runs.

use std::sync::atomic::Ordering;

use jig_runbook::{RunStatus, RunbookError};
use serde_json::json;

use crate::support::{TestHost, advance, ok, runbook, tool, try_advance};

fn tools() -> Vec<(String, jig_runbook::ToolInfo)> {
    vec![
        tool("dns.check", false, &["network"], &[]),
        tool("web.check", false, &["network"], &[]),
        tool("svc.restart", true, &["service"], &["service"]),
        tool("svc.status", false, &["service"], &[]),
    ]
}

#[tokio::test]
async fn arms_run_concurrently_on_copies_and_merge_their_outputs() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["dns", "web"],
        "steps": [
            { "id": "both", "type": "parallel", "branches": [
                { "label": "dns", "steps": [{ "id": "d", "type": "tool", "tool": "dns", "action": "check", "export": ["dns_ok"] }] },
                { "label": "web", "steps": [
                    { "id": "w", "type": "tool", "tool": "web", "action": "check" },
                    { "id": "peek", "type": "assert", "continue_on_fail": true, "assert": [{ "type": "exists", "value": "{{ .w.web_ok }}" }] }
                ] }
            ] },
            { "type": "end", "outcome": { "category": "no_action", "meta": { "dns": "{{ .dns_ok }}", "web": "{{ .web_ok }}" } } }
        ]
    }));
    let mut host = TestHost::new(tools(), |call| match call.tool.as_str() {
        "dns.check" => ok(json!({ "dns_ok": true })),
        _ => ok(json!({ "web_ok": true })),
    });
    host.delay_ms = 150;
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Completed, "{progress:?}");
    assert_eq!(
        host.most_in_flight.load(Ordering::SeqCst),
        2,
        "both arms' tools were in flight at once"
    );
    let meta = progress.outcome.expect("outcome").meta;
    assert_eq!((meta["dns"].clone(), meta["web"].clone()), (json!(true), json!(true)));
    assert_eq!(
        progress.visited,
        ["both", "d", "w", "peek"],
        "visited in declaration order, not completion order"
    );
    let kinds = host.trace_kinds();
    assert!(
        kinds.contains(&"parallel_fork".to_owned()) && kinds.contains(&"parallel_merge".to_owned())
    );
}

#[tokio::test]
async fn an_arm_does_not_see_what_its_sibling_produced() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["dns", "web"],
        "steps": [
            { "id": "both", "type": "parallel", "branches": [
                { "label": "a", "steps": [{ "id": "d", "type": "tool", "tool": "dns", "action": "check" }] },
                { "label": "b", "steps": [{ "id": "w", "type": "tool", "tool": "web", "action": "check", "inputs": { "saw": "{{ .from_dns }}" } }] }
            ] },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let mut host = TestHost::new(tools(), |_| ok(json!({ "from_dns": "x" })));
    host.delay_ms = 20;
    let progress = advance(&rb, &host, json!({}), false).await;
    let failure = progress.failure.expect("arm b fails");
    assert_eq!(failure.key, "both/b/w");
    assert!(
        failure.failure.message.contains("undefined variable `.from_dns`"),
        "{}",
        failure.failure.message
    );
}

#[tokio::test]
async fn contending_arms_are_refused_before_anything_runs() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["dns", "svc"],
        "steps": [
            { "id": "warmup", "type": "tool", "tool": "dns", "action": "check" },
            { "id": "race", "type": "parallel", "branches": [
                { "label": "restart", "steps": [{ "id": "r", "type": "tool", "tool": "svc", "action": "restart" }] },
                { "label": "observe", "steps": [{ "id": "s", "type": "tool", "tool": "svc", "action": "status" }] }
            ] },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(tools(), |_| ok(json!({})));
    let refused = try_advance(&rb, &host, json!({}), false).await.expect_err("conflict");
    assert!(
        matches!(&refused, RunbookError::ParallelConflict { step, tags, .. } if step == "race" && tags == "`service`"),
        "{refused}"
    );
    assert!(host.calls().is_empty(), "not even the step before the block ran");
}

#[tokio::test]
async fn two_arms_setting_one_variable_is_an_error_not_a_silent_choice() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["dns", "web"],
        "steps": [
            { "id": "both", "type": "parallel", "branches": [
                { "label": "a", "steps": [{ "id": "d", "type": "tool", "tool": "dns", "action": "check" }] },
                { "label": "b", "steps": [{ "id": "w", "type": "tool", "tool": "web", "action": "check" }] }
            ] },
            { "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(tools(), |call| ok(json!({ "status": call.tool })));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert!(progress.failure.expect("failure").failure.message.contains("both set `status`"));
}

#[tokio::test]
async fn parallel_for_each_runs_items_at_once_and_keeps_declaration_order() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "hosts": ["a", "b", "c"] } }, "tools": ["web"],
        "steps": [
            { "id": "each", "type": "tool", "tool": "web", "action": "check",
              "for_each": { "as": "h", "over": "{{ .hosts }}", "parallel": true }, "inputs": { "host": "{{ .h }}" } },
            { "type": "end", "outcome": { "category": "no_action", "meta": { "order": "{{ range .each }}{{ .host }}{{ end }}" } } }
        ]
    }));
    let mut host = TestHost::new(tools(), |call| ok(json!({ "host": call.inputs["host"] })));
    host.delay_ms = 100;
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(host.most_in_flight.load(Ordering::SeqCst), 3);
    assert_eq!(progress.outcome.expect("outcome").meta["order"], "abc");
}
