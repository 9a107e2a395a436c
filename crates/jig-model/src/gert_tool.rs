//! gert's `tool/v0` dialect of `*.tool.yaml`, both generations under one type.
//!
//! - The schema generation (`shared/reference/gert/schemas/tool-v0.json`): a `transport` block,
//!   `governance`, `capabilities`, and actions with `args` and `capture`.
//! - The kernel generation (gert's examples and kernel-v0.md §12): `meta.transport`,
//!   `meta.platform`, a top-level `contract`, and actions with `extract` and a tightening
//!   `contract`.
//!
//! Where the schema file and the examples disagree, the examples win (e.g. `meta.binary` is
//! optional because kernel-era tools may name the program in `argv[0]`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Risk;

/// A `tool/v0` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gert tool/v0", extend("$id" = "https://jig.dev/schemas/tool-v0.schema.json"))]
pub struct GertTool {
    /// Always `tool/v0`.
    #[serde(rename = "apiVersion")]
    pub api_version: GertToolApi,
    /// Identity and how to start the program.
    pub meta: GertToolMeta,
    /// Schema generation: how to reach the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// Schema generation: read-only flag and output redaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<ToolGovernance>,
    /// Schema generation: optional capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Capabilities>,
    /// Kernel generation: the tool-level contract every action inherits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// The callable actions, by name. Each is registered as `<tool>.<action>`.
    #[serde(default)]
    pub actions: BTreeMap<String, Action>,
}

/// The `apiVersion` of a gert tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum GertToolApi {
    /// `tool/v0`.
    #[serde(rename = "tool/v0")]
    V0,
}

/// `meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GertToolMeta {
    /// The tool's name; conventionally its file name without `.tool.yaml`.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Free-form version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The program to start; overrides `argv[0]` for lookup (kernel-v0 §12.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// Kernel generation: how to talk to the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportMode>,
    /// Operating systems the tool supports (GOOS names); omitted means any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platform: Vec<Platform>,
}

/// How a gert tool is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportMode {
    /// Start a process per call.
    #[default]
    Stdio,
    /// A persistent process speaking JSON-RPC.
    Jsonrpc,
    /// A Model Context Protocol server.
    Mcp,
}

impl TransportMode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Jsonrpc => "jsonrpc",
            Self::Mcp => "mcp",
        }
    }
}

/// A GOOS name in `meta.platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Linux.
    Linux,
    /// macOS.
    Darwin,
    /// Windows.
    Windows,
    /// FreeBSD.
    Freebsd,
    /// OpenBSD.
    Openbsd,
}

impl Platform {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Darwin => "darwin",
            Self::Windows => "windows",
            Self::Freebsd => "freebsd",
            Self::Openbsd => "openbsd",
        }
    }
}

/// Schema generation `transport`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transport {
    /// `stdio` (default), `jsonrpc` or `mcp`.
    #[serde(default)]
    pub mode: TransportMode,
    /// The program to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// Address of an already running server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<String>,
    /// How to start a persistent server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<Startup>,
}

/// `transport.startup`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Startup {
    /// The command that starts the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// A line the server prints when ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_signal: Option<String>,
    /// How long to wait for it, e.g. `10s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[0-9]+(s|m|h)$"))]
    pub timeout: Option<String>,
    /// The JSON-RPC method that stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shutdown_method: Option<String>,
}

/// Schema generation tool-level `governance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolGovernance {
    /// The tool changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Patterns replaced in the tool's output before it is stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<RedactionRule>,
}

/// A redaction: a regex and its replacement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedactionRule {
    /// A regular expression.
    pub pattern: String,
    /// What replaces each match.
    pub replace: String,
}

/// Schema generation `capabilities`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Inputs the host may resolve from context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolve_inputs: Option<ResolveInputs>,
}

/// `capabilities.resolve_inputs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveInputs {
    /// Input name prefixes.
    #[schemars(length(min = 1))]
    pub prefixes: Vec<String>,
    /// Context fields offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_fields: Vec<String>,
}

