//! The journal: walking a run again answers what already happened from it (no tool runs twice,
//! no trace event is written twice); people's entries move a paused run on; a step-by-step
//! run waits for each go-ahead; a failed step can be retried.

use jig_runbook::{Entry, Need, RunStatus, ToolAnswer};
use serde_json::json;

use crate::support::{TestHost, advance, ok, runbook, tool};

fn rb() -> jig_model::runbook::Runbook {
    runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "check", "type": "tool", "tool": "probe", "action": "check" },
            { "id": "confirm", "type": "manual", "instructions": "Confirm.", "contract": { "side_effects": false } },
            { "id": "again", "type": "tool", "tool": "probe", "action": "check" },
            { "id": "done", "type": "end", "outcome": { "category": "resolved" } }
        ]
    }))
}

#[tokio::test]
async fn walking_again_runs_nothing_twice_and_traces_each_event_once() {
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({ "n": 1 })));
    let first = advance(&rb(), &host, json!({}), false).await;
    assert_eq!(first.status, RunStatus::Paused);
    assert_eq!(first.waiting[0].key, "confirm");
    let trace_after_first = host.trace.lock().expect("trace").len();
    let second = advance(&rb(), &host, json!({}), false).await;
    assert_eq!(second, first, "the same place, the same view");
    assert_eq!(host.calls().len(), 1, "the tool ran once");
    assert_eq!(
        host.trace.lock().expect("trace").len(),
        trace_after_first,
        "no event recorded twice"
    );

    host.give(
        "evidence:confirm".to_owned(),
        Entry::Evidence { values: serde_json::Map::new(), by: "bob".to_owned() },
    );
    let done = advance(&rb(), &host, json!({}), false).await;
    assert_eq!(done.status, RunStatus::Completed);
    let keys: Vec<String> = host.calls().iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys, ["check", "again"]);
    let trace = host.trace.lock().expect("trace").clone();
    let mut seen = std::collections::HashSet::new();
    assert!(trace.iter().all(|e| seen.insert(e.key.clone())), "trace keys are unique");
    let kinds: Vec<&str> = trace.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"run_start"));
    assert!(kinds.contains(&"paused") && kinds.contains(&"outcome_resolved"));
    assert_eq!(kinds.last(), Some(&"run_complete"));
}

#[tokio::test]
async fn a_step_by_step_run_waits_for_each_go_ahead_and_may_skip() {
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({})));
    let waiting = advance(&rb(), &host, json!({}), true).await;
    assert_eq!(waiting.waiting[0].key, "check");
    assert_eq!(waiting.waiting[0].need, Need::go("stepwise"));
    assert_eq!(
        waiting.waiting[0].tool.as_deref(),
        Some("probe.check"),
        "the reviewer sees what will run"
    );
    assert!(host.calls().is_empty());
    host.give("go:check".to_owned(), Entry::Go { skip: None, by: "bob".to_owned() });
    let next = advance(&rb(), &host, json!({}), true).await;
    assert_eq!(next.waiting[0].key, "confirm");
    host.give("go:confirm".to_owned(), Entry::Go { skip: None, by: "bob".to_owned() });
    host.give(
        "evidence:confirm".to_owned(),
        Entry::Evidence { values: serde_json::Map::new(), by: "bob".to_owned() },
    );
    host.give(
        "go:again".to_owned(),
        Entry::Go { skip: Some("already verified".to_owned()), by: "bob".to_owned() },
    );
    let done = advance(&rb(), &host, json!({}), true).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(host.calls().len(), 1, "`again` was skipped");
    assert!(done.visited.contains(&"again".to_owned()), "a skipped step was still reached");
}

#[tokio::test]
async fn a_failed_step_can_be_retried_under_a_new_key() {
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = attempts.clone();
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], move |_| {
        if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            ToolAnswer::Failed {
                code: "E_SHELL".to_owned(),
                message: "exit 1".to_owned(),
                outputs: serde_json::Map::new(),
            }
        } else {
            ok(json!({}))
        }
    });
    let rb = runbook(json!({
        "apiVersion": "kernel/v0", "meta": { "name": "t" }, "tools": ["probe"],
        "steps": [
            { "id": "check", "type": "tool", "tool": "probe", "action": "check" },
            { "type": "end", "outcome": { "category": "resolved" } }
        ]
    }));
    let failed = advance(&rb, &host, json!({}), false).await;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.failure.as_ref().expect("failure").failure.kind, "exit_code");
    host.give("retry:check".to_owned(), Entry::Retry { by: "bob".to_owned() });
    let retried = advance(&rb, &host, json!({}), false).await;
    assert_eq!(retried.status, RunStatus::Completed);
    let keys: Vec<String> = host.calls().iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys, ["check", "check~2"]);

    // Step by step, a failure waits for the reviewer instead of ending the run.
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ToolAnswer::Failed {
        code: "E_SHELL".to_owned(),
        message: "exit 1".to_owned(),
        outputs: serde_json::Map::new(),
    });
    host.give("go:check".to_owned(), Entry::Go { skip: None, by: "bob".to_owned() });
    let waiting = advance(&rb, &host, json!({}), true).await;
    assert_eq!(waiting.status, RunStatus::Paused);
    assert!(matches!(waiting.waiting[0].need, Need::Failed { .. }));
    host.give("abort:check".to_owned(), Entry::Abort { by: "bob".to_owned() });
    let ended = advance(&rb, &host, json!({}), true).await;
    assert_eq!(ended.status, RunStatus::Failed);
}

#[tokio::test]
async fn a_journal_from_another_version_of_the_runbook_is_refused() {
    let host = TestHost::new(vec![tool("probe.check", false, &[], &[])], |_| ok(json!({})));
    host.give(
        "start".to_owned(),
        Entry::Start {
            runbook: "t".to_owned(),
            hash: "old".to_owned(),
            inputs: serde_json::Map::new(),
            stepwise: false,
            by: "a".to_owned(),
            definition: None,
        },
    );
    let run = jig_runbook::Run {
        runbook: &rb(),
        name: "t",
        hash: "new",
        run_id: "r",
        host: &host,
        tokens: Default::default(),
    };
    let refused =
        jig_runbook::Interpreter::new(run, host.journal()).advance().await.expect_err("changed");
    assert!(matches!(refused, jig_runbook::RunbookError::Changed { .. }));
}
