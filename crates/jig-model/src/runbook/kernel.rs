//! The file format of `kernel/v0` runbooks (gert's kernel-v0.md and its examples).
//!
//! One `KernelStep` type carries every step type; which fields a type needs is checked by the
//! loader (the kernel's "structural → semantic" phases), so that a missing `tool` on a tool step
//! is reported in words rather than as a failed `oneOf`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::gert_tool::{Contract, FieldType};
use crate::runbook::OutcomeCategory;
use crate::runbook::legacy::EvidenceRequirement;

/// A `kernel/v0` runbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gert kernel/v0 runbook")]
#[schemars(extend("$id" = "https://jig.dev/schemas/runbook-kernel-v0.schema.json"))]
pub struct KernelRunbook {
    /// Always `kernel/v0`.
    #[serde(rename = "apiVersion")]
    pub api_version: KernelApi,
    /// Identity, inputs, constants, governance.
    pub meta: KernelMeta,
    /// The enforced allow-list of tools steps may use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The steps.
    #[schemars(length(min = 1))]
    pub steps: Vec<KernelStep>,
    /// Data for extensions, kept as written (gert reads it for its extensions; Jig ignores it).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extensions: Map<String, Value>,
}

/// `kernel/v0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum KernelApi {
    /// `kernel/v0`.
    #[serde(rename = "kernel/v0")]
    V0,
}

/// `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelMeta {
    /// The runbook's name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `mitigation`, `reference`, `composable` or `rca`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<crate::runbook::legacy::RunbookKind>,
    /// Caller-provided values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, KernelInput>,
    /// Author-fixed values (immutable).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub constants: Map<String, Value>,
    /// Runbook-level governance; may only tighten the project's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<KernelGovernance>,
    /// Environment variables the runbook's tools need (gert's `meta.secrets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretRef>,
    /// Uninterpreted `x-…` metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extensions: Map<String, Value>,
}

/// A secret a runbook needs, by the environment variable that carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    /// The variable's name.
    pub env: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the runbook cannot run without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A runbook input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelInput {
    /// The value's type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<FieldType>,
    /// Whether the caller must provide it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Value when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// A regex the value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Where a host may resolve the value from (gert's `from`: a provider, `prompt`); Jig takes
    /// it from whoever starts the run, else the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// `meta.governance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelGovernance {
    /// Rules, most restrictive match wins.
    #[serde(default)]
    pub rules: Vec<GovernanceRule>,
    /// gert's wait for an approval (`30m`). Jig's approvals follow the project's policy; the
    /// loader says so where a runbook sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_timeout: Option<String>,
}

/// One governance rule: match on risk, effects, tools or contract, or a `default`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GovernanceRule {
    /// Match this risk level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<crate::Risk>,
    /// Match tools with any of these effects (classes Jig knows, or resource tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<crate::EffectTag>>,
    /// Match these tool references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Match contracts that write any of these resources (gert's top-level `writes`: with
    /// `effects`, both must match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Vec<String>>,
    /// Match contracts that read or write these resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<ContractMatch>,
    /// What to do on a match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<GovernanceAction>,
    /// Approvers needed for `require-approval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub min_approvers: Option<u32>,
    /// The fallback action when nothing else matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<GovernanceAction>,
    /// gert's switch promoting contract violations to errors (`deny`). Jig always refuses a
    /// step that relaxes its tool's contract, so the field is read and changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_violations: Option<String>,
}

/// `contract:` matcher in a governance rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractMatch {
    /// Resources read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// Resources written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

/// A governance decision.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum GovernanceAction {
    /// Run.
    Allow,
    /// Ask a person first.
    RequireApproval,
    /// Refuse.
    Deny,
}

impl GovernanceAction {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::RequireApproval => "require-approval",
            Self::Deny => "deny",
        }
    }
}

/// The step types of kernel/v0 (kernel-v0.md §3, §6.5; `invoke` from seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KernelStepType {
    /// Run a tool action.
    Tool,
    /// A human action.
    Manual,
    /// Evaluate assertions.
    Assert,
    /// Conditional fork; one arm runs.
    Branch,
    /// Concurrent arms.
    Parallel,
    /// Structured outcome; stops the run.
    End,
    /// Custom behaviour with a declared contract.
    Extension,
    /// Run another runbook.
    Invoke,
    /// A bounded loop over a block.
    Repeat,
}

