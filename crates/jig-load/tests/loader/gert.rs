//! gert `tool/v0`, both generations, and gert's own reference files.

use std::path::Path;

use jig_model::diagnostic::codes;
use jig_model::tool_def::{Dialect, ToolExecution};
use jig_model::{Risk, SideEffect};
use serde_json::json;

use crate::support::{Project, dump, repo_root};

const KERNEL_TOOL: &str = r#"apiVersion: tool/v0
meta:
  name: health-check
  description: Check service health via HTTP
  transport: stdio
  binary: curl
contract:
  inputs:
    url: { type: string, required: true }
    retries: { type: int, default: 2 }
  outputs:
    status_code: { type: string }
  effects: [network]
  deterministic: true
  idempotent: true
actions:
  check:
    description: GET and return the status code
    argv: [curl, -s, -o, /dev/null, -w, "%{http_code}", "{{ .url }}"]
    extract:
      status_code: { from: stdout, pattern: "^(\\d+)$" }
"#;

#[test]
fn a_kernel_generation_tool_registers_one_entry_per_action() {
    let project = Project::with_manifest("name: ops\n");
    project.file("tools/health-check.tool.yaml", KERNEL_TOOL);
    let snapshot = project.snapshot();
    let tool = snapshot.get("health-check.check").expect("registered as <file>.<action>");
    assert_eq!(tool.dialect, Dialect::GertV0);
    assert_eq!(
        tool.input_schema,
        json!({
            "type": "object",
            "properties": { "retries": { "type": "integer", "default": 2 }, "url": { "type": "string" } },
            "required": ["url"],
            "additionalProperties": false
        })
    );
    assert_eq!(tool.side_effects, vec![SideEffect::Network]);
    // kernel-v0 §9: side effects + idempotent → medium.
    assert_eq!(tool.risk, Risk::Medium);
    assert!(tool.deterministic && tool.idempotent);
    let ToolExecution::Gert(execution) = &tool.execution else { panic!("gert execution") };
    assert_eq!(execution.binary.as_deref(), Some("curl"));
    assert_eq!(tool.source.line, 17);
}

#[test]
fn a_schema_generation_tool_with_transport_args_and_capture_loads() {
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/kv.tool.yaml",
        r#"apiVersion: tool/v0
meta: { name: kv, version: "2", binary: kvctl }
transport:
  mode: jsonrpc
  startup: { argv: [kvctl, serve], ready_signal: ready, timeout: 10s, shutdown_method: shutdown }
governance:
  read_only: true
  redact: [{ pattern: "secret=\\S+", replace: "secret=***" }]
capabilities:
  resolve_inputs: { prefixes: [kv.], context_fields: [tenant] }
actions:
  get:
    method: kv.get
    args:
      key: { type: string, required: true, description: The key. }
      mode: { type: string, enum: [strong, eventual], default: strong }
    capture:
      value: { from: stdout, format: json }
    governance: { read_only: true }
"#,
    );
    let snapshot = project.snapshot();
    let tool = snapshot.get("kv.get").expect("registered");
    assert_eq!(tool.input_schema["required"], json!(["key"]));
    assert_eq!(tool.input_schema["properties"]["mode"]["enum"], json!(["strong", "eventual"]));
    assert_eq!(tool.side_effects, vec![SideEffect::Read]);
    assert_eq!(tool.execution.kind(), "jsonrpc");
}

#[test]
fn an_action_declaring_args_must_declare_every_template_variable() {
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/ls.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: ls, binary: ls }\nactions:\n  list:\n    argv: [ls, '{{ .dir }}', '{{ .pattrn }}']\n    args:\n      dir: { type: string }\n      pattern: { type: string }\n",
    );
    let error = project.error(codes::TOOL_TEMPLATE);
    assert_eq!(
        error.message,
        "argv uses `{{ .pattrn }}`, but action `list` declares no such input"
    );
    assert_eq!(error.hint.as_deref(), Some("did you mean `pattern`?"));
    assert_eq!(error.pointer.as_deref(), Some("/actions/list/argv/2"));
}

