//! The AST built-ins over [`jig_ast::Index`]: `ast_generate`, `ast_query`, `ast_edit`,
//! `ast_validate` and `ast_external`, plus the lifecycle's sync step (re-parse touched files)
//! and rule `code.ast.parsed` for writes.
//!
//! The index lives as long as the engine; a tool that needs it when it is empty indexes the
//! whole workspace first, and every use re-checks indexed files' stamps, so edits made outside
//! Jig are seen.

mod edit;
mod lsp;
mod validate;

use std::sync::{MutexGuard, PoisonError};

use jig_ast::{Filter, Index, Language, Source, Stamp};
use jig_model::ErrorCode;
use jig_model::policy::Enforcement;
use serde_json::{Value, json};

pub(super) use edit::edit;
pub(super) use lsp::external;
pub(super) use validate::validate;

use super::call::Call;
use super::walk::Scope;
use jig_exec::{Output, ToolError};

/// Files indexed at most when a tool indexes the workspace by itself.
const IMPLICIT_MAX_FILES: usize = 50_000;

/// Largest source file parsed.
const MAX_SOURCE: u64 = 16 * 1024 * 1024;

/// The rule checked on every write of a source file.
const PARSED_RULE: &str = "code.ast.parsed";

pub(super) fn generate(call: &Call) -> Result<Output, ToolError> {
    let globs = call.strings("paths");
    let language = call.opt_str("language");
    let max = call.count("max_files", 5000);
    let (mut sources, truncated) = list_sources(call, &globs, language, max)?;
    let mut index = lock(call);
    let refresh = index.refresh(&sources, call.bool("incremental", true), &|path| {
        call.workspace.read(path, MAX_SOURCE).map_err(|e| std::io::Error::other(e.to_string()))
    });
    call.check_time()?;
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    let listed: std::collections::BTreeSet<&str> =
        sources.iter().map(|s| s.path.as_str()).collect();
    let mut errors: Vec<Value> = index
        .files()
        .filter(|(path, _)| listed.contains(path))
        .filter_map(|(_, entry)| entry.error.as_ref())
        .map(|e| json!({ "file": e.file, "line": e.line, "message": e.message }))
        .collect();
    errors.extend(
        refresh.unreadable.iter().map(|(file, why)| json!({ "file": file, "message": why })),
    );
    let symbols: usize =
        index.files().filter(|(p, _)| listed.contains(p)).map(|(_, e)| e.symbols.len()).sum();
    Ok(Output::data(json!({
        "parsed_files": refresh.parsed,
        "indexed_files": listed.len(),
        "symbols": symbols,
        "errors": errors,
        "truncated": truncated,
    })))
}

pub(super) fn query(call: &Call) -> Result<Output, ToolError> {
    let filter = filter(call.args.get("where"))?;
    let limit = call.count("limit", 200);
    let index = fresh_index(call)?;
    let matching: Vec<&jig_ast::Symbol> = index.symbols().filter(|s| filter.matches(s)).collect();
    let nodes: Vec<&jig_ast::Symbol> = matching.iter().take(limit).copied().collect();
    Ok(Output::data(json!({ "nodes": nodes, "truncated": matching.len() > limit })))
}

/// The `where` object as a filter.
pub(super) fn filter(value: Option<&Value>) -> Result<Filter, ToolError> {
    let field = |name: &str| value.and_then(|w| w.get(name)).and_then(Value::as_str);
    Filter::new(
        field("type"),
        field("name_like"),
        field("file_glob"),
        value.and_then(|w| w.get("exported")).and_then(Value::as_bool),
    )
    .map_err(|e| ToolError::new(ErrorCode::ValidationFail, format!("argument `where`: {e}")))
}

/// The index, brought up to date: the whole workspace when it is empty, else the indexed
/// files whose stamps changed (and those deleted dropped).
pub(super) fn fresh_index(call: &Call) -> Result<MutexGuard<'_, Index>, ToolError> {
    let empty = lock(call).is_empty();
    let sources = if empty {
        list_sources(call, &["**"], None, IMPLICIT_MAX_FILES)?.0
    } else {
        let paths: Vec<String> = lock(call).files().map(|(p, _)| p.to_owned()).collect();
        let mut sources = Vec::with_capacity(paths.len());
        let mut gone = Vec::new();
        for path in paths {
            match stamp(call, &path) {
                Some(stamp) => sources.push(Source { path, stamp }),
                None => gone.push(path),
            }
        }
        let mut index = lock(call);
        for path in gone {
            index.forget(&path);
        }
        drop(index);
        sources
    };
    let mut index = lock(call);
    index.refresh(&sources, true, &|path| {
        call.workspace.read(path, MAX_SOURCE).map_err(|e| std::io::Error::other(e.to_string()))
    });
    call.check_time()?;
    Ok(index)
}

