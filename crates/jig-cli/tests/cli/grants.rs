//! The third red team's sandbox escape, run against the built binary: a repository that ships a
//! symlink where a toolpack (or an upstream server) is granted a path. Each grant is resolved
//! beneath the root by the kernel and bound as what it resolved, so a link is refused instead
//! of binding what it points to (`/`, `~/.ssh`, `.jig`, the workspace again).

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};

use crate::{jig, stderr, stdout_json};

/// A project whose policy lets `probe.read` and `probe.write` run without a person, so only the
/// sandbox stands in the way. `probe.read` reads `args.path` and lists `args.list`; `probe.write`
/// writes `args.content` to `args.path` (appending), each from its own process.
fn project(read_grant: &str, write_grant: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools/scripts")).expect("mkdir");
    std::fs::write(
        root.join("jig.yaml"),
        "name: target\npolicy:\n  rules:\n    - { tools: [probe.read, probe.write], action: allow }\n",
    )
    .expect("write");
    for (name, effect, caps) in [
        ("read", "read", format!("{{read: [\"{read_grant}\"]}}")),
        ("write", "write", format!("{{read: [\"{read_grant}\"], write: [\"{write_grant}\"]}}")),
    ] {
        std::fs::write(
            root.join(format!("tools/{name}.tool.yaml")),
            format!(
                "id: probe.{name}\nversion: 1.0.0\ndescription: Touches what it is granted.\n\
                 sideEffects: [{effect}]\nrisk: low\ndeterministic: false\ntimeoutMs: 10000\n\
                 limits: {{maxInputBytes: 4096, maxOutputBytes: 65536}}\n\
                 inputSchema: {{type: object, properties: {{path: {{type: string}}, list: {{type: string}}, content: {{type: string}}}}}}\n\
                 outputSchema: {{type: object}}\n\
                 caps: {{filesystem: {caps}}}\n\
                 execution: {{kind: python, script: scripts/probe.py}}\n"
            ),
        )
        .expect("write");
    }
    std::fs::write(
        root.join("tools/scripts/probe.py"),
        r#"import json, os, sys
args = json.load(sys.stdin)
out = {}
if "list" in args:
    try:
        out["listing"] = sorted(os.listdir(args["list"]))
    except OSError as e:
        out["list_error"] = str(e)
if "content" in args:
    try:
        with open(args["path"], "a") as f:
            f.write(args["content"])
        out["wrote"] = True
    except OSError as e:
        out["write_error"] = str(e)
elif "path" in args:
    try:
        with open(args["path"]) as f:
            out["text"] = f.read()
    except OSError as e:
        out["read_error"] = str(e)
json.dump(out, sys.stdout)
"#,
    )
    .expect("write");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .expect("git init");
    assert!(git.success());
    dir
}

