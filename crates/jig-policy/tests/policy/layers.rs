//! Decisions across policy layers: a layer above the project is never widened by it.

use jig_model::policy::{LayerKind, PolicyConfig, PolicyLayerFile};
use jig_model::runbook::kernel::GovernanceAction;
use jig_policy::Policy;
use jig_policy::layers::Layer;
use jig_policy::report::RuleKind;
use serde_json::{Value, json};

fn catalog() -> std::sync::Arc<jig_load::Snapshot> {
    let examples = std::path::Path::new(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str(),
    )
    .join("../../toolpacks/examples");
    jig_load::load(&examples).expect("examples load")
}

fn yaml(text: &str) -> Value {
    jig_load::yaml::parse(text, &jig_load::yaml::Caps::DEFAULT).expect("yaml").value
}

fn layer(kind: LayerKind, text: &str) -> Layer {
    let written = yaml(text);
    let file: PolicyLayerFile = serde_json::from_value(written.clone()).expect("layer");
    let said = written.get("policy").cloned().unwrap_or(Value::Null);
    Layer::new(kind, format!("/etc/{kind}.yaml"), file, said)
}

/// A project that allows everything, as a cloned repository would.
fn permissive() -> PolicyConfig {
    serde_json::from_value(yaml(
        "rules: [{ default: allow }, { effects: [write, exec], action: allow }]",
    ))
    .expect("policy")
}

const MACHINE: &str =
    "policy:\n  rules:\n    - { effects: [write, exec], action: require-approval }\n";

fn decide(policy: &Policy, tool: &str, args: &Value) -> (GovernanceAction, String, LayerKind) {
    let snapshot = catalog();
    let d = policy.decide(snapshot.get(tool).expect(tool), args);
    (d.action, d.rule, d.layer)
}

/// Governance alone (a command also meets the shell allow-list, which these projects leave empty).
fn govern(policy: &Policy, tool: &str) -> (GovernanceAction, String, LayerKind) {
    let snapshot = catalog();
    let d = policy.govern(snapshot.get(tool).expect(tool));
    (d.action, d.rule, d.layer)
}

#[test]
fn a_project_cannot_allow_what_the_machine_sends_to_a_person() {
    let p = Policy::layered(permissive(), vec![layer(LayerKind::Machine, MACHINE)]).expect("p");
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})),
        (GovernanceAction::RequireApproval, "machine:rules[0]".into(), LayerKind::Machine)
    );
    assert_eq!(govern(&p, "shell_exec").0, GovernanceAction::RequireApproval);
    // A read the machine says nothing of stays the project's.
    assert_eq!(
        decide(&p, "file_read", &json!({"path": "a"})),
        (GovernanceAction::Allow, "rules[0]".into(), LayerKind::Project)
    );
    let alone = Policy::new(permissive()).expect("p");
    assert_ne!(alone.hash(), p.hash(), "the layer is part of the policy hash");
}

#[test]
fn a_project_narrows_and_a_tie_is_credited_to_the_stronger_layer() {
    let project: PolicyConfig = serde_json::from_value(yaml(
        "rules: [{ tools: [fs_delete], action: deny }, { tools: [file_write], action: require-approval }]",
    ))
    .expect("policy");
    let p = Policy::layered(project, vec![layer(LayerKind::Machine, MACHINE)]).expect("p");
    assert_eq!(
        decide(&p, "fs_delete", &json!({"path": "a"})),
        (GovernanceAction::Deny, "rules[0]".into(), LayerKind::Project)
    );
    let (_, rule, by) = decide(&p, "file_write", &json!({"path": "a", "content": "b"}));
    assert_eq!((rule.as_str(), by), ("machine:rules[0]", LayerKind::Machine));
}

#[test]
fn a_layer_can_say_where_the_projects_allows_count() {
    let limits = "project:\n  may_not_allow: [{ effects: [exec] }]\n";
    let p = Policy::layered(permissive(), vec![layer(LayerKind::Person, limits)]).expect("p");
    assert_eq!(
        govern(&p, "shell_exec"),
        (
            GovernanceAction::RequireApproval,
            "person:project.may_not_allow[0]".into(),
            LayerKind::Person
        )
    );
    // A write is not barred: the project's allow stands.
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})).0,
        GovernanceAction::Allow
    );
    let only_reads = "project:\n  may_allow: [{ effects: [none] }]\n";
    let p = Policy::layered(permissive(), vec![layer(LayerKind::Machine, only_reads)]).expect("p");
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})).1,
        "machine:project.may_allow"
    );
    assert_eq!(decide(&p, "file_read", &json!({"path": "a"})).0, GovernanceAction::Allow);
}

#[test]
fn a_layers_shell_allow_list_holds_over_the_projects() {
    let project: PolicyConfig =
        serde_json::from_value(yaml("shell_allow: ['.*']\nrules: [{ default: allow }]"))
            .expect("policy");
    let above = layer(LayerKind::Machine, "policy:\n  shell_allow: ['^cargo(\\s|$)']\n");
    let p = Policy::layered(project, vec![above]).expect("p");
    assert!(p.check_command("cargo test").is_ok());
    let refused = p.check_command("rm -rf target").expect_err("not on the machine's list");
    assert!(refused.reason.contains("machine layer"), "{}", refused.reason);
}

#[test]
fn the_report_names_each_rules_layer_and_what_it_overrode() {
    let p = Policy::layered(permissive(), vec![layer(LayerKind::Machine, MACHINE)]).expect("p");
    let snapshot = catalog();
    let report = p.report("jig.yaml", snapshot.list().map(AsRef::as_ref));
    assert_eq!(report.layers.first().map(|l| l.layer), Some(LayerKind::Machine));
    assert_eq!(report.layers.last().map(|l| l.source.as_str()), Some("jig.yaml"));
    let machine = report.rules.iter().find(|r| r.rule == "machine:rules[0]").expect("listed");
    assert_eq!((machine.layer, machine.kind), (LayerKind::Machine, RuleKind::Rule));
    assert_eq!(machine.action, Some(GovernanceAction::RequireApproval));
    assert!(machine.decides.iter().any(|t| t == "file_write"));
    let over = machine.overrode.iter().find(|o| o.tool == "file_write").expect("overrode");
    assert_eq!((over.rule.as_str(), over.action), ("rules[1]", GovernanceAction::Allow));
    let project = report.rules.iter().find(|r| r.rule == "rules[1]").expect("listed");
    assert!(
        project
            .overridden_by
            .iter()
            .any(|o| o.tool == "file_write" && o.layer == LayerKind::Machine)
    );
    let write = report.tools.iter().find(|t| t.tool == "file_write").expect("tool");
    assert_eq!(write.project.as_ref().map(|d| d.action), Some(GovernanceAction::Allow));
    let read = report.tools.iter().find(|t| t.tool == "file_read").expect("tool");
    assert!(read.project.is_none(), "unchanged by the layer");
}
