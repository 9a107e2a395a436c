//! runbook/v0 and v1 step details at run time: captures, assertions, preconditions, delays,
//! per-step approvals, an invoke step's gate, and step timeouts.

use std::time::{Duration, Instant};

use jig_runbook::journal::keys;
use jig_runbook::{Entry, Need, RunStatus, ToolAnswer, ToolCall, ToolInfo};
use serde_json::{Value, json};

use crate::support::{TestHost, advance, legacy_runbook, ok, tool};

/// `shell_exec` as the engine declares it (what a `cli` step and a precondition call), and a
/// tool/v0 action with one output.
fn tools() -> Vec<(String, ToolInfo)> {
    let (id, mut shell) = tool("shell_exec", true, &[], &[]);
    shell.outputs = ["code", "stdout", "stderr", "truncated"].map(str::to_owned).to_vec();
    let (dig, mut info) = tool("dig.a", false, &[], &[]);
    info.outputs = vec!["answer".to_owned()];
    vec![(id, shell), (dig, info)]
}

fn cmd(call: &ToolCall) -> String {
    call.inputs.get("cmd").and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn shell(code: i64, stdout: &str) -> ToolAnswer {
    ok(json!({ "code": code, "stdout": stdout, "stderr": "", "truncated": false }))
}

#[tokio::test]
async fn a_failed_assertion_fails_the_step_and_says_which() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t" },
        "steps": [
            { "id": "compare", "type": "cli", "with": { "argv": ["getent", "hosts", "a.example"] },
              "assertions": [{ "exit_code": 0 }, { "contains": "10.0.0.1" }] },
            { "id": "after", "type": "cli", "with": { "argv": ["true"] } }
        ]
    }));
    // getent exits 2 and prints nothing: a non-zero exit is shell_exec's answer, not a failure,
    // so only the assertion can stop the run here.
    let host = TestHost::new(tools(), |call| {
        if cmd(call).starts_with("getent") { shell(2, "") } else { shell(0, "") }
    });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Failed);
    let failure = progress.failure.expect("a failure").failure;
    assert_eq!(failure.kind, "assertion");
    assert!(failure.message.contains("assertions[0]: exit code 2 is not 0"), "{}", failure.message);
    assert!(
        failure.message.contains("assertions[1]: output does not contain"),
        "{}",
        failure.message
    );
    assert_eq!(host.calls().len(), 1, "the step after a failed one does not run");

    // The same step with the answer the assertions want goes on.
    let host = TestHost::new(tools(), |_| shell(0, "10.0.0.1 a.example\n"));
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Completed);
    assert_eq!(progress.visited, ["compare", "after"]);
}

#[tokio::test]
async fn captures_become_variables_that_later_steps_and_outcomes_read() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t", "inputs": { "name": { "from": "prompt" } } },
        "tools": ["dig"],
        "steps": [
            { "id": "lookup", "type": "tool", "tool": { "name": "dig", "action": "a", "args": { "name": "{{ .name }}" } },
              "capture": { "addresses": "stdout" } },
            { "id": "probe", "type": "cli", "with": { "argv": ["curl", "-s", "http://{{ .addresses }}/status"] },
              "capture": { "phase": "stdout.status.phase", "rc": "exit_code" },
              "outcomes": [
                { "when": "{{ eq .phase \"Ready\" }}", "state": "no_action", "recommendation": "{{ .addresses }} is fine" },
                { "state": "needs_rca" }
              ] }
        ]
    }));
    let host = TestHost::new(tools(), |call| match call.tool.as_str() {
        "dig.a" => ok(json!({ "answer": "10.0.0.7\n" })),
        _ => shell(0, "{\"status\": {\"phase\": \"Ready\"}}"),
    });
    let progress = advance(&rb, &host, json!({ "name": "a.example" }), false).await;
    assert_eq!(progress.status, RunStatus::Completed, "{:?}", progress.failure);
    assert_eq!(cmd(&host.calls()[1]), "curl -s http://10.0.0.7/status");
    assert_eq!(progress.variables["addresses"], "10.0.0.7");
    assert_eq!(progress.variables["phase"], "Ready");
    assert_eq!(progress.variables["rc"], 0);
    let outcome = progress.outcome.expect("an outcome");
    assert_eq!(outcome.category.as_str(), "no_action");

    // A capture of something the step did not produce stops the run, naming it (gert would
    // leave the variable unset, and a later template would read nothing).
    let host = TestHost::new(tools(), |call| match call.tool.as_str() {
        "dig.a" => ok(json!({ "answer": "10.0.0.7" })),
        _ => shell(0, "not json"),
    });
    let progress = advance(&rb, &host, json!({ "name": "a.example" }), false).await;
    assert_eq!(progress.status, RunStatus::Error);
    let failure = progress.failure.expect("a failure").failure;
    assert_eq!(failure.kind, "capture");
    assert!(failure.message.contains("capture `phase`: stdout is not JSON"), "{}", failure.message);
}

