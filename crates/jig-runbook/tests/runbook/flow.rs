//! Flow control: branches, forward jumps, jumps that stay in their scope.

use jig_runbook::RunStatus;
use serde_json::json;

use crate::support::{TestHost, advance, ok, runbook, tool};

fn rb(code: &str) -> jig_model::runbook::Runbook {
    runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t", "constants": { "code": code } }, "tools": ["probe"],
        "steps": [
            { "id": "triage", "type": "branch", "branches": [
                { "condition": "{{ eq .code \"200\" }}", "label": "healthy", "steps": [{ "id": "up", "type": "end", "outcome": { "category": "no_action" } }] },
                { "condition": "{{ eq .code \"503\" }}", "label": "degraded", "steps": [
                    { "id": "skip_ahead", "type": "tool", "tool": "probe", "action": "check", "next": "fixed" },
                    { "id": "skipped", "type": "tool", "tool": "probe", "action": "check" },
                    { "id": "fixed", "type": "end", "outcome": { "category": "resolved" } }
                ] }
            ] },
            { "id": "after", "type": "end", "outcome": { "category": "escalated" } }
        ]
    }))
}

#[tokio::test]
async fn the_first_arm_whose_condition_holds_runs_and_forward_jumps_skip_ahead() {
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({})));
    let progress = advance(&rb("503"), &host, json!({}), false).await;
    assert_eq!(progress.visited, ["triage", "skip_ahead", "fixed"]);
    assert_eq!(
        host.calls()[0].key,
        "triage/degraded/skip_ahead",
        "keys say where in the tree a step ran"
    );
    let kinds = host.trace_kinds();
    assert!(
        kinds.contains(&"branch_enter".to_owned()) && kinds.contains(&"branch_exit".to_owned())
    );
}

#[tokio::test]
async fn no_matching_arm_goes_on_after_the_branch() {
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({})));
    let progress = advance(&rb("418"), &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Completed);
    assert_eq!(progress.visited, ["after"]);
}

#[tokio::test]
async fn next_cannot_leave_its_list() {
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "b", "type": "branch", "branches": [{ "condition": "default", "steps": [
                { "id": "inner", "type": "tool", "tool": "probe", "action": "check", "next": "outer" }
            ] }] },
            { "id": "outer", "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({})));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    assert!(progress.failure.expect("failure").failure.message.contains("not a step of this list"));
}
