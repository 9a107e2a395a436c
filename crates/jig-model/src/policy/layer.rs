//! Policy layers above the project: the machine's (`/etc/jig/policy.yaml` or
//! `$JIG_MANAGED_POLICY`), a person's (`$XDG_CONFIG_HOME/jig/policy.yaml`) and a team's. Each
//! holds the manifest's `policy:` schema; across layers the most restrictive decision wins, so
//! the project being governed can narrow what a layer above says and never widen it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PolicyConfig;

/// Where a rule or a setting of the effective policy came from.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// The machine's managed policy, set by whoever administers it.
    Machine,
    /// The team's, kept in the team server's store and changed by its admins.
    Team,
    /// The person running Jig's own.
    Person,
    /// The project's `jig.yaml`: the one the governed repository writes. (What a decision
    /// names when it names no layer.)
    #[default]
    Project,
}

impl LayerKind {
    /// The layers above the project, strongest first: the order a tie is credited in.
    pub const ABOVE: [LayerKind; 3] = [Self::Machine, Self::Team, Self::Person];

    /// How it is spelled in files, rule names and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Machine => "machine",
            Self::Team => "team",
            Self::Person => "person",
            Self::Project => "project",
        }
    }

    /// Whether it is the project's own (what records leave unwritten).
    pub fn is_project(&self) -> bool {
        *self == Self::Project
    }
}

impl std::fmt::Display for LayerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One layer above the project, as read: what the loader hands on and the policy weighs.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Which.
    pub kind: LayerKind,
    /// Where it was read from: a file, or the team's store.
    pub source: String,
    /// Its contents.
    pub file: PolicyLayerFile,
    /// Its `policy:` as written: which settings it speaks to (a default it did not write is
    /// no word of its own).
    pub said: Value,
}

impl Layer {
    /// A layer of `kind` read from `source`, whose `policy:` was written as `said`.
    pub fn new(
        kind: LayerKind,
        source: impl Into<String>,
        file: PolicyLayerFile,
        said: Value,
    ) -> Self {
        Self { kind, source: source.into(), file, said }
    }

    /// Whether the layer wrote the setting at `pointer` (`/network/allowed_domains`).
    pub fn says(&self, pointer: &str) -> bool {
        self.said.pointer(pointer).is_some()
    }

    /// The name its `rules[i]` goes by in decisions and the record: `machine:rules[0]`.
    pub fn rule_name(&self, index: usize) -> String {
        format!("{}:rules[{index}]", self.kind)
    }
}

/// A layer's file: a `policy:` section as in `jig.yaml`, and what the project's own rules may
/// still do beneath it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyLayerFile {
    /// The same schema as a manifest's `policy:`.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Limits on the project's `allow` rules.
    #[serde(default, skip_serializing_if = "ProjectLimits::is_empty")]
    pub project: ProjectLimits,
}

/// Where a project's `allow` counts. Beneath a layer that says so, a project rule that allows
/// a tool outside these is no allow: the tool falls back to the default (side effects need a
/// person's approval).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectLimits {
    /// The project may allow only tools one of these matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may_allow: Option<Vec<ToolMatch>>,
    /// The project may not allow tools any of these matches ("no `exec` without a person").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_not_allow: Vec<ToolMatch>,
}

impl ProjectLimits {
    /// Whether it limits nothing.
    pub fn is_empty(&self) -> bool {
        self.may_allow.is_none() && self.may_not_allow.is_empty()
    }
}

/// Which tools: every field given must match (as in a governance rule).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolMatch {
    /// Tools with any of these effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<crate::EffectTag>>,
    /// Tools of this risk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<crate::Risk>,
    /// Tools whose ids match one of these (`*` globs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// The keys of `policy:` a layer above the project may set. The rest (`ast`, `validators`,
/// `mcp`, `plans`, `replay`) describe the project itself, or run commands, or name where data
/// goes: a layer that sets one is refused rather than silently ignored.
pub const LAYER_KEYS: [&str; 9] = [
    "version",
    "network",
    "shell_allow",
    "git",
    "rules",
    "approvals",
    "budgets",
    "sandbox",
    "audit",
];