/// Source files matching `globs` (and `language`), at most `max`, with their stamps.
fn list_sources(
    call: &Call,
    globs: &[&str],
    language: Option<&str>,
    max: usize,
) -> Result<(Vec<Source>, bool), ToolError> {
    let mut found = std::collections::BTreeMap::new();
    for glob in globs {
        let scope = Scope::new(call, Some(glob))?;
        let sources = scope.collect(call, false, true, |entry, path| {
            let wanted = Language::of_path(&path)
                .is_some_and(|l| language.is_none_or(|name| l.name() == name));
            let meta = entry.metadata().ok().filter(|_| wanted)?;
            Some(Source { path, stamp: stamp_of(&meta) })
        })?;
        for source in sources {
            found.insert(source.path.clone(), source);
        }
    }
    let truncated = found.len() > max;
    Ok((found.into_values().take(max).collect(), truncated))
}

fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    stamp_at(meta.modified().ok(), meta.len())
}

/// A file's stamp, through the sandbox; `None` when it is gone.
fn stamp(call: &Call, path: &str) -> Option<Stamp> {
    let meta = call.workspace.dir().metadata(path).ok()?;
    Some(stamp_at(meta.modified().ok().map(cap_std::time::SystemTime::into_std), meta.len()))
}

fn stamp_at(modified: Option<std::time::SystemTime>, len: u64) -> Stamp {
    let modified_ns = modified
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Stamp { modified_ns, len }
}

pub(super) fn lock(call: &Call) -> MutexGuard<'_, Index> {
    call.index.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Source files read once each, for looking inside symbols' definitions.
#[derive(Debug, Default)]
pub(super) struct Bodies(std::collections::HashMap<String, String>);

impl Bodies {
    /// The 1-based line of the first `needle` in `symbol`'s definition, if it has one.
    pub fn find(
        &mut self,
        call: &Call,
        symbol: &jig_ast::Symbol,
        needle: &str,
    ) -> Result<Option<usize>, ToolError> {
        if !self.0.contains_key(&symbol.file) {
            let bytes = call.workspace.read(&symbol.file, MAX_SOURCE)?;
            self.0.insert(symbol.file.clone(), String::from_utf8_lossy(&bytes).into_owned());
        }
        let body = self.0[&symbol.file].get(symbol.span.start..symbol.span.end).unwrap_or_default();
        Ok(body.find(needle).map(|at| symbol.line + body[..at].matches('\n').count()))
    }
}

/// The lifecycle's sync step (seed 002 §8): files a call wrote are re-parsed, files it removed
/// dropped — when the index is in use at all.
pub(super) fn sync(call: &Call, touched: &[String]) {
    // Most calls write nothing: no need to look at the index.
    if touched.is_empty() || lock(call).is_empty() {
        return;
    }
    for path in touched {
        match stamp(call, path) {
            Some(stamp) if Language::of_path(path).is_some() => {
                if let Ok(bytes) = call.workspace.read(path, MAX_SOURCE) {
                    lock(call).update(path, stamp, &bytes);
                }
            }
            Some(_) => {}
            None => lock(call).forget(path),
        }
    }
}

/// How rule `code.ast.parsed` applies to writes here: from the policy's `validators`, or
/// `ast.validate_on_edit` (blocking).
fn parsed_rule(call: &Call) -> Option<Enforcement> {
    let config = call.policy.config();
    config.validators.iter().find(|v| v.rule == PARSED_RULE).map(|v| v.enforcement).or_else(|| {
        config.ast.as_ref().filter(|a| a.validate_on_edit).map(|_| Enforcement::Blocking)
    })
}

/// Rule `code.ast.parsed` for new content of `path`: a blocking violation refuses the write
/// (nothing is written); a warning is returned to go with the result.
pub(super) fn check_write(
    call: &Call,
    path: &str,
    content: &[u8],
) -> Result<Option<Value>, ToolError> {
    let Some(enforcement) = parsed_rule(call) else { return Ok(None) };
    let Some(Err(error)) = jig_ast::check_syntax(path, content) else { return Ok(None) };
    let violation = json!({
        "rule": PARSED_RULE,
        "enforcement": enforcement,
        "file": path,
        "line": error.line,
        "message": error.message,
    });
    if enforcement == Enforcement::Blocking {
        return Err(ToolError::new(
            ErrorCode::AstParse,
            format!(
                "`{path}` would not parse (line {}: {}); nothing was written",
                error.line, error.message
            ),
        )
        .with_details(json!({ "rule": PARSED_RULE, "violations": [violation] })));
    }
    Ok(Some(violation))
}
