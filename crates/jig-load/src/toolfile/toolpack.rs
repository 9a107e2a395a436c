//! Seed 000 toolpacks: the rules beyond the schema, and the registry entry.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jig_model::protected_path::protected_by_name;
use jig_model::tool_def::{Dialect, SourceLocation, ToolExecution};
use jig_model::toolpack::{BUILTIN_TOOLS, Execution, Toolpack};
use jig_model::{Diagnostic, Risk, SideEffect, ToolDef};
use regex::Regex;
use serde_json::Value;

use super::templates::jinja_variables;
use super::{ToolContext, ToolFile, ToolFileKind, resolve_schema};
use crate::located::{Located, Suggest};
use crate::shape;
use crate::vfs::normalize;

pub(super) fn load(ctx: &ToolContext<'_>, located: &Located, file: &mut ToolFile) {
    let shape = if ctx.package.is_std() {
        shape::own::<Toolpack>(located, FileFormat::Toolpack)
    } else {
        shape::check::<Toolpack>(located, FileFormat::Toolpack)
    };
    let before = file.diagnostics.len();
    // Schemas are resolved even when the rest of the file is malformed, so that one run of
    // `jig validate` reports their problems too.
    let schema = |pointer: &str, file: &mut ToolFile| -> Option<Value> {
        located.doc.value.pointer(pointer)?;
        match resolve_schema(ctx, located, &file.path, pointer, &mut file.deps) {
            Ok(value) => Some(value),
            Err(diagnostic) => {
                file.diagnostics.push(diagnostic);
                None
            }
        }
    };
    let input = schema("/inputSchema", file);
    let output = schema("/outputSchema", file);
    let pack = match shape {
        Ok(pack) => pack,
        Err(mut found) => {
            file.diagnostics.append(&mut found);
            return;
        }
    };
    check_identity(ctx, located, &pack, &mut file.diagnostics);
    check_execution(ctx, located, &file.path, &pack, &mut file.diagnostics);
    check_caps(located, &pack, &mut file.diagnostics);
    check_env(located, &pack, &mut file.diagnostics);
    check_outputs(located, &pack, &mut file.diagnostics);
    check_side_effects(located, &pack, &mut file.diagnostics);
    if let Some(input) = &input {
        if input.get("type").and_then(Value::as_str) != Some("object") {
            file.diagnostics.push(located.at(
                Diagnostic::error(codes::SCHEMA_INVALID, "`inputSchema` must describe an object (`type: object`)")
                    .with_hint("tool arguments are always a JSON object; declare each argument under `properties`"),
                "/inputSchema",
            ));
        }
        check_templates(located, &pack, input, &mut file.diagnostics);
        check_given_by(located, input, &mut file.diagnostics);
        super::plan::check(located, &pack, input, &mut file.diagnostics);
    }
    let (Some(input), Some(output)) = (input, output) else { return };
    if file.diagnostics[before..].iter().any(Diagnostic::is_error) {
        return;
    }

    let side_effects = side_effects(&pack);
    let risk = pack.risk.unwrap_or_else(|| derived_risk(&side_effects));
    let mut def = ToolDef {
        id: pack.id.clone(),
        version: pack.version.clone(),
        description: pack.description.clone().unwrap_or_default(),
        tags: pack.tags.clone(),
        package: ctx.package.name.clone(),
        dialect: Dialect::Toolpack,
        deterministic: pack.deterministic,
        idempotent: pack.deterministic || side_effects.is_empty(),
        side_effects,
        risk,
        timeout_ms: pack.timeout_ms,
        limits: pack.limits,
        input_schema: input,
        output_schema: output,
        execution: ToolExecution::Toolpack(pack.execution.clone()),
        caps: pack.caps.clone(),
        env: pack.env.clone(),
        templating: pack.templating.clone(),
        outputs: pack.outputs.clone(),
        source: SourceLocation { file: located.display.clone(), line: 1 },
        hash: String::new(),
    };
    def.hash = def.compute_hash();
    file.defs.push(Arc::new(def));
    file.kind = Some(ToolFileKind::Toolpack);
}

