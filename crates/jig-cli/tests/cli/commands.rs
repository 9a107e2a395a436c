//! validate, list, show and their exit codes (DESIGN.md §7).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jig_model::toolpack::BUILTIN_TOOLS;

use crate::{jig, jig_env, repo, stderr, stdout_json};

#[test]
fn validate_accepts_the_example_project_and_std() {
    for project in ["toolpacks/examples", "toolpacks/std"] {
        let output = jig(&repo().join(project), &["validate"]);
        assert_eq!(output.status.code(), Some(0), "{project}: {}", stderr(&output));
        assert!(stderr(&output).contains("valid: "), "{}", stderr(&output));
        assert!(output.stdout.is_empty(), "diagnostics go to stderr");
    }
}

#[test]
fn validate_refuses_a_broken_project_with_exit_3_naming_file_and_line() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(dir.path().join("tools")).expect("mkdir");
    std::fs::write(dir.path().join("jig.yaml"), "name: broken\n").expect("write");
    std::fs::write(
        dir.path().join("tools/t.tool.yaml"),
        "id: broken.t\nversion: 1.0.0\ndeterministic: true\ntimeoutMs: 0\n",
    )
    .expect("write");
    let output = jig(dir.path(), &["validate"]);
    assert_eq!(output.status.code(), Some(3));
    let text = stderr(&output);
    assert!(text.contains("error[field.range]: `timeoutMs` must be at least 1, not `0`"), "{text}");
    assert!(text.contains("--> tools/t.tool.yaml:4:12"), "{text}");
    assert!(text.contains("4 | timeoutMs: 0"), "{text}");
    assert!(text.contains("invalid: 5 errors, 0 warnings"), "{text}");

    let output = jig(dir.path(), &["validate", "--json"]);
    assert_eq!(output.status.code(), Some(3));
    let report = stdout_json(&output);
    assert_eq!(report["valid"], false);
    let first = &report["diagnostics"][0];
    assert_eq!(
        (first["file"].as_str(), first["line"].as_u64()),
        (Some("tools/t.tool.yaml"), Some(1))
    );
    assert!(
        report["diagnostics"].as_array().is_some_and(|d| d.iter().all(|d| d["code"].is_string()))
    );

    // list and show refuse to work on an invalid project, with the same exit code.
    assert_eq!(jig(dir.path(), &["list"]).status.code(), Some(3));
    assert_eq!(jig(dir.path(), &["show", "file_read"]).status.code(), Some(3));
}

