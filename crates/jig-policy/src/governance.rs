//! Governance rules in gert's shape: match a tool by effects, risk, id or contract, and decide
//! `allow`, `require-approval` or `deny`. The most restrictive matching rule wins; with none, a
//! `default` rule applies, and without that, seed 003's deny-by-default: a tool with side effects
//! needs approval, a tool without runs.

use jig_model::policy::ToolMatch;
use jig_model::runbook::kernel::{GovernanceAction, GovernanceRule};
use jig_model::tool_def::ToolExecution;
use jig_model::{EffectTag, SideEffect, ToolDef};

use crate::decision::Decision;
use crate::layers::Layer;

/// The decision of `rules` for `tool`.
pub fn govern(rules: &[GovernanceRule], tool: &ToolDef) -> Decision {
    let mut result =
        weigh(rules, tool, |i| format!("rules[{i}]")).unwrap_or_else(|| builtin_default(tool));
    if let ToolExecution::Gert(gert) = &tool.execution
        && gert.requires_approval
    {
        result = result.strictest(Decision::require_approval(
            "tool.requires_approval",
            "the tool's action is marked `requires_approval`",
        ));
    }
    result
}

/// What a layer above the project says of `tool`: its matching rules, strictest first, or its
/// own `default`; `None` when it says nothing (the built-in default is the project's to apply).
pub fn govern_above(layer: &Layer, tool: &ToolDef) -> Option<Decision> {
    weigh(&layer.file.policy.rules, tool, |i| layer.rule_name(i)).map(|d| {
        let reason = format!("the {} layer's policy: {}", layer.kind, d.reason);
        Decision { reason, ..d.by(layer.kind) }
    })
}

/// Whether a layer above takes the project's `allow` of `tool` away, and the decision then:
/// the built-in default, credited to the layer's limit.
pub fn limit_project_allow(layer: &Layer, tool: &ToolDef) -> Option<Decision> {
    let limits = &layer.file.project;
    let outside =
        limits.may_allow.as_ref().is_some_and(|may| !may.iter().any(|m| matches_tool(m, tool)));
    let barred = limits.may_not_allow.iter().position(|m| matches_tool(m, tool));
    let rule = match (barred, outside) {
        (Some(i), _) => format!("{}:project.may_not_allow[{i}]", layer.kind),
        (None, true) => format!("{}:project.may_allow", layer.kind),
        (None, false) => return None,
    };
    let fallback = builtin_default(tool);
    let reason = format!(
        "the {} layer does not let the project's rules allow `{}`; {}",
        layer.kind,
        tool.id,
        match fallback.action {
            GovernanceAction::Allow => "it has no side effects, so it runs",
            _ => "it has side effects, so it needs approval",
        }
    );
    Some(Decision::new(fallback.action, rule, reason).by(layer.kind))
}

/// The strictest of the rules matching `tool`, or the first `default`; `None` when neither.
fn weigh(
    rules: &[GovernanceRule],
    tool: &ToolDef,
    name: impl Fn(usize) -> String,
) -> Option<Decision> {
    let mut matched: Option<Decision> = None;
    let mut fallback: Option<Decision> = None;
    for (i, rule) in rules.iter().enumerate() {
        match (rule.default, rule.action) {
            (Some(action), _) => {
                fallback
                    .get_or_insert_with(|| Decision::new(action, name(i), "the policy's default"));
            }
            (None, Some(action)) if matches(rule, tool) => {
                let found = Decision::new(action, name(i), describe(rule));
                matched = Some(match matched {
                    Some(earlier) => earlier.strictest(found),
                    None => found,
                });
            }
            _ => {}
        }
    }
    matched.or(fallback)
}

fn matches_tool(wanted: &ToolMatch, tool: &ToolDef) -> bool {
    let rule = GovernanceRule {
        risk: wanted.risk,
        effects: wanted.effects.clone(),
        tools: wanted.tools.clone(),
        writes: None,
        contract: None,
        action: None,
        min_approvers: None,
        default: None,
        contract_violations: None,
    };
    matches(&rule, tool)
}

/// Seed 003: side effects are deny-by-default, i.e. need a person's approval.
fn builtin_default(tool: &ToolDef) -> Decision {
    if tool.has_side_effects() {
        let effects: Vec<&str> = tool
            .side_effects
            .iter()
            .map(|e| e.as_str())
            .chain(tool.effect_tags().iter().map(String::as_str))
            .collect();
        Decision::require_approval(
            "default.side_effects",
            format!(
                "`{}` has side effects ({}); no rule allows it, so it needs approval",
                tool.id,
                effects.join(", ")
            ),
        )
    } else {
        Decision::allow("default.no_side_effects", format!("`{}` has no side effects", tool.id))
    }
}

fn matches(rule: &GovernanceRule, tool: &ToolDef) -> bool {
    let effects = rule.effects.as_ref().is_none_or(|wanted| {
        wanted.iter().any(|effect| match effect {
            EffectTag::Known(SideEffect::None) => {
                tool.side_effects.is_empty() && tool.effect_tags().is_empty()
            }
            EffectTag::Known(other) => tool.side_effects.contains(other),
            EffectTag::Resource(tag) => tool.effect_tags().contains(tag),
        })
    });
    let risk = rule.risk.is_none_or(|risk| risk == tool.risk);
    let tools =
        rule.tools.as_ref().is_none_or(|patterns| patterns.iter().any(|p| glob_match(p, &tool.id)));
    let contract = rule.contract.as_ref().is_none_or(|wanted| match &tool.execution {
        ToolExecution::Gert(gert) => {
            wanted.reads.iter().any(|tag| gert.reads.contains(tag))
                || wanted.writes.iter().any(|tag| gert.writes.contains(tag))
        }
        ToolExecution::Toolpack(_) => false,
    });
    let writes = rule.writes.as_ref().is_none_or(|wanted| match &tool.execution {
        ToolExecution::Gert(gert) => wanted.iter().any(|tag| gert.writes.contains(tag)),
        ToolExecution::Toolpack(_) => false,
    });
    effects && risk && tools && contract && writes
}

fn describe(rule: &GovernanceRule) -> String {
    let mut parts = Vec::new();
    if let Some(effects) = &rule.effects {
        parts.push(format!(
            "effects {}",
            effects.iter().map(|e| e.as_str()).collect::<Vec<_>>().join("/")
        ));
    }
    if let Some(risk) = rule.risk {
        parts.push(format!("risk {}", risk.as_str()));
    }
    if let Some(tools) = &rule.tools {
        parts.push(format!("tools {}", tools.join("/")));
    }
    if rule.contract.is_some() || rule.writes.is_some() {
        parts.push("its contract".to_owned());
    }
    if parts.is_empty() {
        "a rule for every tool".to_owned()
    } else {
        format!("a rule on {}", parts.join(", "))
    }
}

/// `*` matches any run of characters, everything else itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else { return pattern == text };
    let Some(mut remaining) = text.strip_prefix(head) else { return false };
    let pieces: Vec<&str> = rest.split('*').collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i == pieces.len() - 1 {
            return remaining.ends_with(piece);
        }
        match remaining.find(piece) {
            Some(at) => remaining = &remaining[at + piece.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("git_*", "git_push"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("acme.*.deploy", "acme.web.deploy"));
        assert!(!glob_match("git_*", "fs_list"));
        assert!(glob_match("fs_delete", "fs_delete"));
        assert!(!glob_match("fs_delete", "fs_delete2"));
    }
}
