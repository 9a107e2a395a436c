//! A problem found while loading a project, as every surface shows it.
//!
//! The shape is fixed by the foundation issue: `{code, severity, file, line, column, pointer,
//! message, hint}`. `code` is a stable dotted identifier (see [`codes`]) that tests and the UI
//! match on; `message` and `hint` are for people.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How bad a diagnostic is. Any `error` makes the load fail (fail-closed).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Severity {
    /// The project is invalid; no snapshot is built.
    Error,
    /// Suspicious but loadable (an ambiguous reference, a platform mismatch).
    Warning,
}

/// One problem, located as precisely as the loader can.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Diagnostic {
    /// Stable identifier, e.g. `tool.id.pattern` or `yaml.duplicate_key`.
    pub code: String,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The file concerned, as given to the loader (relative to the project root when possible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// JSON Pointer (RFC 6901) of the offending value inside the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when the loader knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error with a code and message and no location yet.
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, message)
    }

    /// A warning with a code and message and no location yet.
    pub fn warning(code: &str, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, message)
    }

    fn new(code: &str, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            severity,
            file: None,
            line: None,
            column: None,
            pointer: None,
            message: message.into(),
            hint: None,
        }
    }

    /// Attach a hint.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Attach a file.
    #[must_use]
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Attach a JSON pointer.
    #[must_use]
    pub fn at_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Attach a 1-based line and column.
    #[must_use]
    pub fn at_line(mut self, line: u32, column: u32) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// `true` for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The order diagnostics are reported in: by file, position, then code — stable whatever
    /// order the loader's threads found them in.
    pub fn sort_key(&self) -> impl Ord + '_ {
        (
            self.file.as_deref().unwrap_or(""),
            self.line.unwrap_or(0),
            self.column.unwrap_or(0),
            self.code.as_str(),
            self.message.as_str(),
        )
    }
}

