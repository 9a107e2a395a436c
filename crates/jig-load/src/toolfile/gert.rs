//! gert `tool/v0`: semantic checks and one registry entry per action.
//!
//! Both generations are accepted (see `jig_model::gert_tool`). An action's input schema is built
//! from the tool's contract inputs, the action's contract inputs and the action's `args`. Kernel-
//! era actions may reference variables their contract does not declare (gert's own shared tools
//! do, e.g. `{{ .count }}` in ping); those become required string inputs of the action, so a
//! runbook step that omits them still fails validation. An action that declares `args` must
//! declare every variable it uses.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jig_model::gert_tool::{Action, Contract, ContractField, GertTool, Platform, TransportMode};
use jig_model::tool_def::{Dialect, GertExecution, SourceLocation, ToolExecution};
use jig_model::toolpack::Limits;
use jig_model::{Diagnostic, EffectTag, Risk, SideEffect, ToolDef};
use regex::Regex;
use serde_json::{Map, Value, json};

use super::templates::go_variables;
use super::{ToolContext, ToolFile, ToolFileKind};
use crate::located::{Located, Suggest};
use crate::shape;
use crate::yaml::pointer_push;

/// A process tool's default time limit: the shell default of seed 002 §9.
const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// Default size limits: 1 MiB of arguments, 5 MiB of output (seed 002 §9).
const DEFAULT_LIMITS: Limits =
    Limits { max_input_bytes: 1024 * 1024, max_output_bytes: 5 * 1024 * 1024 };

pub(super) fn load(ctx: &ToolContext<'_>, located: &Located, file: &mut ToolFile) {
    let tool: GertTool = match shape::check(located, FileFormat::GertTool) {
        Ok(tool) => tool,
        Err(mut found) => {
            file.diagnostics.append(&mut found);
            return;
        }
    };
    let before = file.diagnostics.len();
    let out = &mut file.diagnostics;
    let file_name = file.stem.rsplit('/').next().unwrap_or(&file.stem);
    check_meta(&tool, file_name, located, out);
    let mode = transport_mode(&tool, located, out);
    let base = tool.contract.clone().unwrap_or_default();
    let mut plans = Vec::new();
    for (name, action) in &tool.actions {
        let pointer = pointer_push("/actions", name);
        let at = Place { located, pointer: &pointer };
        if let Some(plan) = check_action(&tool, mode, &base, name, action, at, out) {
            plans.push((name, action, plan));
        }
    }
    if file.diagnostics[before..].iter().any(Diagnostic::is_error) {
        return;
    }

    // Consumers see a required package's tools by their export alias; the project's own tools
    // keep their file names.
    let tool_name = match ctx.package.role {
        crate::package::PackageRole::Root => file.stem.clone(),
        _ => ctx.package.public_tool_name(&file.stem),
    };
    let prefix = ctx.id_prefix();
    for (name, action, plan) in plans {
        let contract = plan.contract;
        let side_effects = contract_effects(&contract, &tool);
        let effect_tags = resource_tags(&contract);
        let deterministic = contract.deterministic.unwrap_or(false);
        let idempotent = contract.idempotent.unwrap_or(false);
        let risk = contract.risk.unwrap_or_else(|| {
            kernel_risk(&side_effects, !effect_tags.is_empty(), deterministic, idempotent)
        });
        let mut def = ToolDef {
            id: format!("{prefix}{tool_name}.{name}"),
            version: tool.meta.version.clone().unwrap_or_else(|| "0.0.0".to_owned()),
            description: action
                .description
                .clone()
                .or_else(|| tool.meta.description.clone())
                .unwrap_or_default(),
            tags: Vec::new(),
            package: ctx.package.name.clone(),
            dialect: Dialect::GertV0,
            deterministic,
            idempotent,
            side_effects,
            risk,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            limits: DEFAULT_LIMITS,
            input_schema: plan.input_schema,
            output_schema: output_schema(&contract, action),
            execution: ToolExecution::Gert(Box::new(GertExecution {
                kind: mode,
                binary: tool
                    .meta
                    .binary
                    .clone()
                    .or_else(|| tool.transport.as_ref().and_then(|t| t.binary.clone())),
                argv: action.argv.clone(),
                method: action.method.clone(),
                mcp_tool: action.mcp_tool.clone(),
                connect: tool.transport.as_ref().and_then(|t| t.connect.clone()),
                startup: tool.transport.as_ref().and_then(|t| t.startup.clone()),
                extract: action.extract.clone(),
                capture: action.capture.clone(),
                redact: tool.governance.as_ref().map(|g| g.redact.clone()).unwrap_or_default(),
                platform: tool.meta.platform.clone(),
                reads: contract.reads.clone().unwrap_or_default(),
                writes: contract.writes.clone().unwrap_or_default(),
                effect_tags,
                requires_approval: action
                    .governance
                    .as_ref()
                    .and_then(|g| g.requires_approval)
                    .unwrap_or(false),
                headers: BTreeMap::new(),
            })),
            caps: None,
            env: None,
            templating: None,
            outputs: Vec::new(),
            source: SourceLocation {
                file: located.display.clone(),
                line: located.line_of(&pointer_push("/actions", name)),
            },
            hash: String::new(),
        };
        def.hash = def.compute_hash();
        file.defs.push(Arc::new(def));
    }
    file.kind = Some(ToolFileKind::Gert(Arc::new(tool)));
}

