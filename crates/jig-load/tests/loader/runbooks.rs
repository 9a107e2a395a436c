//! Runbooks in all three formats, their checks, and their scenarios.

use jig_model::diagnostic::codes;
use jig_model::runbook::{RunbookApi, StepKind};

use crate::support::Project;

const CURL: &str = "apiVersion: tool/v0\nmeta: { name: curl, binary: curl }\n\
                    contract:\n  inputs: { url: { type: string, required: true } }\n  outputs: { status_code: { type: string } }\n\
                    actions:\n  get: { argv: [curl, '{{ .url }}'] }\n  head: { argv: [curl, -I, '{{ .url }}'] }\n";

fn project() -> Project {
    let project = Project::with_manifest("name: ops\n");
    project.file("tools/curl.tool.yaml", CURL);
    project
}

const KERNEL: &str = r#"apiVersion: kernel/v0
meta:
  name: check
  inputs:
    host: { type: string, required: true }
tools: [curl]
steps:
  - id: probe
    type: tool
    tool: curl
    action: get
    inputs: { url: "https://{{ .host }}" }
  - id: triage
    type: branch
    branches:
      - condition: '{{ eq .status_code "200" }}'
        steps:
          - { id: ok, type: end, outcome: { category: no_action } }
      - condition: default
        steps:
          - { id: look, type: manual, instructions: Look. }
          - { id: bad, type: end, outcome: { category: escalated, code: odd } }
"#;

#[test]
fn the_three_formats_are_read_into_one_representation() {
    let project = project();
    project
        .file("runbooks/k.runbook.yaml", KERNEL)
        .file(
            "runbooks/one.runbook.yaml",
            "apiVersion: runbook/v1\ntools: [curl]\nmeta: { name: one }\ntree:\n  - step: { id: a, type: tool, tool: { name: curl, action: head, args: { url: x } } }\n  - iterate:\n      max: 3\n      until: done\n      steps:\n        - step: { id: b, type: manual, instructions: wait }\n  - branches:\n      - condition: default\n        steps:\n          - step: { id: c, type: cli, with: { argv: [echo] } }\n",
        )
        .file(
            "runbooks/zero.runbook.yaml",
            "apiVersion: runbook/v0\nimports: [one.runbook.yaml]\ntools: { curl: ../tools/curl.tool.yaml }\nmeta: { name: zero, inputs: { host: { from: prompt } } }\nsteps:\n  - { id: a, type: tool, tool: { name: curl, action: get, args: { url: x } } }\n  - { id: b, type: invoke, invoke: { runbook: one } }\n",
        );
    let snapshot = project.snapshot();
    let get = |name: &str| snapshot.runbook(name).expect(name).runbook.clone();
    let kernel = get("k");
    assert_eq!(kernel.api_version, RunbookApi::KernelV0);
    let ids: Vec<&str> = kernel.walk().iter().filter_map(|s| s.id.as_deref()).collect();
    assert_eq!(ids, ["probe", "triage", "ok", "look", "bad"]);
    assert!(kernel.inputs["host"].required);

    let one = get("one");
    assert_eq!(one.api_version, RunbookApi::V1);
    assert!(matches!(one.steps[1].kind, StepKind::Repeat { max: Some(3), .. }));
    assert!(matches!(one.steps[2].kind, StepKind::Branch { .. }));
    assert_eq!(one.steps[1].pointer, "/tree/1/iterate");

    let zero = get("zero");
    assert_eq!(zero.tool_paths["curl"], "../tools/curl.tool.yaml");
    assert_eq!(zero.imports, ["one.runbook.yaml"]);
    assert!(zero.inputs["host"].required, "a v0 input without default is required");
}

