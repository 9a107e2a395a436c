//! Runs over the real engine: tool steps as engine calls (policy, approvals, audit), the journal
//! in the audit store, people acting first-writer-wins, and a run resumed by a second engine on
//! the same store.

use std::sync::Arc;

use jig_engine::{Engine, EngineOptions};
use jig_runbook::{Action, Need, RunStatus, Runbooks, ServiceError};
use serde_json::{Map, Value, json};

const RUNBOOK: &str = r#"apiVersion: kernel/v0
meta:
  name: note
  inputs:
    path: { type: string, default: notes.txt }
tools: [std/file_read, std/file_write]
steps:
  - id: read
    type: tool
    tool: std/file_read
    inputs: { path: "{{ .path }}" }
  - id: look
    type: manual
    instructions: "Read {{ .path }} and say what to keep."
    contract: { side_effects: false }
    required_evidence: [{ kind: text, name: keep }]
  - id: write
    type: tool
    tool: std/file_write
    inputs: { path: kept.txt, content: "{{ .keep }}" }
  - id: done
    type: end
    outcome: { category: resolved, code: kept }
"#;

async fn project() -> (tempfile::TempDir, Arc<Engine>) {
    // Whoever starts a run may not approve its calls.
    let dir = scratch("name: notes\npolicy:\n  approvals:\n    self_approval: false\n");
    fs_err::write(dir.path().join("runbooks/note.runbook.yaml"), RUNBOOK).expect("runbook");
    fs_err::write(dir.path().join("notes.txt"), "keep the second line\n").expect("notes");
    let engine = open(dir.path()).await;
    (dir, engine)
}

/// A project directory with `manifest` as its `jig.yaml` and an empty `runbooks/`.
fn scratch(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    fs_err::write(dir.path().join("jig.yaml"), manifest).expect("manifest");
    fs_err::create_dir_all(dir.path().join("runbooks")).expect("dir");
    dir
}

async fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(EngineOptions { project: dir.to_path_buf(), ..EngineOptions::default() })
        .await
        .expect("engine")
}

fn evidence(text: &str) -> Action {
    Action::Evidence {
        values: Map::from_iter([("keep".to_owned(), Value::String(text.to_owned()))]),
    }
}

