//! A registry entry: one callable tool, whichever dialect defined it.
//!
//! A toolpack becomes one [`ToolDef`]; a `tool/v0` file becomes one per action. Schemas are
//! fully resolved (no external `$ref` left), so an entry is self-contained: the engine, the UI
//! and MCP clients can use `input_schema` as is.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::Sha256Hash;
use crate::gert_tool::{Capture, Extract, Platform, RedactionRule, Startup, TransportMode};
use crate::toolpack::{Caps, EnvSpec, Execution, Limits, OutputDecl, Risk, SideEffect, Templating};

/// Which file format defined a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Dialect {
    /// Seed 000 toolpack.
    #[serde(rename = "toolpack")]
    Toolpack,
    /// gert `tool/v0`.
    #[serde(rename = "tool/v0")]
    GertV0,
}

/// Where a definition lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceLocation {
    /// The file, relative to the project root (`<std>/…` for the built-in package).
    pub file: String,
    /// 1-based line of the definition (the action, for tool/v0).
    pub line: u32,
}

/// How a registry entry runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ToolExecution {
    /// A toolpack's `execution` block.
    Toolpack(Execution),
    /// A tool/v0 action with its transport.
    Gert(Box<GertExecution>),
}

impl ToolExecution {
    /// Whether this is a seed 001 plan (`docker`, `slurm`, `hybrid`).
    pub fn is_plan(&self) -> bool {
        matches!(self, Self::Toolpack(execution) if execution.is_plan())
    }

    /// Whether this is a batch job (`slurm`, `hybrid`): submitted, collected later, never
    /// submitted twice for one run id.
    pub fn is_batch(&self) -> bool {
        matches!(self, Self::Toolpack(execution) if execution.is_batch())
    }

    /// `builtin`, `python`, …, `stdio`, `jsonrpc`, `mcp`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Toolpack(execution) => execution.kind(),
            Self::Gert(gert) => gert.kind.as_str(),
        }
    }
}

/// A tool/v0 action, with everything needed to run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GertExecution {
    /// The transport.
    pub kind: TransportMode,
    /// The program to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// The action's argv templates (Go-template syntax).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// jsonrpc: the method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// mcp: the server's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tool: Option<String>,
    /// Address of a running server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<String>,
    /// How to start a persistent server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<Startup>,
    /// Kernel generation output extraction.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extract: BTreeMap<String, Extract>,
    /// Schema generation output capture.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, Capture>,
    /// Output redactions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<RedactionRule>,
    /// Supported operating systems (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platform: Vec<Platform>,
    /// Resource tags read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// Resource tags written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// The contract's `effects` that are resource tags, not classes Jig knows (`azure`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effect_tags: Vec<String>,
    /// The action always needs approval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
    /// mcp over HTTP: headers sent with each request (an upstream server's `headers`). Never
    /// shown or hashed: a value may carry a token.
    #[serde(skip)]
    #[schemars(skip)]
    pub headers: BTreeMap<String, String>,
}

/// One callable tool in the registry. Field names are camelCase, like the toolpack format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    /// Registry id: a toolpack's `id`, or `<tool>.<action>` (`<package>/<tool>.<action>` from a
    /// required package) for tool/v0.
    pub id: String,
    /// Contract version.
    pub version: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Discovery labels.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The package that defines it.
    pub package: String,
    /// The dialect.
    pub dialect: Dialect,
    /// Same input, same output.
    pub deterministic: bool,
    /// Safe to run twice.
    pub idempotent: bool,
    /// What it may change; empty means nothing.
    pub side_effects: Vec<SideEffect>,
    /// Risk level.
    pub risk: Risk,
    /// Time limit, ms.
    pub timeout_ms: u64,
    /// Size limits.
    pub limits: Limits,
    /// Resolved JSON Schema of the arguments.
    pub input_schema: Value,
    /// Resolved JSON Schema of the result.
    pub output_schema: Value,
    /// How it runs.
    pub execution: ToolExecution,
    /// Process capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Caps>,
    /// Process environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvSpec>,
    /// Templating of execution strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templating: Option<Templating>,
    /// Declared output artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<OutputDecl>,
    /// Where it is defined.
    pub source: SourceLocation,
    /// SHA-256 of the entry's JSON without `source` and `hash` (see [`ToolDef::compute_hash`]).
    #[serde(default)]
    pub hash: String,
}

