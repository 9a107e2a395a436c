//! The toolpack dialect of `*.tool.yaml` (seed 000, plus Jig's `description`, `tags`,
//! `sideEffects`, `risk` and `outputs` from DESIGN.md §3).
//!
//! Field names are camelCase on the wire. The types describe the *shape*; rules that a JSON
//! Schema cannot say (semver, `module:callable`, template variables) are checked by the loader.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::{DockerPlan, HybridPlan, SlurmPlan};

/// Pattern of a tool id: dotted lowercase segments. Single-segment ids are reserved for the
/// built-in catalog; the loader enforces that part.
pub const TOOL_ID_PATTERN: &str = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$";

/// The built-in catalog of seed 002 §5, in the order of its summary table. Single-segment ids
/// are reserved for these.
pub const BUILTIN_TOOLS: [&str; 27] = [
    "fs_list",
    "fs_move",
    "fs_copy",
    "fs_delete",
    "file_read",
    "file_write",
    "file_patch",
    "grep",
    "proc_list",
    "shell_exec",
    "curl",
    "git_status",
    "git_diff",
    "git_add",
    "git_commit",
    "git_checkout",
    "git_merge",
    "git_rebase",
    "git_push",
    "git_pull",
    "ast_generate",
    "ast_query",
    "ast_edit",
    "ast_validate",
    "ast_external",
    "validate",
    "emit_metrics",
];

/// Pattern of an environment variable name in `env`.
pub const ENV_NAME_PATTERN: &str = r"^[A-Z][A-Z0-9_]*$";

/// Variables that make the dynamic loader or the C library load or read code and data of the
/// variable's choosing (every `LD_*`, and glibc's list of variables it ignores in privileged
/// programs for that reason). A tool's declared environment may not set or pass any of them:
/// inside the sandbox they would only affect the tool itself, but a definition that reaches for
/// them is not one to run, and the loader says so.
pub fn loader_variable(name: &str) -> bool {
    const UNSECURE: [&str; 12] = [
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TZDIR",
    ];
    name.starts_with("LD_") || UNSECURE.contains(&name)
}

/// One toolpack: a declarative tool definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "Jig toolpack", extend("$id" = "https://jig.dev/schemas/toolpack.schema.json"))]
pub struct Toolpack {
    /// Tool ABI version (seed 001); only `v1` exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abi_version: Option<AbiVersion>,
    /// Stable identifier: dotted lowercase segments, e.g. `acme.deploy`.
    #[schemars(pattern(TOOL_ID_PATTERN))]
    pub id: String,
    /// Semantic version of the tool's contract, e.g. `1.2.0`.
    #[schemars(length(min = 1))]
    pub version: String,
    /// What the tool does, in a sentence or two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Free-form labels for discovery (`jig list --tag T`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Whether the same input always yields the same output (enables replay).
    pub deterministic: bool,
    /// What the tool may change. Omitted means "whatever its execution kind can".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<Vec<SideEffect>>,
    /// How much harm a wrong call can do. Omitted means derived from `sideEffects`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Time limit of one call, in milliseconds.
    #[schemars(range(min = 1))]
    pub timeout_ms: u64,
    /// Size limits of one call.
    pub limits: Limits,
    /// JSON Schema of the arguments, inline or `{"$ref": "path"}`.
    pub input_schema: Value,
    /// JSON Schema of the result, inline or `{"$ref": "path"}`.
    pub output_schema: Value,
    /// How the tool runs.
    pub execution: Execution,
    /// What the tool's process may touch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Caps>,
    /// Environment passed to the tool's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvSpec>,
    /// How string fields of `execution` are templated with the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templating: Option<Templating>,
    /// Output artifacts the tool must produce (seed 001 declared outputs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<OutputDecl>,
}

/// The tool ABI version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AbiVersion {
    /// Toolpack ABI v1.
    #[serde(rename = "v1")]
    V1,
}

/// A class of side effect (DESIGN.md §3).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SideEffect {
    /// Pure computation.
    None,
    /// Reads files or state.
    Read,
    /// Changes files or state.
    Write,
    /// Talks to the network.
    Network,
    /// Runs other programs.
    Exec,
}

impl SideEffect {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Read => "read",
            Self::Write => "write",
            Self::Network => "network",
            Self::Exec => "exec",
        }
    }

    /// `true` for effects that change something outside the call (seed 003 "side effects").
    pub fn is_side_effect(self) -> bool {
        matches!(self, Self::Write | Self::Network | Self::Exec)
    }
}

/// One entry of a tool/v0 contract's `effects`, or of a governance rule's: a class of side
/// effect Jig knows, or an opaque resource tag (`azure`, `kubernetes`) — kernel-v0 §4: tags are
/// convention, not vocabulary. A tool with a tag Jig does not know counts as having side
/// effects, so the default still asks a person.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(untagged)]
pub enum EffectTag {
    /// `none`, `read`, `write`, `network` or `exec`.
    Known(SideEffect),
    /// Anything else: a resource the tool acts on.
    Resource(String),
}

impl EffectTag {
    /// The spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(effect) => effect.as_str(),
            Self::Resource(tag) => tag,
        }
    }

    /// The class Jig knows, if it is one.
    pub fn known(&self) -> Option<SideEffect> {
        match self {
            Self::Known(effect) => Some(*effect),
            Self::Resource(_) => None,
        }
    }
}

/// Risk level. `critical` exists for gert's contract-derived risk (kernel-v0 §9).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Harmless.
    Low,
    /// Recoverable harm.
    Medium,
    /// Hard-to-undo harm.
    High,
    /// Irreversible and non-deterministic (gert).
    Critical,
}

