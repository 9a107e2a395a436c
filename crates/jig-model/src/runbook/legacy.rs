//! The file format of `runbook/v0` and `runbook/v1` (gert's `runbook-v0.json` /
//! `runbook-v1.json`, plus the reference syntax of seed 004).
//!
//! Both versions share one shape. The differences seed 004 makes — v1 rejects `imports` and
//! the map form of `tools` — are checked by the loader, so that the message can say why.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A `runbook/v0` or `runbook/v1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gert runbook/v0 and runbook/v1")]
#[schemars(extend("$id" = "https://jig.dev/schemas/runbook-v1.schema.json"))]
pub struct LegacyRunbook {
    /// `runbook/v0` or `runbook/v1`.
    #[serde(rename = "apiVersion")]
    pub api_version: LegacyApi,
    /// v0 only: runbooks and tools pulled in by path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<Imports>,
    /// Tools the runbook may use: a list of names (v1), or in v0 also a name → path map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolList>,
    /// Identity, inputs and governance.
    pub meta: LegacyMeta,
    /// A flat list of steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<LegacyStep>,
    /// A tree of steps, branches and iterations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<TreeNode>,
}

/// `runbook/v0` or `runbook/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum LegacyApi {
    /// `runbook/v0`.
    #[serde(rename = "runbook/v0")]
    V0,
    /// `runbook/v1`.
    #[serde(rename = "runbook/v1")]
    V1,
}

/// v0 `imports`: a list of paths (seed 004) or a name → path map (runbook-v0.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Imports {
    /// A list of paths.
    List(Vec<String>),
    /// Name → path.
    Map(BTreeMap<String, String>),
}

/// `tools`: a list of names, or (v0 only) a name → path map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ToolList {
    /// Names, resolved by seed 004's algorithm.
    List(Vec<String>),
    /// v0: name → relative path of the tool file.
    Map(BTreeMap<String, String>),
}

/// `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyMeta {
    /// The runbook's name.
    pub name: String,
    /// `mitigation`, `reference`, `composable` or `rca`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<RunbookKind>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where a compiled runbook came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceMeta>,
    /// Scenario name → path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scenarios: BTreeMap<String, String>,
    /// Variables, name → template.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vars: BTreeMap<String, String>,
    /// Inputs, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, LegacyInput>,
    /// Defaults for steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Defaults>,
    /// Command allow/deny lists, redaction, evidence policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<LegacyGovernance>,
    /// Prose for reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prose: Option<Prose>,
}

/// A runbook's purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunbookKind {
    /// Fixes something.
    Mitigation,
    /// Documents something.
    Reference,
    /// Meant to be invoked by other runbooks.
    Composable,
    /// Root-cause analysis.
    Rca,
}

/// `meta.source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceMeta {
    /// The source document.
    pub file: String,
    /// When it was compiled.
    pub compiled_at: String,
    /// By what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_by: Option<String>,
    /// With which model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Hash of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_hash: Option<String>,
}

/// A v0/v1 input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyInput {
    /// Where the value comes from (`prompt`, `icm.title`, …).
    pub from: String,
    /// A regex the value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// An example value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// `meta.defaults`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Default step timeout, e.g. `30s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9]+(s|m|h)$"))]
    pub timeout: Option<String>,
}

/// v0/v1 `meta.governance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyGovernance {
    /// Command patterns that may run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_commands: Vec<String>,
    /// Command patterns that may not run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_commands: Vec<String>,
    /// Environment variables never passed on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_env_vars: Vec<String>,
    /// Output redactions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<crate::gert_tool::RedactionRule>,
    /// Evidence policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidencePolicy>,
}

/// `governance.evidence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvidencePolicy {
    /// Manual steps must collect evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_for_manual: Option<bool>,
    /// Keep whole stdout as evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_full_stdout: Option<bool>,
}

/// `meta.prose`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Prose {
    /// Background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    /// Safety notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<String>,
    /// Prerequisites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prerequisites: Option<String>,
    /// What to do after mitigating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_mitigation: Option<String>,
    /// Links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<ProseReference>,
    /// Owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ownership: Option<ProseOwnership>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A link in `prose.references`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProseReference {
    /// Title.
    pub title: String,
    /// URL.
    pub url: String,
}

/// `prose.ownership`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProseOwnership {
    /// Owning team.
    pub team: String,
    /// Contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// A node of `tree`: exactly one of `step`, `iterate` or `branches`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeNode {
    /// A step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<LegacyStep>,
    /// A bounded loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterate: Option<IterateBlock>,
    /// Conditional arms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branches: Option<Vec<LegacyBranch>>,
}

/// A conditional arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyBranch {
    /// A condition template, or `default`.
    pub condition: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What runs when the condition holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<TreeNode>,
}