#[tokio::test]
async fn a_precondition_that_holds_skips_the_step_and_runs_once() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t" },
        "steps": [
            { "id": "restart", "type": "cli", "with": { "argv": ["systemctl", "restart", "web"] },
              "precondition": { "check": ["systemctl", "is-active", "web"], "skip_if_succeeds": true, "message": "web is already up" } },
            { "id": "after", "type": "manual", "instructions": "Look at it." }
        ]
    }));
    let host = TestHost::new(tools(), |call| {
        if cmd(call).contains("is-active") { shell(0, "active\n") } else { shell(0, "") }
    });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Paused, "waits at the manual step");
    let calls = host.calls();
    assert_eq!(calls.len(), 1, "only the check ran: {calls:?}");
    assert_eq!(cmd(&calls[0]), "systemctl is-active web");
    assert_eq!(calls[0].key, "restart#precondition");
    match host.journal().get(&keys::done("restart")) {
        Some(Entry::Done { failure: Some(failure), .. }) => {
            assert_eq!(failure.kind, "precondition");
            assert_eq!(failure.message, "web is already up");
        }
        other => panic!("the step is recorded skipped: {other:?}"),
    }
    // Walking again asks the journal, not the system.
    advance(&rb, &host, json!({}), false).await;
    assert_eq!(host.calls().len(), 1);

    // A check that fails lets the step run.
    let host = TestHost::new(tools(), |call| {
        if cmd(call).contains("is-active") { shell(3, "inactive\n") } else { shell(0, "") }
    });
    advance(&rb, &host, json!({}), false).await;
    let commands: Vec<String> = host.calls().iter().map(cmd).collect();
    assert_eq!(commands, ["systemctl is-active web", "systemctl restart web"]);
}

#[tokio::test]
async fn a_delay_is_waited_before_the_step_runs() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t" },
        "steps": [{ "id": "later", "type": "cli", "delay": "300ms", "with": { "argv": ["true"] } }]
    }));
    let host = TestHost::new(tools(), |_| shell(0, ""));
    let started = Instant::now();
    let progress = advance(&rb, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Completed);
    assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
    assert_eq!(host.calls().len(), 1);
}

#[tokio::test]
async fn step_approvals_need_that_many_go_aheads_or_approvals_of_the_call() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t" },
        "steps": [
            { "id": "confirm", "type": "manual", "instructions": "Drain node-1.",
              "approvals": { "min": 2, "roles": ["sre-lead"] } },
            { "id": "drain", "type": "cli", "with": { "argv": ["drain", "node-1"] },
              "approvals": { "min": 2 } }
        ]
    }));
    let host = TestHost::new(tools(), |_| shell(0, ""));
    let progress = advance(&rb, &host, json!({}), false).await;
    let waiting = &progress.waiting[0];
    match &waiting.need {
        Need::Go { reason, required, approved_by } => {
            assert_eq!(*required, 2);
            assert!(approved_by.is_empty());
            assert!(
                reason.contains("step `confirm` approvals (min 2, roles sre-lead)"),
                "{reason}"
            );
        }
        other => panic!("waits for go-aheads: {other:?}"),
    }
    host.give(keys::go_nth("confirm", 1), Entry::Go { skip: None, by: "bob".to_owned() });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert!(
        matches!(&progress.waiting[0].need, Need::Go { approved_by, .. } if approved_by == &["bob"]),
        "{:?}",
        progress.waiting
    );
    host.give(keys::go_nth("confirm", 2), Entry::Go { skip: None, by: "carol".to_owned() });
    let progress = advance(&rb, &host, json!({}), false).await;
    assert!(matches!(&progress.waiting[0].need, Need::Evidence { .. }), "{:?}", progress.waiting);
    assert!(host.calls().is_empty(), "nothing ran before the two go-aheads and the evidence");
    host.give(
        keys::evidence("confirm"),
        Entry::Evidence { values: serde_json::Map::new(), by: "carol".to_owned() },
    );
    advance(&rb, &host, json!({}), false).await;
    // A command step's approvals go with its call to the engine's approval queue.
    let calls = host.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].approvers_required, 2);
    assert!(calls[0].approval_required_by.as_deref().is_some_and(|r| r.contains("step `drain`")));
}

