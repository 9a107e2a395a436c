//! The rules of a manifest's `policy:` that its schema cannot express: each must be enforceable
//! before the first call, or the project does not load (fail-closed).

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::policy::{PolicyConfig, RULE_IDS};

use crate::located::{Located, Suggest};

/// Problems of `policy` (at `/policy` of `manifest`), one part of the policy at a time.
pub(crate) fn check(policy: &PolicyConfig, manifest: &Located) -> Vec<Diagnostic> {
    let mut found = Found { out: Vec::new(), manifest };
    shell_and_network(policy, &mut found);
    rules(policy, &mut found);
    mcp_names(policy, &mut found);
    mcp_resources(policy, &mut found);
    plans(policy, &mut found);
    effect_classes(policy, &mut found);
    validators(policy, &mut found);
    found.out
}

/// The problems found so far, each placed at its pointer in the manifest.
struct Found<'a> {
    out: Vec<Diagnostic>,
    manifest: &'a Located,
}

impl Found<'_> {
    fn error(&mut self, message: String, pointer: impl AsRef<str>) {
        self.push(Diagnostic::error(codes::POLICY, message), pointer.as_ref());
    }

    fn push(&mut self, diagnostic: Diagnostic, pointer: &str) {
        self.out.push(self.manifest.at(diagnostic, pointer));
    }
}

/// `shell_allow` patterns compile; allowed domains are host names.
fn shell_and_network(policy: &PolicyConfig, found: &mut Found) {
    for (i, pattern) in policy.shell_allow.iter().enumerate() {
        if let Err(e) = regex::Regex::new(pattern) {
            found.error(
                format!("`shell_allow` pattern does not compile: {e}"),
                format!("/policy/shell_allow/{i}"),
            );
        }
    }
    for (i, domain) in policy.network.allowed_domains.iter().enumerate() {
        let name = domain.strip_prefix("*.").unwrap_or(domain);
        let valid = !name.is_empty()
            && name.split('.').all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !valid {
            found.error(
                format!(
                    "`{domain}` is not a host name (write `example.com` or `*.example.com`, without scheme or port)"
                ),
                format!("/policy/network/allowed_domains/{i}"),
            );
        }
    }
}

/// A rule has an action or is the default, never both; a default takes no matchers.
fn rules(policy: &PolicyConfig, found: &mut Found) {
    for (i, rule) in policy.rules.iter().enumerate() {
        let pointer = format!("/policy/rules/{i}");
        match (rule.action, rule.default) {
            (Some(_), Some(_)) => {
                found.error("a rule has both `action` and `default`".into(), pointer)
            }
            (None, None) => {
                found.error("a rule needs `action` (or is a `default`)".into(), pointer)
            }
            (None, Some(_))
                if rule.risk.is_some()
                    || rule.effects.is_some()
                    || rule.tools.is_some()
                    || rule.contract.is_some() =>
            {
                found.error(
                    "a `default` rule matches everything; it takes no matchers".into(),
                    pointer,
                )
            }
            _ => {}
        }
    }
}

/// MCP names: what MCP allows in a tool name, each given to one tool only.
fn mcp_names(policy: &PolicyConfig, found: &mut Found) {
    let mut named = std::collections::BTreeMap::new();
    for (id, name) in &policy.mcp.names {
        let pointer = format!("/policy/mcp/names/{}", id.replace('~', "~0").replace('/', "~1"));
        let valid = (1..=128).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            found.error(
                format!("`{name}` is no MCP tool name (1 to 128 of A-Z, a-z, 0-9, `_`, `-`, `.`)"),
                pointer,
            );
        } else if let Some(other) = named.insert(name, id) {
            found.error(format!("`{name}` is already the MCP name of `{other}`"), pointer);
        }
    }
}

