//! What the policy says about one call, and why.

use jig_model::policy::LayerKind;
use jig_model::runbook::kernel::GovernanceAction;
use serde::{Deserialize, Serialize};

/// The policy's answer for one call: its action, the rule that decided, and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decision {
    /// `allow`, `require-approval` or `deny`.
    pub action: GovernanceAction,
    /// The deciding rule: a seed 002 §7 id (`sec.paths.sandbox`), `rules[i]` of the manifest's
    /// governance, `default.side_effects`, or another policy key (`git.allow_push`).
    pub rule: String,
    /// Why, for people.
    pub reason: String,
    /// The policy layer whose rule decided (the project's unless a layer above did; only a
    /// layer above is written out).
    #[serde(default, skip_serializing_if = "LayerKind::is_project")]
    pub layer: LayerKind,
}

impl Decision {
    /// The project's decision `action`, by `rule`, for `reason`.
    pub fn new(
        action: GovernanceAction,
        rule: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self { action, rule: rule.into(), reason: reason.into(), layer: LayerKind::Project }
    }

    /// An allowing decision.
    pub fn allow(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(GovernanceAction::Allow, rule, reason)
    }

    /// A denial.
    pub fn deny(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(GovernanceAction::Deny, rule, reason)
    }

    /// A decision that needs a person's approval.
    pub fn require_approval(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(GovernanceAction::RequireApproval, rule, reason)
    }

    /// The same decision, credited to `layer`.
    #[must_use]
    pub fn by(mut self, layer: LayerKind) -> Self {
        self.layer = layer;
        self
    }

    /// The more restrictive of two decisions (deny > require-approval > allow); the first wins
    /// a tie, so earlier rules keep their names.
    #[must_use]
    pub fn strictest(self, other: Self) -> Self {
        if other.action > self.action { other } else { self }
    }

    /// Whether the call may run without anything else.
    pub fn is_allow(&self) -> bool {
        self.action == GovernanceAction::Allow
    }
}

/// A refusal by one of the built-in checks (sandbox, network, shell, git).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The seed 002 §7 rule id (or policy key) that refused.
    pub rule: &'static str,
    /// Why.
    pub reason: String,
}

impl Denial {
    /// A denial by `rule`.
    pub fn new(rule: &'static str, reason: impl Into<String>) -> Self {
        Self { rule, reason: reason.into() }
    }
}

impl From<Denial> for Decision {
    fn from(denial: Denial) -> Self {
        Decision::deny(denial.rule, denial.reason)
    }
}
