//! The issue's "done when": every built-in of seed 002 and every execution kind, run with
//! `jig call` on the example project (a copy of it, made a git repository with a bare remote).
//! Calls with side effects go through the example policy's reviewer: the test approves them as
//! `bob`, as a reviewer would.
//!
//! This machine has no internet, so the copy points the network at a loopback stand-in: its
//! allow-list gains 127.0.0.1 (with `allow_private`), the deploy service's URL is the stand-in's,
//! and pushing is allowed. Everything else is the example as shipped.

use std::path::Path;

use std::process::Command;

use jig_testkit::git;
use jig_testkit::http::{Response, Server};
use serde_json::{Value, json};

use crate::calls::example_copy;
use crate::{jig, stdout_json};

/// `jig call` as alice; when the policy asks for approval, bob approves and alice calls again.
fn call(root: &Path, tool: &str, args: &Value) -> Value {
    let args_text = args.to_string();
    let first = jig(root, &["--as", "alice", "call", tool, "--args", &args_text]);
    let response = stdout_json(&first);
    let Some(approval) = response["errors"][0]["details"]["approval_id"].as_str() else {
        return response;
    };
    let approved = jig(root, &["--as", "bob", "approvals", "approve", approval]);
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{tool}: {}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let token = String::from_utf8_lossy(&approved.stdout).trim().to_owned();
    stdout_json(&jig(
        root,
        &["--as", "alice", "call", tool, "--args", &args_text, "--approve", &token],
    ))
}

fn ok(root: &Path, tool: &str, args: &Value) -> Value {
    let response = call(root, tool, args);
    assert_eq!(response["ok"], true, "{tool} {args}: {response:#}");
    response["data"].clone()
}

