//! Policy layers above the project, combined with its policy so that the most restrictive
//! word wins: the project being governed can narrow what a layer above says and never widen
//! it. Governance rules are weighed per layer ([`crate::Policy::decide`]); the settings beside
//! them (network, git, approvals, budgets, sandbox, durability) are narrowed here, each only
//! where the layer above speaks to it — a layer that says nothing of the sandbox leaves the
//! project's sandbox as the project wrote it.

pub use jig_model::policy::Layer;
use jig_model::policy::{
    Durability, LayerKind, PolicyConfig, ProcessNetwork, SandboxEnforcement, SessionBudgets,
};
use serde::Serialize;
use serde_json::{Value, json};

/// A setting of the project's a layer above narrowed: what `jig policy show` reports as
/// overridden.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Narrowed {
    /// The setting, as a pointer into `policy:` (`/git/allow_push`).
    pub setting: String,
    /// The layer that narrowed it.
    pub layer: LayerKind,
    /// What the project (with the layers before this one) said.
    pub was: Value,
    /// What holds now.
    pub now: Value,
}

/// `config` narrowed by `layer`, with what changed appended to `out`.
pub fn narrow(config: &mut PolicyConfig, layer: &Layer, out: &mut Vec<Narrowed>) {
    let above = &layer.file.policy;
    let mut set = |setting: &str, was: Value, now: Value| {
        if was != now {
            out.push(Narrowed { setting: setting.to_owned(), layer: layer.kind, was, now });
        }
    };
    if layer.says("/network/allowed_domains") {
        let was = config.network.allowed_domains.clone();
        config.network.allowed_domains = within(&was, &above.network.allowed_domains);
        set("/network/allowed_domains", json!(was), json!(config.network.allowed_domains));
    }
    let flags: [(&str, &mut bool, bool, bool); 5] = [
        (
            "/network/allow_private",
            &mut config.network.allow_private,
            above.network.allow_private,
            false,
        ),
        ("/git/allow_push", &mut config.git.allow_push, above.git.allow_push, false),
        (
            "/git/require_clean_tree_for_commit",
            &mut config.git.require_clean_tree_for_commit,
            above.git.require_clean_tree_for_commit,
            true,
        ),
        (
            "/approvals/self_approval",
            &mut config.approvals.self_approval,
            above.approvals.self_approval,
            false,
        ),
        ("/approvals/allow_as", &mut config.approvals.allow_as, above.approvals.allow_as, false),
    ];
    // Each flag's restrictive value: `false` for a permission, `true` for a requirement.
    for (pointer, ours, theirs, strict) in flags {
        if layer.says(pointer) && theirs == strict && *ours != strict {
            set(pointer, json!(*ours), json!(strict));
            *ours = strict;
        }
    }
    if layer.says("/approvals/ttl_seconds")
        && above.approvals.ttl_seconds < config.approvals.ttl_seconds
    {
        set(
            "/approvals/ttl_seconds",
            json!(config.approvals.ttl_seconds),
            json!(above.approvals.ttl_seconds),
        );
        config.approvals.ttl_seconds = above.approvals.ttl_seconds;
    }
    if let Some(theirs) = above.budgets.filter(|_| layer.says("/budgets")) {
        let was = config.budgets;
        config.budgets = Some(tighter(config.budgets.unwrap_or_default(), theirs));
        set("/budgets", json!(was), json!(config.budgets));
    }
    narrow_sandbox(config, layer, &mut set);
    if layer.says("/audit/durability") && above.audit.durability == Durability::Full {
        set("/audit/durability", json!(config.audit.durability), json!(Durability::Full));
        config.audit.durability = Durability::Full;
    }
    if let Some(theirs) = above.audit.max_artifact_bytes {
        let ours = config.audit.max_artifact_bytes();
        if theirs < ours {
            set("/audit/max_artifact_bytes", json!(ours), json!(theirs));
            config.audit.max_artifact_bytes = Some(theirs);
        }
    }
}

fn narrow_sandbox(
    config: &mut PolicyConfig,
    layer: &Layer,
    set: &mut impl FnMut(&str, Value, Value),
) {
    let above = &layer.file.policy.sandbox;
    let sandbox = &mut config.sandbox;
    if layer.says("/sandbox/enforce") && above.enforce == SandboxEnforcement::Required {
        set("/sandbox/enforce", json!(sandbox.enforce), json!(SandboxEnforcement::Required));
        sandbox.enforce = SandboxEnforcement::Required;
    }
    if layer.says("/sandbox/network") && above.network == ProcessNetwork::None {
        set("/sandbox/network", json!(sandbox.network), json!(ProcessNetwork::None));
        sandbox.network = ProcessNetwork::None;
    }
    if layer.says("/sandbox/read") {
        let was = sandbox.read.clone();
        sandbox.read.retain(|grant| above.read.iter().any(|bound| beneath(grant, bound)));
        set("/sandbox/read", json!(was), json!(sandbox.read));
    }
}