fn check_identity(
    ctx: &ToolContext<'_>,
    located: &Located,
    pack: &Toolpack,
    out: &mut Vec<Diagnostic>,
) {
    let is_std = ctx.package.is_std();
    if !pack.id.contains('.') && !is_std {
        out.push(
            located.at(
                Diagnostic::error(
                    codes::TOOL_ID_RESERVED,
                    format!(
                        "`{}` is a single-segment id; those are reserved for the built-in catalog",
                        pack.id
                    ),
                )
                .with_hint(format!(
                    "add a namespace, e.g. `{}.{}`",
                    ctx.package.name.to_lowercase().replace('-', "_"),
                    pack.id
                )),
                "/id",
            ),
        );
    }
    if let Err(error) = semver::Version::parse(&pack.version) {
        out.push(
            located.at(
                Diagnostic::error(
                    codes::TOOL_VERSION,
                    format!("version `{}` is not a semantic version: {error}", pack.version),
                )
                .with_hint("use MAJOR.MINOR.PATCH, e.g. `1.0.0`"),
                "/version",
            ),
        );
    }
    if let Execution::Builtin(builtin) = &pack.execution {
        if !is_std {
            out.push(
                located.at(
                    Diagnostic::error(
                        codes::TOOL_BUILTIN,
                        "`kind: builtin` is only for the std package",
                    )
                    .with_hint("run your tool with `cli`, `python`, `node`, `php` or `http`"),
                    "/execution/kind",
                ),
            );
        } else {
            let name = builtin.name.as_deref().unwrap_or(&pack.id);
            if !BUILTIN_TOOLS.contains(&name) {
                let mut diagnostic = Diagnostic::error(
                    codes::TOOL_BUILTIN,
                    format!("`{name}` is not a built-in tool"),
                );
                diagnostic = diagnostic.suggest(name, BUILTIN_TOOLS);
                out.push(located.at(diagnostic, "/id"));
            }
        }
    }
}

fn non_empty(value: Option<&String>) -> bool {
    value.is_some_and(|s| !s.trim().is_empty())
}

fn check_execution(
    ctx: &ToolContext<'_>,
    located: &Located,
    path: &Path,
    pack: &Toolpack,
    out: &mut Vec<Diagnostic>,
) {
    let mut contract = |message: &str, hint: &str, pointer: &str| {
        out.push(
            located.at(Diagnostic::error(codes::TOOL_EXECUTION, message).with_hint(hint), pointer),
        );
    };
    let mut scripts: Vec<(&str, &String)> = Vec::new();
    match &pack.execution {
        // Plans follow seed 001's rules (`plan.rs`).
        Execution::Builtin(_)
        | Execution::Docker(_)
        | Execution::Slurm(_)
        | Execution::Hybrid(_) => {}
        Execution::Python(python) => {
            match (&python.module, non_empty(python.script.as_ref())) {
                (Some(module), _) if !python_module_pattern().is_match(module) => contract(
                    &format!("python `module` must be `package.module:callable`, not `{module}`"),
                    "e.g. `module: acme.tools.report:main`",
                    "/execution/module",
                ),
                (Some(_), true) => contract(
                    "python execution has both `module` and `script`",
                    "give one of them",
                    "/execution",
                ),
                (None, false) => contract(
                    "python execution needs `module: package.module:callable` or a non-empty `script`",
                    "e.g. `module: acme.tools.report:main`",
                    "/execution",
                ),
                _ => {}
            }
            if let Some(script) = python.script.as_ref().filter(|s| !s.trim().is_empty()) {
                scripts.push(("/execution/script", script));
            }
        }
        Execution::Node(node) => {
            let given = [
                non_empty(node.script.as_ref()),
                non_empty(node.node.as_ref()),
                non_empty(node.module.as_ref()),
            ];
            match given.iter().filter(|g| **g).count() {
                0 => contract(
                    "node execution needs a `script`, `module` or inline `node` program",
                    "e.g. `script: ./lib/report.mjs`",
                    "/execution",
                ),
                1 => {}
                _ => contract(
                    "node execution gives more than one of `script`, `module`, `node`",
                    "give one of them",
                    "/execution",
                ),
            }
            if let Some(script) = node.script.as_ref().filter(|s| !s.trim().is_empty()) {
                scripts.push(("/execution/script", script));
            }
        }
        Execution::Php(php) => {
            match (non_empty(php.php.as_ref()), non_empty(php.script.as_ref())) {
                (false, false) => contract(
                    "php execution needs a `script` or an inline `php` program",
                    "e.g. `script: ./bin/report.php`",
                    "/execution",
                ),
                (true, true) => contract(
                    "php execution has both `php` and `script`",
                    "give one of them",
                    "/execution",
                ),
                _ => {}
            }
            if let Some(script) = php.script.as_ref().filter(|s| !s.trim().is_empty()) {
                scripts.push(("/execution/script", script));
            }
        }
        Execution::Cli(cli) => {
            if cli.cmd.first().is_none_or(|program| program.trim().is_empty()) {
                contract(
                    "cli `cmd[0]` must name a program",
                    "e.g. `cmd: [git, log, --oneline]`",
                    "/execution/cmd/0",
                );
            }
        }
        Execution::Http(http) => {
            let url = http.url.trim_start();
            if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("{{"))
            {
                contract(
                    &format!("http `url` must start with http:// or https://, not `{}`", http.url),
                    "e.g. `url: https://api.example.com/v1/items`",
                    "/execution/url",
                );
            }
        }
    }
    for (pointer, script) in scripts {
        check_script(ctx, located, path, pointer, script, out);
    }
}