/// The diagnostic codes the loader emits. Kept in one place so the catalogue in the docs and
/// the tests agree with the code.
pub mod codes {
    /// A file could not be read.
    pub const FILE_IO: &str = "file.io";
    /// A file is larger than the loader accepts.
    pub const FILE_TOO_LARGE: &str = "file.too_large";
    /// A file is not UTF-8.
    pub const FILE_ENCODING: &str = "file.encoding";
    /// YAML (or JSON) syntax error.
    pub const YAML_SYNTAX: &str = "yaml.syntax";
    /// A mapping repeats a key.
    pub const YAML_DUPLICATE_KEY: &str = "yaml.duplicate_key";
    /// Aliases expand beyond the node budget (a "billion laughs" bomb).
    pub const YAML_ALIAS_BUDGET: &str = "yaml.alias_budget";
    /// Nesting deeper than the loader accepts.
    pub const YAML_TOO_DEEP: &str = "yaml.too_deep";
    /// A document has more nodes than the loader accepts.
    pub const YAML_TOO_MANY_NODES: &str = "yaml.too_many_nodes";
    /// A mapping key is not a string.
    pub const YAML_KEY_NOT_STRING: &str = "yaml.key_not_string";
    /// A value has no JSON equivalent (`.nan`, `.inf`, a binary tag…).
    pub const YAML_NOT_JSON: &str = "yaml.not_json";
    /// A file holds several YAML documents; Jig files hold one.
    pub const YAML_MULTI_DOCUMENT: &str = "yaml.multi_document";
    /// An alias refers to an anchor that is not defined.
    pub const YAML_UNKNOWN_ANCHOR: &str = "yaml.unknown_anchor";
    /// A field that the format does not know.
    pub const FIELD_UNKNOWN: &str = "field.unknown";
    /// A required field is missing.
    pub const FIELD_MISSING: &str = "field.missing";
    /// A field has the wrong type.
    pub const FIELD_TYPE: &str = "field.type";
    /// A field's value is not one of those allowed.
    pub const FIELD_ENUM: &str = "field.enum";
    /// A field's value is out of range (a non-positive timeout, an empty list…).
    pub const FIELD_RANGE: &str = "field.range";
    /// A string does not match the required pattern.
    pub const FIELD_PATTERN: &str = "field.pattern";
    /// Any other structural violation.
    pub const FIELD_INVALID: &str = "field.invalid";
    /// A tool id does not follow the dotted lowercase pattern.
    pub const TOOL_ID: &str = "tool.id";
    /// A single-segment id outside the built-in catalog.
    pub const TOOL_ID_RESERVED: &str = "tool.id_reserved";
    /// A version is not semver.
    pub const TOOL_VERSION: &str = "tool.version";
    /// Two tools share an id.
    pub const TOOL_DUPLICATE: &str = "tool.duplicate";
    /// An execution block breaks its kind's contract.
    pub const TOOL_EXECUTION: &str = "tool.execution";
    /// `kind: builtin` outside the std package, or an unknown built-in.
    pub const TOOL_BUILTIN: &str = "tool.builtin";
    /// A template does not parse or uses an undeclared variable.
    pub const TOOL_TEMPLATE: &str = "tool.template";
    /// `caps` that cannot be honoured (a path outside the workspace).
    pub const TOOL_CAPS: &str = "tool.caps";
    /// A declared output is malformed (reserved role, duplicate role).
    pub const TOOL_OUTPUTS: &str = "tool.outputs";
    /// A tool's environment sets or passes a variable that controls the program loader
    /// (`LD_PRELOAD`, `GCONV_PATH`, …).
    pub const TOOL_ENV: &str = "tool.env";
    /// A seed 001 plan breaks a rule of the ABI (unpinned image, inputs or outputs that do not
    /// match exactly, an unsafe or duplicate destination, no `abiVersion`).
    pub const TOOL_PLAN: &str = "tool.plan";
    /// A `tool/v0` file whose `meta.name` differs from its file name.
    pub const TOOL_NAME_MISMATCH: &str = "tool.name_mismatch";
    /// An upstream MCP server (`mcp_servers:`) whose tools are not (all) in the registry: not
    /// asked yet, could not be asked, tools left out, served over HTTP.
    pub const MCP_SERVER: &str = "mcp.server";
    /// A `tool/v0` tool declares a platform this machine is not.
    pub const TOOL_PLATFORM: &str = "tool.platform";
    /// A `tool/v0` action's contract relaxes the tool's contract.
    pub const TOOL_CONTRACT: &str = "tool.contract";
    /// Unknown or missing `apiVersion`.
    pub const API_VERSION: &str = "format.api_version";
    /// A `$ref` target does not exist.
    pub const REF_NOT_FOUND: &str = "ref.not_found";
    /// A `$ref` leaves the package root.
    pub const REF_ESCAPE: &str = "ref.escape";
    /// A `$ref` to a remote (http, file://) location.
    pub const REF_REMOTE: &str = "ref.remote";
    /// `$ref`s that refer to each other in a loop.
    pub const REF_CYCLE: &str = "ref.cycle";
    /// A `$ref` fragment that points at nothing.
    pub const REF_POINTER: &str = "ref.pointer";
    /// A schema whose resolved `$ref`s would exceed the size Jig accepts.
    pub const REF_TOO_LARGE: &str = "ref.too_large";
    /// A schema that is not a valid JSON Schema.
    pub const SCHEMA_INVALID: &str = "schema.invalid";
    /// Both `jig.yaml` and `gert.yaml` in one directory.
    pub const MANIFEST_CONFLICT: &str = "manifest.conflict";
    /// `require` points at something that is not a package.
    pub const PACKAGE_NOT_FOUND: &str = "package.not_found";
    /// Two packages claim the same name.
    pub const PACKAGE_DUPLICATE: &str = "package.duplicate";
    /// A `require` key differs from the required package's own name.
    pub const PACKAGE_NAME_MISMATCH: &str = "package.name_mismatch";
    /// A path in the manifest leaves the package.
    pub const PACKAGE_PATH: &str = "package.path";
    /// An `exports.tools` entry points at no tool.
    pub const EXPORT_NOT_FOUND: &str = "package.export_not_found";
    /// A `policy:` entry that cannot be enforced (a bad regex, an unknown rule id).
    pub const POLICY: &str = "policy.invalid";
    /// A `config.auth` that cannot sign anyone in safely (a provider not on https).
    pub const AUTH: &str = "auth.invalid";
    /// A tool reference that resolves to nothing.
    pub const RESOLVE_TOOL: &str = "resolve.tool";
    /// A runbook reference that resolves to nothing.
    pub const RESOLVE_RUNBOOK: &str = "resolve.runbook";
    /// A qualified reference to a package that is not required.
    pub const RESOLVE_PACKAGE: &str = "resolve.unknown_package";
    /// A local runbook group shadows a required package (seed 004 ambiguity rule).
    pub const RESOLVE_AMBIGUOUS: &str = "resolve.ambiguous";
    /// A runbook breaks a structural rule (duplicate step ids, bad `next`, unknown action…).
    pub const RUNBOOK: &str = "runbook.invalid";
    /// A runbook/v1 uses syntax that v1 removed (`imports`, tool maps).
    pub const RUNBOOK_V1_SYNTAX: &str = "runbook.v1_syntax";
    /// A scenario or its expectations do not fit their runbook.
    pub const SCENARIO: &str = "scenario.invalid";
    /// A template (`{{ … }}`) in a runbook does not parse.
    pub const RUNBOOK_TEMPLATE: &str = "runbook.template";
    /// A runbook reads a variable no input, constant or earlier step defines (kernel-v0 §7),
    /// or exports one that clashes.
    pub const RUNBOOK_VARIABLE: &str = "runbook.variable";
    /// Parallel arms that contend for a resource (kernel-v0 §8): such a run is refused.
    pub const RUNBOOK_PARALLEL: &str = "runbook.parallel_conflict";