#[test]
fn kernel_actions_infer_undeclared_variables_as_required_strings() {
    // gert's own shared tools reference variables their contract does not declare.
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/ping.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: ping, binary: ping }\ncontract:\n  inputs: { host: { type: string, required: true } }\nactions:\n  check:\n    argv: [-c, '{{ .count }}', '{{ .host }}']\n",
    );
    let snapshot = project.snapshot();
    let schema = &snapshot.get("ping.check").expect("tool").input_schema;
    assert_eq!(schema["required"], json!(["count", "host"]));
    // Marked as only the argv's: a runbook step that does not give it is warned, as in gert.
    assert_eq!(schema["properties"]["count"], json!({ "type": "string", "x-jig-argv-only": true }));
}

#[test]
fn malformed_templates_are_reported() {
    let project = Project::with_manifest("name: ops\n");
    project.file("tools/x.tool.yaml", "apiVersion: tool/v0\nmeta: { name: x, binary: x }\nactions:\n  a:\n    argv: ['{{ .host']\n");
    assert_eq!(
        project.error(codes::TOOL_TEMPLATE).message,
        "argv template: `{{` without a closing `}}`"
    );
}

#[test]
fn an_action_contract_may_tighten_but_not_relax() {
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/svc.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: svc, binary: systemctl }\n\
         contract: { side_effects: true, deterministic: false, idempotent: false, writes: [service] }\n\
         actions:\n  status:\n    argv: [systemctl, status]\n    contract: { side_effects: false, idempotent: true, writes: [] }\n",
    );
    let messages: Vec<String> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::TOOL_CONTRACT)
        .map(|d| d.message)
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("relaxes `side_effects` from true to false")));
    assert!(messages.iter().any(|m| m.contains("`idempotent` from false to true")));
    assert!(messages.iter().any(|m| m.contains("`writes`")));

    // Tightening is fine, and the action's contract wins.
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/svc.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: svc, binary: systemctl }\n\
         contract: { side_effects: false, idempotent: true, reads: [service] }\n\
         actions:\n  restart:\n    argv: [systemctl, restart]\n    contract: { side_effects: true, idempotent: false, reads: [service], writes: [service] }\n",
    );
    let snapshot = project.snapshot();
    let tool = snapshot.get("svc.restart").expect("tool");
    assert_eq!((tool.side_effects.clone(), tool.risk), (vec![SideEffect::Write], Risk::Critical));
}

#[test]
fn extract_rules_must_target_declared_outputs_with_valid_patterns() {
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/x.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: x, binary: x }\ncontract: { outputs: { status_code: { type: string } } }\n\
         actions:\n  a:\n    argv: [x]\n    extract:\n      status_cod: { from: stdout }\n      status_code: { from: stdout, pattern: '(' }\n",
    );
    let diagnostics = project.diagnostics();
    let contract =
        diagnostics.iter().find(|d| d.code == codes::TOOL_CONTRACT).expect("contract error");
    assert_eq!(contract.hint.as_deref(), Some("did you mean `status_code`?"));
    assert!(diagnostics.iter().any(|d| d.code == codes::TOOL_EXECUTION
        && d.message.starts_with("extract pattern does not compile")));
}

#[test]
fn transports_need_their_fields() {
    for (tool, message) in [
        (
            "meta: { name: x, transport: jsonrpc }\nactions:\n  a: { description: no method }\n",
            "jsonrpc action `a` needs `method`",
        ),
        (
            "meta: { name: x, transport: mcp }\nactions:\n  a: { description: no tool }\n",
            "mcp action `a` needs `mcp_tool`",
        ),
        (
            "meta: { name: x }\nactions:\n  a: { description: nothing to run }\n",
            "stdio action `a` has no `argv`",
        ),
        (
            "meta: { name: x, transport: stdio }\ntransport: { mode: mcp }\nactions:\n  a: { mcp_tool: t }\n",
            "`transport.mode` is mcp but `meta.transport` is stdio",
        ),
    ] {
        let project = Project::with_manifest("name: ops\n");
        project.file("tools/x.tool.yaml", &format!("apiVersion: tool/v0\n{tool}"));
        let errors: Vec<String> =
            project.diagnostics().into_iter().filter(|d| d.is_error()).map(|d| d.message).collect();
        assert!(errors.contains(&message.to_owned()), "{errors:?}");
    }
}

