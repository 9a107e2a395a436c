//! One `*.tool.yaml` file → its registry entries, or the reasons it has none.
//!
//! The dialect is chosen by `apiVersion`: absent for a toolpack (seed 000), `tool/v0` for gert.
//! Each dialect's module checks the rules a schema cannot express and builds [`ToolDef`]s with
//! fully resolved schemas.

pub(crate) mod gert;
mod plan;
mod templates;
mod toolpack;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::diagnostic::codes;
use jig_model::gert_tool::GertTool;
use jig_model::{Diagnostic, ToolDef};
use serde_json::Value;

use crate::located::{Located, Place};
use crate::package::{Package, PackageRole};
use crate::refs::{self, RefContext, SchemaFiles};

/// What the loader needs to turn a tool file into registry entries.
pub(crate) struct ToolContext<'a> {
    /// The package the file belongs to.
    pub package: &'a Package,
    /// Shared `$ref` targets.
    pub files: &'a SchemaFiles,
    /// How paths are shown.
    pub display: &'a (dyn Fn(&Path) -> String + Sync),
}

impl ToolContext<'_> {
    /// Registry-id prefix for tool/v0 tools: none in the root package, `<name>/` elsewhere.
    fn id_prefix(&self) -> String {
        match self.package.role {
            PackageRole::Root => String::new(),
            PackageRole::Required | PackageRole::Std => format!("{}/", self.package.name),
        }
    }

    fn refs(&self) -> RefContext<'_> {
        RefContext {
            vfs: self.package.vfs.as_ref(),
            package_root: &self.package.root,
            files: self.files,
            display: self.display,
        }
    }
}

/// The dialect-specific content of a valid tool file.
#[derive(Debug, Clone)]
pub(crate) enum ToolFileKind {
    /// A toolpack with this id.
    Toolpack,
    /// A tool/v0 tool.
    Gert(Arc<GertTool>),
}

/// A tool file after loading.
#[derive(Debug, Clone)]
pub(crate) struct ToolFile {
    /// Its path.
    pub path: PathBuf,
    /// Its name below the tools dir, without `.tool.yaml`.
    pub stem: String,
    /// The registry entries it defines (none when it has errors).
    pub defs: Vec<Arc<ToolDef>>,
    /// The dialect, when the file is valid.
    pub kind: Option<ToolFileKind>,
    /// Problems found.
    pub diagnostics: Vec<Diagnostic>,
    /// Other files it was built from (`$ref` targets).
    pub deps: BTreeSet<PathBuf>,
    /// Where the file's identity is written (`id`, or `meta.name`), for duplicate-id reports.
    pub identity: Option<Place>,
}

/// Load one tool file.
pub(crate) fn load(ctx: &ToolContext<'_>, path: &Path) -> ToolFile {
    let stem = ctx.package.tool_stem(path);
    let display = (ctx.display)(path);
    let mut file = ToolFile {
        path: path.to_path_buf(),
        stem,
        defs: Vec::new(),
        kind: None,
        diagnostics: Vec::new(),
        deps: BTreeSet::new(),
        identity: None,
    };
    let located =
        match refs::read_document(ctx.package.vfs.as_ref(), &ctx.package.root, path, &display) {
            Ok(located) => located,
            Err(diagnostic) => {
                file.diagnostics.push(diagnostic);
                return file;
            }
        };
    match located.doc.value.get("apiVersion") {
        None if located.doc.value.is_object() => toolpack::load(ctx, &located, &mut file),
        Some(Value::String(api)) if api == "tool/v0" => gert::load(ctx, &located, &mut file),
        Some(other) => {
            let shown = other.as_str().map_or_else(|| other.to_string(), str::to_owned);
            file.diagnostics.push(
                located.at(
                    Diagnostic::error(
                        codes::API_VERSION,
                        format!("unknown tool apiVersion `{shown}`"),
                    )
                    .with_hint(
                        "gert tools use `apiVersion: tool/v0`; toolpacks have no apiVersion",
                    ),
                    "/apiVersion",
                ),
            );
        }
        None => {
            file.diagnostics.push(
                located.at(
                    Diagnostic::error(codes::FIELD_TYPE, "a tool file must hold a map of fields")
                        .with_hint("see schemas/tool-file.schema.json"),
                    "",
                ),
            );
        }
    }
    let pointer = if located.doc.value.get("apiVersion").is_some() { "/meta/name" } else { "/id" };
    file.identity = Some(located.place(pointer));
    file
}

/// Resolve a schema's `$ref`s and check it is a valid JSON Schema; `pointer` is where it sits
/// in the file.
fn resolve_schema(
    ctx: &ToolContext<'_>,
    located: &Located,
    path: &Path,
    pointer: &str,
    deps: &mut BTreeSet<PathBuf>,
) -> Result<Value, Diagnostic> {
    let schema = located.doc.value.pointer(pointer).cloned().unwrap_or(Value::Null);
    let resolved = refs::resolve(&ctx.refs(), &schema, located, path, pointer);
    deps.extend(resolved.deps);
    let value = resolved.value?;
    // The built-ins' schemas are Jig's own, embedded in the binary from toolpacks/std, which
    // the loader's tests load as a project of its own, where they are checked
    // (`the_std_package_defines_exactly_the_27_builtins_of_seed_002`). Checking them again at
    // every start compiled 54 schemas for nothing: a fifth of a one-shot `jig call`.
    if ctx.package.is_std() {
        return Ok(value);
    }
    if let Err(problem) = refs::check_schema(&value) {
        let at = format!("{pointer}{}", problem.pointer);
        let hint =
            problem.hint.unwrap_or_else(|| "schemas follow JSON Schema draft 2020-12".to_owned());
        return Err(located.at(
            Diagnostic::error(
                codes::SCHEMA_INVALID,
                format!("`{}` is not a valid JSON Schema: {}", &pointer[1..], problem.message),
            )
            .with_hint(hint),
            &at,
        ));
    }
    Ok(value)
}

/// The diagnostic for a tool environment's loader variable `name`.
fn loader_variable(name: &str) -> Diagnostic {
    Diagnostic::error(
        codes::TOOL_ENV,
        format!(
            "`{name}` controls the program loader; a tool's environment may not set or pass it"
        ),
    )
    .with_hint("ship what the tool needs inside its own program, or install it on the system")
}
