//! call, select, approvals and audit through the real binary (DESIGN.md §7), on copies of the
//! example project.

use std::path::Path;

use serde_json::Value;

use crate::{jig, repo, stderr, stdout_json};

/// A copy of the example project in a temporary directory.
pub fn example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    copy_dir(&repo().join("toolpacks/examples"), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

const WRITE: &str =
    r#"{"path": "notes/release.txt", "content": "v1.2.0 shipped\n", "create_dirs": true}"#;

/// The issue's "done when": refused until approved, runs once approved, audited with request,
/// decision and result packets, replays on repeat, and the chain verifies.
#[test]
fn file_write_on_the_example_project_from_refusal_to_replay() {
    let dir = example_copy();
    let root = dir.path();

    let refused = jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let response = stdout_json(&refused);
    assert_eq!(response["ok"], false);
    assert_eq!(response["errors"][0]["code"], "E_POLICY");
    assert!(!root.join("notes/release.txt").exists());
    let approval =
        response["errors"][0]["details"]["approval_id"].as_str().expect("approval id").to_owned();

    let listed = jig(root, &["approvals", "list"]);
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(
        table.contains(&approval[..8]) && table.contains("file_write") && table.contains("alice"),
        "{table}"
    );

    let approved = jig(root, &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    // bob gets no token for alice's call (issue #27): alice's next identical call runs it. A
    // script that passes on what approve printed (nothing) works the same.
    let token = String::from_utf8_lossy(&approved.stdout).trim().to_owned();
    assert_eq!(token, "", "no token for someone else's call");

    let ran =
        jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE, "--approve", &token]);
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let response = stdout_json(&ran);
    assert_eq!(response["ok"], true);
    assert_eq!(response["replayed"], false);
    let first = response.as_object().and_then(|o| o.iter().next()).expect("a field");
    assert_eq!(first, (&"type".to_owned(), &Value::from("ToolResponse")), "seed 002's envelope");
    assert_eq!(
        std::fs::read_to_string(root.join("notes/release.txt")).expect("written"),
        "v1.2.0 shipped\n"
    );
    let request_id = response["request_id"].as_str().expect("request id").to_owned();

    let list = jig(root, &["audit", "list", "--json"]);
    let packets: Vec<Value> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let kinds: Vec<&str> = packets
        .iter()
        .filter(|p| p["request_id"] == request_id.as_str())
        .map(|p| p["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["tool.call.request", "tool.call.decision", "tool.call.result"]);

    std::fs::write(root.join("notes/release.txt"), "edited since").expect("write");
    let repeat = jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE]);
    assert_eq!(repeat.status.code(), Some(0), "{}", stderr(&repeat));
    assert_eq!(stdout_json(&repeat)["replayed"], true);
    assert_eq!(
        std::fs::read_to_string(root.join("notes/release.txt")).expect("read"),
        "edited since"
    );

    let reused = jig(
        root,
        &[
            "--as",
            "alice",
            "call",
            "file_write",
            "--args",
            r#"{"path": "x", "content": "y"}"#,
            "--approve",
            &token,
        ],
    );
    assert_eq!(stdout_json(&reused)["errors"][0]["code"], "E_POLICY");

    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("ok: "),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let head = jig(root, &["audit", "head"]);
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let (seq, hash) = head.split_once(' ').expect("SEQ HASH");
    assert_eq!(seq.parse::<usize>().expect("seq"), packets.len() + 6, "{head}");
    assert_eq!(hash.len(), 64);

    let show = jig(root, &["audit", "show", &request_id[..10]]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("succeeded") && text.contains("tool.call.result"), "{text}");
    let export = jig(root, &["audit", "export"]);
    assert_eq!(
        String::from_utf8_lossy(&export.stdout).lines().count(),
        seq.parse::<usize>().expect("seq")
    );
}