#[tokio::test]
async fn a_gate_ends_the_parent_on_the_childs_outcome_or_skips_a_failed_child() {
    let child = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "child" },
        "steps": [
            { "id": "look", "type": "cli", "with": { "argv": ["look"] }, "capture": { "seen": "stdout" },
              "assertions": [{ "not_contains": "broken" }],
              "outcomes": [{ "when": "{{ eq .seen \"bad\" }}", "state": "escalated" }] }
        ]
    }));
    let parent = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "parent" },
        "steps": [
            { "id": "check", "type": "invoke", "invoke": "child",
              "gate": { "stop_if": ["escalated"], "on_error": "skip" }, "capture": { "found": "seen" } },
            { "id": "after", "type": "cli", "with": { "argv": ["after"] } }
        ]
    }));
    let run = |stdout: &'static str| {
        let mut host = TestHost::new(tools(), move |call| {
            if cmd(call) == "look" { shell(0, stdout) } else { shell(0, "") }
        });
        host.runbooks.insert("child".to_owned(), child.clone());
        host
    };
    // The child escalates: `stop_if` ends the parent with the child's outcome.
    let host = run("bad");
    let progress = advance(&parent, &host, json!({}), false).await;
    assert_eq!(progress.outcome.expect("the child's outcome").category.as_str(), "escalated");
    assert!(!progress.visited.contains(&"after".to_owned()));
    // The child fails (its assertion): `on_error: skip` skips the step and the parent goes on.
    let host = run("broken");
    let progress = advance(&parent, &host, json!({}), false).await;
    assert_eq!(progress.status, RunStatus::Completed, "{:?}", progress.failure);
    assert!(progress.visited.contains(&"after".to_owned()));
    // The child ends well: its variable is captured into the parent.
    let host = run("fine");
    let progress = advance(&parent, &host, json!({}), false).await;
    assert_eq!(progress.variables["found"], "fine");
    assert!(progress.visited.contains(&"after".to_owned()));
}

#[tokio::test]
async fn a_step_timeout_tightens_its_call() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t" },
        "steps": [{ "id": "slow", "type": "cli", "timeout": "2s", "with": { "argv": ["sleep", "9"] } }]
    }));
    let host = TestHost::new(tools(), |_| shell(0, ""));
    advance(&rb, &host, json!({}), false).await;
    assert_eq!(host.calls()[0].timeout_ms, Some(2000));
}

/// Issue #26: a `cli` step runs as `shell_exec`, so the argv rule of toolpacks never applied:
/// `argv: [git, log, "{{ .ref }}"]` with `ref=--format=X%n` ran `git log --format=X%n`. An
/// input, a captured output and evidence all reach such slots; none may become an option.
#[tokio::test]
async fn a_templated_value_never_becomes_an_option_of_a_cli_step() {
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t", "inputs": { "ref": { "from": "prompt" } } },
        "steps": [
            { "id": "look", "type": "cli", "with": { "argv": ["git", "log", "{{ .ref }}"] } },
            { "id": "seen", "type": "cli", "with": { "argv": ["echo", "x"] }, "capture": { "said": "stdout" } },
            { "id": "again", "type": "cli", "with": { "argv": ["git", "show", "{{ .said }}"] } }
        ]
    }));
    let host = TestHost::new(tools(), |_| shell(0, ""));
    let progress = advance(&rb, &host, json!({ "ref": "--format=X%n" }), false).await;
    assert_eq!(progress.status, RunStatus::Error, "{progress:?}");
    let failure = progress.failure.expect("a failure").failure;
    assert!(failure.message.contains("sec.argv.positional"), "{}", failure.message);
    assert!(failure.message.contains("argv[2]"), "{}", failure.message);
    assert!(host.calls().is_empty(), "nothing ran");

    // Captured output reaches a slot too.
    let host = TestHost::new(tools(), |call| {
        if cmd(call).starts_with("echo") { shell(0, "--output=/tmp/x") } else { shell(0, "") }
    });
    let progress = advance(&rb, &host, json!({ "ref": "main" }), false).await;
    assert_eq!(progress.status, RunStatus::Error, "{progress:?}");
    assert_eq!(host.calls().len(), 2, "the first two steps ran, the third did not");
    assert!(cmd(&host.calls()[0]).ends_with("git log main"), "{}", cmd(&host.calls()[0]));

    // After a literal `--`, values that look like options are the author's choice.
    let rb = legacy_runbook(json!({
        "apiVersion": "runbook/v1",
        "meta": { "name": "t", "inputs": { "ref": { "from": "prompt" } } },
        "steps": [{ "id": "look", "type": "cli", "with": { "argv": ["git", "log", "--", "{{ .ref }}"] } }]
    }));
    let host = TestHost::new(tools(), |_| shell(0, ""));
    let progress = advance(&rb, &host, json!({ "ref": "--odd-path" }), false).await;
    assert_eq!(progress.status, RunStatus::Completed, "{progress:?}");
}
