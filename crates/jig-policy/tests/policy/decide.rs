//! Decisions for real tool definitions: the built-in checks, governance, deny-by-default.

use jig_model::policy::PolicyConfig;
use jig_model::runbook::kernel::GovernanceAction;
use jig_policy::Policy;
use serde_json::json;

fn catalog() -> std::sync::Arc<jig_load::Snapshot> {
    let examples =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolpacks/examples");
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
