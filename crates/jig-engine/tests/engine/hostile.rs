//! Hostile input through the whole pipeline: path escapes, oversized and duplicate-key input.

use std::os::unix::fs::symlink;

use jig_engine::{CallContext, decode_request, parse_json_strict};
use serde_json::json;

use crate::{Project, approval_id, call, caller, code, granted, read, request};

const ALLOW_WRITES: &str = "rules:\n  - { tools: [file_write], action: allow }";

/// A project beside a sibling directory whose name extends the root's (`project-evil`), and a
/// secret outside both.
fn hostile_project() -> Project {
    let project = Project::new(ALLOW_WRITES);
    let parent = project.root.parent().expect("parent").to_path_buf();
    std::fs::create_dir_all(parent.join("project-evil")).expect("mkdir");
    std::fs::write(parent.join("project-evil/secret.txt"), "sibling secret").expect("write");
    std::fs::write(parent.join("secret.txt"), "outside secret").expect("write");
    std::fs::create_dir_all(project.path("docs")).expect("mkdir");
    symlink(parent.join("secret.txt"), project.path("docs/link.txt")).expect("symlink");
    symlink(&parent, project.path("docs/up")).expect("symlink");
    project
}

#[tokio::test(flavor = "multi_thread")]
async fn file_read_cannot_leave_the_workspace() {
    let project = hostile_project();
    let engine = project.engine().await;
    let parent = project.root.parent().expect("parent").to_path_buf();
    let absolute = parent.join("secret.txt").display().to_string();
    let sibling = format!("{}/project-evil/secret.txt", project.root.display());
    let sibling_relative = "../project-evil/secret.txt".to_owned();
    for path in [
        "../secret.txt",
        "docs/../../secret.txt",
        absolute.as_str(),
        sibling.as_str(),
        sibling_relative.as_str(),
        "docs/link.txt",
        "docs/up/secret.txt",
        "/etc/passwd",
    ] {
        let response = call(&engine, "file_read", json!({ "path": path })).await;
        assert!(!response.ok, "{path} was read: {response:?}");
        assert!(
            matches!(code(&response).as_str(), "E_POLICY" | "E_VALIDATION_FAIL"),
            "{path}: {response:?}"
        );
        assert!(!response.data.to_string().contains("outside secret"), "{path}");
        assert!(!response.data.to_string().contains("sibling secret"), "{path}");
    }
    std::fs::write(project.path("docs/ok.txt"), "inside").expect("write");
    let inside = call(&engine, "file_read", json!({ "path": "docs/ok.txt" })).await;
    assert!(inside.ok, "{inside:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn file_write_cannot_leave_the_workspace() {
    let project = hostile_project();
    let engine = project.engine().await;
    let parent = project.root.parent().expect("parent").to_path_buf();
    let absolute = parent.join("planted.txt").display().to_string();
    for path in
        ["../planted.txt", absolute.as_str(), "../project-evil/planted.txt", "docs/up/planted.txt"]
    {
        let response =
            call(&engine, "file_write", json!({ "path": path, "content": "pwned" })).await;
        assert!(!response.ok, "{path} was written: {response:?}");
    }
    assert!(!parent.join("planted.txt").exists());
    assert!(!parent.join("project-evil/planted.txt").exists());
    // Writing to a symlink inside the root replaces the link (rename), never its target.
    let response =
        call(&engine, "file_write", json!({ "path": "docs/link.txt", "content": "replaced" }))
            .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(read(&parent.join("secret.txt")), "outside secret", "the write followed the link");
    let kind = std::fs::symlink_metadata(project.path("docs/link.txt")).expect("stat");
    assert!(!kind.is_symlink());
}

/// The approved path is a directory when the reviewer looks, and a symlink out of the root when
/// the write happens: the write still resolves beneath the root and fails.
#[tokio::test(flavor = "multi_thread")]
async fn a_symlink_swapped_in_after_approval_is_not_followed() {
    let project = hostile_project();
    project.set_policy("");
    let engine = project.engine().await;
    let parent = project.root.parent().expect("parent").to_path_buf();
    std::fs::create_dir_all(project.path("out")).expect("mkdir");
    let args = json!({ "path": "out/report.txt", "content": "report" });
    let asked = engine.dispatch(request("file_write", args.clone()), caller("s1", "alice")).await;
    let token = granted(engine.approve(&approval_id(&asked), "bob", None).await.expect("approve"));

    std::fs::remove_dir(project.path("out")).expect("rmdir");
    symlink(&parent, project.path("out")).expect("swap in a symlink");
    let context = CallContext { approval_token: Some(token), ..caller("s1", "alice") };
    let response = engine.dispatch(request("file_write", args), context).await;
    assert!(!response.ok, "{response:?}");
    assert_eq!(code(&response), "E_POLICY");
    assert!(!parent.join("report.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_arguments_are_refused_before_anything_else() {
    let project = Project::new("");
    let engine = project.engine().await;
    // t.echo accepts 4096 bytes of arguments.
    let response = call(&engine, "t.echo", json!({ "text": "x".repeat(5000) })).await;
    assert_eq!(code(&response), "E_LIMIT", "{response:?}");
    let details = response.errors[0].details.as_ref().expect("details");
    assert_eq!(details["limit"], "maxInputBytes");
    assert_eq!(details["max"], 4096);
    let kinds = crate::kinds(&engine, &response.request_id).await;
    assert_eq!(kinds, ["tool.call.request", "tool.call.failed"]);
    // A huge request does not bloat the audit store with its body either.
    let packets = crate::packets(&engine, &response.request_id).await;
    assert_eq!(packets[0].data["args"]["omitted"], true);
    let size = serde_json::to_vec(&json!({ "text": "x".repeat(5000) })).expect("json").len();
    assert_eq!(packets[0].data["args"]["bytes"], size);
    assert!(packets[0].data.to_string().len() < 500);
}

#[test]
fn duplicate_keys_in_a_request_are_refused() {
    let text = r#"{"tool": "file_write", "request_id": "r1", "args": {"path": "a.txt", "content": "x", "path": "../b"}}"#;
    let error = decode_request(text).unwrap_err();
    assert!(error.contains("duplicate key `path`"), "{error}");
    assert!(parse_json_strict(r#"{"tool": "a", "tool": "b"}"#).is_err());
    let ok = decode_request(r#"{"tool": "t.echo", "request_id": "r1", "args": {"text": "x"}}"#)
        .expect("valid");
    assert_eq!(ok.args, json!({ "text": "x" }));
}

/// `cli` tools run argv without a shell, and arguments are values, not templates: shell syntax
/// and template syntax in an argument arrive as literal text.
#[tokio::test(flavor = "multi_thread")]
async fn shell_and_template_syntax_in_arguments_is_inert() {
    let project = Project::new("");
    let engine = project.engine().await;
    for text in [
        "$(touch pwned1); `touch pwned2` && touch pwned3 | tee pwned4",
        "{{ 7 * 7 }} {% if true %}x{% endif %}",
        "\nnew\tline",
    ] {
        let response = call(&engine, "t.echo", json!({ "text": text })).await;
        assert!(response.ok, "{text}: {response:?}");
        assert_eq!(response.data["stdout"], text);
    }
    // A value that would be an option of the program is refused, never passed on.
    for text in ["-n", "--pre=sh", "-e\\x41"] {
        let response = call(&engine, "t.echo", json!({ "text": text })).await;
        assert_eq!(code(&response), "E_VALIDATION_FAIL", "{text}: {response:?}");
        assert_eq!(response.data["rule"], "sec.argv.positional", "{text}: {response:?}");
    }
    for file in ["pwned1", "pwned2", "pwned3", "pwned4"] {
        assert!(!project.path(file).exists(), "{file} was created");
    }
}