impl ToolDef {
    /// The project files that hold the code this tool starts, relative to the project root: a
    /// `script` or a relative `module` (`./lib/tool.mjs:run`, or Python's `pkg.mod:callable` as
    /// `pkg/mod.py`), which are relative to the tool's file, and a program given by a relative
    /// path (`./bin/report.sh`), which is started from the workspace root. What that code
    /// imports in turn is not listed. An approval is bound to these files' contents too, so
    /// editing the script after a person approved a call makes the approval not fit.
    pub fn entry_files(&self) -> Vec<String> {
        let tool_dir = std::path::Path::new(&self.source.file)
            .parent()
            .unwrap_or(std::path::Path::new(""))
            .to_path_buf();
        let beside = |file: String| tool_dir.join(file);
        let program = |path: &str| {
            (path.contains('/') && !path.starts_with('/')).then(|| std::path::PathBuf::from(path))
        };
        let files = match &self.execution {
            ToolExecution::Toolpack(Execution::Python(python)) => vec![
                python.script.clone().map(beside),
                python.module.as_deref().map(|m| {
                    let module = m.split_once(':').map_or(m, |(module, _)| module);
                    beside(format!("{}.py", module.replace('.', "/")))
                }),
            ],
            ToolExecution::Toolpack(Execution::Node(node)) => vec![
                node.script.clone().map(beside),
                node.module.as_deref().and_then(|m| {
                    let specifier = m.rsplit_once(':').map_or(m, |(specifier, _)| specifier);
                    program(specifier).map(|path| tool_dir.join(path))
                }),
            ],
            ToolExecution::Toolpack(Execution::Php(php)) => vec![php.script.clone().map(beside)],
            ToolExecution::Toolpack(Execution::Cli(cli)) => {
                vec![cli.cmd.first().and_then(|p| program(p))]
            }
            ToolExecution::Gert(gert) => vec![gert.binary.as_deref().and_then(program)],
            ToolExecution::Toolpack(_) => Vec::new(),
        };
        files
            .into_iter()
            .flatten()
            .map(|path| {
                let normal: std::path::PathBuf = path
                    .components()
                    .filter(|c| !matches!(c, std::path::Component::CurDir))
                    .collect();
                normal.display().to_string()
            })
            .collect()
    }

    /// `true` when the tool has any effect beyond reading (seed 003 "side-effect tools").
    pub fn has_side_effects(&self) -> bool {
        self.side_effects.iter().any(|e| e.is_side_effect()) || !self.effect_tags().is_empty()
    }

    /// Its resource tags among its effects (tool/v0 only): each counts as a side effect.
    pub fn effect_tags(&self) -> &[String] {
        match &self.execution {
            ToolExecution::Gert(gert) => &gert.effect_tags,
            ToolExecution::Toolpack(_) => &[],
        }
    }

    /// The content hash: SHA-256 of the JSON of everything but `source` and `hash`, so moving a
    /// file does not change a tool's identity. Fields are written in declaration order and schema
    /// keys in file order, so the same files always give the same hash. (This is not RFC 8785:
    /// canonicalising every schema of a 10,000-tool registry costs more than the rest of the load
    /// together, and a registry hash only needs to be reproducible, not order-insensitive.)
    pub fn compute_hash(&self) -> String {
        let bytes = serde_json::to_vec(&self.hash_view()).unwrap_or_default();
        Sha256Hash::of_bytes(&bytes).to_hex()
    }

    fn hash_view(&self) -> HashView<'_> {
        HashView {
            id: &self.id,
            version: &self.version,
            description: &self.description,
            tags: &self.tags,
            package: &self.package,
            dialect: self.dialect,
            deterministic: self.deterministic,
            idempotent: self.idempotent,
            side_effects: &self.side_effects,
            risk: self.risk,
            timeout_ms: self.timeout_ms,
            limits: &self.limits,
            input_schema: &self.input_schema,
            output_schema: &self.output_schema,
            execution: &self.execution,
            caps: &self.caps,
            env: &self.env,
            templating: &self.templating,
            outputs: &self.outputs,
        }
    }
}

