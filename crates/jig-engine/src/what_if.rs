//! What-if: a draft policy replayed against the audit history. Each past call's tool and
//! arguments are decided again by the draft, beside what the policy of the day decided, so a
//! team sees which calls a change would now allow, ask about or deny — and by which rule —
//! before anyone commits it. Nothing runs and nothing is recorded.
//!
//! The draft's rules and checks decide as they would for a new call; session budgets are not
//! replayed (they depend on what else ran in the session at the time).

use jig_model::policy::PolicyConfig;
use jig_policy::{Decision, Policy};
use serde::Serialize;
use serde_json::Value;

use crate::history::{MAX_PAGE, RunQuery};
use crate::{Engine, EngineError, RunState};

/// The most calls one what-if replays.
pub const MAX_WHAT_IF: usize = 1000;

/// What a past call met then, and what it would meet under the draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WhatIfCall {
    /// The request.
    pub request_id: String,
    /// The tool.
    pub tool: String,
    /// Who called.
    pub principal: Option<String>,
    /// When (µs since the epoch).
    pub created_us: i64,
    /// The action then (`allow`, `require-approval`, `deny`), as recorded.
    pub was: String,
    /// The rule that decided then.
    pub was_rule: Option<String>,
    /// What the draft decides.
    pub now: Decision,
    /// Whether the action differs.
    pub changed: bool,
}

/// The draft's verdicts on the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WhatIf {
    /// The draft's `policy_hash`.
    pub draft_hash: String,
    /// Every replayed call, newest first.
    pub calls: Vec<WhatIfCall>,
    /// Calls that could not be replayed, with why (a tool no longer in the registry, a call
    /// with no recorded arguments).
    pub skipped: Vec<String>,
}

/// Read a draft policy (the `policy:` section, as YAML or JSON), strictly.
pub fn parse_draft(text: &str) -> Result<PolicyConfig, EngineError> {
    let document = jig_load::yaml::parse(text, &jig_load::yaml::Caps::DEFAULT).map_err(|e| {
        let at =
            e.pos.map(|p| format!(" (line {}, column {})", p.line, p.column)).unwrap_or_default();
        EngineError::BadDraft(format!("{}{at}", e.message))
    })?;
    serde_json::from_value(document.value).map_err(|e| EngineError::BadDraft(e.to_string()))
}

/// The action a run met, from its state and decision packet.
fn recorded_action(state: RunState, decision: Option<&Value>) -> String {
    if let Some(action) = decision.and_then(|d| d.get("action")).and_then(Value::as_str) {
        return action.to_owned();
    }
    match state {
        RunState::Denied => "deny",
        RunState::PendingApproval => "require-approval",
        _ => "allow",
    }
    .to_owned()
}

impl Engine {
    /// Decide the `last` calls matching `query` (newest first, at most [`MAX_WHAT_IF`]) again
    /// under `draft`.
    pub async fn what_if(
        &self,
        draft: PolicyConfig,
        mut query: RunQuery,
        last: usize,
    ) -> Result<WhatIf, EngineError> {
        // The draft is a project's: the layers above still hold over it.
        let above = self.registry().policy.layers().cloned().collect();
        let policy = Policy::layered(draft, above)?;
        let last = last.clamp(1, MAX_WHAT_IF);
        let history = self.history();
        let mut calls = Vec::new();
        let mut skipped = Vec::new();
        query.limit = MAX_PAGE;
        'pages: loop {
            let page = history.runs(&query).await?;
            for run in page.runs {
                if calls.len() + skipped.len() >= last {
                    break 'pages;
                }
                let Some(tool) = self.get(&run.tool) else {
                    skipped.push(format!(
                        "{}: `{}` is no longer in the registry",
                        run.request_id, run.tool
                    ));
                    continue;
                };
                let Some(detail) = history.run(&run.request_id).await? else { continue };
                let packet =
                    |kind: &str| detail.packets.iter().find(|p| p.kind == kind).map(|p| &p.data);
                let Some(args) = packet("tool.call.request").and_then(|r| r.get("args")) else {
                    skipped.push(format!("{}: no recorded arguments", run.request_id));
                    continue;
                };
                let was = recorded_action(run.state, packet("tool.call.decision"));
                let now = policy.decide(&tool, args);
                calls.push(WhatIfCall {
                    changed: now.action.as_str() != was,
                    request_id: run.request_id,
                    tool: run.tool,
                    principal: run.principal,
                    created_us: run.created_us,
                    was,
                    was_rule: run.rule,
                    now,
                });
            }
            match page.next {
                Some(next) => query.after = Some(next),
                None => break,
            }
        }
        Ok(WhatIf { draft_hash: policy.hash().to_owned(), calls, skipped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_is_read_strictly_and_its_errors_say_where() {
        let draft = parse_draft("rules:\n  - { risk: low, action: allow }\n").expect("valid");
        assert_eq!(draft.rules.len(), 1);
        let error = parse_draft("rulez: []\n").expect_err("unknown field");
        assert!(error.to_string().contains("rulez"), "{error}");
        let error = parse_draft("rules: [\n").expect_err("broken YAML");
        assert!(error.to_string().contains("line"), "{error}");
        assert_eq!(recorded_action(RunState::Denied, None), "deny");
        assert_eq!(
            recorded_action(
                RunState::Succeeded,
                Some(&serde_json::json!({"action": "require-approval"}))
            ),
            "require-approval"
        );
    }
}