#[test]
fn call_usage_errors_exit_2_and_print_nothing_on_stdout() {
    let dir = example_copy();
    for args in [
        vec!["call", "file_read", "--args", r#"{"path": "a", "path": "../etc/passwd"}"#],
        vec!["call", "file_read", "--args", "[1, 2]"],
        vec!["call", "file_read", "--args", "{not json"],
        vec!["call"],
        vec!["call", "file_read", "--request", "missing.json"],
    ] {
        let output = jig(dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(stderr(&output).starts_with("error: "), "{args:?}: {}", stderr(&output));
    }
    let duplicate =
        jig(dir.path(), &["call", "file_read", "--args", r#"{"path": "a", "path": "b"}"#]);
    assert!(stderr(&duplicate).contains("duplicate key `path`"), "{}", stderr(&duplicate));
}

#[test]
fn call_takes_a_whole_request_from_stdin() {
    let dir = example_copy();
    std::fs::write(dir.path().join("hello.txt"), "hello\n").expect("write");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["call", "--request", "-"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let request = r#"{"tool": "file_read", "args": {"path": "hello.txt"}, "request_id": "my-id-1", "session_id": "s9"}"#;
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), request.as_bytes())
        .expect("write");
    drop(child.stdin.take());
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let response = stdout_json(&output);
    assert_eq!(response["request_id"], "my-id-1");
    assert_eq!(response["data"]["content"], "hello\n");
    let packets = jig(dir.path(), &["audit", "list", "--json"]);
    let first: Value = serde_json::from_str(
        String::from_utf8_lossy(&packets.stdout).lines().next().expect("a packet"),
    )
    .expect("json");
    assert_eq!(first["session_id"], "s9");
}

#[test]
fn call_on_an_invalid_project_answers_with_a_response_and_runs_nothing() {
    let dir = example_copy();
    std::fs::write(dir.path().join("tools/broken.tool.yaml"), "id: broken\n").expect("write");
    let output = jig(dir.path(), &["call", "file_read", "--args", r#"{"path": "jig.yaml"}"#]);
    assert_eq!(output.status.code(), Some(1));
    let response = stdout_json(&output);
    assert_eq!(response["errors"][0]["code"], "E_VALIDATION_FAIL");
    assert!(stderr(&output).contains("tools/broken.tool.yaml"), "{}", stderr(&output));
    // The audit stays readable while the project is broken.
    assert_eq!(jig(dir.path(), &["audit", "verify"]).status.code(), Some(0));
}

#[test]
fn select_prints_a_selection_and_fails_clearly_without_one() {
    let dir = example_copy();
    let output = jig(
        dir.path(),
        &["select", "read", "a", "file", "--args", r#"{"path": "jig.yaml"}"#, "--allow", "read"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let selection = stdout_json(&output);
    assert_eq!(selection["selected_tool"], "file_read");
    assert!(selection["confidence"].as_f64().expect("confidence") > 0.0);

    let none = jig(dir.path(), &["select", "zebra", "quantum"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
    assert!(stderr(&none).contains("zebra"), "{}", stderr(&none));
    let bad = jig(dir.path(), &["select", "x", "--allow", "teleport"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("teleport"), "{}", stderr(&bad));
}

#[test]
fn approvals_can_be_denied_and_self_approval_forbidden() {
    let dir = example_copy();
    // The example is a team's setting: a reviewer other than the asker approves.
    let manifest = std::fs::read_to_string(dir.path().join("jig.yaml")).expect("read");
    assert!(manifest.contains("self_approval: false"), "{manifest}");
    let asked = jig(dir.path(), &["--as", "alice", "call", "file_write", "--args", WRITE]);
    let id =
        stdout_json(&asked)["errors"][0]["details"]["approval_id"].as_str().expect("id").to_owned();
    let own = jig(dir.path(), &["--as", "alice", "approvals", "approve", &id]);
    assert_eq!(own.status.code(), Some(1));
    assert!(own.stdout.is_empty(), "no token");
    assert!(stderr(&own).contains("may not approve"), "{}", stderr(&own));
    let denied = jig(dir.path(), &["--as", "bob", "approvals", "deny", &id]);
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    let again = jig(dir.path(), &["--as", "bob", "approvals", "approve", &id]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already denied"), "{}", stderr(&again));
    let all = jig(dir.path(), &["approvals", "list", "--all", "--json"]);
    assert_eq!(stdout_json(&all)[0]["state"], "denied");
}

#[test]
fn call_and_audit_work_on_a_postgres_store() {
    let url = jig_testkit::postgres_url();
    let dir = example_copy();
    let root = dir.path();
    let read = jig(root, &["--db", &url, "call", "file_read", "--args", r#"{"path": "jig.yaml"}"#]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let write = jig(root, &["--db", &url, "--as", "alice", "call", "file_write", "--args", WRITE]);
    let id =
        stdout_json(&write)["errors"][0]["details"]["approval_id"].as_str().expect("id").to_owned();
    let token = jig(root, &["--db", &url, "--as", "bob", "approvals", "approve", &id]);
    let token = String::from_utf8_lossy(&token.stdout).trim().to_owned();
    let ran = jig(
        root,
        &[
            "--db",
            &url,
            "--as",
            "alice",
            "call",
            "file_write",
            "--args",
            WRITE,
            "--approve",
            &token,
        ],
    );
    assert_eq!(stdout_json(&ran)["ok"], true, "{}", stderr(&ran));
    let verify = jig(root, &["--db", &url, "audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("ok: 10 packets"),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    assert!(!root.join(".jig").exists(), "nothing was written to the default SQLite store");
}

#[test]
fn several_approvals_are_denied_with_one_reason() {
    let dir = example_copy();
    let ask = |path: &str| {
        let args = format!(r#"{{"path": "{path}", "content": "x"}}"#);
        let asked = jig(dir.path(), &["--as", "alice", "call", "file_write", "--args", &args]);
        stdout_json(&asked)["errors"][0]["details"]["approval_id"].as_str().expect("id").to_owned()
    };
    let (one, two) = (ask("a.txt"), ask("b.txt"));
    // Several at once need the reason each asker reads; nothing is decided without it.
    let bare = jig(dir.path(), &["--as", "bob", "approvals", "deny", &one, &two]);
    assert_eq!(bare.status.code(), Some(2), "{}", stderr(&bare));
    assert!(stderr(&bare).contains("`note`"), "{}", stderr(&bare));
    let pending = jig(dir.path(), &["approvals", "list", "--json"]);
    assert_eq!(stdout_json(&pending).as_array().expect("list").len(), 2);

    let reason = "frozen until Monday";
    let denied =
        jig(dir.path(), &["--as", "bob", "approvals", "deny", &one, &two, "--reason", reason]);
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    assert_eq!(
        String::from_utf8_lossy(&denied.stdout),
        format!("{one} denied\n{two} denied\n"),
        "{}",
        stderr(&denied)
    );
    let all = stdout_json(&jig(dir.path(), &["approvals", "list", "--all", "--json"]));
    for approval in all.as_array().expect("list") {
        assert_eq!(
            (approval["state"].as_str(), approval["note"].as_str()),
            (Some("denied"), Some(reason))
        );
    }
    // Once more: each fails alone, and the command says so.
    let again = jig(dir.path(), &["--as", "bob", "approvals", "approve", &one, &two]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already denied"), "{}", stderr(&again));
    assert!(stderr(&again).contains("0 of 2 approved"), "{}", stderr(&again));
}
