//! `jig runbook …`: scenarios reported like a test runner, a run paused in one process and
//! resumed in another, and the step-by-step walk through a pseudo-terminal.

use std::path::Path;

use crate::{jig, repo, stderr, stdout_json};

const NOTE: &str = r#"apiVersion: kernel/v0
meta:
  name: note
  inputs:
    path: { type: string, default: notes.txt }
tools: [std/file_read]
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
  - id: done
    type: end
    outcome: { category: resolved, code: kept, meta: { kept: "{{ .keep }}" } }
"#;

/// Press one key at the pseudo-terminal (no Enter), and let it go out at once.
fn press(session: &mut rexpect::session::PtySession, key: &str, what: &str) {
    session.send(key).expect(what);
    session.flush().expect(what);
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("jig.yaml"), "name: notes\n").expect("manifest");
    std::fs::create_dir_all(dir.path().join("runbooks")).expect("dir");
    std::fs::write(dir.path().join("runbooks/note.runbook.yaml"), NOTE).expect("runbook");
    std::fs::write(dir.path().join("notes.txt"), "line one\n").expect("notes");
    dir
}

fn text(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn gert_reference_scenarios_pass_reported_like_a_test_runner() {
    let examples = repo().join("tests/fixtures/gert-reference/examples");
    let output = jig(
        &repo(),
        &["runbook", "test", examples.join("service-health-check.yaml").to_str().expect("path")],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", text(&output), stderr(&output));
    let report = text(&output);
    for scenario in ["degraded", "healthy", "unknown"] {
        assert!(report.contains(&format!("ok   service-health-check/{scenario}")), "{report}");
    }
    assert!(report.trim_end().ends_with("3 passed, 0 failed"), "{report}");

    let output = jig(&examples, &["runbook", "test", "service-health-check.yaml", "--json"]);
    let results = stdout_json(&output);
    assert_eq!(results.as_array().map(Vec::len), Some(3));
    assert!(results.as_array().expect("array").iter().all(|r| r["passed"] == true));
}

#[test]
fn a_failing_scenario_shows_each_difference_and_exits_1() {
    let dir = tempfile::tempdir().expect("tmp");
    copy(&repo().join("tests/fixtures/gert-reference/examples"), dir.path());
    let test = dir.path().join("scenarios/service-health-check/healthy/test.yaml");
    let changed = std::fs::read_to_string(&test)
        .expect("read")
        .replace("expected_code: service_healthy", "expected_code: all_good");
    std::fs::write(&test, changed).expect("write");
    let output = jig(dir.path(), &["runbook", "test", "service-health-check.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    let report = text(&output);
    assert!(report.contains("FAIL service-health-check/healthy"), "{report}");
    assert!(
        report.contains(r#"expected_code: expected "all_good", got "service_healthy""#),
        "{report}"
    );
    assert!(report.contains("2 passed, 1 failed"), "{report}");
}

#[test]
fn the_example_projects_runbooks_pass_their_scenarios() {
    let output = jig(&repo(), &["--project", "toolpacks/examples", "runbook", "test"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", text(&output), stderr(&output));
    let report = text(&output);
    assert!(report.trim_end().ends_with("10 passed, 0 failed"), "{report}");
    // The v0 runbook's captures and assertions act: an unresolvable name stops it at the
    // assertion, as its scenario expects.
    for scenario in ["fine", "stale", "unresolvable"] {
        assert!(report.contains(&format!("ok   legacy/dns-triage/{scenario}")), "{report}");
    }
    assert!(!stderr(&output).contains("without scenarios"), "{}", stderr(&output));
}

/// A real run saved as a scenario replays: its answers in call order, the evidence with the
/// secret in it redacted, and what it did as the expectations; a name is never reused.
#[test]
fn a_finished_run_is_recorded_as_a_scenario_that_replays() {
    let dir = crate::calls::example_copy();
    let root = dir.path();
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    let started = start_write_up(
        root,
        "INC-6",
        "14",
        &format!(
            r#"{{"summary": "Rolled back; the deploy token {secret} was rotated.", "checked": ["dashboards"]}}"#
        ),
    );
    let view = stdout_json(&started);
    let id = view["id"].as_str().expect("id").to_owned();
    let refused = jig(root, &["runbook", "record", &id, "--name", "too-early"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("still waiting for people"), "{}", stderr(&refused));
    let approval =
        view["progress"]["waiting"][0]["need"]["approval_id"].as_str().expect("approval");
    assert_eq!(
        jig(root, &["--as", "bob", "approvals", "approve", approval]).status.code(),
        Some(0)
    );

    let recorded = jig(root, &["runbook", "record", &id, "--name", "real-run"]);
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));
    let scenario_dir = root.join("playbooks/incident/scenarios/write-up/real-run");
    let scenario = std::fs::read_to_string(scenario_dir.join("scenario.yaml")).expect("scenario");
    assert!(!scenario.contains(secret), "the secret is redacted: {scenario}");
    assert!(scenario.contains("oncall:who") && scenario.contains("std/file_write"), "{scenario}");
    let test = std::fs::read_to_string(scenario_dir.join("test.yaml")).expect("test");
    assert!(test.contains("write_up_filed") && test.contains("filed_end"), "{test}");

    let replayed =
        jig(root, &["runbook", "test", "--json", "playbooks/incident/write-up.runbook.yaml"]);
    let results = stdout_json(&replayed);
    let real = results.as_array().expect("results").iter().find(|r| r["scenario"] == "real-run");
    let real = real.expect("the recorded scenario is found");
    assert_eq!(real["passed"], true, "{real}");
    assert_eq!(replayed.status.code(), Some(0));
    let again = jig(root, &["runbook", "record", &id, "--name", "real-run"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("E_CONFLICT"), "{}", stderr(&again));
}

/// Dry-run renders every tool call and says what the project's policy would do with it, and
/// runs nothing: the write-up's file is not written, and the audit store is not even opened.
#[test]
fn dry_run_lists_each_call_rendered_with_the_policys_decision_and_runs_nothing() {
    let dir = crate::calls::example_copy();
    let root = dir.path();
    let output = jig(
        root,
        &["runbook", "test", "--mode", "dry-run", "playbooks/incident/write-up.runbook.yaml"],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", text(&output), stderr(&output));
    let report = text(&output);
    assert!(report.contains("ok   incident/write-up/filed"), "{report}");
    assert!(
        report.contains(
            r#"by_severity/sev1 or sev2/file → file_write {"path":"incidents/INC-1042.md","#
        ),
        "{report}"
    );
    assert!(
        report.contains("needs approval by rules[0]: a rule on effects write/exec"),
        "{report}"
    );
    assert!(
        report.contains("rota → oncall.who {\"week\":12}")
            || report.contains(r#"rota → oncall.who {"week":12}"#),
        "{report}"
    );
    assert!(report.contains("allow by rules[1]"), "{report}");
    assert!(!root.join("incidents").exists(), "nothing ran");
    assert!(!root.join(".jig/audit.db").exists(), "nothing recorded");

    let json = stdout_json(&jig(root, &["runbook", "test", "--mode", "dry-run", "--json"]));
    let filed =
        json.as_array().expect("results").iter().find(|r| r["scenario"] == "filed").expect("filed");
    let actions: Vec<&str> = filed["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["action"].as_str())
        .collect();
    assert_eq!(actions, ["allow", "require-approval"]);
    let replay = stdout_json(&jig(root, &["runbook", "test", "--json"]));
    assert!(replay[0].get("calls").is_none(), "replay lists no calls");
}

#[test]
fn a_run_paused_in_one_process_is_resumed_by_another() {
    let dir = project();
    let output = jig(dir.path(), &["runbook", "run", "note", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(6),
        "waiting for people: {}{}",
        text(&output),
        stderr(&output)
    );
    let run = stdout_json(&output);
    let id = run["id"].as_str().expect("id").to_owned();
    assert_eq!(run["progress"]["waiting"][0]["step_id"], "look");

    let shown = jig(dir.path(), &["runbook", "show", &id]);
    assert!(text(&shown).contains("needs evidence keep (text)"), "{}", text(&shown));

    // Held by a third process, it waits for a go-ahead at the step before the evidence.
    let paused = jig(dir.path(), &["runbook", "pause", &id]);
    assert_eq!(paused.status.code(), Some(6), "{}{}", text(&paused), stderr(&paused));
    let hint = format!("paused by root: jig runbook resume {id} --go look");
    assert!(text(&paused).contains(&hint), "{}", text(&paused));
    let twice = jig(dir.path(), &["runbook", "pause", &id]);
    assert!(stderr(&twice).contains("error[E_CONFLICT]"), "{}", stderr(&twice));

    std::fs::write(dir.path().join("keep.txt"), "keep line one\n").expect("evidence");
    let output = jig(
        dir.path(),
        &["runbook", "resume", &id, "--go", "look", "--evidence", "look=keep.txt", "--json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}{}", text(&output), stderr(&output));
    let done = stdout_json(&output);
    assert_eq!(done["progress"]["status"], "completed");
    assert_eq!(done["progress"]["outcome"]["meta"]["kept"], "keep line one");

    let again = jig(dir.path(), &["runbook", "resume", &id, "--evidence", "look=keep.txt"]);
    assert_eq!(again.status.code(), Some(0), "resuming a finished run changes nothing");
    let verify = jig(dir.path(), &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
}

#[test]
fn bad_inputs_are_refused_before_anything_runs() {
    let dir = project();
    let output = jig(dir.path(), &["runbook", "run", "note", "--input", "colour=red"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("error[E_VALIDATION_FAIL]: input `colour`"),
        "{}",
        stderr(&output)
    );
    let output = jig(dir.path(), &["runbook", "run", "nots"]);
    assert!(stderr(&output).contains("did you mean `note`?"), "{}", stderr(&output));
}

#[test]
fn the_step_by_step_walk_through_a_pseudo_terminal() {
    let dir = project();
    let command = format!("{} runbook run note --step", env!("CARGO_BIN_EXE_jig"));
    let mut session = rexpect::session::spawn_with_options(
        {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", &command]).current_dir(dir.path()).env("NO_COLOR", "1");
            c
        },
        rexpect::reader::Options { timeout_ms: Some(30_000), strip_ansi_escape_codes: true },
    )
    .expect("spawn");
    session.exp_string("read (tool)").expect("the first step");
    session.exp_string("will call file_read {\"path\":\"notes.txt\"}").expect("what it will do");
    session.exp_string("[r]un, [s]kip, [p]ause?").expect("asks");
    // A key answers on its own, without Enter.
    press(&mut session, "x", "send");
    session.exp_string("(answer one of: r, s, p)").expect("insists on a key");
    // An Enter typed out of habit after a key answers nothing more.
    session.send_line("r").expect("run");
    session.exp_string("look (manual)").expect("the manual step");
    session.exp_string("Read notes.txt and say what to keep.").expect("instructions");
    session.exp_string("[e]vidence, [p]ause?").expect("evidence");
    // Nor is it taken for the text asked next.
    session.send_line("e").expect("e");
    session.exp_string("keep (text): ").expect("asks for the text");
    session.send_line("the first line").expect("text");
    session.exp_string("outcome: resolved (kept)").expect("the outcome");
    session.exp_string("kept: the first line").expect("meta");
    session.exp_eof().expect("exit");
}

/// A step a person may not take (here: approving the call of a run they started, which the
/// policy forbids) is said and asked again; the walk does not end, and Ctrl-C pauses it.
#[test]
fn a_refused_self_approval_asks_again_and_ctrl_c_pauses() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("jig.yaml"),
        "name: own\npolicy:\n  approvals: { self_approval: false, allow_as: true }\n  rules:\n    - { effects: [write], action: require-approval }\n",
    )
    .expect("manifest");
    std::fs::create_dir_all(dir.path().join("runbooks")).expect("dir");
    std::fs::write(
        dir.path().join("runbooks/own.runbook.yaml"),
        "apiVersion: kernel/v0\nmeta: { name: own }\ntools: [std/file_write]\nsteps:\n  - id: write\n    type: tool\n    tool: std/file_write\n    inputs: { path: out.txt, content: mine }\n  - id: done\n    type: end\n    outcome: { category: resolved, code: written }\n",
    )
    .expect("runbook");
    let command = format!("{} --as alice runbook run own --step", env!("CARGO_BIN_EXE_jig"));
    let mut c = std::process::Command::new("sh");
    c.args(["-c", &command]).current_dir(dir.path()).env("NO_COLOR", "1");
    let mut session = rexpect::session::spawn_with_options(
        c,
        rexpect::reader::Options { timeout_ms: Some(30_000), strip_ansi_escape_codes: true },
    )
    .expect("spawn");
    session.exp_string("[r]un, [s]kip, [p]ause?").expect("the go-ahead");
    press(&mut session, "r", "run");
    session.exp_string("[a]pprove, [d]eny, [p]ause?").expect("the call waits for approval");
    press(&mut session, "a", "approve my own");
    session.exp_string("may not approve it").expect("refused, and why");
    session.exp_string("[a]pprove, [d]eny, [p]ause?").expect("asked again");
    session.send_control('c').expect("ctrl-c");
    let (_, matched) =
        session.exp_regex(r"resume with: jig runbook resume ([0-9a-f-]+)").expect("how to resume");
    session.exp_eof().expect("exit");
    let id = matched.trim().rsplit(' ').next().expect("id").to_owned();
    assert!(!dir.path().join("out.txt").exists(), "nothing written");
    let shown = jig(dir.path(), &["runbook", "show", &id, "--json"]);
    let view = stdout_json(&shown);
    assert_eq!(view["progress"]["waiting"][0]["need"]["need"], "approval", "{view}");
}

#[test]
fn pausing_the_walk_leaves_a_run_to_resume() {
    let dir = project();
    let command = format!("{} runbook run note --step", env!("CARGO_BIN_EXE_jig"));
    let mut c = std::process::Command::new("sh");
    c.args(["-c", &command]).current_dir(dir.path());
    let mut session = rexpect::session::spawn_with_options(
        c,
        rexpect::reader::Options { timeout_ms: Some(30_000), strip_ansi_escape_codes: true },
    )
    .expect("spawn");
    session.exp_string("[r]un, [s]kip, [p]ause?").expect("asks");
    session.send_line("p").expect("pause");
    let (_, matched) =
        session.exp_regex(r"resume with: jig runbook resume ([0-9a-f-]+)").expect("how to resume");
    let id = matched.trim().rsplit(' ').next().expect("id").to_owned();
    session.exp_eof().expect("exit");
    let output = jig(dir.path(), &["runbook", "resume", &id, "--go", "read", "--json"]);
    let view = stdout_json(&output);
    assert_eq!(view["progress"]["waiting"][0]["step_id"], "look", "{view}");
    assert_eq!(output.status.code(), Some(6));
}

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Start the example's write-up as alice with the findings' evidence (JSON): it then waits on
/// the write's approval.
pub(crate) fn start_write_up(
    root: &Path,
    incident: &str,
    week: &str,
    findings: &str,
) -> std::process::Output {
    let file = root.join("findings.json");
    std::fs::write(&file, findings).expect("evidence");
    let evidence = format!("findings={}", file.display());
    let incident = format!("incident={incident}");
    let week = format!("week={week}");
    jig(
        root,
        &[
            "--as",
            "alice",
            "runbook",
            "run",
            "incident/write-up",
            "--input",
            &incident,
            "--input",
            &week,
            "--evidence",
            &evidence,
            "--json",
        ],
    )
}

/// The example's write-up waits on the write's approval; `jig approvals approve` in another
/// process moves the run to its outcome, and the file is written once.
#[test]
fn approving_a_runbook_steps_call_from_the_queue_moves_the_run() {
    let dir = crate::calls::example_copy();
    let root = dir.path();
    let started = start_write_up(
        root,
        "INC-5",
        "12",
        r#"{"summary": "A config push; rolled back.", "checked": ["dashboards"]}"#,
    );
    assert_eq!(started.status.code(), Some(6), "waiting: {}", stderr(&started));
    let view = stdout_json(&started);
    let id = view["id"].as_str().expect("id");
    let approval =
        view["progress"]["waiting"][0]["need"]["approval_id"].as_str().expect("approval");
    let approved = jig(root, &["--as", "bob", "approvals", "approve", approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert!(stderr(&approved).contains(&format!("runbook run {id} walked on: completed")));
    let written = std::fs::read_to_string(root.join("incidents/INC-5.md")).expect("written");
    assert!(written.contains("A config push; rolled back."), "{written}");
    let shown = jig(root, &["runbook", "show", id]);
    assert!(text(&shown).contains("outcome: resolved (write_up_filed)"), "{}", text(&shown));
}

/// `--evidence STEP=FILE` for a step that asks for a file attaches the file itself, binary
/// included; Jig keeps it by its hash.
#[test]
fn a_file_given_as_evidence_is_attached_by_its_hash() {
    let dir = project();
    std::fs::write(
        dir.path().join("runbooks/attach.runbook.yaml"),
        "apiVersion: kernel/v0\nmeta: { name: attach }\nsteps:\n  - id: logs\n    type: manual\n    contract: { side_effects: false }\n    required_evidence: [{ kind: attachment, name: log }]\n  - id: done\n    type: end\n    outcome: { category: resolved, code: attached }\n",
    )
    .expect("runbook");
    let bytes: Vec<u8> = (0..=255u8).chain([0, 159, 146, 150]).collect();
    std::fs::write(dir.path().join("core.bin"), &bytes).expect("file");
    let output =
        jig(dir.path(), &["runbook", "run", "attach", "--evidence", "logs=core.bin", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let view = stdout_json(&output);
    let log = &view["progress"]["variables"]["log"];
    let sha256 = jig_model::canonical::Sha256Hash::of_bytes(&bytes).to_hex();
    assert_eq!(log["sha256"], sha256.as_str(), "{log}");
    assert_eq!(log["name"], "core.bin");
    assert_eq!(log["bytes"], bytes.len());
}

/// `min_approvers: 2` through the terminal: the first approval is recorded without a token and
/// the queue says who has approved; the second person's approval grants the token.
#[test]
fn an_approval_two_people_must_give_is_counted_in_the_terminal() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("jig.yaml"),
        "name: two\npolicy:\n  approvals: { self_approval: false, allow_as: true }\n  rules:\n    - { effects: [write], action: allow }\n",
    )
    .expect("manifest");
    std::fs::create_dir_all(dir.path().join("runbooks")).expect("dir");
    std::fs::write(
        dir.path().join("runbooks/two.runbook.yaml"),
        "apiVersion: kernel/v0\nmeta:\n  name: two\n  governance:\n    rules:\n      - { effects: [write], action: require-approval, min_approvers: 2 }\n      - default: allow\ntools: [std/file_write]\nsteps:\n  - id: write\n    type: tool\n    tool: std/file_write\n    inputs: { path: out.txt, content: two said yes }\n  - id: done\n    type: end\n    outcome: { category: resolved, code: written }\n",
    )
    .expect("runbook");
    let started = jig(dir.path(), &["--as", "alice", "runbook", "run", "two"]);
    assert!(!dir.path().join("out.txt").exists(), "{}", stderr(&started));
    let pending = jig(dir.path(), &["approvals", "list", "--json"]);
    let id = stdout_json(&pending)[0]["id"].as_str().expect("a pending approval").to_owned();
    assert_eq!(stdout_json(&pending)[0]["required"], 2);

    let bob = jig(dir.path(), &["--as", "bob", "approvals", "approve", &id]);
    assert_eq!(bob.status.code(), Some(0), "{}", stderr(&bob));
    assert!(bob.stdout.is_empty(), "no token for one approval of two");
    assert!(stderr(&bob).contains("1 of 2"), "{}", stderr(&bob));
    let listed = text(&jig(dir.path(), &["approvals", "list"]));
    assert!(listed.contains("needs 2 different approvers: bob (1 of 2)"), "{listed}");
    let again = jig(dir.path(), &["--as", "bob", "approvals", "approve", &id]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("has already approved"), "{}", stderr(&again));

    let carol = jig(dir.path(), &["--as", "carol", "approvals", "approve", &id]);
    assert_eq!(carol.status.code(), Some(0), "{}", stderr(&carol));
    // Granted: alice's run walks on with the approval; carol holds no token for it.
    assert_eq!(text(&carol), "", "no token for alice's call");
    assert!(stderr(&carol).contains("walked on"), "{}", stderr(&carol));
    assert!(dir.path().join("out.txt").exists(), "the approved step ran");
    let all = jig(dir.path(), &["approvals", "list", "--all", "--json"]);
    assert_eq!(stdout_json(&all)[0]["approvers"], serde_json::json!(["bob", "carol"]));
}

#[test]
fn an_ended_run_is_followed_by_the_runbook_its_outcome_names() {
    let dir = project();
    std::fs::create_dir_all(dir.path().join("runbooks/legacy")).expect("dir");
    std::fs::write(
        dir.path().join("runbooks/legacy/triage.runbook.yaml"),
        r#"apiVersion: runbook/v0
meta:
  name: triage
  inputs:
    path: { from: prompt, default: notes.txt }
steps:
  - id: ask
    type: manual
    instructions: Is it stale?
    outcomes:
      - state: needs_rca
        next_runbook: { file: ../note, inputs: { path: "{{ .path }}" } }
"#,
    )
    .expect("triage");
    std::fs::write(dir.path().join("ack.json"), "{}").expect("ack");
    let ended = jig(
        dir.path(),
        &["runbook", "run", "legacy/triage", "--evidence", "ask=ack.json", "--json"],
    );
    let ended = stdout_json(&ended);
    let id = ended["id"].as_str().expect("id").to_owned();
    assert_eq!(ended["progress"]["outcome"]["meta"]["next_runbook"]["runbook"], "note", "{ended}");
    let shown = jig(dir.path(), &["runbook", "show", &id]);
    let hint = format!("next: note — continue with: jig runbook follow {id}");
    assert!(text(&shown).contains(&hint), "{}", text(&shown));

    let followed = jig(dir.path(), &["runbook", "follow", &id, "--json"]);
    assert_eq!(
        followed.status.code(),
        Some(6),
        "waits at note's manual step: {}",
        stderr(&followed)
    );
    let next = stdout_json(&followed);
    assert_eq!(next["runbook"], "note");
    assert_eq!(next["progress"]["waiting"][0]["step_id"], "look");
    let again = stdout_json(&jig(dir.path(), &["runbook", "follow", &id, "--json"]));
    assert_eq!(again["id"], next["id"], "a run is continued once");
}