#[test]
fn runbook_v1_rejects_imports_and_tool_maps() {
    let project = project();
    project.file(
        "runbooks/r.runbook.yaml",
        "apiVersion: runbook/v1\nimports: [x]\ntools: { curl: ../tools/curl.tool.yaml }\nmeta: { name: r }\n",
    );
    let found: Vec<(String, String)> = project
        .diagnostics()
        .into_iter()
        .map(|d| (d.code, d.pointer.unwrap_or_default()))
        .collect();
    assert!(
        found.contains(&(codes::RUNBOOK_V1_SYNTAX.to_owned(), "/imports".to_owned())),
        "{found:?}"
    );
    assert!(
        found.contains(&(codes::RUNBOOK_V1_SYNTAX.to_owned(), "/tools".to_owned())),
        "{found:?}"
    );
}

#[test]
fn runbook_v0_falls_back_to_raw_paths_and_checks_they_exist() {
    let project = project();
    project.file(
        "runbooks/old.runbook.yaml",
        "apiVersion: runbook/v0\nimports: [../shared/missing]\nmeta: { name: old }\nsteps:\n  - { id: a, type: manual, outcomes: [{ state: resolved, next_runbook: { file: ../runbooks/old } }] }\n",
    );
    let error = project.error(codes::RESOLVE_RUNBOOK);
    assert_eq!(
        (error.message.as_str(), error.pointer.as_deref()),
        ("import `../shared/missing` does not exist", Some("/imports/0"))
    );
}

#[test]
fn tool_steps_are_checked_against_the_tool_list_actions_and_inputs() {
    let step = |s: &str| {
        let project = project();
        project.file("runbooks/r.runbook.yaml", &format!("apiVersion: kernel/v0\nmeta: {{ name: r, constants: {{ target: {{ url: x }} }} }}\ntools: [curl]\nsteps:\n  - {s}\n  - {{ type: end, outcome: {{ category: resolved }} }}\n"));
        match project.load() {
            Ok(_) => Vec::new(),
            Err(failure) => failure.diagnostics.into_iter().map(|d| (d.message, d.hint)).collect(),
        }
    };
    let found = step("{ id: a, type: tool, tool: crul, action: get, inputs: { url: x } }");
    assert_eq!(found[0].0, "step uses tool `crul`, which is not in the runbook's `tools` list");
    assert_eq!(found[0].1.as_deref(), Some("did you mean `curl`?"));

    let found = step("{ id: a, type: tool, tool: curl, action: gett, inputs: { url: x } }");
    assert_eq!(
        found[0],
        ("tool `curl` has no action `gett`".to_owned(), Some("did you mean `get`?".to_owned()))
    );

    let found = step("{ id: a, type: tool, tool: curl, inputs: { url: x } }");
    assert_eq!(
        found[0],
        (
            "step calls `curl` without an `action`".to_owned(),
            Some("its actions: get, head".to_owned())
        )
    );

    let found = step("{ id: a, type: tool, tool: curl, action: get, inputs: { uri: x } }");
    let messages: Vec<&str> = found.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        messages,
        [
            "step does not give `curl` its required input `url`",
            "`curl` takes no input `uri`: the call is made without it, as gert makes it"
        ]
    );
    assert_eq!(found[1].1.as_deref(), Some("did you mean `url`?"));

    // `inputs_from` may supply the required inputs.
    let found = step("{ id: a, type: tool, tool: curl, action: get, inputs_from: target }");
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn step_ids_are_unique_and_next_is_bounded_and_local() {
    let project = project();
    project.file(
        "runbooks/r.runbook.yaml",
        "apiVersion: kernel/v0\nmeta: { name: r }\nsteps:\n  - { id: a, type: manual }\n  - { id: b, type: manual, next: a }\n  - { id: c, type: manual, next: { step: a, max: 3 } }\n  - { id: d, type: manual, next: nowhere }\n  - { id: a, type: end, outcome: { category: resolved } }\n",
    );
    let found: Vec<String> = project.diagnostics().into_iter().map(|d| d.message).collect();
    assert!(found.contains(&"step id `a` is used twice (first on line 4)".to_owned()), "{found:?}");
    assert!(found.contains(&"`next` jumps back to `a` without a bound".to_owned()), "{found:?}");
    assert!(
        found.contains(&"`next` jumps to `nowhere`, which is not a step of this list".to_owned()),
        "{found:?}"
    );
    assert_eq!(found.len(), 3, "the bounded backward jump is fine: {found:?}");
}