    /// Every code, in the order of this module.
    pub const ALL: [&str; 60] = [
        FILE_IO,
        FILE_TOO_LARGE,
        FILE_ENCODING,
        YAML_SYNTAX,
        YAML_DUPLICATE_KEY,
        YAML_ALIAS_BUDGET,
        YAML_TOO_DEEP,
        YAML_TOO_MANY_NODES,
        YAML_KEY_NOT_STRING,
        YAML_NOT_JSON,
        YAML_MULTI_DOCUMENT,
        YAML_UNKNOWN_ANCHOR,
        FIELD_UNKNOWN,
        FIELD_MISSING,
        FIELD_TYPE,
        FIELD_ENUM,
        FIELD_RANGE,
        FIELD_PATTERN,
        FIELD_INVALID,
        TOOL_ID,
        TOOL_ID_RESERVED,
        TOOL_VERSION,
        TOOL_DUPLICATE,
        TOOL_EXECUTION,
        TOOL_BUILTIN,
        TOOL_TEMPLATE,
        TOOL_CAPS,
        TOOL_OUTPUTS,
        TOOL_ENV,
        TOOL_PLAN,
        TOOL_NAME_MISMATCH,
        TOOL_PLATFORM,
        MCP_SERVER,
        TOOL_CONTRACT,
        API_VERSION,
        REF_NOT_FOUND,
        REF_ESCAPE,
        REF_REMOTE,
        REF_CYCLE,
        REF_POINTER,
        REF_TOO_LARGE,
        SCHEMA_INVALID,
        MANIFEST_CONFLICT,
        PACKAGE_NOT_FOUND,
        PACKAGE_DUPLICATE,
        PACKAGE_NAME_MISMATCH,
        PACKAGE_PATH,
        EXPORT_NOT_FOUND,
        POLICY,
        AUTH,
        RESOLVE_TOOL,
        RESOLVE_RUNBOOK,
        RESOLVE_PACKAGE,
        RESOLVE_AMBIGUOUS,
        RUNBOOK,
        RUNBOOK_V1_SYNTAX,
        SCENARIO,
        RUNBOOK_TEMPLATE,
        RUNBOOK_VARIABLE,
        RUNBOOK_PARALLEL,
    ];
}