/// A contract (kernel-v0 §4): what a tool takes, returns and touches.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// Declared inputs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, ContractField>,
    /// Declared outputs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outputs: BTreeMap<String, ContractField>,
    /// Whether it changes external state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<bool>,
    /// The classes of side effect Jig knows, and opaque resource tags (gert's shared tools use
    /// this instead of `side_effects`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<crate::EffectTag>>,
    /// Same inputs, same outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deterministic: Option<bool>,
    /// Safe to re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// Explicit risk, overriding the derived one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Resource tags read (for parallel safety).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<Vec<String>>,
    /// Resource tags written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Vec<String>>,
}

/// One declared input or output of a contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractField {
    /// Where a host may resolve the value from (gert's `from`, e.g. a provider's name); Jig
    /// takes inputs from the caller and keeps it for reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The value's type.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Whether a caller must provide it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Value used when the caller omits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// Never shown or stored in clear.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redact: bool,
}

/// The value types gert contracts and runbook inputs use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// Text.
    String,
    /// A whole number.
    Int,
    /// A whole number (JSON Schema spelling).
    Integer,
    /// A number.
    Float,
    /// A number (JSON Schema spelling).
    Number,
    /// true or false.
    Bool,
    /// true or false (JSON Schema spelling).
    Boolean,
    /// A map.
    Object,
    /// A list.
    Array,
    /// A list (gert spelling).
    List,
    /// Anything.
    Any,
}

impl FieldType {
    /// The JSON Schema `type` this corresponds to; `None` for `any`.
    pub fn json_schema_type(self) -> Option<&'static str> {
        match self {
            Self::String => Some("string"),
            Self::Int | Self::Integer => Some("integer"),
            Self::Float | Self::Number => Some("number"),
            Self::Bool | Self::Boolean => Some("boolean"),
            Self::Object => Some("object"),
            Self::Array | Self::List => Some("array"),
            Self::Any => None,
        }
    }
}

/// One callable action of a gert tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// What the action does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// stdio: the argument vector, each element a Go-style template (`{{ .name }}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// jsonrpc: the method to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// mcp: the server's tool to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tool: Option<String>,
    /// Schema generation: declared arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ToolArg>,
    /// Schema generation: outputs captured from the process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, Capture>,
    /// Kernel generation: how outputs are extracted from the process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extract: BTreeMap<String, Extract>,
    /// Kernel generation: a per-action contract that may only tighten the tool's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// Schema generation: per-action governance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<ActionGovernance>,
}

/// Schema generation action argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolArg {
    /// `string`, `int`, `bool` or `float`.
    #[serde(rename = "type")]
    pub arg_type: ArgType,
    /// Whether a caller must provide it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Default, as a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    /// Never shown or stored in clear.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redact: bool,
}

/// Schema generation argument types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArgType {
    /// Text.
    String,
    /// A whole number.
    Int,
    /// true or false.
    Bool,
    /// A number.
    Float,
}

impl ArgType {
    /// The JSON Schema `type` this corresponds to.
    pub fn json_schema_type(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Int => "integer",
            Self::Bool => "boolean",
            Self::Float => "number",
        }
    }
}

/// Schema generation capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// `stdout` or `stderr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<StreamName>,
    /// `text` or `json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<CaptureFormat>,
}

/// Where output is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// The exit code.
    ExitCode,
    /// Standard output parsed as JSON (gert's `from: json`, with `path`).
    Json,
}

/// How captured text is interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaptureFormat {
    /// As text.
    Text,
    /// As JSON.
    Json,
}

/// Kernel generation extract rule: maps process output to a contract output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Extract {
    /// `stdout`, `stderr` or `exit_code`.
    pub from: StreamName,
    /// A regex; the first capture group (or the whole match) is the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A JSON pointer into output parsed as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_pointer: Option<String>,
    /// gert's dot path (`status.phase`) into standard output parsed as JSON (`from: json`);
    /// empty or absent: the whole document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Schema generation per-action governance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionGovernance {
    /// The action changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The action always needs approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
    /// How many approvers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_min: Option<u32>,
}
