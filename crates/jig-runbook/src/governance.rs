//! A runbook's own governance (kernel-v0 §9): rules over a step's resolved contract. It can only
//! add to what the project's policy asks: the engine still applies the policy to every call, so
//! the stricter of the two always holds.

use jig_model::runbook::Step;
use jig_model::runbook::kernel::{GovernanceAction, GovernanceRule};
use jig_model::runbook::legacy::ApprovalRequirement;

use jig_policy::governance::glob_match;

use crate::contract::risk;
use crate::host::Contract;

/// What the runbook's rules decide about a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Allow, ask a person, or refuse.
    pub action: GovernanceAction,
    /// The rule (`meta.governance.rules[1]`), or `none` when no rule applies.
    pub rule: String,
    /// How many different people must approve, when it asks for approval (`min_approvers`:
    /// the most any matching rule asks).
    pub approvers: u32,
}

/// The strictest matching rule; else the `default` rule; else allow (the project's policy
/// still decides on its own).
pub(crate) fn decide(rules: &[GovernanceRule], tool: Option<&str>, contract: &Contract) -> Verdict {
    let mut matched: Option<Verdict> = None;
    let mut fallback: Option<Verdict> = None;
    for (i, rule) in rules.iter().enumerate() {
        let name = format!("meta.governance.rules[{i}]");
        if let Some(action) = rule.default {
            fallback.get_or_insert(Verdict { action, rule: name, approvers: 1 });
            continue;
        }
        let Some(action) = rule.action else { continue };
        if !matches(rule, tool, contract) {
            continue;
        }
        let approvers = rule.min_approvers.unwrap_or(1).max(1);
        match &mut matched {
            Some(m) if action == m.action && approvers > m.approvers => {
                *m = Verdict { action, rule: name, approvers };
            }
            Some(m) if action <= m.action => {}
            _ => matched = Some(Verdict { action, rule: name, approvers }),
        }
    }
    matched.or(fallback).unwrap_or(Verdict {
        action: GovernanceAction::Allow,
        rule: "none".to_owned(),
        approvers: 1,
    })
}

fn matches(rule: &GovernanceRule, tool: Option<&str>, contract: &Contract) -> bool {
    let risk_ok = rule.risk.is_none_or(|r| r == risk(contract));
    let effects_ok = rule.effects.as_ref().is_none_or(|wanted| {
        wanted.iter().any(|e| match e.as_str() {
            "none" => !contract.side_effects,
            name => contract.effects.iter().any(|have| have == name),
        })
    });
    let tools_ok = rule
        .tools
        .as_ref()
        .is_none_or(|patterns| tool.is_some_and(|t| patterns.iter().any(|p| glob_match(p, t))));
    let contract_ok = rule.contract.as_ref().is_none_or(|wanted| {
        wanted.reads.iter().any(|t| contract.reads.contains(t))
            || wanted.writes.iter().any(|t| contract.writes.contains(t))
    });
    let writes_ok = rule
        .writes
        .as_ref()
        .is_none_or(|wanted| wanted.iter().any(|t| contract.writes.contains(t)));
    risk_ok && effects_ok && tools_ok && contract_ok && writes_ok
}

/// The step's `approvals` raise the runbook governance's verdict: a person (or `min` people)
/// must say go, unless governance refuses the step anyway.
pub(crate) fn raise(verdict: Verdict, step: &Step, id: &str) -> Verdict {
    let Some(wanted) = step.legacy.as_ref().and_then(|d| d.approvals.as_ref()) else {
        return verdict;
    };
    let min = wanted.min.unwrap_or(0);
    if min == 0 || verdict.action == GovernanceAction::Deny {
        return verdict;
    }
    let approvers = if verdict.action == GovernanceAction::RequireApproval {
        verdict.approvers.max(min)
    } else {
        min
    };
    Verdict { action: GovernanceAction::RequireApproval, rule: rule_name(id, wanted), approvers }
}

fn rule_name(id: &str, wanted: &ApprovalRequirement) -> String {
    let roles = if wanted.roles.is_empty() {
        String::new()
    } else {
        format!(", roles {}", wanted.roles.join(", "))
    };
    format!("step `{id}` approvals (min {}{roles})", wanted.min.unwrap_or(1))
}