/// A kernel/v0 step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelStep {
    /// Unique within the runbook; optional on `end` and `branch` steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The step type.
    #[serde(rename = "type")]
    pub step_type: KernelStepType,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A longer description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Guard: run only when this holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// A jump after this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<NextSpec>,
    /// Iterate the step over a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEach>,
    /// A failure is recorded but does not halt the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_fail: bool,
    /// `tool`: the tool reference (must be in `tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `tool`: the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Inputs, templated.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub inputs: Map<String, Value>,
    /// Spread the keys of named objects into `inputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_from: Option<OneOrMany>,
    /// A contract that tightens the tool's (or, on manual/extension steps, declares one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// `manual`: what the person does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `manual`: evidence to collect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_evidence: Vec<EvidenceRequirement>,
    /// `assert`: the assertions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assert: Vec<KernelAssertion>,
    /// `branch` / `parallel`: the arms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<KernelBranch>,
    /// `end`: the outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<KernelOutcome>,
    /// `extension`: which extension runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
    /// `invoke`: the runbook reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke: Option<String>,
    /// `repeat`: bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatSpec>,
    /// `repeat`: the body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<KernelStep>,
    /// A namespace for the step's outputs, e.g. `round/0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Outputs promoted to the global namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub export: Vec<String>,
    /// Which variables the step may see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// Who performs the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<Principal>,
    /// Time limit, e.g. `30s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9]+(ms|s|m|h)$"))]
    pub timeout: Option<String>,
    /// Uninterpreted `x-…` metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extensions: Map<String, Value>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    /// As a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Self::One(one) => vec![one.clone()],
            Self::Many(many) => many.clone(),
        }
    }
}

/// `next`: a step id, or `{step, max}` for a bounded backward jump.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NextSpec {
    /// Jump forward to this step.
    Step(String),
    /// Jump to a step at most `max` times.
    Bounded(BoundedNext),
}

/// `next: {step, max}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoundedNext {
    /// Target step id.
    pub step: String,
    /// Bound: a number or a template resolving to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
}

impl NextSpec {
    /// The target step id.
    pub fn target(&self) -> &str {
        match self {
            Self::Step(step) => step,
            Self::Bounded(bounded) => &bounded.step,
        }
    }

    /// The bound, if any.
    pub fn max(&self) -> Option<&Value> {
        match self {
            Self::Step(_) => None,
            Self::Bounded(bounded) => bounded.max.as_ref(),
        }
    }
}

/// `for_each`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEach {
    /// The loop variable.
    #[serde(rename = "as")]
    pub as_var: String,
    /// A template resolving to the list.
    pub over: String,
    /// Key each iteration's outputs by this template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Run iterations as parallel branches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parallel: bool,
}

/// One assertion of an `assert` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelAssertion {
    /// The comparison.
    #[serde(rename = "type")]
    pub assertion_type: AssertionType,
    /// The value under test, templated.
    #[serde(default)]
    pub value: Value,
    /// What it is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The regex of a `matches` assertion (gert's field; `expected` works too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Shown when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Assertion comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssertionType {
    /// `value == expected`.
    Equals,
    /// `value != expected`.
    NotEquals,
    /// `expected` is a substring of `value`.
    Contains,
    /// It is not.
    NotContains,
    /// `value` matches the regex `expected`.
    Matches,
    /// `value` is defined and not empty.
    Exists,
    /// `value` is true.
    True,
    /// `value` is false.
    False,
}

/// An arm of `branch` or `parallel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelBranch {
    /// `branch`: a condition template, or `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// A name for people and traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What runs in this arm.
    #[schemars(length(min = 1))]
    pub steps: Vec<KernelStep>,
}

/// `outcome` of an `end` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelOutcome {
    /// The fixed category.
    pub category: OutcomeCategory,
    /// Domain-specific meaning, e.g. `dns_fixed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Extra details, templated.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub meta: Map<String, Value>,
}

/// `repeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// Maximum iterations.
    #[schemars(range(min = 1))]
    pub max: u32,
    /// Stop when this holds after an iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

/// `visibility`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Visibility {
    /// Variable path globs the step may see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Variable path globs hidden from the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// `principal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Principal {
    /// `system`, `human` or `agent`.
    pub kind: PrincipalKind,
    /// Stable identifier.
    pub id: String,
    /// Functional role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// For agents: the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Who acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PrincipalKind {
    /// The kernel itself.
    System,
    /// A person.
    Human,
    /// An automated agent.
    Agent,
}