fn python_module_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A script path must exist beside the tool file and stay in the package.
fn check_script(
    ctx: &ToolContext<'_>,
    located: &Located,
    path: &Path,
    pointer: &str,
    script: &str,
    out: &mut Vec<Diagnostic>,
) {
    let base = path.parent().unwrap_or(Path::new(""));
    let target = normalize(&base.join(script));
    let inside = !Path::new(script).is_absolute() && target.starts_with(&ctx.package.root);
    let canonical = inside.then(|| ctx.package.vfs.canonicalize(&target)).flatten();
    let problem = match canonical {
        _ if !inside => Some(format!("script `{script}` is outside the package")),
        None => Some(format!("script `{script}` does not exist")),
        Some(c) if !c.starts_with(&ctx.package.root) => {
            Some(format!("script `{script}` links outside the package"))
        }
        Some(c) if !ctx.package.vfs.is_file(&c) => Some(format!("script `{script}` is not a file")),
        Some(_) => None,
    };
    if let Some(message) = problem {
        out.push(
            located.at(
                Diagnostic::error(codes::TOOL_EXECUTION, message)
                    .with_hint("scripts are paths relative to the tool file, inside the package"),
                pointer,
            ),
        );
    }
}

/// A tool's environment must not reach for the program loader (`LD_PRELOAD`, …): whatever it
/// sets is given inside the sandbox only, but a definition that tries is refused outright.
fn check_env(located: &Located, pack: &Toolpack, out: &mut Vec<Diagnostic>) {
    let Some(env) = &pack.env else { return };
    let set = env.set.keys().map(|name| (name, crate::yaml::pointer_push("/env/set", name)));
    let passed =
        env.passthrough.iter().enumerate().map(|(i, name)| (name, format!("/env/passthrough/{i}")));
    for (name, pointer) in set.chain(passed) {
        if jig_model::toolpack::loader_variable(name) {
            out.push(located.at(super::loader_variable(name), &pointer));
        }
    }
}