#[test]
fn every_kernel_path_must_reach_an_end() {
    let project = project();
    project.file(
        "runbooks/r.runbook.yaml",
        "apiVersion: kernel/v0\nmeta: { name: r }\nsteps:\n  - id: t\n    type: branch\n    branches:\n      - { condition: '{{ .x }}', steps: [{ type: end, outcome: { category: resolved } }] }\n      - { condition: '{{ .y }}', steps: [{ id: m, type: manual }] }\n",
    );
    assert_eq!(project.error(codes::RUNBOOK).message, "not every path reaches an `end` step");
}

#[test]
fn steps_lacking_what_their_type_needs_are_reported() {
    let project = project();
    project.file(
        "runbooks/r.runbook.yaml",
        "apiVersion: kernel/v0\nmeta: { name: r }\nsteps:\n  - { id: a, type: tool }\n  - { id: b, type: assert }\n  - { type: end }\n",
    );
    let mut found: Vec<String> = project.diagnostics().into_iter().map(|d| d.message).collect();
    found.sort();
    assert_eq!(
        found,
        [
            "a `assert` step needs `assert`",
            "a `end` step needs `outcome`",
            "a `tool` step needs `tool`"
        ]
    );
}

#[test]
fn unknown_api_versions_are_reported_with_a_suggestion() {
    let project = project();
    project.file("runbooks/r.runbook.yaml", "apiVersion: kernel/v1\nmeta: { name: r }\n");
    let error = project.error(codes::API_VERSION);
    assert_eq!(error.hint.as_deref(), Some("did you mean `kernel/v0`?"));
}

#[test]
fn scenarios_beside_the_runbook_and_at_the_root_are_checked() {
    let project = project();
    project
        .file("runbooks/check.runbook.yaml", KERNEL)
        .file("runbooks/scenarios/check/up/scenario.yaml", "inputs: { host: a.example }\ntool_responses:\n  \"curl:get\": [{ outputs: { status_code: \"200\" } }]\n")
        .file("runbooks/scenarios/check/up/test.yaml", "expected_outcome: no_action\nmust_reach: [probe, ok]\nmust_not_reach: [look]\n")
        .file("scenarios/check/down/scenario.yaml", "inputs: { host: b.example }\nevidence: { look: { notes: done } }\n");
    let snapshot = project.snapshot();
    let entry = snapshot.runbook("check").expect("runbook");
    let names: Vec<&str> = entry.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["up", "down"]);

    project
        .file("runbooks/scenarios/check/up/scenario.yaml", "inputs: { hots: a.example }\ntool_responses:\n  \"curl:gte\": []\n  \"wget:get\": []\n  curl: []\n  nocolon: []\n")
        .file("runbooks/scenarios/check/up/test.yaml", "must_reach: [prob, ok]\nmust_not_reach: [ok]\n")
        .file("scenarios/check/down/scenario.yaml", "inputs: { host: b.example }\nevidence: { probe: { notes: x } }\n");
    let mut found: Vec<(String, Option<String>)> =
        project.diagnostics().into_iter().map(|d| (d.message, d.hint)).collect();
    found.sort();
    let expected = [
        ("`nocolon` is not in the runbook's `tools` list", None),
        ("`ok` is in both `must_reach` and `must_not_reach`", None),
        ("`wget` is not in the runbook's `tools` list", None),
        (
            "response key `curl` answers every action of `curl` in turn; `curl:ACTION` keeps each action's responses apart",
            None,
        ),
        ("runbook `check` has no input `hots`", Some("did you mean `host`?")),
        ("runbook `check` has no step `prob`", Some("did you mean `probe`?")),
        ("step `probe` is not a manual step; it takes no evidence", None),
        ("the scenario does not give the required input `host`", None),
        ("tool `curl` has no action `gte`", Some("did you mean `get`?")),
    ];
    let expected: Vec<(String, Option<String>)> =
        expected.iter().map(|(m, h)| ((*m).to_owned(), h.map(str::to_owned))).collect();
    assert_eq!(found, expected);
}