#[test]
fn name_and_platform_mismatches_are_warnings() {
    let project = Project::with_manifest("name: ops\n");
    project.file(
        "tools/reg.tool.yaml",
        "apiVersion: tool/v0\nmeta: { name: registry-check, binary: reg.exe, platform: [windows] }\nactions:\n  q: { argv: [reg, query] }\n",
    );
    let snapshot = project.snapshot();
    let mut warnings: Vec<&str> = snapshot.warnings().iter().map(|d| d.code.as_str()).collect();
    warnings.sort_unstable();
    assert_eq!(warnings, [codes::TOOL_NAME_MISMATCH, codes::TOOL_PLATFORM]);
    // The file name, not meta.name, is the tool's name.
    assert!(snapshot.get("reg.q").is_some());
}

#[test]
fn unknown_api_versions_and_fields_are_refused() {
    let project = Project::with_manifest("name: ops\n");
    project
        .file("tools/a.tool.yaml", "apiVersion: tool/v9\nmeta: { name: a }\n")
        .file("tools/b.tool.yaml", "apiVersion: tool/v0\nmeta: { name: b, binray: b }\n");
    let diagnostics = project.diagnostics();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.code == codes::API_VERSION
                && d.message == "unknown tool apiVersion `tool/v9`")
    );
    let unknown =
        diagnostics.iter().find(|d| d.code == codes::FIELD_UNKNOWN).expect("unknown field");
    assert_eq!(unknown.hint.as_deref(), Some("did you mean `binary`?"));
}

/// gert's reference tools and examples, vendored under tests/fixtures.
fn reference() -> std::path::PathBuf {
    repo_root().join("tests/fixtures/gert-reference")
}

#[test]
fn gert_reference_tools_load_without_a_single_diagnostic() {
    for dir in ["", "examples"] {
        let root = reference().join(dir);
        let options = jig_load::LoadOptions { with_std: false, ..Default::default() };
        let snapshot = jig_load::Loader::with_options(&root, options)
            .load()
            .unwrap_or_else(|f| panic!("{}", dump(&f.diagnostics)));
        assert!(snapshot.warnings().is_empty(), "{}", dump(snapshot.warnings()));
        assert!(snapshot.len() >= 3);
    }
}

#[test]
fn gert_reference_example_runbook_and_scenarios_load_without_a_single_diagnostic() {
    let root = reference().join("examples");
    let options = jig_load::LoadOptions {
        with_std: false,
        extra_runbooks: vec![root.join("service-health-check.yaml")],
    };
    let snapshot = jig_load::Loader::with_options(&root, options)
        .load()
        .unwrap_or_else(|f| panic!("{}", dump(&f.diagnostics)));
    assert!(snapshot.warnings().is_empty(), "{}", dump(snapshot.warnings()));
    let entry = snapshot.runbook("service-health-check").expect("runbook");
    assert_eq!(entry.runbook.name, "service-health-check");
    let mut scenarios: Vec<&str> = entry.scenarios.iter().map(|s| s.name.as_str()).collect();
    scenarios.sort_unstable();
    assert_eq!(scenarios, ["degraded", "healthy", "unknown"]);
    assert!(entry.scenarios.iter().all(|s| s.scenario.is_some() && s.test.is_some()));
}

#[test]
fn gert_reference_schemas_are_valid_json_schemas() {
    for name in ["gert-project.json", "runbook-v0.json", "runbook-v1.json", "tool-v0.json"] {
        let text = std::fs::read_to_string(reference().join("schemas").join(name)).expect("read");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert!(jsonschema_is_valid(&schema), "{name}");
    }
}

fn jsonschema_is_valid(schema: &serde_json::Value) -> bool {
    // Validate through the loader's own path: a toolpack whose output schema is the file.
    let project = Project::with_manifest("name: ops\n");
    project.file("schemas/s.json", &schema.to_string()).file(
        "tools/t.tool.yaml",
        &crate::support::toolpack_with(
            "ops.t",
            "outputSchema",
            "outputSchema: { $ref: ../schemas/s.json }",
        ),
    );
    project.load().is_ok()
}