/// `iterate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IterateBlock {
    /// Upper bound of iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max: Option<u32>,
    /// Stop condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// A list to iterate over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over: Option<String>,
    /// The loop variable.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_var: Option<String>,
    /// The body.
    #[schemars(length(min = 1))]
    pub steps: Vec<TreeNode>,
}

/// The step types of v0/v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LegacyStepType {
    /// A command.
    Cli,
    /// A human action.
    Manual,
    /// Another runbook.
    Invoke,
    /// A tool action.
    Tool,
}

/// A v0/v1 step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyStep {
    /// Unique within the runbook.
    pub id: String,
    /// The step type.
    #[serde(rename = "type")]
    pub step_type: LegacyStepType,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Guard: run only when this holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// A check that may skip the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Precondition>,
    /// Outcomes decided after the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<LegacyOutcome>,
    /// `cli`: the command.
    #[serde(default, rename = "with", skip_serializing_if = "Option::is_none")]
    pub with_cli: Option<CliConfig>,
    /// `manual`: what the person does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `manual`: evidence to collect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_evidence: Vec<EvidenceRequirement>,
    /// Approvals needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<ApprovalRequirement>,
    /// `manual`: a choice to make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<ChoiceConfig>,
    /// Variables captured from output: name → expression.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, String>,
    /// Checks on the output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<LegacyAssertion>,
    /// Time limit, e.g. `30s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9]+(s|m|h)$"))]
    pub timeout: Option<String>,
    /// Wait before running, e.g. `500ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9]+(ms|s|m|h)$"))]
    pub delay: Option<String>,
    /// `reuse_evidence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_mode: Option<ReplayMode>,
    /// `invoke`: the runbook to run (a reference, or `{runbook, inputs}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke: Option<InvokeConfig>,
    /// Stop conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// `tool`: the tool action and its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolStepConfig>,
}

/// `precondition`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Precondition {
    /// The command to run.
    #[schemars(length(min = 1))]
    pub check: Vec<String>,
    /// Skip the step when the check succeeds.
    pub skip_if_succeeds: bool,
    /// Shown when skipping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A v0/v1 outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyOutcome {
    /// When it applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The resulting state.
    pub state: crate::runbook::OutcomeCategory,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    /// A runbook to continue with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_runbook: Option<NextRunbook>,
}

/// `next_runbook`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextRunbook {
    /// The runbook: a logical name (v1) or a path (v0).
    pub file: String,
    /// Its inputs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

/// `with` of a `cli` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliConfig {
    /// The command as argv.
    #[schemars(length(min = 1))]
    pub argv: Vec<String>,
}

/// Evidence a person must provide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EvidenceRequirement {
    /// `text`, `checklist` or `attachment`.
    pub kind: EvidenceKind,
    /// The evidence's name.
    pub name: String,
    /// Checklist items.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
}

/// Kinds of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EvidenceKind {
    /// Free text.
    Text,
    /// Ticked items.
    Checklist,
    /// A file.
    Attachment,
}

/// `approvals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRequirement {
    /// How many approvers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    /// Roles allowed to approve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

/// `choices`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChoiceConfig {
    /// Variable that receives the choice.
    pub variable: String,
    /// The question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The options (at least two).
    #[schemars(length(min = 2))]
    pub options: Vec<ChoiceOption>,
}

/// One option of a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ChoiceOption {
    /// The value stored.
    pub value: String,
    /// Shown to people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Longer explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A v0/v1 assertion (one check per object).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacyAssertion {
    /// Output contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// Output does not contain this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<String>,
    /// Output matches this regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// The exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Output equals this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// Output differs from this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_equals: Option<String>,
    /// A JSON path check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_path: Option<JsonPathAssertion>,
}

/// `json_path` assertion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonPathAssertion {
    /// The path.
    pub path: String,
    /// Expected value.
    pub equals: String,
}

/// `replay_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// Reuse recorded evidence.
    ReuseEvidence,
}

/// `invoke`: a bare reference (seed 004) or `{runbook, inputs}` (runbook-v0.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InvokeConfig {
    /// `invoke: group/name`.
    Name(String),
    /// `invoke: {runbook: group/name, inputs: {...}}`.
    Full(InvokeTarget),
}

/// The object form of `invoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeTarget {
    /// The runbook reference.
    pub runbook: String,
    /// Its inputs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

/// `gate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Stop conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_if: Vec<String>,
    /// `skip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<GateOnError>,
}

/// `gate.on_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GateOnError {
    /// Skip the step.
    Skip,
}

/// `tool` of a tool step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolStepConfig {
    /// The tool reference (must be in `tools`).
    pub name: String,
    /// The action.
    pub action: String,
    /// Arguments, templated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, String>,
}