#[tokio::test]
async fn a_run_pauses_for_people_resumes_in_another_engine_and_is_all_in_the_chain() {
    let (dir, engine) = project().await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    assert!(runbooks.list().iter().any(|r| r.name == "note"), "{:?}", runbooks.list());
    let started = runbooks.start("note", Map::new(), false, "alice").await.expect("start");
    assert_eq!(started.progress.status, RunStatus::Paused);
    assert_eq!(started.progress.waiting[0].step_id, "look");
    assert_eq!(
        started.progress.waiting[0].instructions.as_deref(),
        Some("Read notes.txt and say what to keep.")
    );

    // Two reviewers act on the same step at once: one wins, the other is told it lost.
    let (bob, carol) = tokio::join!(
        runbooks.act(&started.id, "look", evidence("from bob"), "bob"),
        runbooks.act(&started.id, "look", evidence("from carol"), "carol"),
    );
    let (won, lost) = match (bob, carol) {
        (Ok(view), Err(error)) | (Err(error), Ok(view)) => (view, error),
        other => panic!("exactly one must win: {other:?}"),
    };
    assert!(matches!(lost, ServiceError::Conflict(_)), "{lost}");
    assert_eq!(lost.code().as_str(), "E_CONFLICT");
    assert!(lost.to_string().contains("already acted on by"), "{lost}");
    let waiting = &won.progress.waiting[0];
    assert_eq!(waiting.step_id, "write");
    let Need::Approval { approval_id, .. } = &waiting.need else { panic!("{waiting:?}") };
    assert!(!approval_id.as_str().is_empty());
    assert_eq!(waiting.tool.as_deref(), Some("file_write"), "the reviewer sees the exact call");
    drop(runbooks);
    drop(engine);

    // Another engine on the same store picks the run up where it stands.
    let engine = open(dir.path()).await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let shown = runbooks.show(&started.id).await.expect("show");
    assert_eq!(shown.progress.waiting[0].step_id, "write");
    let refused = runbooks
        .act(&started.id, "write", Action::Approve, "alice")
        .await
        .expect_err("self-approval");
    assert_eq!(refused.code().as_str(), "E_POLICY", "{refused}");
    let done = runbooks.act(&started.id, "write", Action::Approve, "bob").await.expect("approve");
    assert_eq!(done.progress.status, RunStatus::Completed, "{:?}", done.progress);
    assert_eq!(done.progress.outcome.as_ref().and_then(|o| o.code.as_deref()), Some("kept"));
    let kept = fs_err::read_to_string(dir.path().join("kept.txt")).expect("written");
    assert!(kept == "from bob" || kept == "from carol");

    // Every step is in the audit chain, attributed; the chain is intact.
    let history = engine.history();
    assert!(history.verify(None, None).await.expect("verify").is_ok(), "the chain verifies");
    let packets = engine.store().packets(0, 10_000).await.expect("packets");
    let of_run: Vec<&jig_engine::Packet> =
        packets.iter().filter(|p| p.session_id.as_deref() == Some(started.id.as_str())).collect();
    let kinds: Vec<&str> = of_run.iter().map(|p| p.kind.as_str()).collect();
    for kind in [
        "runbook.run",
        "runbook.step",
        "runbook.person",
        "runbook.outcome",
        "tool.call.request",
        "tool.call.result",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    let events: Vec<String> = of_run
        .iter()
        .filter_map(|p| p.data.get("event").and_then(Value::as_str).map(str::to_owned))
        .collect();
    assert_eq!(events.iter().filter(|e| *e == "step_complete").count(), 3, "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("run_complete"));
    let person = of_run.iter().find(|p| p.kind == "runbook.person").expect("a person's packet");
    assert!(matches!(person.principal.as_deref(), Some("bob" | "carol")));
    let write_call = of_run
        .iter()
        .find(|p| p.kind == "tool.call.request" && p.tool.as_deref() == Some("file_write"))
        .expect("write call");
    assert_eq!(
        write_call.principal.as_deref(),
        Some("alice"),
        "tool steps run in the name of who started the run"
    );
    let json = json!(done);
    assert!(json["progress"]["visited"].as_array().is_some_and(|v| v.len() == 4));
}

#[tokio::test]
async fn bad_inputs_and_unknown_runbooks_record_nothing() {
    let (_dir, engine) = project().await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let before = engine.store().head().await.expect("head");
    let unknown = runbooks.start("nope", Map::new(), false, "alice").await.expect_err("unknown");
    assert_eq!(unknown.code().as_str(), "E_NOT_FOUND");
    let inputs = Map::from_iter([("colour".to_owned(), json!("red"))]);
    let bad = runbooks.start("note", inputs, false, "alice").await.expect_err("bad input");
    assert_eq!(bad.code().as_str(), "E_VALIDATION_FAIL");
    assert!(bad.to_string().contains("input `colour`"), "{bad}");
    assert_eq!(engine.store().head().await.expect("head"), before);
    assert!(runbooks.runs(10).await.expect("runs").is_empty());
}

#[tokio::test]
async fn a_tool_step_is_recorded_with_its_call_in_one_transaction() {
    let dir = scratch("name: reads\n");
    let mut steps = String::new();
    for i in 0..10 {
        fs_err::write(dir.path().join(format!("f{i}.txt")), format!("{i}\n")).expect("file");
        steps.push_str(&format!(
            "  - {{ id: r{i}, type: tool, tool: std/file_read, inputs: {{ path: f{i}.txt }} }}\n"
        ));
    }
    steps.push_str("  - { id: done, type: end, outcome: { category: resolved } }\n");
    fs_err::write(
        dir.path().join("runbooks/reads.runbook.yaml"),
        format!("apiVersion: kernel/v0\nmeta: {{ name: reads }}\ntools: [std/file_read]\nsteps:\n{steps}"),
    )
    .expect("runbook");
    let engine = open(dir.path()).await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let (before, reading) = (engine.store().commits(), engine.store().reading_commits());
    let done = runbooks.start("reads", Map::new(), false, "alice").await.expect("run");
    assert_eq!(done.progress.status, RunStatus::Completed);
    let commits = engine.store().commits() - before;
    // One per step (the call, its step's start and result), plus the run's row, its start,
    // the last events and the saved summary.
    assert!(commits <= 10 + 5, "{commits} transactions for 10 steps");
    // Each of them blind writes only, so one round trip each: a step's journal keys are new.
    assert_eq!(engine.store().reading_commits() - reading, 0, "a step read before writing");
    assert!(engine.history().verify(None, None).await.expect("verify").is_ok());
    let packets = engine.store().packets(0, 10_000).await.expect("packets");
    let order: Vec<String> = packets
        .iter()
        .filter(|p| p.thread_id.as_deref().is_some_and(|t| t == "r3" || t.ends_with(":r3")))
        .map(|p| {
            format!("{}:{}", p.kind, p.data.get("event").and_then(Value::as_str).unwrap_or(""))
        })
        .collect();
    let start = order.iter().position(|k| k == "runbook.step:step_start").expect("start");
    let call = order.iter().position(|k| k.starts_with("tool.call.request")).expect("call");
    assert!(start < call, "the step starts before its call in the chain: {order:?}");
}

#[tokio::test]
async fn a_journal_entry_changed_behind_the_chain_fails_verify() {
    let (_dir, engine) = project().await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let started = runbooks.start("note", Map::new(), false, "alice").await.expect("start");
    assert!(engine.history().verify(None, None).await.expect("verify").is_ok());
    // What a resumed run would take as the first step's result.
    engine
        .store()
        .execute_raw("UPDATE runbook_journal SET entry = replace(entry, 'keep the second line', 'delete everything') WHERE key = 'done:read'")
        .await
        .expect("tamper");
    let status = engine.history().verify(None, None).await.expect("verify");
    assert!(!status.is_ok(), "{status:?}");
    let text = format!("{status:?}");
    assert!(text.contains("journal entry `done:read`") && text.contains(&started.id), "{text}");

    // And the run itself will not go on from a record the chain does not vouch for.
    let before = engine.store().runbook_journal(&started.id).await.expect("journal");
    let error = runbooks.act(&started.id, "look", evidence("keep"), "alice").await;
    let error = error.expect_err("a tampered run does not walk");
    assert_eq!(error.code().as_str(), "E_INTERNAL");
    let message = error.to_string();
    assert!(message.contains("`done:read`") && message.contains("will not go on"), "{message}");
    let after = engine.store().runbook_journal(&started.id).await.expect("journal");
    assert_eq!(before.len() + 1, after.len(), "only the evidence was recorded, nothing ran");
    let error = runbooks.resume(&started.id).await.expect_err("nor on resume");
    assert!(error.to_string().contains("changed outside Jig"), "{error}");
}

#[tokio::test]
async fn a_packet_that_seals_a_journal_row_altered_with_it_stops_the_run() {
    let (_dir, engine) = project().await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let started = runbooks.start("note", Map::new(), false, "alice").await.expect("start");
    // Change the row and its seal together: the packet no longer matches its hash.
    let journal = engine.store().runbook_journal(&started.id).await.expect("journal");
    let (_, entry) = journal.iter().find(|(k, _)| k == "done:read").expect("row");
    let forged = entry.to_string().replace("keep the second line", "delete everything");
    let forged_value: serde_json::Value = serde_json::from_str(&forged).expect("json");
    let hash = jig_model::canonical::Sha256Hash::of_bytes(
        jig_model::canonical::canonical_json(&forged_value).as_bytes(),
    )
    .to_hex();
    let store = engine.store();
    store
        .execute_raw(&format!(
            "UPDATE runbook_journal SET entry = '{}' WHERE key = 'done:read'",
            forged.replace('\'', "''")
        ))
        .await
        .expect("tamper the row");
    let old = jig_model::canonical::Sha256Hash::of_bytes(
        jig_model::canonical::canonical_json(entry).as_bytes(),
    )
    .to_hex();
    // Someone with the database file gets past the append-only trigger (SQLite here).
    store.execute_raw("DROP TRIGGER packets_no_update").await.expect("disable the trigger");
    store
        .execute_raw(&format!("UPDATE packets SET payload = replace(payload, '{old}', '{hash}')"))
        .await
        .expect("tamper the seal");
    let error = runbooks.resume(&started.id).await.expect_err("an altered packet stops the run");
    assert!(error.to_string().contains("was altered"), "{error}");
}

/// `min_approvers: 2` on the rule that holds a step: the step runs only after two different
/// people approve it; the first approval leaves it waiting.
#[tokio::test]
async fn a_step_whose_rule_asks_for_two_approvers_waits_for_the_second() {
    let dir = scratch(
        "name: two\npolicy:\n  approvals:\n    self_approval: false\n  rules:\n    - { effects: [write], action: allow }\n",
    );
    fs_err::write(
        dir.path().join("runbooks/two.runbook.yaml"),
        "apiVersion: kernel/v0\nmeta:\n  name: two\n  governance:\n    rules:\n      - { effects: [write], action: require-approval, min_approvers: 2 }\n      - default: allow\ntools: [std/file_write]\nsteps:\n  - id: write\n    type: tool\n    tool: std/file_write\n    inputs: { path: out.txt, content: two said yes }\n  - id: done\n    type: end\n    outcome: { category: resolved, code: written }\n",
    )
    .expect("runbook");
    let engine = open(dir.path()).await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let started = runbooks.start("two", Map::new(), false, "alice").await.expect("start");
    let Need::Approval { approval_id, .. } = &started.progress.waiting[0].need else {
        panic!("{:?}", started.progress)
    };
    let approval_id = approval_id.clone();

    let once = runbooks.act(&started.id, "write", Action::Approve, "bob").await.expect("bob");
    assert_eq!(once.progress.status, RunStatus::Paused, "one approval of two: {:?}", once.progress);
    assert_eq!(once.progress.waiting[0].step_id, "write");
    assert!(!dir.path().join("out.txt").exists());
    let record =
        engine.store().approval(approval_id.as_str()).await.expect("read").expect("exists");
    assert_eq!((record.required, record.approvers.as_slice()), (2, ["bob".to_owned()].as_slice()));
    let twice = runbooks.act(&started.id, "write", Action::Approve, "bob").await;
    assert_eq!(twice.expect_err("bob again").code().as_str(), "E_CONFLICT");

    let done = runbooks.act(&started.id, "write", Action::Approve, "carol").await.expect("carol");
    assert_eq!(done.progress.status, RunStatus::Completed, "{:?}", done.progress);
    assert_eq!(
        fs_err::read_to_string(dir.path().join("out.txt")).expect("written"),
        "two said yes"
    );
}

/// A runbook/v1 runbook over the real engine: its `cli` steps run as sandboxed `shell_exec`
/// calls (each audited), a precondition's check runs once and skips its step, a capture feeds a
/// later step, an assertion stops a bad path, and a step's `approvals: {min: 2}` takes two
/// different people's go-aheads (the same person twice and the starter are refused).
#[tokio::test]
async fn a_v1_runbooks_commands_captures_assertions_and_two_person_approval_run_for_real() {
    let dir = scratch(
        "name: ops\npolicy:\n  shell_allow: [cat, test, wc]\n  approvals:\n    self_approval: false\n  rules:\n    - { tools: [shell_exec], action: allow }\n",
    );
    fs_err::write(dir.path().join("hosts.txt"), "web-1\nweb-2\n").expect("hosts");
    fs_err::write(dir.path().join("done.txt"), "").expect("done");
    fs_err::write(
        dir.path().join("runbooks/drain.runbook.yaml"),
        r#"apiVersion: runbook/v1
meta: { name: drain }
steps:
  - id: already
    type: cli
    with: { argv: [cat, hosts.txt] }
    precondition: { check: [test, -f, done.txt], skip_if_succeeds: true, message: drained before }
  - id: count
    type: cli
    with: { argv: [wc, -l, hosts.txt] }
    capture: { lines: stdout }
    assertions: [{ exit_code: 0 }, { matches: "^2 " }]
  - id: confirm
    type: manual
    instructions: "Drain the {{ .lines }}."
    approvals: { min: 2 }
    outcomes: [{ state: resolved }]
"#,
    )
    .expect("runbook");
    let engine = open(dir.path()).await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let started = runbooks.start("drain", Map::new(), false, "alice").await.expect("start");
    assert_eq!(started.progress.status, RunStatus::Paused, "{:?}", started.progress.failure);
    let waiting = &started.progress.waiting[0];
    assert_eq!(waiting.step_id, "confirm");
    assert!(
        matches!(&waiting.need, Need::Go { required: 2, approved_by, .. } if approved_by.is_empty())
    );
    assert_eq!(started.progress.variables["lines"], "2 hosts.txt");

    // The starter may not approve; one person counts once; a second person completes it.
    let own = runbooks.act(&started.id, "confirm", Action::Run, "alice").await;
    assert!(matches!(own, Err(ServiceError::Forbidden(_))), "{own:?}");
    let first = runbooks.act(&started.id, "confirm", Action::Run, "bob").await.expect("bob");
    assert!(
        matches!(&first.progress.waiting[0].need, Need::Go { approved_by, .. } if approved_by == &["bob"])
    );
    let twice = runbooks.act(&started.id, "confirm", Action::Run, "Bob").await;
    assert!(matches!(twice, Err(ServiceError::Conflict(_))), "{twice:?}");
    let second = runbooks.act(&started.id, "confirm", Action::Run, "carol").await.expect("carol");
    assert_eq!(second.progress.status, RunStatus::Paused, "now the evidence");
    let done = runbooks
        .act(&started.id, "confirm", Action::Evidence { values: Map::new() }, "carol")
        .await
        .expect("ack");
    assert_eq!(done.progress.status, RunStatus::Completed, "{:?}", done.progress.failure);
    assert_eq!(done.progress.outcome.expect("outcome").category.as_str(), "resolved");

    // What ran is in the audit: the check, never the skipped step's command.
    let packets = engine.history().packets(0, 10_000).await.expect("packets");
    let commands: Vec<String> = packets
        .iter()
        .filter(|p| p.kind == "tool.call.request")
        .filter(|p| p.session_id.as_deref() == Some(started.id.as_str()))
        .filter_map(|p| p.data["args"]["cmd"].as_str().map(str::to_owned))
        .collect();
    assert!(commands.contains(&"test -f done.txt".to_owned()), "{commands:?}");
    assert!(commands.contains(&"wc -l hosts.txt".to_owned()), "{commands:?}");
    assert!(!commands.iter().any(|c| c.starts_with("cat")), "the skipped step ran: {commands:?}");

    // The same runbook on a host list the assertion rejects stops at `count`.
    fs_err::write(dir.path().join("hosts.txt"), "web-1\n").expect("hosts");
    let rejected = runbooks.start("drain", Map::new(), false, "alice").await.expect("start");
    assert_eq!(rejected.progress.status, RunStatus::Failed);
    let failure = rejected.progress.failure.expect("failure");
    assert_eq!(failure.key, "count");
    assert!(
        failure.failure.message.contains("does not match /^2 /"),
        "{}",
        failure.failure.message
    );
}

#[tokio::test]
async fn a_paused_run_holds_before_its_next_step_until_someone_resumes_it() {
    let (dir, engine) = project().await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let started = runbooks.start("note", Map::new(), false, "alice").await.expect("start");
    assert!(matches!(started.progress.waiting[0].need, Need::Evidence { .. }));

    // The hold replaces what the run waited for: nothing new happens until a resume.
    let paused = runbooks.pause(&started.id, "bob").await.expect("pause");
    assert_eq!(paused.progress.waiting.len(), 1);
    assert_eq!(paused.progress.waiting[0].step_id, "look");
    assert!(matches!(paused.progress.waiting[0].need, Need::Paused), "{paused:?}");
    assert_eq!(paused.paused_by.as_deref(), Some("bob"), "the view names who paused");
    let twice = runbooks.pause(&started.id, "carol").await;
    assert!(matches!(twice, Err(ServiceError::Conflict(_))), "{twice:?}");
    let early = runbooks.act(&started.id, "look", evidence("now"), "carol").await;
    assert!(matches!(&early, Err(ServiceError::Conflict(m)) if m.contains("paused")), "{early:?}");

    // Another engine on the same store (a restart) finds it held, and resumes it.
    let runbooks = Runbooks::new(open(dir.path()).await);
    let shown = runbooks.show(&started.id).await.expect("show");
    assert!(matches!(shown.progress.waiting[0].need, Need::Paused));
    assert_eq!(shown.paused_by.as_deref(), Some("bob"));
    let resumed = runbooks.act(&started.id, "look", Action::Run, "carol").await.expect("resume");
    assert!(matches!(resumed.progress.waiting[0].need, Need::Evidence { .. }), "{resumed:?}");
    assert_eq!(resumed.paused_by, None, "a resumed run is held by nobody");
    // Paused again (by someone else this time), a step skipped at the hold is skipped and the
    // hold moves to the next.
    runbooks.pause(&started.id, "dave").await.expect("pause again");
    let skip = Action::Skip { reason: "read it already".to_owned() };
    let moved = runbooks.act(&started.id, "look", skip, "carol").await.expect("skip");
    assert_eq!(moved.progress.waiting[0].step_id, "write", "{moved:?}");
    assert!(matches!(moved.progress.waiting[0].need, Need::Paused), "{moved:?}");
    assert_eq!(moved.paused_by.as_deref(), Some("dave"), "the latest pause's person");

    // Each pause and resume is in the chain in its person's name.
    let trace = runbooks.trace(&started.id).await.expect("trace");
    let people: Vec<(String, String)> = trace
        .iter()
        .filter(|p| p.data["event"] == "person")
        .map(|p| {
            let action = p.data["action"]["action"].as_str().unwrap_or_default().to_owned();
            (action, p.principal.clone().unwrap_or_default())
        })
        .collect();
    let expected = [("pause", "bob"), ("run", "carol"), ("pause", "dave"), ("skip", "carol")];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    assert_eq!(people, expected);
}

#[tokio::test]
async fn a_pause_from_another_engine_holds_a_walk_under_way_at_its_next_step() {
    let dir = scratch(
        "name: ops\npolicy:\n  shell_allow: [cat, wc]\n  rules:\n    - { tools: [shell_exec], action: allow }\n",
    );
    fs_err::write(dir.path().join("hosts.txt"), "web-1\nweb-2\n").expect("hosts");
    fs_err::write(
        dir.path().join("runbooks/slow.runbook.yaml"),
        r#"apiVersion: runbook/v1
meta: { name: slow }
steps:
  - id: first
    type: cli
    precondition: { check: [wc, -l, absent.txt], skip_if_succeeds: true }
    delay: 1500ms
    with: { argv: [cat, hosts.txt] }
  - id: second
    type: cli
    with: { argv: [wc, -l, hosts.txt] }
"#,
    )
    .expect("runbook");
    let walker = Runbooks::new(open(dir.path()).await);
    let walking =
        tokio::spawn(async move { walker.start("slow", Map::new(), false, "alice").await });
    // Another engine on the same store, as another process would be, finds the run and
    // pauses it while the first engine waits out `first`'s delay. `first` is under way once
    // its records reach the chain: they are held back until its precondition's check, which
    // comes after the pause check and before the delay, commits them. A pause seen before
    // that would rightly hold the walk at `first` instead.
    let other = Runbooks::new(open(dir.path()).await);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let id = loop {
        if let Some(run) = other.runs(10).await.expect("runs").first() {
            let trace = other.trace(&run.id).await.expect("trace");
            if trace.iter().any(|p| p.data["step"] == "first") {
                break run.id.clone();
            }
        }
        assert!(std::time::Instant::now() < deadline, "`first` never got under way");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    other.pause(&id, "bob").await.expect("pause");
    let held = walking.await.expect("task").expect("start");
    assert_eq!(held.progress.status, RunStatus::Paused, "{:?}", held.progress.failure);
    assert_eq!(held.progress.visited, ["first"], "the step under way finished");
    assert_eq!(held.progress.waiting[0].step_id, "second");
    assert!(matches!(held.progress.waiting[0].need, Need::Paused));

    let done = other.act(&id, "second", Action::Run, "carol").await.expect("resume");
    assert_eq!(done.progress.status, RunStatus::Completed, "{:?}", done.progress.failure);
    let ended = other.pause(&id, "bob").await;
    assert!(matches!(&ended, Err(ServiceError::Conflict(m)) if m.contains("ended")), "{ended:?}");
}

#[tokio::test]
async fn an_outcomes_next_runbook_continues_as_a_new_run_once() {
    let dir = tempfile::tempdir().expect("tmp");
    fs_err::write(
        dir.path().join("jig.yaml"),
        "name: ops\npolicy:\n  shell_allow: [cat]\n  rules:\n    - { tools: [shell_exec], action: allow }\n",
    )
    .expect("manifest");
    fs_err::create_dir_all(dir.path().join("runbooks/legacy")).expect("dir");
    fs_err::create_dir_all(dir.path().join("runbooks/ops")).expect("dir");
    fs_err::write(dir.path().join("hosts.txt"), "web-1\n").expect("hosts");
    fs_err::write(
        dir.path().join("runbooks/legacy/triage.runbook.yaml"),
        r#"apiVersion: runbook/v0
meta:
  name: triage
  inputs:
    unit: { from: prompt, default: web.service }
steps:
  - id: look
    type: cli
    with: { argv: [cat, hosts.txt] }
    capture: { host: stdout }
    outcomes:
      - state: needs_rca
        next_runbook:
          file: ../ops/restart
          inputs: { host: "{{ .host }}", unit: "{{ .unit }}" }
"#,
    )
    .expect("triage");
    fs_err::write(
        dir.path().join("runbooks/ops/restart.runbook.yaml"),
        r#"apiVersion: kernel/v0
meta:
  name: restart
  inputs:
    host: { type: string, required: true }
    unit: { type: string, required: true }
    count: { type: int, required: true }
steps:
  - id: confirm
    type: manual
    instructions: "Restart {{ .unit }} on {{ .host }} {{ .count }} times."
    contract: { side_effects: false }
  - id: done
    type: end
    outcome: { category: resolved }
"#,
    )
    .expect("restart");
    let runbooks = Runbooks::new(open(dir.path()).await);
    let triage = runbooks.start("legacy/triage", Map::new(), false, "alice").await.expect("start");
    assert_eq!(triage.progress.status, RunStatus::Completed, "{:?}", triage.progress.failure);
    let next = &triage.progress.outcome.as_ref().expect("outcome").meta["next_runbook"];
    assert_eq!(
        next,
        &json!({ "file": "../ops/restart", "runbook": "ops/restart", "inputs": { "host": "web-1", "unit": "web.service" } })
    );

    // An input the next runbook needs and the outcome does not give: refused, nothing kept.
    let short = runbooks.follow(&triage.id, Map::new(), "bob").await;
    assert!(matches!(&short, Err(e) if e.to_string().contains("count")), "{short:?}");
    let given = Map::from_iter([("count".to_owned(), json!("2"))]);
    let next_run = runbooks.follow(&triage.id, given.clone(), "bob").await.expect("follow");
    assert_eq!(next_run.runbook, "ops/restart");
    assert_eq!(next_run.started_by.as_deref(), Some("bob"));
    assert_eq!(next_run.progress.variables["host"], "web-1");
    assert_eq!(next_run.progress.variables["count"], 2, "text became the declared int");
    assert_eq!(
        next_run.progress.waiting[0].instructions.as_deref(),
        Some("Restart web.service on web-1 2 times.")
    );
    // Continued once: asking again gives the same run.
    let again = runbooks.follow(&triage.id, given, "carol").await.expect("again");
    assert_eq!(again.id, next_run.id);
    let runs = runbooks.runs(10).await.expect("runs");
    assert_eq!(runs.iter().filter(|r| r.runbook == "ops/restart").count(), 1);
    // A run that has not ended with a next runbook has nothing to follow.
    let none = runbooks.follow(&next_run.id, Map::new(), "bob").await;
    assert!(matches!(none, Err(ServiceError::Conflict(_))), "{none:?}");
}

#[tokio::test]
async fn an_extension_step_runs_as_the_tool_the_manifest_names() {
    let dir = scratch("name: ext\nconfig:\n  extensions:\n    reader: file_read\n");
    fs_err::write(dir.path().join("notes.txt"), "the answer\n").expect("notes");
    let runbook = |extension: &str| {
        format!(
            r#"apiVersion: kernel/v0
meta: {{ name: {extension} }}
steps:
  - id: summarise
    type: extension
    extension: {extension}
    inputs: {{ path: notes.txt }}
  - id: done
    type: end
    outcome: {{ category: resolved }}
"#
        )
    };
    fs_err::write(dir.path().join("runbooks/reader.runbook.yaml"), runbook("reader"))
        .expect("runbook");
    fs_err::write(dir.path().join("runbooks/llm-agent.runbook.yaml"), runbook("llm-agent"))
        .expect("runbook");
    let engine = open(dir.path()).await;
    let runbooks = Runbooks::new(Arc::clone(&engine));
    let run = runbooks.start("reader", Map::new(), false, "alice").await.expect("start");
    assert_eq!(run.progress.status, RunStatus::Completed, "{:?}", run.progress.failure);
    assert_eq!(run.progress.variables["summarise"]["content"], "the answer\n");
    // The step was an engine call of the runner, in the audit like any tool step.
    let packets = engine.history().packets(0, 10_000).await.expect("packets");
    assert!(
        packets.iter().any(|p| p.kind == "tool.call.request"
            && p.session_id.as_deref() == Some(run.id.as_str())
            && p.tool.as_deref() == Some("file_read")),
        "no file_read call in the chain"
    );
    // An extension nobody runs stops the run and says where to name a runner.
    let stopped = runbooks.start("llm-agent", Map::new(), false, "alice").await.expect("start");
    assert_eq!(stopped.progress.status, RunStatus::Error);
    let failure = stopped.progress.failure.expect("failure").failure;
    assert!(failure.message.contains("config.extensions"), "{}", failure.message);
}

/// Issue #42: a runbook's approval step records who asserted the decider's name (`jig --as`),
/// approving and denying, as the queue does.
#[tokio::test]
async fn a_decision_on_an_approval_step_names_who_asserted_the_deciders_name() {
    for (action, verdict) in [(Action::Approve, "approved"), (Action::Deny, "denied")] {
        let dir = scratch(
            "name: asserted\npolicy:\n  approvals:\n    self_approval: false\n  rules:\n    - { effects: [write], action: require-approval }\n",
        );
        fs_err::write(
            dir.path().join("runbooks/one.runbook.yaml"),
            "apiVersion: kernel/v0\nmeta:\n  name: one\ntools: [std/file_write]\nsteps:\n  - id: write\n    type: tool\n    tool: std/file_write\n    inputs: { path: out.txt, content: one }\n  - id: done\n    type: end\n    outcome: { category: resolved, code: written }\n",
        )
        .expect("runbook");
        let engine = open(dir.path()).await;
        let runbooks = Runbooks::new(Arc::clone(&engine)).asserted_by(Some("root".to_owned()));
        let started = runbooks.start("one", Map::new(), false, "alice").await.expect("start");
        runbooks.act(&started.id, "write", action, "bob").await.expect("decide");
        let packets = engine.store().packets(0, 10_000).await.expect("packets");
        let decided = packets.iter().rfind(|p| p.kind == "approval.decided").expect("a decision");
        assert_eq!(decided.data["verdict"], verdict, "{:?}", decided.data);
        assert_eq!(decided.principal.as_deref(), Some("bob"));
        assert_eq!(decided.data["asserted_by"], "root", "{verdict}: {:?}", decided.data);
    }
}