fn check_caps(located: &Located, pack: &Toolpack, out: &mut Vec<Diagnostic>) {
    let Some(filesystem) = pack.caps.as_ref().and_then(|c| c.filesystem.as_ref()) else { return };
    for (kind, paths) in [("read", &filesystem.read), ("write", &filesystem.write)] {
        for (i, entry) in paths.iter().enumerate() {
            let escapes = normalize(Path::new(entry)).starts_with("..");
            if Path::new(entry).is_absolute() || escapes || entry.trim().is_empty() {
                out.push(located.at(
                    Diagnostic::error(codes::TOOL_CAPS, format!("`caps.filesystem.{kind}` path `{entry}` is not inside the workspace"))
                        .with_hint("capability paths are relative to the workspace root, without `..`"),
                    &format!("/caps/filesystem/{kind}/{i}"),
                ));
            } else if let Some(what) = protected_by_name(entry, kind == "write") {
                out.push(located.at(
                    Diagnostic::error(codes::TOOL_CAPS, format!("`caps.filesystem.{kind}` path `{entry}` is {what}"))
                        .with_hint("no grant reaches Jig's state or a repository's internals, and manifests are read-only for tools"),
                    &format!("/caps/filesystem/{kind}/{i}"),
                ));
            }
        }
    }
}

fn check_outputs(located: &Located, pack: &Toolpack, out: &mut Vec<Diagnostic>) {
    let mut seen = BTreeSet::new();
    for (i, output) in pack.outputs.iter().enumerate() {
        let pointer = format!("/outputs/{i}/role");
        if output.role == "log" {
            out.push(
                located.at(
                    Diagnostic::error(
                        codes::TOOL_OUTPUTS,
                        "output role `log` is reserved: every run produces it",
                    )
                    .with_hint("pick another role name"),
                    &pointer,
                ),
            );
        } else if !seen.insert(output.role.as_str()) {
            out.push(located.at(
                Diagnostic::error(
                    codes::TOOL_OUTPUTS,
                    format!("output role `{}` is declared twice", output.role),
                ),
                &pointer,
            ));
        }
    }
}

fn check_side_effects(located: &Located, pack: &Toolpack, out: &mut Vec<Diagnostic>) {
    let Some(effects) = &pack.side_effects else { return };
    if effects.contains(&SideEffect::None) && effects.len() > 1 {
        out.push(
            located.at(
                Diagnostic::error(
                    codes::FIELD_INVALID,
                    "`sideEffects` lists `none` together with other effects",
                )
                .with_hint("use `[none]` alone for a pure tool"),
                "/sideEffects",
            ),
        );
    }
}

/// Templated strings of the execution block, with their pointers.
fn templated_strings(pack: &Toolpack) -> Vec<(String, &str)> {
    match &pack.execution {
        Execution::Cli(cli) => cli
            .cmd
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("/execution/cmd/{i}"), s.as_str()))
            .collect(),
        Execution::Http(http) => {
            let mut out = vec![("/execution/url".to_owned(), http.url.as_str())];
            out.extend(
                http.headers
                    .iter()
                    .map(|(k, v)| (crate::yaml::pointer_push("/execution/headers", k), v.as_str())),
            );
            if let Some(body) = &http.body {
                out.push(("/execution/body".to_owned(), body.as_str()));
            }
            out
        }
        Execution::Docker(plan) => plan_args(&plan.args),
        Execution::Slurm(plan) => plan_args(&plan.args),
        Execution::Hybrid(plan) => plan_args(&plan.args),
        _ => Vec::new(),
    }
}

fn plan_args(args: &[String]) -> Vec<(String, &str)> {
    args.iter().enumerate().map(|(i, s)| (format!("/execution/args/{i}"), s.as_str())).collect()
}

