//! Decisions for real tool definitions: the built-in checks, governance, deny-by-default.

use jig_model::policy::PolicyConfig;
use jig_model::runbook::kernel::GovernanceAction;
use jig_policy::Policy;
use serde_json::json;

fn catalog() -> std::sync::Arc<jig_load::Snapshot> {
    let examples = std::path::Path::new(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str(),
    )
    .join("../../toolpacks/examples");
    jig_load::load(&examples).expect("examples load")
}

fn policy(yaml: &str) -> Policy {
    let config: PolicyConfig = serde_json::from_value(yaml_to_json(yaml)).expect("policy");
    Policy::new(config).expect("compiles")
}

fn yaml_to_json(yaml: &str) -> serde_json::Value {
    jig_load::yaml::parse(yaml, &jig_load::yaml::Caps::DEFAULT).expect("yaml").value
}

fn decide(policy: &Policy, tool: &str, args: &serde_json::Value) -> (GovernanceAction, String) {
    let snapshot = catalog();
    let decision = policy.decide(snapshot.get(tool).expect(tool), args);
    (decision.action, decision.rule)
}

#[test]
fn side_effects_need_approval_by_default_and_reads_run() {
    let p = policy("{}");
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})),
        (GovernanceAction::RequireApproval, "default.side_effects".into())
    );
    assert_eq!(decide(&p, "file_read", &json!({"path": "a"})).0, GovernanceAction::Allow);
    assert_eq!(decide(&p, "acme.slugify", &json!({"title": "x"})).0, GovernanceAction::Allow);
}

#[test]
fn the_most_restrictive_matching_rule_wins() {
    let p = policy(
        "rules:\n  - { effects: [write], action: allow }\n  - { tools: ['file_*'], action: require-approval }\n  - { tools: [fs_delete], action: deny }\n",
    );
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})),
        (GovernanceAction::RequireApproval, "rules[1]".into())
    );
    assert_eq!(
        decide(&p, "fs_move", &json!({"src": "a", "dst": "b"})),
        (GovernanceAction::Allow, "rules[0]".into())
    );
    assert_eq!(
        decide(&p, "fs_delete", &json!({"path": "a"})),
        (GovernanceAction::Deny, "rules[2]".into())
    );
}

#[test]
fn a_default_rule_replaces_deny_by_default() {
    let p = policy("rules:\n  - { risk: high, action: deny }\n  - { default: allow }\n");
    assert_eq!(
        decide(&p, "file_write", &json!({"path": "a", "content": "b"})),
        (GovernanceAction::Allow, "rules[1]".into())
    );
    assert_eq!(decide(&p, "shell_exec", &json!({"cmd": "cargo test"})).0, GovernanceAction::Deny);
}

#[test]
fn builtin_checks_name_their_seed_002_rule() {
    let p = policy(
        "network: { allowed_domains: [crates.io] }\nshell_allow: ['^cargo(\\s|$)']\nrules: [{ default: allow }]\n",
    );
    assert_eq!(
        decide(&p, "file_read", &json!({"path": "../../etc/passwd"})),
        (GovernanceAction::Deny, "sec.paths.sandbox".into())
    );
    assert_eq!(decide(&p, "fs_copy", &json!({"src": "a", "dst": "/tmp/b"})).1, "sec.paths.sandbox");
    assert_eq!(
        decide(&p, "curl", &json!({"url": "https://evil.example/"})),
        (GovernanceAction::Deny, "sec.network.allowlist".into())
    );
    assert_eq!(
        decide(&p, "curl", &json!({"url": "https://crates.io/api"})).0,
        GovernanceAction::Allow
    );
    assert_eq!(
        decide(&p, "shell_exec", &json!({"cmd": "cargo test; rm -rf /"})),
        (GovernanceAction::Deny, "sec.shell.allowlist".into())
    );
    assert_eq!(decide(&p, "shell_exec", &json!({"cmd": "rm -rf /"})).1, "sec.shell.allowlist");
    assert_eq!(decide(&p, "shell_exec", &json!({"cmd": "cargo build"})).0, GovernanceAction::Allow);
    assert_eq!(
        decide(&p, "git_push", &json!({})),
        (GovernanceAction::Deny, "git.allow_push".into())
    );
}

#[test]
fn the_policy_hash_is_canonical() {
    let a = policy("git: { allow_push: true }\nnetwork: { allowed_domains: [a.example] }\n");
    let b = policy(
        "network: { allowed_domains: [a.example] }\ngit: { allow_push: true, require_clean_tree_for_commit: true }\n",
    );
    assert_eq!(a.hash(), b.hash());
    assert_ne!(a.hash(), policy("{}").hash());
    assert_eq!(a.hash().len(), 64);
}

/// gert's own tools tag their effects with the resources they act on (`effects: [azure]`):
/// a tag Jig does not know is a side effect on that resource — the default asks a person —
/// and a rule may name it; the classes Jig knows keep their meaning beside it.
#[test]
fn resource_tags_among_effects_are_side_effects_a_rule_can_name() {
    let dir = tempfile::tempdir().expect("tmp");
    let tool = |name: &str, effects: &str| {
        format!(
            "apiVersion: tool/v0\nmeta: {{ name: {name}, transport: stdio, binary: az }}\ncontract:\n  inputs: {{ group: {{ type: string, required: true }} }}\n  effects: {effects}\n  idempotent: true\nactions:\n  show:\n    argv: [az, group, show, -n, \"{{{{ .group }}}}\"]\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("tools")).expect("dir");
    std::fs::write(dir.path().join("jig.yaml"), "name: gertlike\n").expect("manifest");
    std::fs::write(dir.path().join("tools/az.tool.yaml"), tool("az", "[azure]")).expect("az");
    std::fs::write(dir.path().join("tools/kube.tool.yaml"), tool("kube", "[kubernetes, network]"))
        .expect("kube");
    let snapshot = jig_load::load(dir.path()).expect("gert's tags load");
    let az = snapshot.get("az.show").expect("az.show");
    assert!(az.side_effects.is_empty() && az.effect_tags() == ["azure"]);
    assert!(az.has_side_effects(), "an unknown tag counts as a side effect");
    assert_ne!(az.risk, jig_model::Risk::Low);
    let kube = snapshot.get("kube.show").expect("kube.show");
    assert_eq!(kube.side_effects, [jig_model::SideEffect::Network]);

    let args = json!({ "group": "rg" });
    let by_default = policy("{}").decide(az, &args);
    assert_eq!(by_default.action, GovernanceAction::RequireApproval);
    assert!(by_default.reason.contains("azure"), "{}", by_default.reason);

    let p = policy(
        "rules:\n  - { effects: [kubernetes], action: deny }\n  - { effects: [azure], action: allow }\n",
    );
    assert_eq!(p.decide(az, &args).action, GovernanceAction::Allow);
    assert_eq!(
        (p.decide(kube, &args).action, p.decide(kube, &args).rule),
        (GovernanceAction::Deny, "rules[0]".to_owned())
    );
    // `none` means no side effect of any kind, tags included.
    let none = policy("rules:\n  - { effects: [none], action: allow }\n");
    assert_eq!(none.decide(az, &args).action, GovernanceAction::RequireApproval);
}
