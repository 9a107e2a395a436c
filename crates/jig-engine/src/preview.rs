//! What a call would meet, before it is made: its arguments checked against the input schema
//! and the policy's decision with the rule that made it. Nothing runs and nothing is audited, so
//! a form can ask on every change.

use jig_model::runbook::kernel::GovernanceAction;
use jig_policy::{Decision, Policy};
use serde::Serialize;
use serde_json::Value;

use crate::validation::Problem;
use crate::{Engine, EngineError};

/// The answer of [`Engine::preview`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Preview {
    /// The tool.
    pub tool: String,
    /// Its version.
    pub version: String,
    /// Whether the arguments match the input schema.
    pub valid: bool,
    /// Where they do not.
    pub problems: Vec<Problem>,
    /// What the policy would decide (absent when the arguments are invalid: the call would fail
    /// with `E_VALIDATION_FAIL` before any decision).
    pub decision: Option<Decision>,
    /// Whether the caller could approve their own request (`approvals.self_approval`), when the
    /// decision asks for approval.
    pub self_approval: Option<bool>,
}

impl Engine {
    /// Check `args` for `tool` and say what the policy would decide for `session`, as
    /// [`Engine::dispatch`] would, without running or recording anything.
    pub async fn preview(
        &self,
        tool: &str,
        args: &Value,
        session: &str,
    ) -> Result<Preview, EngineError> {
        let registry = self.registry();
        let definition = registry.get(tool).ok_or_else(|| EngineError::NoTool(tool.to_owned()))?;
        let problems = self.validators.check(&definition, true, args);
        let valid = problems.is_empty();
        let mut preview = Preview {
            tool: definition.id.clone(),
            version: definition.version.clone(),
            valid,
            problems,
            decision: None,
            self_approval: None,
        };
        if valid {
            let bytes_in = serde_json::to_vec(args).map_or(0, |b| b.len() as u64);
            let decision =
                self.decide(&registry.policy, &definition, args, session, bytes_in).await?;
            if decision.action == GovernanceAction::RequireApproval {
                preview.self_approval = Some(registry.policy.config().approvals.self_approval);
            }
            preview.decision = Some(decision);
        }
        Ok(preview)
    }

    /// The policy's decision for a call, the session's budgets included: the one decision
    /// [`Engine::dispatch`] and [`Engine::preview`] both make.
    pub(crate) async fn decide(
        &self,
        policy: &Policy,
        tool: &jig_model::ToolDef,
        args: &Value,
        session: &str,
        bytes_in: u64,
    ) -> Result<Decision, EngineError> {
        let mut decision = policy.decide(tool, args);
        if let Some(budgets) = policy.config().budgets {
            let (usage, _) = self.budget(session).await?;
            if let Err(denial) = jig_policy::budget::check(&budgets, &usage, bytes_in) {
                decision = decision.strictest(denial.into());
            }
        }
        Ok(decision)
    }
}