#[test]
fn the_vendored_reference_matches_shared_reference_when_present() {
    let shared = repo_root().join("../shared/reference/gert");
    if !shared.is_dir() {
        return; // CI machines have only the repository.
    }
    let mut compared = 0;
    for entry in walk(&reference()) {
        let rel = entry.strip_prefix(reference()).expect("prefix");
        if rel == Path::new("README.md") {
            continue;
        }
        let theirs = std::fs::read(shared.join(rel)).unwrap_or_default();
        assert_eq!(std::fs::read(&entry).expect("read"), theirs, "{} drifted", rel.display());
        compared += 1;
    }
    assert!(compared >= 13);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

/// A project laid out and written like gert's own: runbooks as plain `.yaml` under
/// `paths.runbooks`, `meta.secrets`, tools whose effects are resource tags, governance on those
/// tags and on `reads`/`writes`, and an action whose argv uses a variable its contract does not
/// list. It loads; what gert only warns about is a warning here too.
#[test]
fn a_project_written_like_gerts_own_loads_with_warnings_where_gert_warns() {
    let project = Project::with_manifest(
        "name: gertlike\npaths: { runbooks: runbooks }\npolicy:\n  rules:\n    - { effects: [wrte], action: deny }\n",
    );
    let tool = |name: &str, tag: &str, argv: &str| {
        format!(
            "apiVersion: tool/v0\nmeta: {{ name: {name}, transport: stdio, binary: {name} }}\ncontract:\n  inputs: {{ namespace: {{ type: string, required: true }} }}\n  effects: [{tag}]\n  idempotent: true\nactions:\n  list:\n    argv: [{argv}]\n"
        )
    };
    project
        .file("tools/kubectl.tool.yaml", &tool("kubectl", "kubernetes", "kubectl, --context, \"{{ .context }}\", -n, \"{{ .namespace }}\""))
        .file("tools/helm.tool.yaml", &tool("helm", "kubernetes", "helm, list, -n, \"{{ .namespace }}\""))
        .file(
            "runbooks/rollout.yaml",
            "apiVersion: kernel/v0\nmeta:\n  name: rollout\n  secrets:\n    - { env: KUBECONFIG, description: the cluster, required: true }\n  governance:\n    rules:\n      - { effects: [kubernetes], action: require-approval, min_approvers: 2 }\n      - { contract: { writes: [kubernetes] }, action: require-approval, contract_violations: deny }\n      - default: allow\ntools: [kubectl, helm]\nsteps:\n  - id: both\n    type: parallel\n    branches:\n      - steps: [{ id: pods, type: tool, tool: kubectl, action: list, inputs: { namespace: web } }]\n      - steps: [{ id: charts, type: tool, tool: helm, action: list, inputs: { namespace: web } }]\n  - id: done\n    type: end\n    outcome: { category: no_action, code: looked }\n",
        );
    let snapshot = project.load().unwrap_or_else(|f| panic!("{}", crate::support::render(&f)));
    let entry = snapshot.runbook("rollout").expect("a plain .yaml runbook is discovered");
    let kubectl = snapshot.get("kubectl.list").expect("kubectl.list");
    assert_eq!(kubectl.effect_tags(), ["kubernetes"]);
    assert!(kubectl.has_side_effects());
    let warnings: Vec<&str> = snapshot.warnings().iter().map(|d| d.message.as_str()).collect();
    let has = |needle: &str| warnings.iter().any(|w| w.contains(needle));
    assert!(
        has("the input `context`, which its action's argv uses but its contract does not list"),
        "{warnings:#?}"
    );
    assert!(has("parallel arms"), "two arms acting on `kubernetes` at once: {warnings:#?}");
    assert!(has("`wrte` is no side-effect class"), "{warnings:#?}");
    assert!(!has("min_approvers"), "enforced on a require-approval rule: {warnings:#?}");
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert_eq!(entry.runbook.secrets.len(), 1);
    assert_eq!(
        (entry.runbook.secrets[0].env.as_str(), entry.runbook.secrets[0].required),
        ("KUBECONFIG", true)
    );
}