/// MCP resources: URIs a client can ask for, each served once, none in Jig's own scheme; and
/// how long a stream is held.
fn mcp_resources(policy: &PolicyConfig, found: &mut Found) {
    let mut uris = std::collections::BTreeSet::new();
    for (i, resource) in policy.mcp.resources.iter().enumerate() {
        let pointer = format!("/policy/mcp/resources/{i}/uri");
        let uri = &resource.uri;
        let scheme_ok = uri.split_once("://").is_some_and(|(scheme, rest)| {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        });
        let parts = resource.parts();
        let parts_ok = uri.matches('{').count() == uri.matches('}').count()
            && parts.len() == uri.matches('{').count()
            && parts.iter().all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !scheme_ok || !parts_ok {
            found.error(
                format!(
                    "`{uri}` is no resource URI (write `scheme://path`, with `{{name}}` for a part a client fills)"
                ),
                pointer,
            );
        } else if uri.starts_with("jig://") {
            found.error(format!("`{uri}`: the `jig://` scheme is the audit's own"), pointer);
        } else if !uris.insert(uri.as_str()) {
            found.error(format!("`{uri}` is served twice"), pointer);
        }
    }
    if let Some(hold) = &policy.mcp.stream_hold
        && jig_model::duration::parse_duration(hold).is_none_or(|d| d.is_zero())
    {
        found.error(
            format!("`{hold}` is no duration (a whole number and a unit: `500ms`, `30s`)"),
            "/policy/mcp/stream_hold",
        );
    }
}

/// The plans' engines: an address Jig can reach, a poll interval it can keep.
fn plans(policy: &PolicyConfig, found: &mut Found) {
    let plans = &policy.plans;
    if let Some(host) = &plans.docker.host
        && !(host.starts_with("unix:///")
            || host.starts_with("tcp://")
            || host.starts_with("https://"))
    {
        found.error(
            format!(
                "`{host}` is no Docker engine address (write `unix:///path/to.sock` or `tcp://host:2376`)"
            ),
            "/policy/plans/docker/host",
        );
    }
    if plans
        .docker
        .host
        .as_deref()
        .is_some_and(|h| h.starts_with("tcp://") || h.starts_with("https://"))
        && plans.docker.tls.is_none()
    {
        found.error(
            "a Docker engine over TCP needs `tls` (ca, cert, key): plans are not sent in the clear"
                .into(),
            "/policy/plans/docker/host",
        );
    }
    if let Some(poll) = &plans.slurm.poll
        && jig_model::duration::parse_duration(poll).is_none_or(|d| d.is_zero())
    {
        found.error(
            format!("`{poll}` is no poll interval (a whole number and a unit: `500ms`, `5s`)"),
            "/policy/plans/slurm/poll",
        );
    }
    if plans.hybrid.runtime.first().is_some_and(|program| program.trim().is_empty()) {
        found.error(
            "`plans.hybrid.runtime` must start with a program".into(),
            "/policy/plans/hybrid/runtime/0",
        );
    }
}

/// A resource tag spelled like a class Jig knows is most likely that class misspelled: as
/// written, the rule would match only tools tagged with the misspelling.
fn effect_classes(policy: &PolicyConfig, found: &mut Found) {
    const CLASSES: [&str; 5] = ["none", "read", "write", "network", "exec"];
    for (i, rule) in policy.rules.iter().enumerate() {
        for (j, effect) in rule.effects.iter().flatten().enumerate() {
            if let jig_model::EffectTag::Resource(tag) = effect
                && let Some(class) = crate::located::did_you_mean(tag, CLASSES)
            {
                let diagnostic = Diagnostic::warning(
                    codes::POLICY,
                    format!(
                        "`{tag}` is no side-effect class ({}); the rule matches only tools tagged `{tag}`",
                        CLASSES.join(", ")
                    ),
                )
                .with_hint(format!("did you mean `{class}`?"));
                found.push(diagnostic, &format!("/policy/rules/{i}/effects/{j}"));
            }
        }
    }
}

/// Validators name rules that exist.
fn validators(policy: &PolicyConfig, found: &mut Found) {
    for (i, validator) in policy.validators.iter().enumerate() {
        if jig_model::policy::RuleId::parse(&validator.rule).is_none() {
            let diagnostic =
                Diagnostic::error(codes::POLICY, format!("unknown rule `{}`", validator.rule))
                    .suggest_or(
                        &validator.rule,
                        RULE_IDS,
                        "the rule ids are those of seed 002 §7 (docs/policy.md)",
                    );
            found.push(diagnostic, &format!("/policy/validators/{i}/rule"));
        }
    }
}
