//! Caps enforced by the kernel (Landlock) and seed 001 run workspaces: undeclared writes,
//! reads and connections are stopped; declared outputs are checked and stored as artifacts.

use jig_testkit::http::{Response, Server};
use serde_json::json;

use crate::{Project, call_once, code, read};

fn cli_tool(id: &str, cmd: &str, extra: &str) -> String {
    format!(
        "id: {id}\nversion: 1.0.0\ndescription: A test tool.\ndeterministic: false\nsideEffects: [write]\nrisk: low\ntimeoutMs: 20000\n\
         limits: {{ maxInputBytes: 65536, maxOutputBytes: 1048576 }}\n\
         inputSchema: {{ type: object, properties: {{ data: {{ type: string, format: workspace-path }}, url: {{ type: string }} }} }}\n\
         outputSchema: {{ type: object }}\ntemplating: {{ engine: jinja2 }}\nexecution: {{ kind: cli, cmd: {cmd} }}\n{extra}\n"
    )
}

fn project() -> Project {
    let project = Project::new("rules:\n  - { effects: [write], action: allow }");
    project.write("data/input.txt", "hello artifacts\n");
    project.write("secret.txt", "not for tools\n");
    project
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_that_writes_an_undeclared_path_is_stopped() {
    let project = project();
    project.write(
        "tools/writer.tool.yaml",
        &cli_tool(
            "t.writer",
            "[sh, -c, 'echo x > allowed/out.txt && echo y > other.txt']",
            "caps: { subprocess: true, filesystem: { write: [allowed] } }",
        ),
    );
    std::fs::create_dir_all(project.path("allowed")).expect("mkdir");
    let outside = project.root.parent().expect("parent").join("outside.txt");
    project.write(
        "tools/escape.tool.yaml",
        &cli_tool(
            "t.escape",
            &format!("[sh, -c, 'echo pwned > {}']", outside.display()),
            "caps: { subprocess: true }",
        ),
    );
    project.write(
        "tools/reader.tool.yaml",
        &cli_tool(
            "t.reader",
            "[cat, secret.txt]",
            "caps: { subprocess: true, filesystem: { read: [data] } }",
        ),
    );
    let engine = project.engine().await;
    let writer = call_once(&engine, "t.writer", json!({})).await;
    assert_eq!(code(&writer), "E_SHELL", "{writer:?}");
    assert!(
        writer.errors[0].details.as_ref().expect("details")["stderr"]
            .as_str()
            .expect("stderr")
            .contains("Read-only file system")
    );
    assert_eq!(read(&project.path("allowed/out.txt")), "x\n", "the declared path was writable");
    assert!(!project.path("other.txt").exists(), "the undeclared write was stopped");
    let escape = call_once(&engine, "t.escape", json!({})).await;
    assert!(!escape.ok);
    assert!(!outside.exists());
    let reader = call_once(&engine, "t.reader", json!({})).await;
    assert!(!reader.ok, "reading outside `caps.filesystem.read` is stopped: {reader:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_without_network_caps_cannot_connect() {
    let server = Server::start(|_| Response::text(200, "reached"));
    let project = project();
    let probe = "[python3, -c, 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())', '{{ url }}']";
    project.write(
        "tools/offline.tool.yaml",
        &cli_tool("t.offline", probe, "caps: { subprocess: true }"),
    );
    project.write(
        "tools/online.tool.yaml",
        &cli_tool("t.online", probe, "caps: { subprocess: true, network: [http] }"),
    );
    let engine = project.engine().await;
    let offline = call_once(&engine, "t.offline", json!({ "url": server.url("/") })).await;
    assert!(!offline.ok, "{offline:?}");
    assert!(server.requests().is_empty(), "the connection was refused by the kernel");
    // Declaring network is not enough: the policy must grant processes the host's network.
    let ungranted = call_once(&engine, "t.online", json!({ "url": server.url("/") })).await;
    assert_eq!(ungranted.data["rule"], "sandbox.network", "{ungranted:?}");
    assert!(server.requests().is_empty());
    project.set_policy(
        "rules:\n  - { effects: [write], action: allow }\nsandbox: { network: unfiltered }",
    );
    let engine = project.engine().await;
    let online = call_once(&engine, "t.online", json!({ "url": server.url("/") })).await;
    assert!(online.ok, "{online:?}");
    assert_eq!(online.data["stdout"], "reached\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn shell_exec_has_no_network_unless_allowed() {
    let server = Server::start(|_| Response::text(200, "reached"));
    let project = Project::new(
        "shell_allow: [\"^python3(\\\\s|$)\"]\nnetwork:\n  allowed_domains: [\"127.0.0.1\"]\nrules:\n  - { effects: [exec], action: allow }\nsandbox: { network: unfiltered }",
    );
    let engine = project.engine().await;
    let cmd = format!(
        "python3 -c 'import urllib.request; print(urllib.request.urlopen(\"{}\").read().decode())'",
        server.url("/")
    );
    let offline = call_once(&engine, "shell_exec", json!({ "cmd": cmd })).await;
    assert!(offline.ok, "{offline:?}");
    assert_ne!(offline.data["code"], 0, "{offline:?}");
    assert!(server.requests().is_empty());
    let online =
        call_once(&engine, "shell_exec", json!({ "cmd": cmd, "allow_network": true })).await;
    assert_eq!(online.data["code"], 0, "{online:?}");
    assert_eq!(online.data["stdout"], "reached\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_workspace_links_inputs_and_checks_and_stores_declared_outputs() {
    let project = project();
    let outputs = "outputs:\n  - { role: report, type: text/plain, label: Upper-cased input, path: report.txt }\ncaps: { subprocess: true }";
    project.write(
        "tools/upper.tool.yaml",
        &cli_tool(
            "t.upper",
            "[sh, -c, 'echo working; tr a-z A-Z < \"$0\" > out/report.txt', '{{ data }}']",
            outputs,
        ),
    );
    project.write("tools/missing.tool.yaml", &cli_tool("t.missing", "[sh, -c, 'true']", outputs));
    project.write(
        "tools/extra.tool.yaml",
        &cli_tool(
            "t.extra",
            "[sh, -c, 'echo a > out/report.txt; echo b > out/stray.txt']",
            outputs,
        ),
    );
    project.write(
        "tools/peek.tool.yaml",
        &cli_tool(
            "t.peek",
            &format!("[sh, -c, 'cat {} > out/report.txt']", project.path("secret.txt").display()),
            outputs,
        ),
    );
    let engine = project.engine().await;
    let upper = call_once(&engine, "t.upper", json!({ "data": "data/input.txt" })).await;
    assert!(upper.ok, "{upper:?}");
    let artifacts = upper.data["artifacts"].as_array().expect("artifacts");
    assert_eq!(artifacts.len(), 2, "{artifacts:?}");
    assert_eq!(artifacts[0]["role"], "report");
    assert_eq!(artifacts[1]["role"], "log", "the log role is produced automatically");
    let stored = project.path(artifacts[0]["path"].as_str().expect("path"));
    assert_eq!(read(&stored), "HELLO ARTIFACTS\n");
    assert_eq!(read(&project.path(artifacts[1]["path"].as_str().expect("path"))), "working\n");
    let hash = artifacts[0]["sha256"].as_str().expect("sha");
    assert!(stored.ends_with(hash), "content-addressed");
    assert_eq!(read(&project.path("data/input.txt")), "hello artifacts\n");
    assert!(
        !project.path(&format!(".jig/runs/{}", upper.request_id)).exists(),
        "the run directory is removed"
    );
    // The audit records the artifact references.
    let packets = crate::packets(&engine, &upper.request_id).await;
    assert!(
        packets.iter().any(|p| p.data.to_string().contains(hash)),
        "the audit names the artifact"
    );

    let missing = call_once(&engine, "t.missing", json!({})).await;
    assert_eq!(code(&missing), "E_VALIDATION_FAIL", "{missing:?}");
    let extra = call_once(&engine, "t.extra", json!({})).await;
    assert_eq!(code(&extra), "E_VALIDATION_FAIL", "{extra:?}");
    assert!(extra.errors[0].message.contains("stray.txt"), "{extra:?}");
    let peek = call_once(&engine, "t.peek", json!({})).await;
    assert!(!peek.ok, "a run-workspace tool cannot read the workspace directly: {peek:?}");
    let escape = call_once(&engine, "t.upper", json!({ "data": "../outside.txt" })).await;
    assert_eq!(code(&escape), "E_POLICY", "{escape:?}");

    // Read back by hash, checked against it.
    assert_eq!(engine.artifact(hash).await.expect("read back"), b"HELLO ARTIFACTS\n");
    let refused = |e: jig_engine::EngineError| e.code().as_str();
    let unknown = "0".repeat(64);
    assert_eq!(engine.artifact(&unknown).await.map_err(refused), Err("E_NOT_FOUND"));
    for name in ["../../secret.txt", &hash.to_uppercase(), ""] {
        assert_eq!(engine.artifact(name).await.map_err(refused), Err("E_VALIDATION_FAIL"));
    }
    fs_err::write(&stored, "tampered\n").expect("tamper");
    assert_eq!(engine.artifact(hash).await.map_err(refused), Err("E_FILE_IO"));
}
