//! Issue #26: gert's own repository (its `runbooks/` and `tools/`) did not load in Jig: a
//! governance rule's `writes`, and a step passing an input its action does not take. gert's
//! loader (pkg/kernel/schema) and validator (pkg/kernel/validate) accept more than that; every
//! construct they accept and Jig refused is here, written for this test, in one project laid
//! out as gert's repository is (plus a manifest letting one harmless tool run). It must load — with a warning where Jig does less — and its
//! scenarios must pass.

use crate::{jig, stderr};

const KUBECTL: &str = r#"apiVersion: tool/v0
meta:
  name: kubectl
  description: Talks to a cluster.
  binary: kubectl
  platform: [linux, darwin]
contract:
  effects: [kubernetes]
  writes: [pods]
  inputs:
    pod: { type: string, required: true, from: cluster-provider }
  outputs:
    phase: { type: string }
    restarts: { type: string }
actions:
  get:
    description: Read a pod as JSON.
    argv: [get, "pod/{{ .pod }}", -o, json]
    extract:
      phase: { from: json, path: status.phase }
      restarts: { from: stdout, pattern: '"restartCount": (\d+)' }
  delete:
    description: Delete a pod.
    argv: [delete, "pod/{{ .pod }}"]
"#;

/// A tool that runs here: gert's `from: json` with a dot `path`, and a pattern matched against
/// the trimmed stream.
const PODINFO: &str = r#"apiVersion: tool/v0
meta:
  name: podinfo
  binary: printf
contract:
  inputs:
    phase: { type: string, required: true }
  outputs:
    phase: { type: string }
    missing: { type: string }
    restarts: { type: string }
actions:
  get:
    argv: ['{"status": {"phase": "%s"}, "restartCount": 3}\n', "{{ .phase }}"]
    extract:
      phase: { from: json, path: status.phase }
      missing: { from: json, path: status.nothing.here }
      restarts: { from: stdout, pattern: '(\d+)}$' }
"#;

const RUNBOOK: &str = r#"apiVersion: kernel/v0
meta:
  name: restart
  inputs:
    pod: { type: string, required: true, from: prompt }
  governance:
    approval_timeout: 30m
    rules:
      - effects: [kubernetes]
        writes: [pods]
        action: require-approval
      - default: allow
tools: [kubectl]
extensions:
  owner-team: platform
steps:
  - id: look
    type: tool
    tool: kubectl
    action: get
    inputs:
      pod: "{{ .pod }}"
      namespace: production
  - id: check
    type: assert
    assert:
      - type: matches
        value: "{{ .phase }}"
        pattern: "^(Running|Pending)$"
  - id: done
    type: end
    outcome: { category: no_action, code: pod_ok, meta: { phase: "{{ .phase }}" } }
"#;

/// Recorded responses keyed by the tool alone, which gert falls back to when there is no
/// `tool:action` key.
const SCENARIO: &str = r#"inputs:
  pod: web-1
tool_responses:
  kubectl:
    - exit_code: 0
      stdout: '{"status": {"phase": "Running"}, "restartCount": 3}'
      outputs: { phase: Running, restarts: "3" }
"#;

const EXPECTED: &str = r#"expected_status: completed
expected_outcome: no_action
expected_code: pod_ok
must_reach: [look, check, done]
"#;

#[test]
fn what_gerts_loader_and_validator_accept_loads_and_its_scenarios_pass() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    for (path, text) in [
        (
            "jig.yaml",
            "name: gert-like\npolicy:\n  rules: [{ tools: [podinfo.get], action: allow }]\n",
        ),
        ("tools/kubectl.tool.yaml", KUBECTL),
        ("tools/podinfo.tool.yaml", PODINFO),
        ("runbooks/restart.yaml", RUNBOOK),
        ("runbooks/scenarios/restart/running/scenario.yaml", SCENARIO),
        ("runbooks/scenarios/restart/running/test.yaml", EXPECTED),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let output = jig(root, &["validate"]);
    let report = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{report}");
    // Where Jig does less than gert asks, it says so, naming the line.
    for warning in [
        "takes no input `namespace`",
        "`approval_timeout` is not applied",
        "response key `kubectl` answers every action",
    ] {
        assert!(report.contains(warning), "{warning}: {report}");
    }
    assert!(report.contains("runbooks/restart.yaml"), "{report}");
    let output = jig(root, &["runbook", "test"]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{text}{}", stderr(&output));
    assert!(text.contains("ok   restart/running"), "{text}");
    let output = jig(root, &["call", "podinfo.get", "--args", r#"{"phase": "Running"}"#]);
    let response: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(response["ok"], true, "{response:#}");
    assert_eq!(response["data"]["phase"], "Running", "{response:#}");
    assert_eq!(response["data"]["restarts"], "3", "{response:#}");
    assert_eq!(response["data"]["missing"], serde_json::Value::Null, "{response:#}");
}