impl Risk {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

/// Size limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limits {
    /// Largest accepted arguments, in bytes of JSON.
    #[schemars(range(min = 1))]
    pub max_input_bytes: u64,
    /// Largest accepted result, in bytes of JSON.
    #[schemars(range(min = 1))]
    pub max_output_bytes: u64,
}

/// How a toolpack runs, by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Execution {
    /// Implemented inside Jig (the `std` package only).
    Builtin(BuiltinExecution),
    /// A Python callable or script.
    Python(PythonExecution),
    /// A Node.js module, script or inline program.
    Node(NodeExecution),
    /// A PHP script or inline program.
    Php(PhpExecution),
    /// A program run as argv (never through a shell).
    Cli(CliExecution),
    /// An HTTP endpoint.
    Http(HttpExecution),
    /// Seed 001: a container run through the Docker Engine API.
    Docker(Box<DockerPlan>),
    /// Seed 001: a batch job submitted to Slurm.
    Slurm(Box<SlurmPlan>),
    /// Seed 001: a Slurm job that runs a pinned container on its node.
    Hybrid(Box<HybridPlan>),
}

impl Execution {
    /// The `kind` as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Builtin(_) => "builtin",
            Self::Python(_) => "python",
            Self::Node(_) => "node",
            Self::Php(_) => "php",
            Self::Cli(_) => "cli",
            Self::Http(_) => "http",
            Self::Docker(_) => "docker",
            Self::Slurm(_) => "slurm",
            Self::Hybrid(_) => "hybrid",
        }
    }

    /// Whether this is a seed 001 plan (work done by an engine outside Jig).
    pub fn is_plan(&self) -> bool {
        matches!(self, Self::Docker(_) | Self::Slurm(_) | Self::Hybrid(_))
    }

    /// Whether the plan is a Slurm job (`slurm`, `hybrid`): submitted, collected later, and
    /// never submitted twice for the same run id (seed 001's replay rule).
    pub fn is_batch(&self) -> bool {
        matches!(self, Self::Slurm(_) | Self::Hybrid(_))
    }
}

/// `kind: builtin`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuiltinExecution {
    /// The built-in's name; defaults to the tool id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `kind: python`: `module: "pkg.mod:callable"` or a `script` path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PythonExecution {
    /// `package.module:callable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Path of a script, relative to the tool file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

/// `kind: node`: a `module`, a `script` path, or an inline `node` program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeExecution {
    /// `specifier:export`, e.g. `./lib/tool.mjs:run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Path of a script, relative to the tool file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// An inline program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// `kind: php`: a `script` path or an inline `php` program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhpExecution {
    /// Path of a script, relative to the tool file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// An inline program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub php: Option<String>,
}

/// `kind: cli`: argv, each element templated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliExecution {
    /// The program and its arguments. Never passed to a shell.
    #[schemars(length(min = 1))]
    pub cmd: Vec<String>,
}

/// `kind: http`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpExecution {
    /// The URL, templated.
    #[schemars(length(min = 1))]
    pub url: String,
    /// The method; GET when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<HttpMethod>,
    /// Extra headers, values templated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A request body template; without one, the arguments are sent as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// HTTP methods a tool may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// GET
    Get,
    /// POST
    Post,
    /// PUT
    Put,
    /// PATCH
    Patch,
    /// DELETE
    Delete,
    /// HEAD
    Head,
}

/// What a tool's process may touch (seed 000 `caps`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Caps {
    /// Network protocols the tool may use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetworkCap>,
    /// Paths the tool may read and write, relative to the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<FilesystemCaps>,
    /// Whether the tool may start other programs.
    #[serde(default)]
    pub subprocess: bool,
}

/// A network protocol in `caps.network`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NetworkCap {
    /// Plain HTTP.
    Http,
    /// HTTPS.
    Https,
}

/// `caps.filesystem`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesystemCaps {
    /// Readable paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Writable paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
}

/// Environment of the tool's process: nothing is inherited unless passed through.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvSpec {
    /// Variables copied from Jig's own environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(pattern(ENV_NAME_PATTERN)))]
    pub passthrough: Vec<String>,
    /// Variables set to fixed values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = { "pattern": ENV_NAME_PATTERN }))]
    pub set: BTreeMap<String, String>,
}

/// Templating of `execution` strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Templating {
    /// The engine; only `jinja2` exists.
    pub engine: TemplateEngine,
    /// Extra variables available to templates, next to the arguments.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub context: serde_json::Map<String, Value>,
}

/// A template engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TemplateEngine {
    /// Jinja2 syntax (`{{ name }}`), rendered by minijinja.
    Jinja2,
}

/// An output artifact the tool must produce (seed 001).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputDecl {
    /// Role name; `log` is reserved (produced automatically).
    #[schemars(pattern(r"^[a-z][a-z0-9_]*$"))]
    pub role: String,
    /// Artifact type, e.g. `text/csv` or `report`.
    #[serde(rename = "type")]
    #[schemars(length(min = 1))]
    pub artifact_type: String,
    /// A label for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Where the tool writes it, relative to its `out/` directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Slurm and hybrid plans: where the job leaves it, relative to the run directory
    /// (`out/summary.csv`); seed 001's `srcRelpath`.
    #[serde(default, rename = "srcRelpath", skip_serializing_if = "Option::is_none")]
    pub src_relpath: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaders_variables_are_known() {
        for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "GLIBC_TUNABLES"] {
            assert!(loader_variable(name), "{name}");
        }
        for name in ["PATH", "LANG", "OLD_PRELOAD", "HOME"] {
            assert!(!loader_variable(name), "{name}");
        }
    }
}