/// The tool's `meta` against its file: the name it is called by, the platforms it runs on,
/// and whether it has anything to call.
fn check_meta(tool: &GertTool, file_name: &str, located: &Located, out: &mut Vec<Diagnostic>) {
    if tool.meta.name != file_name {
        out.push(
            located.at(
                Diagnostic::warning(
                    codes::TOOL_NAME_MISMATCH,
                    format!(
                        "`meta.name` is `{}` but the file is `{}.tool.yaml`",
                        tool.meta.name, file_name
                    ),
                )
                .with_hint("runbooks refer to tools by file name; keep the two equal"),
                "/meta/name",
            ),
        );
    }
    if !tool.meta.platform.is_empty()
        && !tool.meta.platform.iter().any(|p| p.as_str() == current_os())
    {
        let list: Vec<&str> = tool.meta.platform.iter().map(|p| Platform::as_str(*p)).collect();
        out.push(located.at(
            Diagnostic::warning(
                codes::TOOL_PLATFORM,
                format!("the tool supports {}; this machine is {}", list.join(", "), current_os()),
            ),
            "/meta/platform",
        ));
    }
    if tool.actions.is_empty() {
        out.push(located.at(
            Diagnostic::warning(
                codes::TOOL_EXECUTION,
                "the tool defines no actions, so nothing can call it",
            ),
            "/meta/name",
        ));
    }
}

fn current_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    }
}

/// The transport, from `transport.mode` (schema generation) or `meta.transport` (kernel).
fn transport_mode(tool: &GertTool, located: &Located, out: &mut Vec<Diagnostic>) -> TransportMode {
    match (tool.transport.as_ref().map(|t| t.mode), tool.meta.transport) {
        (Some(block), Some(meta)) if block != meta => {
            out.push(
                located.at(
                    Diagnostic::error(
                        codes::TOOL_EXECUTION,
                        format!(
                            "`transport.mode` is {} but `meta.transport` is {}",
                            block.as_str(),
                            meta.as_str()
                        ),
                    )
                    .with_hint("give the transport once"),
                    "/meta/transport",
                ),
            );
            block
        }
        (Some(mode), _) | (None, Some(mode)) => mode,
        (None, None) => TransportMode::Stdio,
    }
}

struct ActionPlan {
    contract: Contract,
    input_schema: Value,
}

/// One action: its name, transport, contract, inputs and extracts; its plan when all hold.
fn check_action(
    tool: &GertTool,
    mode: TransportMode,
    base: &Contract,
    name: &str,
    action: &Action,
    at: Place,
    out: &mut Vec<Diagnostic>,
) -> Option<ActionPlan> {
    let Place { located, pointer } = at;
    let start = out.len();
    if !action_name_pattern().is_match(name) {
        out.push(located.at_key(
            Diagnostic::error(
                codes::FIELD_PATTERN,
                format!("action name `{name}` must be letters, digits, `-` or `_`"),
            ),
            pointer,
        ));
    }
    check_transport(tool, mode, name, action, at, out);
    let contract = match &action.contract {
        Some(tightening) => {
            tighten(base, tightening, located, &pointer_push(pointer, "contract"), out)
        }
        None => base.clone(),
    };
    let mut inputs = Inputs::declared(&contract, action);
    check_argv(name, action, &mut inputs, at, out);
    check_extract(&contract, action, at, out);
    if out[start..].iter().any(Diagnostic::is_error) {
        return None;
    }
    Some(ActionPlan { contract, input_schema: inputs.schema() })
}