fn call(root: &Path, tool: &str, args: &Value) -> Value {
    let output = jig(root, &["call", tool, "--args", &args.to_string()]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    stdout_json(&output)
}

/// The call was refused before its process started, naming the rule and the grant.
fn refused(response: &Value, rule: &str, field: &str) {
    assert_eq!(response["ok"], false, "{response:#}");
    let error = &response["errors"][0];
    assert_eq!(error["code"], "E_POLICY", "{response:#}");
    assert_eq!(error["details"]["rule"], rule, "{response:#}");
    assert_eq!(error["details"]["field"], format!("caps.filesystem.{field}"), "{response:#}");
    // Its process never started: nothing it would have said is there.
    for said in ["text", "listing", "wrote", "read_error", "write_error", "list_error"] {
        assert!(response["data"].get(said).is_none(), "the tool ran: {response:#}");
    }
}

#[test]
fn a_read_grant_that_is_a_link_to_the_machine_reads_nothing_outside() {
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(outside.path().join("id_ed25519"), "PRIVATE KEY").expect("write");
    let dir = project("vendor", "out");
    let root = dir.path();
    symlink("/", root.join("vendor")).expect("symlink");
    let secret = format!("vendor{}/id_ed25519", outside.path().display());
    let response = call(root, "probe.read", &json!({ "path": secret }));
    refused(&response, "sec.paths.sandbox", "read[0]");
    assert!(!response.to_string().contains("PRIVATE KEY"));
    // A link to a directory beside the workspace (`~/.ssh`) is refused the same way.
    std::fs::remove_file(root.join("vendor")).expect("rm");
    symlink(outside.path(), root.join("vendor")).expect("symlink");
    let response = call(root, "probe.read", &json!({ "path": "vendor/id_ed25519" }));
    refused(&response, "sec.paths.sandbox", "read[0]");
    assert!(!response.to_string().contains("PRIVATE KEY"));
    // `jig validate` passes: the grant's text is fine, what the repository holds there is not.
    let validate = jig(root, &["validate"]);
    assert_eq!(validate.status.code(), Some(0), "{}", stderr(&validate));
}

#[test]
fn a_write_grant_that_links_back_to_the_workspace_reaches_no_hook_no_manifest_no_store() {
    let dir = project("src", "tree");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    symlink(".", root.join("tree")).expect("symlink");
    for (path, what) in [
        ("tree/.git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
        ("tree/jig.yaml", "origin: $(curl evil)\n"),
        ("tree/.jig/audit.db", "x"),
    ] {
        let response = call(root, "probe.write", &json!({ "path": path, "content": what }));
        refused(&response, "sec.paths.sandbox", "write[0]");
    }
    assert!(!root.join(".git/hooks/pre-commit").exists());
    let manifest = std::fs::read_to_string(root.join("jig.yaml")).expect("read");
    assert!(!manifest.contains("origin"), "{manifest}");
    // A link to the store itself is refused.
    let dir2 = project("cache", "cache");
    let root2 = dir2.path();
    std::fs::create_dir_all(root2.join(".jig")).expect("mkdir");
    symlink(".jig", root2.join("cache")).expect("symlink");
    let response = call(root2, "probe.read", &json!({ "list": "cache" }));
    refused(&response, "sec.paths.sandbox", "read[0]");
}

#[test]
fn a_grant_that_names_the_store_or_the_repository_is_refused_however_spelled() {
    for (read, write) in
        [("src", "./.jig"), ("./.jig/x", "out"), ("src", "src/../.git/hooks"), ("src", "jig.yaml")]
    {
        let dir = project(read, write);
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        // The loader says so first, with the file and the field.
        let validate = jig(root, &["validate"]);
        assert_eq!(validate.status.code(), Some(3), "{read} {write}: {}", stderr(&validate));
        assert!(stderr(&validate).contains("caps.filesystem"), "{}", stderr(&validate));
        // A tool with that error is not in the registry: nothing of it runs.
        let response = call(root, "probe.write", &json!({ "path": "src/x", "content": "x" }));
        assert_eq!(response["ok"], false, "{read} {write}: {response:#}");
        assert!(!root.join("src/x").exists());
    }
}

#[test]
fn plain_grants_still_read_and_write_where_they_say() {
    let dir = project("vendor", "out/report.txt");
    let root = dir.path();
    std::fs::create_dir_all(root.join("vendor/lib")).expect("mkdir");
    std::fs::create_dir_all(root.join("out")).expect("mkdir");
    std::fs::write(root.join("vendor/lib/notes.txt"), "vendored").expect("write");
    std::fs::write(root.join("secret.txt"), "not granted").expect("write");
    let read = call(root, "probe.read", &json!({ "path": "vendor/lib/notes.txt" }));
    assert_eq!(read["data"]["text"], "vendored", "{read:#}");
    let ungranted = call(root, "probe.read", &json!({ "path": "secret.txt" }));
    assert!(ungranted["data"]["read_error"].is_string(), "{ungranted:#}");
    let wrote =
        call(root, "probe.write", &json!({ "path": "out/report.txt", "content": "done\n" }));
    assert_eq!(wrote["data"]["wrote"], true, "{wrote:#}");
    assert_eq!(std::fs::read_to_string(root.join("out/report.txt")).expect("read"), "done\n");
    // A symlink *inside* a plain grant is the tool's own business: it resolves in the sandbox,
    // where only what was granted exists.
    symlink("/etc/hostname", root.join("vendor/host")).expect("symlink");
    let through = call(root, "probe.read", &json!({ "path": "vendor/host" }));
    assert_eq!(through["ok"], true, "{through:#}");
}

/// A repository that ships `.jig` as a symlink would choose where Jig keeps its audit and
/// writes its run directories: the project is refused, naming it, and nothing is written there.
#[test]
fn a_state_directory_that_is_a_link_is_refused_and_nothing_is_written_through_it() {
    let elsewhere = tempfile::tempdir().expect("tmp");
    let dir = project("src", "out");
    let root = dir.path();
    symlink(elsewhere.path(), root.join(".jig")).expect("symlink");
    for args in [&["call", "probe.read", "--args", "{}"][..], &["audit", "list"][..]] {
        let refused = jig(root, args);
        assert_ne!(refused.status.code(), Some(0), "{args:?}: {}", stderr(&refused));
        assert!(stderr(&refused).contains(".jig"), "{args:?}: {}", stderr(&refused));
    }
    let left: Vec<_> = std::fs::read_dir(elsewhere.path()).expect("read").collect();
    assert!(left.is_empty(), "written through the link: {left:?}");
}