/// The budget that spends less of each.
fn tighter(ours: SessionBudgets, theirs: SessionBudgets) -> SessionBudgets {
    let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    SessionBudgets {
        max_calls: min(ours.max_calls, theirs.max_calls),
        max_bytes: min(ours.max_bytes, theirs.max_bytes),
        max_wall_ms: min(ours.max_wall_ms, theirs.max_wall_ms),
    }
}

/// The hosts both lists allow, written as narrowly as either writes them: `*.example.com`
/// beneath `api.example.com` is `api.example.com`.
fn within(ours: &[String], theirs: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for entry in ours {
        let allowed: Vec<&String> = if theirs.iter().any(|bound| covers(bound, entry)) {
            vec![entry]
        } else {
            theirs.iter().filter(|bound| covers(entry, bound)).collect()
        };
        for host in allowed {
            if !kept.contains(host) {
                kept.push(host.clone());
            }
        }
    }
    kept
}

/// Whether host entry `wide` allows everything `narrow` does.
fn covers(wide: &str, narrow: &str) -> bool {
    let (wide, narrow) = (normal_host(wide), normal_host(narrow));
    if wide == "*" || wide == narrow {
        return true;
    }
    match (wide.strip_prefix("*."), narrow.strip_prefix("*.")) {
        (Some(suffix), Some(inner)) => inner.ends_with(&format!(".{suffix}")),
        (Some(suffix), None) => narrow.ends_with(&format!(".{suffix}")),
        (None, _) => false,
    }
}

fn normal_host(entry: &str) -> String {
    entry.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether the path `grant` lies at or beneath `bound` (as written: `~/.cargo/registry`
/// beneath `~/.cargo`).
fn beneath(grant: &str, bound: &str) -> bool {
    let (grant, bound) = (grant.trim_end_matches('/'), bound.trim_end_matches('/'));
    grant == bound || grant.strip_prefix(bound).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jig_model::policy::PolicyLayerFile;

    fn layer(yaml: Value) -> Layer {
        let file: PolicyLayerFile =
            serde_json::from_value(json!({ "policy": yaml })).expect("layer");
        Layer::new(LayerKind::Machine, "test", file, yaml)
    }

    #[test]
    fn hosts_narrow_to_what_both_allow() {
        let ours = ["*.example.com".to_owned(), "other.org".to_owned(), "*".to_owned()];
        let theirs = ["api.example.com".to_owned(), "*.internal".to_owned()];
        assert_eq!(within(&ours, &theirs), ["api.example.com", "*.internal"]);
        assert!(
            covers("*.example.com", "a.b.example.com") && !covers("*.example.com", "example.com")
        );
        assert!(
            covers("*.example.com", "*.b.example.com")
                && !covers("api.example.com", "*.example.com")
        );
    }

    #[test]
    fn a_layer_narrows_only_what_it_speaks_to() {
        let mut config = PolicyConfig::default();
        config.git.allow_push = true;
        config.sandbox.enforce = SandboxEnforcement::BestEffort;
        config.sandbox.read = vec!["~/.cargo/registry".into(), "/opt/tools".into()];
        config.approvals.ttl_seconds = 3600;
        let mut out = Vec::new();
        narrow(&mut config, &layer(json!({ "git": { "allow_push": false } })), &mut out);
        assert!(!config.git.allow_push);
        assert_eq!(
            config.sandbox.enforce,
            SandboxEnforcement::BestEffort,
            "the layer said nothing of it"
        );
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].setting.as_str(), out[0].layer),
            ("/git/allow_push", LayerKind::Machine)
        );
        let above = json!({ "sandbox": { "enforce": "required", "read": ["~/.cargo"] }, "approvals": { "ttl_seconds": 60 } });
        narrow(&mut config, &layer(above), &mut out);
        assert_eq!(config.sandbox.enforce, SandboxEnforcement::Required);
        assert_eq!(config.sandbox.read, ["~/.cargo/registry"]);
        assert_eq!(config.approvals.ttl_seconds, 60);
    }

    #[test]
    fn a_layer_never_widens() {
        let mut config = PolicyConfig::default();
        config.approvals.self_approval = false;
        config.budgets = Some(SessionBudgets { max_calls: Some(10), ..SessionBudgets::default() });
        let wide = json!({
            "approvals": { "self_approval": true, "ttl_seconds": 99999 },
            "git": { "allow_push": true },
            "budgets": { "max_calls": 1000, "max_bytes": 5 },
            "sandbox": { "enforce": "best_effort", "network": "unfiltered" },
            "audit": { "durability": "effects" },
        });
        let mut out = Vec::new();
        narrow(&mut config, &layer(wide), &mut out);
        assert!(!config.approvals.self_approval && !config.git.allow_push);
        assert_eq!(config.approvals.ttl_seconds, 900);
        assert_eq!(config.budgets.and_then(|b| b.max_calls), Some(10));
        assert_eq!(config.budgets.and_then(|b| b.max_bytes), Some(5), "a new limit narrows");
        assert_eq!(config.sandbox.enforce, SandboxEnforcement::Required);
        assert_eq!(config.sandbox.network, ProcessNetwork::None);
    }
}