/// Where in which file an action is: what its diagnostics point at.
#[derive(Clone, Copy)]
struct Place<'a> {
    located: &'a Located,
    pointer: &'a str,
}

/// An action has what its transport needs to run: a program, a method, an MCP tool.
fn check_transport(
    tool: &GertTool,
    mode: TransportMode,
    name: &str,
    action: &Action,
    Place { located, pointer }: Place,
    out: &mut Vec<Diagnostic>,
) {
    match mode {
        TransportMode::Stdio => {
            let has_program = tool.meta.binary.is_some()
                || tool.transport.as_ref().is_some_and(|t| t.binary.is_some())
                || action.argv.first().is_some_and(|a| !a.contains("{{"));
            if action.argv.is_empty() && tool.meta.binary.is_none() {
                out.push(
                    located.at(
                        Diagnostic::error(
                            codes::TOOL_EXECUTION,
                            format!("stdio action `{name}` has no `argv`"),
                        )
                        .with_hint("e.g. `argv: [curl, -s, \"{{ .url }}\"]`"),
                        pointer,
                    ),
                );
            } else if !has_program {
                out.push(
                    located.at(
                        Diagnostic::error(
                            codes::TOOL_EXECUTION,
                            format!("stdio action `{name}` names no program"),
                        )
                        .with_hint("set `meta.binary`, or make `argv[0]` the program"),
                        pointer,
                    ),
                );
            }
        }
        TransportMode::Jsonrpc if action.method.is_none() => out.push(located.at(
            Diagnostic::error(
                codes::TOOL_EXECUTION,
                format!("jsonrpc action `{name}` needs `method`"),
            ),
            pointer,
        )),
        TransportMode::Mcp if action.mcp_tool.is_none() => out.push(located.at(
            Diagnostic::error(
                codes::TOOL_EXECUTION,
                format!("mcp action `{name}` needs `mcp_tool`"),
            ),
            pointer,
        )),
        _ => {}
    }
}

/// An action's inputs: its contract's, then the schema-generation `args`.
struct Inputs {
    properties: BTreeMap<String, Value>,
    required: BTreeSet<String>,
}

impl Inputs {
    fn declared(contract: &Contract, action: &Action) -> Self {
        let mut inputs: BTreeMap<String, Value> = BTreeMap::new();
        let mut required: BTreeSet<String> = BTreeSet::new();
        for (input, field) in &contract.inputs {
            inputs.insert(input.clone(), field_schema(field));
            if field.required && field.default.is_none() {
                required.insert(input.clone());
            }
        }
        for (arg, spec) in &action.args {
            let mut schema = Map::new();
            schema.insert("type".into(), json!(spec.arg_type.json_schema_type()));
            if let Some(description) = &spec.description {
                schema.insert("description".into(), json!(description));
            }
            if let Some(allowed) = &spec.allowed {
                schema.insert("enum".into(), json!(allowed));
            }
            if let Some(default) = &spec.default {
                schema.insert("default".into(), json!(default));
            }
            inputs.insert(arg.clone(), Value::Object(schema));
            if spec.required && spec.default.is_none() {
                required.insert(arg.clone());
            }
        }
        Self { properties: inputs, required }
    }

    /// The JSON Schema of the action's arguments: exactly these, no others.
    fn schema(self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(self.properties.into_iter().collect()));
        if !self.required.is_empty() {
            schema.insert("required".into(), json!(self.required));
        }
        schema.insert("additionalProperties".into(), json!(false));
        Value::Object(schema)
    }
}