#[test]
#[allow(clippy::too_many_lines)]
fn every_built_in_and_every_kind_runs_from_jig_call_on_the_example_project() {
    let server = Server::start(|request| {
        if request.target.starts_with("/deploys/") {
            Response::text(200, r#"{"service":"api","environment":"production","version":"1.2.3","healthy":true,"deployed_at":"2026-11-20T10:00:00Z"}"#)
                .with_header("Content-Type", "application/json")
        } else {
            Response::text(200, "stand-in")
        }
    });
    let dir = example_copy();
    let root = dir.path();
    let manifest = std::fs::read_to_string(root.join("jig.yaml")).expect("manifest");
    let manifest = manifest
        .replace("allowed_domains: [", "allow_private: true\n    allowed_domains: [\"127.0.0.1\", ")
        .replace("allow_push: false", "allow_push: true");
    std::fs::write(root.join("jig.yaml"), manifest).expect("manifest");
    let deploy = std::fs::read_to_string(root.join("tools/deploy-status.tool.yaml")).expect("tool");
    std::fs::write(
        root.join("tools/deploy-status.tool.yaml"),
        deploy
            .replace("https://internal.acme.example", &server.url(""))
            .replace("[https]", "[http]"),
    )
    .expect("tool");
    std::fs::write(root.join(".gitignore"), ".jig/\n").expect("gitignore");
    std::fs::write(
        root.join("coverage.json"),
        r#"{"files":{"api/x.py":{"summary":{"covered_lines":8,"num_statements":10}}}}"#,
    )
    .expect("coverage");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Test"]);
    git(root, &["config", "user.email", "test@example.invalid"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "chore: import the example project"]);
    git(root, &["tag", "v1.0.0"]);
    let remote_dir = tempfile::tempdir().expect("tmp");
    let remote = remote_dir.path().join("remote.git");
    git(root, &["init", "-q", "--bare", "-b", "main", remote.to_str().expect("utf-8")]);
    git(root, &["remote", "add", "origin", remote.to_str().expect("utf-8")]);

    // Filesystem.
    let listed = ok(root, "fs_list", &json!({ "glob": "tools/**/*.yaml" }));
    assert!(listed["files"].as_array().expect("files").len() >= 8);
    assert!(
        ok(root, "file_read", &json!({ "path": "jig.yaml" }))["content"]
            .as_str()
            .expect("content")
            .contains("acme-ops")
    );
    ok(
        root,
        "file_write",
        &json!({ "path": "notes/a.txt", "content": "a\n", "create_dirs": true }),
    );
    assert_eq!(
        ok(
            root,
            "file_patch",
            &json!({ "path": "notes/a.txt", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n" })
        )["hunks_applied"],
        1
    );
    ok(root, "fs_copy", &json!({ "src": "notes/a.txt", "dst": "notes/b.txt" }));
    ok(root, "fs_move", &json!({ "src": "notes/b.txt", "dst": "notes/c.txt" }));
    ok(root, "fs_delete", &json!({ "path": "notes/c.txt" }));
    assert!(!root.join("notes/c.txt").exists() && root.join("notes/a.txt").exists());
    let found = ok(root, "grep", &json!({ "pattern": "acme", "glob": "tools/**" }));
    assert!(!found["matches"].as_array().expect("matches").is_empty());

    // Processes and network.
    assert!(
        !ok(root, "proc_list", &json!({ "limit": 5 }))["processes"]
            .as_array()
            .expect("rows")
            .is_empty()
    );
    assert!(
        ok(root, "shell_exec", &json!({ "cmd": "git --version" }))["stdout"]
            .as_str()
            .expect("stdout")
            .starts_with("git version")
    );
    assert_eq!(ok(root, "curl", &json!({ "url": server.url("/ping") }))["status"], 200);

    // Git: commit the notes on a branch, merge, rebase, push, pull.
    assert!(!ok(root, "git_status", &json!({}))["changes"].as_array().expect("changes").is_empty());
    assert!(ok(root, "git_diff", &json!({ "rev": "HEAD" }))["patch"].as_str().is_some());
    ok(root, "git_checkout", &json!({ "target": "docs/notes", "create": true }));
    assert_eq!(ok(root, "git_add", &json!({ "paths": ["notes/**"] }))["added"], 1);
    let commit = ok(root, "git_commit", &json!({ "message": "docs: add release notes" }));
    assert_eq!(commit["commit"], git(root, &["rev-parse", "HEAD"]));
    ok(root, "git_rebase", &json!({ "onto": "main" }));
    ok(root, "git_checkout", &json!({ "target": "main" }));
    assert_eq!(ok(root, "git_merge", &json!({ "branch": "docs/notes" }))["merged"], true);
    ok(root, "git_push", &json!({}));
    assert_eq!(git(&remote, &["rev-parse", "main"]), git(root, &["rev-parse", "HEAD"]));
    ok(root, "git_pull", &json!({}));

    // AST.
    std::fs::write(
        root.join("tools/acme_tools/naming.py"),
        "def old_name():\n    return 1\n\n\ndef caller():\n    return old_name()\n",
    )
    .expect("write");
    assert!(
        ok(root, "ast_generate", &json!({ "paths": ["tools/**"] }))["parsed_files"]
            .as_u64()
            .expect("parsed")
            >= 3
    );
    let nodes = ok(root, "ast_query", &json!({ "where": { "type": "fn", "name_like": "old_*" } }));
    let id = nodes["nodes"][0]["id"].as_str().expect("id").to_owned();
    ok(
        root,
        "ast_edit",
        &json!({ "operation": "rename_symbol", "target_node_id": id, "new_name": "new_name", "format_on_save": false }),
    );
    assert!(
        std::fs::read_to_string(root.join("tools/acme_tools/naming.py"))
            .expect("read")
            .contains("return new_name()")
    );
    let violations = ok(
        root,
        "ast_validate",
        &json!({ "rules": [{ "id": "docs", "where": { "type": "fn", "file_glob": "tools/acme_tools/**" }, "must_have": ["docstring"] }] }),
    );
    assert!(!violations["violations"].as_array().expect("violations").is_empty());
    let uri = format!(
        "file://{}",
        root.canonicalize().expect("canon").join("tools/acme_tools/naming.py").display()
    );
    let symbols = ok(
        root,
        "ast_external",
        &json!({ "provider": "pylsp", "request": { "method": "textDocument/documentSymbol", "params": { "textDocument": { "uri": uri } } } }),
    );
    assert!(symbols["response"].to_string().contains("new_name"), "{symbols}");

    // Validation and metrics.
    assert!(ok(root, "validate", &json!({}))["violations"].is_array());
    assert_eq!(ok(root, "emit_metrics", &json!({}))["status"], "ok");

    // Every execution kind.
    let total = ok(
        root,
        "acme.billing.invoice_total",
        &json!({ "lines": [{ "quantity": 2, "unit_price": { "currency": "EUR", "cents": 1000 } }] }),
    );
    assert_eq!(total["total"], json!({ "currency": "EUR", "cents": 2400 }), "php");
    assert_eq!(ok(root, "acme.coverage_summary", &json!({}))["total"], 80.0, "python module");
    assert_eq!(
        ok(root, "acme.lint_commit_message", &json!({ "message": "feat: ship it" }))["ok"],
        true,
        "python script"
    );
    assert_eq!(
        ok(root, "acme.slugify", &json!({ "title": "Hello, World!" }))["slug"],
        "hello-world",
        "node"
    );
    assert!(
        ok(root, "acme.changelog", &json!({ "since": "v1.0.0" }))["stdout"]
            .as_str()
            .expect("stdout")
            .contains("docs: add release notes"),
        "cli"
    );
    assert_eq!(
        ok(root, "acme.deploy_status", &json!({ "service": "api", "environment": "production" }))["version"],
        "1.2.3",
        "http"
    );
    assert!(
        ok(root, "netkit/probe.get", &json!({ "url": server.url("/") }))
            .to_string()
            .contains("200"),
        "stdio"
    );
    assert_eq!(
        ok(root, "units.convert", &json!({ "value": 2048, "from": "KiB", "to": "MiB" }))["value"],
        2.0,
        "jsonrpc"
    );
    assert_eq!(ok(root, "oncall.who", &json!({ "week": 5 }))["primary"], "grace", "mcp");
}

/// A kind whose interpreter is not installed fails with a clear error naming it.
#[test]
fn a_missing_interpreter_is_named() {
    let dir = example_copy();
    let empty = tempfile::tempdir().expect("tmp");
    let output = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["call", "acme.slugify", "--args", r#"{"title": "x"}"#])
        .current_dir(dir.path())
        .env("PATH", empty.path())
        .output()
        .expect("run jig");
    let response = stdout_json(&output);
    assert_eq!(response["errors"][0]["code"], "E_SHELL", "{response:#}");
    let message = response["errors"][0]["message"].as_str().expect("message");
    assert!(message.contains("`node`") && message.contains("not installed"), "{message}");
}
