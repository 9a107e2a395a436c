//! The example project's plans through the real binary on the real engines (issue "done
//! when"): governed (a reviewer approves), audited, collected exactly, replayed by seed 001's
//! rules; a Slurm job survives the `jig` process that submitted it.

use std::path::Path;

use serde_json::Value;

use crate::calls::example_copy;
use crate::{jig_env, stderr, stdout_json};

/// The environment pointing the example project (which names no engine) at the test engines.
fn engines() -> Vec<(&'static str, String)> {
    let podman = jig_testkit::engines::podman();
    let slurm = jig_testkit::engines::slurm();
    vec![
        ("DOCKER_HOST", podman.docker_host.clone()),
        ("SLURM_CONF", slurm.conf.display().to_string()),
    ]
}

fn run(root: &Path, args: &[&str]) -> std::process::Output {
    let env = engines();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    jig_env(root, args, &env)
}

/// Ask as alice, approve as bob, call again with the token; the response.
fn approved_call(root: &Path, tool: &str, args: &str, extra: &[&str]) -> Value {
    let refused = stdout_json(&run(root, &["--as", "alice", "call", tool, "--args", args]));
    assert_eq!(refused["errors"][0]["code"], "E_POLICY", "{refused}");
    let approval = refused["errors"][0]["details"]["approval_id"].as_str().expect("approval id");
    let approve = run(root, &["--as", "bob", "approvals", "approve", approval]);
    assert!(approve.status.success(), "{}", stderr(&approve));
    let token = String::from_utf8_lossy(&approve.stdout).trim().to_owned();
    let mut call = vec!["--as", "alice", "call", tool, "--approve", &token, "--args", args];
    call.extend_from_slice(extra);
    stdout_json(&run(root, &call))
}

fn artifact(root: &Path, response: &Value, role: &str) -> String {
    let entry = response["data"]["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["role"] == role))
        .unwrap_or_else(|| panic!("no {role} in {response}"));
    std::fs::read_to_string(root.join(entry["path"].as_str().expect("path"))).expect("artifact")
}

#[test]
fn the_example_docker_tool_renders_the_release_notes_governed_and_replayed() {
    let image = &jig_testkit::engines::podman().image;
    let pinned = std::fs::read_to_string(
        crate::repo().join("toolpacks/examples/tools/release-notes-html.tool.yaml"),
    )
    .expect("tool");
    assert!(
        pinned.contains(image.as_str()),
        "the example pins another image than scripts/engines/podman built ({image}): Debian's busybox-static changed; update the digest in the example"
    );
    let dir = example_copy();
    let root = dir.path();
    let args = r#"{"notes": "reports/release-2.4.md", "title": "Release 2.4 <beta>"}"#;
    let response = approved_call(root, "acme.release_notes_html", args, &[]);
    assert_eq!(response["ok"], true, "{response}");
    let page = artifact(root, &response, "page");
    assert!(page.contains("<title>Release 2.4 &lt;beta&gt;</title>"), "{page}");
    assert!(
        page.contains(
            "<li>The status page no longer shows &lt;unknown&gt; for paused services</li>"
        ),
        "{page}"
    );
    assert_eq!(artifact(root, &response, "log"), "rendered 8 lines of /work/in/notes.md\n");
    // Deterministic and succeeded: the same call replays, with no approval and no container.
    let again = stdout_json(&run(
        root,
        &["--as", "alice", "call", "acme.release_notes_html", "--args", args],
    ));
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(again["data"], response["data"]);
    let verify = run(root, &["audit", "verify"]);
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn the_example_slurm_tool_is_queued_then_collected_by_another_jig_process() {
    let dir = example_copy();
    let root = dir.path();
    let args = r#"{"samples": "data/latency-2026-11.csv"}"#;
    let queued = approved_call(root, "acme.latency_report", args, &[]);
    assert_eq!(queued["ok"], true, "{queued}");
    assert_eq!(queued["job"]["state"], "queued", "{queued}");
    let request = queued["request_id"].as_str().expect("request id").to_owned();
    // The submitting process is gone; a new one lists the job and waits for it.
    let list = run(root, &["runs", "list", "--json"]);
    let line: Value =
        serde_json::from_slice(list.stdout.split(|b| *b == b'\n').next().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&list.stdout)));
    assert_eq!(
        (line["request_id"].as_str(), line["engine"].as_str()),
        (Some(request.as_str()), Some("slurm"))
    );
    let collected = run(root, &["runs", "collect", &request, "--wait"]);
    assert!(collected.status.success(), "{}", stderr(&collected));
    let done = stdout_json(&collected);
    assert_eq!(done["ok"], true, "{done}");
    let summary = artifact(root, &done, "summary");
    let mut lines = summary.lines();
    assert_eq!(lines.next(), Some("service,count,p50_ms,p95_ms,p99_ms,max_ms"));
    let services: Vec<&str> = lines.map(|l| l.split(',').next().unwrap_or_default()).collect();
    assert_eq!(services, ["checkout", "search", "status"]);
    assert!(summary.contains("checkout,400,"), "{summary}");
    // The audit: submitted by alice's call, collected by Jig, in the chain.
    let show = stdout_json(&run(root, &["audit", "show", &request, "--json"]));
    let kinds: Vec<&str> = show["packets"]
        .as_array()
        .expect("packets")
        .iter()
        .filter_map(|p| p["kind"].as_str())
        .collect();
    assert_eq!(kinds.first().copied(), Some("tool.call.request"));
    assert!(
        kinds.contains(&"tool.call.submitted") && kinds.last() == Some(&"tool.call.result"),
        "{kinds:?}"
    );
    // Seed 001: a Slurm run with a result answers the same call; nothing is submitted again.
    let again =
        stdout_json(&run(root, &["--as", "alice", "call", "acme.latency_report", "--args", args]));
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(again["data"], done["data"]);
}