/// The `argv` templates parse and use declared inputs. An action without `args` declares
/// none, and what its `argv` uses becomes a required text input, as in gert.
fn check_argv(
    name: &str,
    action: &Action,
    declared: &mut Inputs,
    Place { located, pointer }: Place,
    out: &mut Vec<Diagnostic>,
) {
    let Inputs { properties: inputs, required } = declared;
    let strict = !action.args.is_empty();
    for (i, arg) in action.argv.iter().enumerate() {
        let at = format!("{pointer}/argv/{i}");
        match go_variables(arg) {
            Err(message) => out.push(located.at(
                Diagnostic::error(codes::TOOL_TEMPLATE, format!("argv template: {message}")),
                &at,
            )),
            Ok(vars) => {
                for var in vars {
                    if inputs.contains_key(&var) {
                        continue;
                    }
                    if strict {
                        let mut diagnostic = Diagnostic::error(
                            codes::TOOL_TEMPLATE,
                            format!(
                                "argv uses `{{{{ .{var} }}}}`, but action `{name}` declares no such input"
                            ),
                        );
                        let declared = inputs.keys().map(String::as_str);
                        diagnostic = diagnostic.suggest_or(
                            &var,
                            declared,
                            "declare it under the action's `args`",
                        );
                        out.push(located.at(diagnostic, &at));
                    } else {
                        // Marked, so a runbook that does not give it is warned, as gert warns.
                        let mut field = json!({ "type": "string" });
                        field[UNDECLARED] = json!(true);
                        inputs.insert(var.clone(), field);
                        required.insert(var);
                    }
                }
            }
        }
    }
}

/// `extract` produces declared outputs, with patterns that compile.
fn check_extract(
    contract: &Contract,
    action: &Action,
    Place { located, pointer }: Place,
    out: &mut Vec<Diagnostic>,
) {
    let declared_outputs: BTreeSet<&str> = contract.outputs.keys().map(String::as_str).collect();
    for (output, rule) in &action.extract {
        let at = format!("{pointer}/extract/{output}");
        if !declared_outputs.is_empty() && !declared_outputs.contains(output.as_str()) {
            let mut diagnostic = Diagnostic::error(
                codes::TOOL_CONTRACT,
                format!(
                    "`extract` produces `{output}`, which the contract's `outputs` do not declare"
                ),
            );
            diagnostic = diagnostic.suggest(output, declared_outputs.iter().copied());
            out.push(located.at_key(diagnostic, &at));
        }
        if let Some(pattern) = &rule.pattern
            && let Err(error) = Regex::new(pattern)
        {
            out.push(located.at(
                Diagnostic::error(
                    codes::TOOL_EXECUTION,
                    format!("extract pattern does not compile: {error}"),
                ),
                &format!("{at}/pattern"),
            ));
        }
    }
}

fn action_name_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^[A-Za-z][A-Za-z0-9_-]*$").unwrap_or_else(|e| panic!("{e}")))
}

fn field_schema(field: &ContractField) -> Value {
    let mut schema = Map::new();
    if let Some(ty) = field.field_type.json_schema_type() {
        schema.insert("type".into(), json!(ty));
    }
    if let Some(description) = &field.description {
        schema.insert("description".into(), json!(description));
    }
    if let Some(allowed) = &field.allowed {
        schema.insert("enum".into(), json!(allowed));
    }
    if let Some(default) = &field.default {
        schema.insert("default".into(), default.clone());
    }
    Value::Object(schema)
}

fn output_schema(contract: &Contract, action: &Action) -> Value {
    let mut properties: Map<String, Value> =
        contract.outputs.iter().map(|(name, field)| (name.clone(), field_schema(field))).collect();
    for name in action.capture.keys().chain(action.extract.keys()) {
        properties.entry(name.clone()).or_insert_with(|| json!({}));
    }
    json!({ "type": "object", "properties": properties })
}