/// A kernel/v0 runbook using gert's health-check tool (outputs `status_code`).
fn kernel_runbook(steps: &str) -> String {
    format!(
        "apiVersion: kernel/v0\nmeta:\n  name: triage\n  inputs:\n    host: {{ type: string, required: true }}\n  constants:\n    path: /healthz\ntools: [health-check]\nsteps:\n{steps}"
    )
}

const HEALTH_TOOL: &str = "apiVersion: tool/v0\nmeta:\n  name: health-check\n  transport: stdio\n  binary: curl\ncontract:\n  inputs:\n    url: { type: string, required: true }\n  outputs:\n    status_code: { type: string }\n  effects: [network]\n  deterministic: true\n  idempotent: true\nactions:\n  check:\n    argv: [curl, \"{{ .url }}\"]\n    extract:\n      status_code: { from: stdout }\n";

#[test]
fn a_gert_layout_is_discovered_without_renaming() {
    let project = Project::with_manifest("name: ops\npaths:\n  runbooks: runbooks\n");
    project.file("tools/health-check.tool.yaml", HEALTH_TOOL);
    project.file(
        "runbooks/triage.yaml",
        &kernel_runbook("  - id: check\n    type: tool\n    tool: health-check\n    action: check\n    inputs: { url: \"https://{{ .host }}{{ .path }}\" }\n  - type: end\n    outcome: { category: no_action }\n"),
    );
    project.file("runbooks/notes.yaml", "owners: [ops]\n");
    project.file("runbooks/scenarios/triage/up/scenario.yaml", "inputs: { host: a }\ntool_responses:\n  \"health-check:check\": [{ exit_code: 0, outputs: { status_code: \"200\" } }]\n");
    project.file("runbooks/scenarios/triage/up/test.yaml", "expected_status: completed\n");
    let snapshot = project.snapshot();
    let names: Vec<&str> = snapshot.runbooks().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["triage"],
        "a plain .yaml runbook counts; other YAML and scenario files do not"
    );
    let entry = snapshot.runbook("triage").expect("triage");
    assert_eq!(entry.scenarios.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["up"]);
}

#[test]
fn variables_must_be_defined_before_they_are_read() {
    let project = Project::with_manifest("name: ops\n");
    project.file("tools/health-check.tool.yaml", HEALTH_TOOL);
    project.file(
        "runbooks/triage.runbook.yaml",
        &kernel_runbook(concat!(
            "  - id: early\n    type: assert\n    assert: [{ type: equals, value: \"{{ .status_code }}\", expected: \"200\" }]\n",
            "  - id: check\n    type: tool\n    tool: health-check\n    action: check\n    inputs: { url: \"https://{{ .hots }}\" }\n",
            "  - id: broken\n    type: assert\n    assert: [{ type: equals, value: \"{{ eq .status_code }\", expected: x }]\n",
            "  - id: later\n    type: tool\n    tool: health-check\n    action: check\n    inputs: { url: \"{{ .check.status_code }}\" }\n    export: [body, host]\n",
            "  - type: end\n    outcome: { category: no_action, meta: { code: \"{{ .status_code }}\" } }\n",
        )),
    );
    let diagnostics = project.diagnostics();
    let messages: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{} {} {}",
                d.line.unwrap_or(0),
                d.code,
                d.message,
                d.hint.clone().unwrap_or_default()
            )
        })
        .collect();
    let has =
        |code: &str, text: &str| messages.iter().any(|m| m.contains(code) && m.contains(text));
    assert!(
        has("runbook.variable", "`.status_code` is read before any step can set it"),
        "{messages:#?}"
    );
    assert!(
        has("runbook.variable", "undefined variable `.hots`")
            && has("runbook.variable", "did you mean `host`"),
        "{messages:#?}"
    );
    assert!(has("runbook.template", "unexpected `}` in an action"), "{messages:#?}");
    assert!(
        has("runbook.variable", "`export` names `body`, which the step does not produce"),
        "{messages:#?}"
    );
    assert!(has("runbook.variable", "`export` of `host` clashes with an input"), "{messages:#?}");
    assert_eq!(
        messages
            .iter()
            .filter(|m| m.contains("runbook.variable") || m.contains("runbook.template"))
            .count(),
        5,
        "{messages:#?}"
    );
    let early = diagnostics.iter().find(|d| d.message.contains("read before")).expect("early");
    assert_eq!(early.line, Some(12), "the line of the template in the file");
}

