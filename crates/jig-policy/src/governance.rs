//! Governance rules in gert's shape: match a tool by effects, risk, id or contract, and decide
//! `allow`, `require-approval` or `deny`. The most restrictive matching rule wins; with none, a
//! `default` rule applies, and without that, seed 003's deny-by-default: a tool with side effects
//! needs approval, a tool without runs.

use jig_model::runbook::kernel::{GovernanceAction, GovernanceRule};
use jig_model::tool_def::ToolExecution;
use jig_model::{EffectTag, SideEffect, ToolDef};

use crate::decision::Decision;

/// The decision of `rules` for `tool`.
pub fn govern(rules: &[GovernanceRule], tool: &ToolDef) -> Decision {
    let mut matched: Option<Decision> = None;
    let mut fallback: Option<Decision> = None;
    for (i, rule) in rules.iter().enumerate() {
        let name = format!("rules[{i}]");
        match (rule.default, rule.action) {
            (Some(action), _) => {
                fallback.get_or_insert_with(|| {
                    decision(action, name, "the policy's default".to_owned())
                });
            }
            (None, Some(action)) if matches(rule, tool) => {
                let found = decision(action, name, describe(rule));
                matched = Some(match matched {
                    Some(earlier) => earlier.strictest(found),
                    None => found,
                });
            }
            _ => {}
        }
    }
    let mut result = matched.or(fallback).unwrap_or_else(|| builtin_default(tool));
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

fn decision(action: GovernanceAction, rule: String, reason: String) -> Decision {
    Decision { action, rule, reason }
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
