//! `proc_list` and `shell_exec` through the pipeline, with real processes.

use std::time::{Duration, Instant};

use jig_engine::Event;
use serde_json::json;

use crate::{Project, call_once, code};

const ALLOW_SHELL: &str = r#"shell_allow: ["^printf(\\s|$)", "^sh(\\s|$)", "^cat(\\s|$)", "^sleep(\\s|$)", "^git(\\s|$)", "^find(\\s|$)", "^pwd$", "^env$"]
rules:
  - { effects: [exec], action: allow }"#;

#[tokio::test(flavor = "multi_thread")]
async fn proc_list_finds_a_process_and_redacts_its_secrets() {
    let project = Project::new("");
    let engine = project.engine().await;
    let mut child = std::process::Command::new("sh")
        .args(["-c", "sleep 30", "jig-proc-test", "--token", "hunter2secret"])
        .spawn()
        .expect("spawn sleep");
    let response = call_once(&engine, "proc_list", json!({ "filter": "jig-proc-test" })).await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(response.ok, "{response:?}");
    let rows = response.data["processes"].as_array().expect("processes");
    let row = rows
        .iter()
        .find(|r| r["pid"] == json!(child.id()))
        .unwrap_or_else(|| panic!("sleep not listed: {rows:?}"));
    assert_eq!(row["cmd"], "sh -c 'sleep 30' jig-proc-test --token [REDACTED]");
    assert!(row["mem_mb"].as_f64().expect("mem") >= 0.0);
    let all = call_once(&engine, "proc_list", json!({})).await;
    assert!(all.data["processes"].as_array().expect("processes").len() <= 50);
    let bad = call_once(&engine, "proc_list", json!({ "filter": "(" })).await;
    assert_eq!(code(&bad), "E_VALIDATION_FAIL");
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_exec_runs_argv_with_stdin_env_and_cwd() {
    let project = Project::new(ALLOW_SHELL);
    std::fs::create_dir_all(project.path("sub")).expect("mkdir");
    let engine = project.engine().await;
    let response =
        call_once(&engine, "shell_exec", json!({ "cmd": "printf '%s|%s' 'a b' \"c\"" })).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["stdout"], "a b|c");
    assert_eq!(response.data["code"], 0);
    let stdin = call_once(&engine, "shell_exec", json!({ "cmd": "cat", "stdin": "fed" })).await;
    assert_eq!(stdin.data["stdout"], "fed");
    let cwd = call_once(&engine, "shell_exec", json!({ "cmd": "pwd", "cwd": "sub" })).await;
    assert_eq!(
        cwd.data["stdout"].as_str().expect("stdout").trim_end(),
        project.path("sub").canonicalize().expect("canon").display().to_string()
    );
    // The environment starts empty: Jig's own variables do not leak in.
    let env =
        call_once(&engine, "shell_exec", json!({ "cmd": "env", "env": { "GREETING": "hi" } }))
            .await;
    assert_eq!(code(&env), "E_POLICY", "env is a launcher: {env:?}");
    let env = call_once(
        &engine,
        "shell_exec",
        json!({ "cmd": "sh -c 'echo $GREETING; echo ${CARGO_PKG_NAME:-unset}'", "env": { "GREETING": "hi" } }),
    )
    .await;
    assert_eq!(code(&env), "E_POLICY", "sh is a launcher: {env:?}");
    let exit = call_once(&engine, "shell_exec", json!({ "cmd": "cat missing.txt" })).await;
    assert!(exit.ok, "{exit:?}");
    assert_eq!(exit.data["code"], 1);
    assert!(exit.data["stderr"].as_str().expect("stderr").contains("missing.txt"));
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_exec_streams_output_and_kills_at_its_timeout() {
    let project = Project::new(ALLOW_SHELL);
    let engine = project.engine().await;
    let mut events = engine.subscribe();
    let started = Instant::now();
    let response =
        call_once(&engine, "shell_exec", json!({ "cmd": "sleep 30", "timeout_ms": 300 })).await;
    assert_eq!(code(&response), "E_TIMEOUT", "{response:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let printed = call_once(&engine, "shell_exec", json!({ "cmd": "printf streamed" })).await;
    let mut chunks = String::new();
    while let Ok(event) = events.try_recv() {
        if let Event::Message(message) = event
            && message.event == "OutputChunk"
            && message.request_id == printed.request_id
        {
            chunks.push_str(message.data.expect("data")["text"].as_str().unwrap_or_default());
        }
    }
    assert_eq!(chunks, "streamed");
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_exec_refuses_injection_and_dangerous_arguments() {
    let project = Project::new(ALLOW_SHELL);
    let engine = project.engine().await;
    for cmd in [
        "printf x; touch pwned",
        "printf x && touch pwned",
        "printf x | sh",
        "printf $(touch pwned)",
        "printf `touch pwned`",
        "printf x > pwned",
        "printf \"$HOME\"",
        "printf x\ntouch pwned",
        "touch pwned",
        "git -c core.pager=touch log",
        "git --upload-pack=touch fetch origin",
        "git diff --ext-diff",
        "git log --output=pwned",
        "find . -exec touch pwned ;",
        "find . -delete",
        "sh -c 'touch pwned'",
    ] {
        let response = call_once(&engine, "shell_exec", json!({ "cmd": cmd })).await;
        assert_eq!(code(&response), "E_POLICY", "{cmd:?}: {response:?}");
    }
    for env in [json!({ "LD_PRELOAD": "/tmp/x.so" }), json!({ "GIT_SSH_COMMAND": "touch pwned" })] {
        let response =
            call_once(&engine, "shell_exec", json!({ "cmd": "printf x", "env": env })).await;
        assert_eq!(code(&response), "E_POLICY", "{env}: {response:?}");
    }
    let outside = call_once(&engine, "shell_exec", json!({ "cmd": "pwd", "cwd": "../" })).await;
    assert_eq!(code(&outside), "E_POLICY", "{outside:?}");
    assert!(!project.path("pwned").exists());
}

/// A repository's hooks do not run when `git` is called through `shell_exec`.
#[tokio::test(flavor = "multi_thread")]
async fn shell_exec_git_runs_no_repository_hooks() {
    let project = Project::new(ALLOW_SHELL);
    let root = &project.root;
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\ntouch hook-ran\n").expect("hook");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let engine = project.engine().await;
    let response = call_once(
        &engine,
        "shell_exec",
        json!({
            "cmd": "git commit -q --allow-empty -m hello",
            "env": { "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid" }
        }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["code"], 0, "{response:?}");
    assert!(!root.join("hook-ran").exists(), "the repository's hook ran");
    git(&["commit", "-q", "--allow-empty", "-m", "direct"]);
    assert!(
        root.join("hook-ran").exists(),
        "the hook runs for plain git, so the test means something"
    );
}