#[test]
fn validate_takes_explicit_runbook_files() {
    let gert = repo().join("tests/fixtures/gert-reference/examples");
    let output = jig(&gert, &["validate", "service-health-check.yaml", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = stdout_json(&output);
    assert_eq!(report["runbooks"], 1);
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(0));
}

#[test]
fn list_json_has_the_builtins_and_the_example_tools_sorted() {
    let output = jig(&repo(), &["--project", "toolpacks/examples", "list", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let tools = stdout_json(&output);
    let ids: Vec<&str> =
        tools.as_array().expect("array").iter().filter_map(|t| t["id"].as_str()).collect();
    for builtin in BUILTIN_TOOLS {
        assert!(ids.contains(&builtin), "{builtin}");
    }
    for example in ["acme.changelog", "acme.slugify", "netkit/probe.get", "service.restart"] {
        assert!(ids.contains(&example), "{example}");
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    let first = &tools[0];
    for field in
        ["id", "version", "description", "package", "dialect", "kind", "sideEffects", "risk"]
    {
        assert!(first.get(field).is_some(), "{field}");
    }
}

#[test]
fn list_filters_by_tag_and_prints_a_table() {
    let examples = repo().join("toolpacks/examples");
    let output = jig(&examples, &["list", "--tag", "release", "--json"]);
    let ids: Vec<String> = stdout_json(&output)
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|t| t["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(ids, ["acme.changelog", "acme.deploy_status", "acme.release_notes_html"]);

    let output = jig(&examples, &["list"]);
    let table = String::from_utf8_lossy(&output.stdout);
    let header = table.lines().next().expect("header");
    assert!(
        header.starts_with("ID") && header.contains("KIND") && header.contains("RISK"),
        "{header}"
    );
    assert!(table.lines().any(|l| l.starts_with("file_read ") && l.contains("builtin")));
}

#[test]
fn show_prints_a_definition_with_resolved_schemas() {
    let examples = repo().join("toolpacks/examples");
    let output = jig(&examples, &["show", "acme.deploy_status", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let tool = stdout_json(&output);
    assert_eq!(tool["id"], "acme.deploy_status");
    assert_eq!(
        tool["inputSchema"]["properties"]["environment"]["enum"],
        serde_json::json!(["dev", "staging", "production"])
    );
    assert!(!tool.to_string().contains("\"$ref\""));
    assert_eq!(tool["source"]["file"], "tools/deploy-status.tool.yaml");

    let output = jig(&examples, &["show", "file_read"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("file_read 1.0.0\n"), "{text}");
    assert!(text.contains("input schema:"));
}

#[test]
fn show_of_an_unknown_tool_exits_1_with_a_suggestion() {
    let output = jig(&repo().join("toolpacks/examples"), &["show", "file_raed"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(text.contains("no tool `file_raed`"), "{text}");
    assert!(text.contains("did you mean `file_read`?"), "{text}");
}

#[test]
fn usage_errors_exit_2_and_help_describes_the_commands() {
    assert_eq!(jig(&repo(), &["frobnicate"]).status.code(), Some(2));
    assert_eq!(jig(&repo(), &["show"]).status.code(), Some(2));
    let help = jig(&repo(), &["--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    for command in ["validate", "list", "show", "--project", "Exit codes"] {
        assert!(text.contains(command), "{command}: {text}");
    }
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["--project", "toolpacks/examples", "list"])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
}

#[test]
fn validate_watch_reports_each_change() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(dir.path().join("tools")).expect("mkdir");
    std::fs::write(dir.path().join("jig.yaml"), "name: live\n").expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["validate", "--watch", "--json"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = || -> serde_json::Value {
        let line = lines.next().expect("a report").expect("utf-8");
        serde_json::from_str(&line).expect("json line")
    };
    assert_eq!(next()["tools"], 27);
    let deadline = Instant::now() + Duration::from_secs(20);
    std::fs::write(dir.path().join("tools/bad.tool.yaml"), "id: live.bad\n").expect("write");
    let mut report = next();
    while report["valid"] != false && Instant::now() < deadline {
        report = next();
    }
    assert_eq!(report["valid"], false);
    std::fs::remove_file(dir.path().join("tools/bad.tool.yaml")).expect("rm");
    let mut report = next();
    while report["valid"] != true && Instant::now() < deadline {
        report = next();
    }
    assert_eq!(report["tools"], 27);
    child.kill().expect("kill");
    let _ = child.wait();
}

#[test]
fn a_missing_project_directory_is_an_error_not_an_empty_project() {
    let output = jig(&repo(), &["--project", "no/such/dir", "validate"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(stderr(&output).contains("no such directory: no/such/dir"), "{}", stderr(&output));
}

#[test]
fn doctor_reports_the_sandbox_and_the_interpreters() {
    let dir = tempfile::tempdir().expect("tmp");
    let output = jig(dir.path(), &["doctor", "--json"]);
    let report = stdout_json(&output);
    // Setup installs bubblewrap; this project's machines run Linux ≥ 6.12 (Landlock scopes).
    assert_eq!(report["sandbox"]["confined"], true, "{report:#}");
    assert!(report["landlock"]["abi"].as_i64().expect("abi") >= 6, "{report:#}");
    assert_eq!(output.status.code(), Some(0));
    let python = report["programs"]
        .as_array()
        .expect("programs")
        .iter()
        .find(|p| p["name"] == "python3")
        .expect("python3");
    assert!(python["path"].is_string(), "{python}");
}

/// Defect: doctor claimed enforcement calls could not get. Without the sandbox program, doctor
/// says processes are not confined and exits 1, and a call that starts a process is refused
/// with the same reason.
#[test]
fn doctor_and_a_call_reach_the_same_verdict_without_the_sandbox() {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for program in ["true", "python3"] {
        let found = jig_tools_find(program);
        std::os::unix::fs::symlink(found, bin.join(program)).expect("symlink");
    }
    std::fs::create_dir_all(dir.path().join("tools")).expect("mkdir");
    std::fs::write(
        dir.path().join("tools/t.tool.yaml"),
        "id: demo.truth\nversion: 1.0.0\ndescription: Runs true.\nsideEffects: [none]\nrisk: low\n\
         deterministic: false\ntimeoutMs: 5000\nlimits: {maxInputBytes: 1024, maxOutputBytes: 1024}\n\
         inputSchema: {type: object}\noutputSchema: {type: object}\n\
         execution: {kind: cli, cmd: [\"true\"]}\n",
    )
    .expect("write");
    let path = bin.display().to_string();
    let doctor = jig_env(dir.path(), &["doctor", "--json"], &[("PATH", &path)]);
    let report = stdout_json(&doctor);
    assert_eq!(report["sandbox"]["confined"], false, "{report:#}");
    assert!(report["sandbox"]["detail"].as_str().expect("detail").contains("bubblewrap"));
    assert_eq!(doctor.status.code(), Some(1));
    let call = jig_env(dir.path(), &["call", "demo.truth"], &[("PATH", &path)]);
    let response = stdout_json(&call);
    assert_eq!(response["ok"], false, "{response:#}");
    assert_eq!(response["errors"][0]["details"]["rule"], "sandbox.enforce", "{response:#}");
}

fn jig_tools_find(program: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"))
}

/// On a terminal, `jig call` shows the call's progress and streamed output on stderr; piped, it
/// shows nothing extra. The terminal is a real pseudo-terminal (`script`).
#[test]
fn call_shows_progress_on_a_terminal_and_nothing_when_piped() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools")).expect("mkdir");
    std::fs::write(root.join("jig.yaml"), "name: progress\n").expect("write");
    std::fs::write(
        root.join("tools/slow.tool.yaml"),
        "id: demo.slow\nversion: 1.0.0\ndescription: Reports progress.\nsideEffects: [none]\n\
         risk: low\ndeterministic: false\ntimeoutMs: 10000\n\
         limits: {maxInputBytes: 1024, maxOutputBytes: 4096}\ninputSchema: {type: object}\n\
         outputSchema: {type: object}\nexecution: {kind: python, script: slow.py}\n",
    )
    .expect("write");
    std::fs::write(
        root.join("tools/slow.py"),
        "import json, sys, time\njson.load(sys.stdin)\nfor i in range(1, 4):\n    \
         print(json.dumps({'type': 'progress', 'pct': i * 30, 'message': f'step {i}'}), flush=True)\n    \
         print(f'working on step {i}', file=sys.stderr, flush=True)\n    time.sleep(0.3)\n\
         print(json.dumps({'type': 'result', 'data': {'done': True}}))\n",
    )
    .expect("write");
    let command = format!("{} call demo.slow", env!("CARGO_BIN_EXE_jig"));
    let terminal = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .expect("script");
    let shown = String::from_utf8_lossy(&terminal.stdout);
    assert!(shown.contains("working on step 2"), "streamed output: {shown}");
    assert!(shown.contains("step 3") && shown.contains('%'), "a progress bar: {shown}");
    assert!(shown.contains("\"done\": true"), "the response, pretty: {shown}");
    let piped = jig(root, &["call", "demo.slow"]);
    assert_eq!(piped.status.code(), Some(0));
    assert!(piped.stderr.is_empty(), "nothing extra when piped: {}", stderr(&piped));
    assert_eq!(stdout_json(&piped)["data"]["done"], true);
}