/// The hashed part of a [`ToolDef`]: every field except `source` and `hash`. A test checks that
/// the two stay in step.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HashView<'a> {
    id: &'a str,
    version: &'a str,
    description: &'a str,
    tags: &'a [String],
    package: &'a str,
    dialect: Dialect,
    deterministic: bool,
    idempotent: bool,
    side_effects: &'a [SideEffect],
    risk: Risk,
    timeout_ms: u64,
    limits: &'a Limits,
    input_schema: &'a Value,
    output_schema: &'a Value,
    execution: &'a ToolExecution,
    #[serde(skip_serializing_if = "Option::is_none")]
    caps: &'a Option<Caps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: &'a Option<EnvSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    templating: &'a Option<Templating>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    outputs: &'a [OutputDecl],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_view_covers_every_field_but_source_and_hash() {
        let tool = ToolDef {
            id: "acme.t".into(),
            version: "1.0.0".into(),
            description: "d".into(),
            tags: vec!["x".into()],
            package: "p".into(),
            dialect: Dialect::Toolpack,
            deterministic: true,
            idempotent: true,
            side_effects: vec![SideEffect::Read],
            risk: Risk::Low,
            timeout_ms: 1,
            limits: Limits { max_input_bytes: 1, max_output_bytes: 1 },
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: serde_json::json!({}),
            execution: ToolExecution::Toolpack(crate::toolpack::Execution::Cli(
                crate::toolpack::CliExecution { cmd: vec!["true".into()] },
            )),
            caps: Some(Caps::default()),
            env: Some(EnvSpec::default()),
            templating: None,
            outputs: vec![OutputDecl {
                role: "report".into(),
                artifact_type: "text/plain".into(),
                label: None,
                path: None,
                src_relpath: None,
            }],
            source: SourceLocation { file: "f".into(), line: 1 },
            hash: String::new(),
        };
        let mut moved = tool.clone();
        moved.source = SourceLocation { file: "elsewhere".into(), line: 9 };
        assert_eq!(tool.compute_hash(), moved.compute_hash(), "source is not hashed");
        let mut changed = tool.clone();
        changed.description = "other".into();
        assert_ne!(tool.compute_hash(), changed.compute_hash());

        // With every optional field set, the view has exactly the fields but source and hash.
        let mut full = tool;
        full.templating = Some(crate::toolpack::Templating {
            engine: crate::toolpack::TemplateEngine::Jinja2,
            context: serde_json::Map::new(),
        });
        let keys = |v: Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        let mut expected = keys(serde_json::to_value(&full).unwrap());
        expected.retain(|k| k != "source" && k != "hash");
        expected.sort();
        let mut actual = keys(serde_json::to_value(full.hash_view()).unwrap());
        actual.sort();
        assert_eq!(expected, actual);
    }

    #[test]
    fn entry_files_are_the_code_in_the_project_a_call_starts() {
        let with = |execution: Value| {
            let execution: crate::toolpack::Execution =
                serde_json::from_value(execution).expect("execution");
            let mut tool: ToolDef = serde_json::from_value(serde_json::json!({
                "id": "t", "version": "1", "package": "p", "dialect": "toolpack",
                "deterministic": false, "idempotent": false, "sideEffects": [], "risk": "low",
                "timeoutMs": 1, "limits": {"maxInputBytes": 1, "maxOutputBytes": 1},
                "inputSchema": {}, "outputSchema": {}, "execution": {"kind": "builtin"},
                "source": {"file": "tools/ops/t.tool.yaml", "line": 1}, "hash": ""
            }))
            .expect("tool");
            tool.execution = ToolExecution::Toolpack(execution);
            tool.entry_files()
        };
        use serde_json::json;
        assert_eq!(
            with(json!({"kind": "python", "script": "./scripts/t.py"})),
            ["tools/ops/scripts/t.py"]
        );
        assert_eq!(
            with(json!({"kind": "python", "module": "pkg.mod:run"})),
            ["tools/ops/pkg/mod.py"]
        );
        assert_eq!(
            with(json!({"kind": "node", "module": "./lib/t.mjs:run"})),
            ["tools/ops/lib/t.mjs"]
        );
        assert!(with(json!({"kind": "node", "module": "left-pad:run"})).is_empty());
        assert_eq!(with(json!({"kind": "cli", "cmd": ["./bin/t.sh", "x"]})), ["bin/t.sh"]);
        assert!(with(json!({"kind": "cli", "cmd": ["git", "log"]})).is_empty());
        assert!(with(json!({"kind": "cli", "cmd": ["/usr/bin/git"]})).is_empty());
    }
}