/// `x-jig-from` on an input property: who gives it besides the caller (docs/mcp.md, "Inputs
/// the agent does not give"). A misspelling would quietly let the agent give it.
fn check_given_by(located: &Located, input: &Value, out: &mut Vec<Diagnostic>) {
    let Some(properties) = input.get("properties").and_then(Value::as_object) else { return };
    for (name, declaration) in properties {
        let pointer =
            format!("/inputSchema/properties/{}", name.replace('~', "~0").replace('/', "~1"));
        let Some(from) = declaration.get("x-jig-from") else { continue };
        match from.as_str() {
            Some("person") => {}
            Some("model") => {
                if !declaration.get("x-jig-prompt").is_some_and(Value::is_string) {
                    out.push(located.at(
                        Diagnostic::error(codes::SCHEMA_INVALID, format!("`{name}` is written by the model but has no `x-jig-prompt`"))
                            .with_hint("write the prompt the client's model answers, with `{name}` for the call's other arguments"),
                        &format!("{pointer}/x-jig-from"),
                    ));
                }
                if declaration.get("type").and_then(Value::as_str) != Some("string") {
                    out.push(located.at(
                        Diagnostic::error(
                            codes::SCHEMA_INVALID,
                            format!("`{name}` is written by the model: it must be `type: string`"),
                        ),
                        &format!("{pointer}/type"),
                    ));
                }
            }
            _ => out.push(located.at(
                Diagnostic::error(
                    codes::SCHEMA_INVALID,
                    format!("`x-jig-from` of `{name}` is {from}: write `person` or `model`"),
                ),
                &format!("{pointer}/x-jig-from"),
            )),
        }
    }
}

fn check_templates(located: &Located, pack: &Toolpack, input: &Value, out: &mut Vec<Diagnostic>) {
    let strings = templated_strings(pack);
    let Some(templating) = &pack.templating else {
        if let Some((pointer, _)) =
            strings.iter().find(|(_, s)| s.contains("{{") || s.contains("{%"))
        {
            out.push(located.at(
                Diagnostic::warning(codes::TOOL_TEMPLATE, "this looks like a template, but the tool declares no `templating`")
                    .with_hint("add `templating: {engine: jinja2}`; without it the text is passed literally"),
                pointer,
            ));
        }
        return;
    };
    let mut known: BTreeSet<&str> = templating.context.keys().map(String::as_str).collect();
    if let Some(props) = input.get("properties").and_then(Value::as_object) {
        known.extend(props.keys().map(String::as_str));
    }
    for (pointer, source) in strings {
        match jinja_variables(source) {
            Err(message) => out.push(located.at(
                Diagnostic::error(
                    codes::TOOL_TEMPLATE,
                    format!("template does not parse: {message}"),
                ),
                &pointer,
            )),
            Ok(vars) => {
                for var in vars.iter().filter(|v| !known.contains(v.as_str())) {
                    let mut diagnostic = Diagnostic::error(
                        codes::TOOL_TEMPLATE,
                        format!(
                            "template uses `{var}`, which is neither in `inputSchema.properties` nor in `templating.context`"
                        ),
                    );
                    diagnostic = diagnostic.suggest(var, known.iter().copied());
                    out.push(located.at(diagnostic, &pointer));
                }
            }
        }
    }
}

/// Declared effects without `none`; when undeclared, what the execution kind can do.
fn side_effects(pack: &Toolpack) -> Vec<SideEffect> {
    match &pack.side_effects {
        Some(declared) => {
            let mut effects: Vec<SideEffect> =
                declared.iter().copied().filter(|e| *e != SideEffect::None).collect();
            effects.sort();
            effects.dedup();
            effects
        }
        None => match pack.execution {
            Execution::Http(_) => vec![SideEffect::Network],
            Execution::Builtin(_) => Vec::new(),
            Execution::Python(_)
            | Execution::Node(_)
            | Execution::Php(_)
            | Execution::Cli(_)
            | Execution::Slurm(_)
            | Execution::Hybrid(_) => vec![SideEffect::Exec],
            Execution::Docker(ref plan) if plan.network.is_some() => {
                vec![SideEffect::Network, SideEffect::Exec]
            }
            Execution::Docker(_) => vec![SideEffect::Exec],
        },
    }
}

fn derived_risk(effects: &[SideEffect]) -> Risk {
    if effects.iter().any(|e| matches!(e, SideEffect::Write | SideEffect::Exec)) {
        Risk::High
    } else if effects.contains(&SideEffect::Network) {
        Risk::Medium
    } else {
        Risk::Low
    }
}