#[test]
fn contending_parallel_arms_are_a_warning_naming_the_resource() {
    let restart = "apiVersion: tool/v0\nmeta:\n  name: svc\n  transport: stdio\n  binary: systemctl\ncontract:\n  inputs:\n    name: { type: string, required: true }\n  outputs:\n    out: { type: string }\n  side_effects: true\n  deterministic: false\n  idempotent: true\n  reads: [service]\n  writes: [service]\nactions:\n  restart:\n    argv: [systemctl, restart, \"{{ .name }}\"]\n  status:\n    argv: [systemctl, status, \"{{ .name }}\"]\n";
    let project = Project::with_manifest("name: ops\n");
    project.file("tools/svc.tool.yaml", restart);
    project.file(
        "runbooks/race.runbook.yaml",
        "apiVersion: kernel/v0\nmeta: { name: race }\ntools: [svc]\nsteps:\n  - id: both\n    type: parallel\n    branches:\n      - label: fix\n        steps: [{ id: r, type: tool, tool: svc, action: restart, inputs: { name: web } }]\n      - label: look\n        steps: [{ id: s, type: manual, instructions: Look., contract: { side_effects: false, reads: [service] } }]\n  - type: end\n    outcome: { category: resolved }\n",
    );
    let snapshot = project.snapshot();
    let warning =
        snapshot.warnings().iter().find(|d| d.code == codes::RUNBOOK_PARALLEL).expect("a warning");
    assert!(warning.message.contains("`fix` and `look` both use `service`"), "{}", warning.message);
    assert_eq!(warning.line, Some(5));
}

/// v0/v1 step details that would do nothing as written are warned about (the file and the
/// field), and a v0 `tools` map's path resolves to the tool file it names, for running.
#[test]
fn v1_details_that_do_nothing_are_warned_about_and_a_v0_tool_path_resolves() {
    let project = project();
    project.file(
        "runbooks/drain.runbook.yaml",
        "apiVersion: runbook/v1\nmeta: { name: drain }\nsteps:\n  - id: look\n    type: cli\n    with: { argv: [ls] }\n    precondition: { check: [test, -f, x], skip_if_succeeds: false }\n    gate: { on_error: skip }\n    assertions: [{ exit_code: 0, contains: ok }]\n",
    );
    project.file(
        "runbooks/old.runbook.yaml",
        "apiVersion: runbook/v0\ntools: { web: ../tools/curl.tool.yaml }\nmeta: { name: old }\nsteps:\n  - id: get\n    type: tool\n    tool: { name: web, action: get, args: { url: https://a.example } }\n",
    );
    let snapshot = project.load().unwrap_or_else(|f| panic!("{}", crate::support::render(&f)));
    let warnings: Vec<String> = snapshot
        .warnings()
        .iter()
        .map(|d| {
            format!("{}:{} {}", d.file.as_deref().unwrap_or(""), d.line.unwrap_or(0), d.message)
        })
        .collect();
    let has = |needle: &str| warnings.iter().any(|w| w.contains(needle));
    assert!(has("drain.runbook.yaml:7 `skip_if_succeeds: false` does nothing"), "{warnings:#?}");
    assert!(has("drain.runbook.yaml:8 `gate` applies only to `invoke` steps"), "{warnings:#?}");
    assert!(
        has("drain.runbook.yaml:9 an assertion checks exactly one thing; this one sets 2"),
        "{warnings:#?}"
    );
    let old = snapshot.runbook("old").expect("the v0 runbook");
    assert_eq!(old.tool_id("web", Some("get")), Some("curl.get"));
}