/// Apply an action's contract over the tool's; a relaxation is an error (kernel-v0 §4).
fn tighten(
    base: &Contract,
    action: &Contract,
    located: &Located,
    pointer: &str,
    out: &mut Vec<Diagnostic>,
) -> Contract {
    let mut relax = |property: &str, from: &str, to: &str| {
        out.push(located.at(
            Diagnostic::error(
                codes::TOOL_CONTRACT,
                format!("the action relaxes `{property}` from {from} to {to}; an action's contract may only tighten the tool's"),
            ),
            &pointer_push(pointer, property),
        ));
    };
    let base_effects = base.side_effects.unwrap_or(false);
    if base_effects && action.side_effects == Some(false) {
        relax("side_effects", "true", "false");
    }
    if base.deterministic == Some(false) && action.deterministic == Some(true) {
        relax("deterministic", "false", "true");
    }
    if base.idempotent == Some(false) && action.idempotent == Some(true) {
        relax("idempotent", "false", "true");
    }
    for (property, base_tags, action_tags) in
        [("reads", &base.reads, &action.reads), ("writes", &base.writes, &action.writes)]
    {
        if let (Some(base_tags), Some(action_tags)) = (base_tags, action_tags)
            && let Some(missing) = base_tags.iter().find(|t| !action_tags.contains(t))
        {
            relax(property, &format!("including `{missing}`"), "without it");
        }
    }
    let mut merged = base.clone();
    merged.inputs.extend(action.inputs.clone());
    merged.outputs.extend(action.outputs.clone());
    merged.side_effects = action.side_effects.or(base.side_effects);
    merged.effects = match (&base.effects, &action.effects) {
        (Some(a), Some(b)) => {
            Some(a.iter().chain(b).cloned().collect::<BTreeSet<_>>().into_iter().collect())
        }
        (a, b) => b.clone().or_else(|| a.clone()),
    };
    merged.deterministic = action.deterministic.or(base.deterministic);
    merged.idempotent = action.idempotent.or(base.idempotent);
    merged.risk = action.risk.or(base.risk);
    let union = |a: &Option<Vec<String>>, b: &Option<Vec<String>>| match (a, b) {
        (Some(a), Some(b)) => {
            Some(a.iter().chain(b).cloned().collect::<BTreeSet<_>>().into_iter().collect())
        }
        (a, b) => b.clone().or_else(|| a.clone()),
    };
    merged.reads = union(&base.reads, &action.reads);
    merged.writes = union(&base.writes, &action.writes);
    merged
}

/// Jig's side effects for a contract: `effects` when given; else `side_effects: true` means
/// `write`, `false` means `read` (or nothing when the contract reads nothing); a contract that
/// says neither is treated as able to do anything a program can (`exec`).
fn contract_effects(contract: &Contract, tool: &GertTool) -> Vec<SideEffect> {
    let read_only = tool.governance.as_ref().and_then(|g| g.read_only).unwrap_or(false);
    let mut effects: Vec<SideEffect> = match (&contract.effects, contract.side_effects) {
        // Resource tags alone say nothing of the classes: `side_effects` may still.
        (Some(effects), side_effects) if effects.iter().all(|e| e.known().is_none()) => {
            match side_effects {
                Some(true) => vec![SideEffect::Write],
                _ => Vec::new(),
            }
        }
        (Some(effects), _) => effects.iter().filter_map(EffectTag::known).collect(),
        (None, Some(true)) => vec![SideEffect::Write],
        (None, Some(false)) => {
            if contract.reads.as_ref().is_some_and(|r| !r.is_empty()) {
                vec![SideEffect::Read]
            } else {
                Vec::new()
            }
        }
        (None, None) if read_only => vec![SideEffect::Read],
        (None, None) => vec![SideEffect::Exec],
    };
    effects.retain(|e| *e != SideEffect::None);
    effects.sort();
    effects.dedup();
    effects
}

/// The input-schema keyword of an input only an action's `argv` uses (its contract does not list
/// it): required by the tool, but a runbook step that does not give it is a warning, as in gert.
pub const UNDECLARED: &str = "x-jig-argv-only";

/// The contract's `effects` that are resource tags (`azure`, `kubernetes`), not classes.
fn resource_tags(contract: &Contract) -> Vec<String> {
    let tags = contract.effects.iter().flatten().filter(|e| e.known().is_none());
    let mut tags: Vec<String> = tags.map(|e| e.as_str().to_owned()).collect();
    tags.sort();
    tags.dedup();
    tags
}

/// Kernel-v0 §9 risk classification; a resource tag is a side effect on that resource.
fn kernel_risk(
    effects: &[SideEffect],
    tagged: bool,
    deterministic: bool,
    idempotent: bool,
) -> Risk {
    let side_effects = tagged || effects.iter().any(|e| e.is_side_effect());
    match (side_effects, idempotent, deterministic) {
        (false, _, _) => Risk::Low,
        (true, true, _) => Risk::Medium,
        (true, false, true) => Risk::High,
        (true, false, false) => Risk::Critical,
    }
}
