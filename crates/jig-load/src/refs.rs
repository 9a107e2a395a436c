//! `$ref` resolution for tool schemas, and their JSON Schema meta-validation.
//!
//! External references (`schemas/input.json`, `common.yaml#/$defs/name`) are inlined, so every
//! resolved schema is self-contained: the engine validates with it, MCP clients receive it, and
//! nothing is ever fetched at call time. Resolution is relative to the referencing file
//! (seed 000), nested chains included, and confined to the package root: remote URLs, `file://`,
//! absolute paths, `..` escapes and symlinks pointing outside are refused, as are cycles.
//! References inside the tool file that start with `#` are left for the JSON Schema validator,
//! which resolves them against the schema itself; `#` references inside an external file point
//! into that file and are inlined like any other.
//!
//! Each target is resolved once per schema: its first use is inlined, later uses of a large one
//! (over 64 nodes) refer to one shared copy under the resolved schema's `$defs`. Inlining every use would grow exponentially
//! with fan-out (seven small schemas whose ten properties each reference the next once took
//! 4.8 s and 1.8 GB); the resolved size is also capped (`ref.too_large`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use serde_json::{Map, Value, json};

use crate::located::Located;
use crate::vfs::{ReadError, Vfs, normalize};
use crate::yaml::{self, pointer_push};

/// The most nodes a resolved schema may have.
pub(crate) const MAX_RESOLVED_NODES: usize = 1_000_000;

/// A target resolved again is shared through `$defs` above this many nodes, inlined below it:
/// inlining small targets costs little, inlining large ones repeatedly is what explodes.
const SHARE_OVER_NODES: usize = 64;

/// Nodes of a JSON value.
fn node_count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(node_count).sum(),
        Value::Object(map) => map.values().map(node_count).sum(),
        _ => 0,
    }
}

/// Keywords whose values are data, not schemas: a `$ref` inside them is just text.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "examples", "default"];

/// Parsed `$ref` target files, shared by every tool of a load.
#[derive(Debug, Default)]
pub(crate) struct SchemaFiles {
    files: RwLock<HashMap<PathBuf, Arc<Result<Located, Diagnostic>>>>,
    /// Lexical path → canonical path, when it is a file. Thousands of tools reference the same
    /// few files; resolving symlinks once per file instead of once per reference matters.
    canonical: RwLock<HashMap<PathBuf, Option<PathBuf>>>,
}

impl SchemaFiles {
    /// Forget the given files (they changed on disk).
    pub(crate) fn invalidate(&self, paths: &[PathBuf]) {
        if let Ok(mut files) = self.files.write() {
            for path in paths {
                files.remove(path);
            }
        }
        // Any change may have added or moved a symlink.
        if let Ok(mut canonical) = self.canonical.write() {
            canonical.clear();
        }
    }

    /// The canonical path of `path` if it is an existing file, remembered.
    fn canonical_file(&self, path: &Path, vfs: &dyn Vfs) -> Option<PathBuf> {
        if let Some(found) = self.canonical.read().ok().and_then(|c| c.get(path).cloned()) {
            return found;
        }
        let found = vfs.canonicalize(path).filter(|c| vfs.is_file(c));
        if let Ok(mut canonical) = self.canonical.write() {
            canonical.insert(path.to_path_buf(), found.clone());
        }
        found
    }

    fn get(&self, path: &Path, vfs: &dyn Vfs, display: &str) -> Arc<Result<Located, Diagnostic>> {
        if let Some(found) = self.files.read().ok().and_then(|f| f.get(path).cloned()) {
            return found;
        }
        // `path` is canonical, so it is not a link: its own directory serves as the root.
        let loaded = Arc::new(read_document(vfs, path.parent().unwrap_or(path), path, display));
        if let Ok(mut files) = self.files.write() {
            files.insert(path.to_path_buf(), Arc::clone(&loaded));
        }
        loaded
    }
}

/// Read and parse one JSON or YAML file of the package rooted at `root` into a [`Located`]. A
/// symbolic link is followed only when it stays inside `root`.
pub(crate) fn read_document(
    vfs: &dyn Vfs,
    root: &Path,
    path: &Path,
    display: &str,
) -> Result<Located, Diagnostic> {
    let caps = yaml::Caps::DEFAULT;
    let text =
        vfs.read_within(path, root, caps.max_bytes).map_err(|e| read_error(e, display, &caps))?;
    let doc = yaml::parse(&text, &caps).map_err(|e| {
        let mut diagnostic = Diagnostic::error(e.code, e.message).in_file(display);
        if let Some(pos) = e.pos {
            diagnostic = diagnostic.at_line(pos.line, pos.column);
        }
        match e.hint {
            Some(hint) => diagnostic.with_hint(hint),
            None => diagnostic,
        }
    })?;
    Ok(Located { display: display.to_owned(), doc: Arc::new(doc) })
}

/// A read failure as a diagnostic.
pub(crate) fn read_error(error: ReadError, display: &str, caps: &yaml::Caps) -> Diagnostic {
    match error {
        ReadError::NotFound => Diagnostic::error(codes::FILE_IO, "file not found").in_file(display),
        ReadError::TooLarge(size) => {
            let e = yaml::too_large(size, caps);
            Diagnostic::error(e.code, e.message)
                .in_file(display)
                .with_hint(e.hint.unwrap_or_default())
        }
        ReadError::Encoding => {
            Diagnostic::error(codes::FILE_ENCODING, "file is not valid UTF-8").in_file(display)
        }
        ReadError::Io(message) => Diagnostic::error(codes::FILE_IO, message).in_file(display),
        ReadError::Symlink | ReadError::Outside => Diagnostic::error(
            codes::PACKAGE_PATH,
            "this file is a symlink to a place outside the package",
        )
        .in_file(display)
        .with_hint("move the file into the package, or `require` the package it belongs to"),
    }
}

/// What resolution needs to know about the package.
pub(crate) struct RefContext<'a> {
    /// Reads files.
    pub vfs: &'a dyn Vfs,
    /// The package root, canonical: nothing outside may be referenced.
    pub package_root: &'a Path,
    /// Shared parsed targets.
    pub files: &'a SchemaFiles,
    /// How a path is shown in diagnostics.
    pub display: &'a (dyn Fn(&Path) -> String + Sync),
}

/// A resolved schema (or why it could not be resolved) and the files it depends on.
pub(crate) struct Resolved {
    /// The self-contained schema.
    pub value: Result<Value, Diagnostic>,
    /// Every external file the resolution read or looked for — also when it failed, so that
    /// creating a missing file triggers the reload that fixes the tool.
    pub deps: BTreeSet<PathBuf>,
}

struct Frame {
    file: Arc<Located>,
    path: PathBuf,
    external: bool,
}

/// An external target: a file and a fragment inside it.
type Target = (PathBuf, String);

struct Resolver<'a, 'c> {
    ctx: &'a RefContext<'c>,
    /// Targets being resolved, outermost first: meeting one again means it is recursive.
    stack: Vec<Target>,
    deps: BTreeSet<PathBuf>,
    /// Recursive targets and the `$defs` name each gets in the resolved schema.
    recursive: BTreeMap<Target, String>,
    /// Resolved recursive and shared targets, by `$defs` name.
    defs: BTreeMap<String, Value>,
    /// Targets resolved so far: a second use shares the first's resolution.
    done: HashMap<Target, Value>,
    /// Nodes walked, against [`MAX_RESOLVED_NODES`].
    nodes: usize,
}

/// Resolve every external `$ref` in `schema`, found at `pointer` of `file` (whose path is
/// `file_path`).
pub(crate) fn resolve(
    ctx: &RefContext<'_>,
    schema: &Value,
    file: &Located,
    file_path: &Path,
    pointer: &str,
) -> Resolved {
    let mut resolver = Resolver {
        ctx,
        stack: Vec::new(),
        deps: BTreeSet::new(),
        recursive: BTreeMap::new(),
        defs: BTreeMap::new(),
        done: HashMap::new(),
        nodes: 0,
    };
    let frame =
        Frame { file: Arc::new(file.clone()), path: file_path.to_path_buf(), external: false };
    let mut value = schema.clone();
    let outcome = resolver.walk(&mut value, &frame, &mut pointer.to_owned()).and_then(|()| {
        if !resolver.defs.is_empty() {
            resolver.check_pure_cycles(file, pointer)?;
            let Value::Object(root) = &mut value else {
                unreachable!("a recursive target is reached through an object")
            };
            let defs = root.entry("$defs").or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(defs) = defs {
                defs.extend(std::mem::take(&mut resolver.defs));
            }
        }
        Ok(())
    });
    Resolved { value: outcome.map(|()| value), deps: resolver.deps }
}

/// Append an escaped pointer token to `pointer` in place.
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    if token.contains(['~', '/']) {
        pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
    } else {
        pointer.push_str(token);
    }
}

impl Resolver<'_, '_> {
    /// Resolve `value` in place; `pointer` is its location (restored on return).
    fn walk(
        &mut self,
        value: &mut Value,
        frame: &Frame,
        pointer: &mut String,
    ) -> Result<(), Diagnostic> {
        self.nodes += 1;
        if self.nodes > MAX_RESOLVED_NODES {
            return Err(frame
                .file
                .at(
                    Diagnostic::error(
                        codes::REF_TOO_LARGE,
                        format!(
                            "with its `$ref`s resolved this schema has more than {MAX_RESOLVED_NODES} nodes"
                        ),
                    ),
                    pointer,
                )
                .with_hint("split the schema, or reference fewer large schemas"));
        }
        match value {
            Value::Array(items) => {
                let len = pointer.len();
                for (i, item) in items.iter_mut().enumerate() {
                    push_token(pointer, &i.to_string());
                    self.walk(item, frame, pointer)?;
                    pointer.truncate(len);
                }
            }
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    let reference = reference.clone();
                    if let Some(resolved) = self.reference(&reference, frame, pointer)? {
                        map.shift_remove("$ref");
                        if map.is_empty() {
                            *value = resolved;
                            return Ok(());
                        }
                        self.walk_object(map, frame, pointer)?;
                        merge_siblings(map, resolved);
                        return Ok(());
                    }
                }
                self.walk_object(map, frame, pointer)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn walk_object(
        &mut self,
        map: &mut Map<String, Value>,
        frame: &Frame,
        pointer: &mut String,
    ) -> Result<(), Diagnostic> {
        let len = pointer.len();
        for (key, child) in map.iter_mut() {
            if DATA_KEYWORDS.contains(&key.as_str()) {
                continue;
            }
            push_token(pointer, key);
            self.walk(child, frame, pointer)?;
            pointer.truncate(len);
        }
        Ok(())
    }

    /// The resolved target of `reference`, or `None` for a reference the validator resolves
    /// itself (a `#…` inside the tool's own schema).
    fn reference(
        &mut self,
        reference: &str,
        frame: &Frame,
        pointer: &str,
    ) -> Result<Option<Value>, Diagnostic> {
        let ref_pointer = pointer_push(pointer, "$ref");
        let fail = |code: &str, message: String| {
            frame.file.at(Diagnostic::error(code, message), &ref_pointer)
        };

        let (target_path, fragment) = if let Some(fragment) = reference.strip_prefix('#') {
            if !frame.external {
                return Ok(None);
            }
            (frame.path.clone(), fragment.to_owned())
        } else {
            if is_remote(reference) {
                return Err(fail(codes::REF_REMOTE, format!("`$ref: {reference}` points outside the package")).with_hint(
                    "Jig never fetches schemas: copy the schema into the package and reference it by relative path",
                ));
            }
            let (path_part, fragment) = reference.split_once('#').unwrap_or((reference, ""));
            if Path::new(path_part).is_absolute() {
                return Err(fail(
                    codes::REF_ESCAPE,
                    format!("`$ref: {reference}` is an absolute path"),
                )
                .with_hint("reference schema files by a path relative to the referencing file"));
            }
            let base = frame.path.parent().unwrap_or(Path::new(""));
            let joined = normalize(&base.join(path_part));
            self.deps.insert(joined.clone());
            if !joined.starts_with(self.ctx.package_root) {
                return Err(fail(
                    codes::REF_ESCAPE,
                    format!("`$ref: {reference}` leaves the package root"),
                )
                .with_hint("schemas must live inside the package that uses them"));
            }
            let Some(canonical) = self.ctx.files.canonical_file(&joined, self.ctx.vfs) else {
                let problem =
                    if self.ctx.vfs.is_dir(&joined) { "is not a file" } else { "does not exist" };
                return Err(fail(
                    codes::REF_NOT_FOUND,
                    format!("`$ref: {reference}`: `{}` {problem}", (self.ctx.display)(&joined)),
                ));
            };
            if !canonical.starts_with(self.ctx.package_root) {
                return Err(fail(
                    codes::REF_ESCAPE,
                    format!(
                        "`$ref: {reference}` resolves outside the package root through a symlink"
                    ),
                ));
            }
            (canonical, fragment.to_owned())
        };

        let key = (target_path.clone(), fragment.clone());
        if self.stack.contains(&key) {
            // A recursive schema (a tree, a linked list): inline it once, and refer to that
            // copy, kept under the resolved schema's `$defs`, from inside itself.
            let name = self.def_name(&key);
            return Ok(Some(json!({ "$ref": format!("#/$defs/{name}") })));
        }
        if let Some(resolved) = self.done.get(&key).filter(|v| node_count(v) > SHARE_OVER_NODES) {
            // Resolved before in this schema, and not small: share that copy instead of
            // inlining it again. (Small ones are inlined, so forms and clients see them in place.)
            let resolved = resolved.clone();
            let name = self.def_name(&key);
            self.defs.entry(name.clone()).or_insert(resolved);
            return Ok(Some(json!({ "$ref": format!("#/$defs/{name}") })));
        }

        let display = (self.ctx.display)(&target_path);
        let target_file = if target_path == frame.path {
            Arc::clone(&frame.file)
        } else {
            match &*self.ctx.files.get(&target_path, self.ctx.vfs, &display) {
                Ok(located) => Arc::new(located.clone()),
                Err(diagnostic) => {
                    let mut diagnostic = diagnostic.clone();
                    diagnostic.message =
                        format!("{} (referenced from {})", diagnostic.message, frame.file.display);
                    return Err(diagnostic);
                }
            }
        };
        self.deps.insert(target_path.clone());
        let Some(target) = lookup(&target_file.doc.value, &fragment) else {
            return Err(fail(
                codes::REF_POINTER,
                format!("`$ref: {reference}`: `{display}` has nothing at `#{fragment}`"),
            ));
        };

        let mut target = target.clone();
        self.stack.push(key);
        let next = Frame { file: target_file, path: target_path, external: true };
        let resolved = self.walk(&mut target, &next, &mut fragment.clone());
        let key = self.stack.pop().unwrap_or_default();
        resolved?;
        if let Some(name) = self.recursive.get(&key) {
            self.defs.insert(name.clone(), target.clone());
        }
        self.done.insert(key, target.clone());
        Ok(Some(target))
    }

    /// The `$defs` name of a recursive or shared target: `<file stem>.<last fragment segment>`, made
    /// unique; only letters, digits, `.`, `_` and `-`, so it is a plain URI fragment.
    fn def_name(&mut self, key: &Target) -> String {
        if let Some(name) = self.recursive.get(key) {
            return name.clone();
        }
        let stem = key.0.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let last = key.1.rsplit('/').next().filter(|s| !s.is_empty()).unwrap_or("root");
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
                .collect()
        };
        let base = format!("{}.{}", clean(&stem), clean(last));
        let mut name = base.clone();
        let mut n = 2;
        while self.recursive.values().any(|v| *v == name) {
            name = format!("{base}.{n}");
            n += 1;
        }
        self.recursive.insert(key.clone(), name.clone());
        name
    }

    /// References that only lead to other references and back never reach a schema.
    fn check_pure_cycles(&self, file: &Located, pointer: &str) -> Result<(), Diagnostic> {
        for ((path, fragment), start) in &self.recursive {
            let mut seen = vec![start.as_str()];
            let mut current = start.as_str();
            while let Some(next) = self.defs.get(current).and_then(pure_ref_to_def) {
                if seen.contains(&next) {
                    let target = describe_target(&(self.ctx.display)(path), fragment);
                    return Err(file
                        .at(
                            Diagnostic::error(
                                codes::REF_CYCLE,
                                format!("`$ref`s loop back to {target} without reaching a schema"),
                            ),
                            pointer,
                        )
                        .with_hint("each `$ref` in the loop points at another `$ref`; one of them must point at a schema"));
                }
                seen.push(next);
                current = next;
            }
        }
        Ok(())
    }
}

/// `name` when `value` is exactly `{"$ref": "#/$defs/<name>"}`.
fn pure_ref_to_def(value: &Value) -> Option<&str> {
    let map = value.as_object().filter(|m| m.len() == 1)?;
    map.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// Keywords that only describe: a `$ref`'s sibling of this kind can be written into the target.
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords whose meaning depends on others of the same schema object: never merged.
const INTERACTING: [&str; 14] = [
    "additionalProperties",
    "properties",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "items",
    "prefixItems",
    "contains",
    "if",
    "then",
    "else",
    "$defs",
    "$id",
    "$anchor",
];

/// A `$ref` with siblings means both apply (2020-12). Write the result as one schema when that
/// means the same — the siblings only annotate, or the two share no keyword and neither uses a
/// keyword that interacts with others — so forms and MCP clients see a plain schema; otherwise
/// keep the siblings and add the target under `allOf`.
fn merge_siblings(siblings: &mut Map<String, Value>, target: Value) {
    let Value::Object(mut target) = target else {
        siblings.insert("allOf".into(), Value::Array(vec![target]));
        return;
    };
    let only_annotations = siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str()));
    let independent = siblings.keys().all(|k| !target.contains_key(k))
        && !siblings.keys().chain(target.keys()).any(|k| INTERACTING.contains(&k.as_str()));
    if only_annotations || independent {
        for (key, value) in std::mem::take(siblings) {
            target.insert(key, value);
        }
        *siblings = target;
    } else {
        siblings.insert("allOf".into(), Value::Array(vec![Value::Object(target)]));
    }
}

fn describe_target(display: &str, fragment: &str) -> String {
    if fragment.is_empty() { display.to_owned() } else { format!("{display}#{fragment}") }
}

fn is_remote(reference: &str) -> bool {
    let lower = reference.to_ascii_lowercase();
    lower.contains("://")
        || lower.starts_with("file:")
        || lower.starts_with("http:")
        || lower.starts_with("https:")
        || lower.starts_with("urn:")
        || lower.starts_with("//")
}

fn lookup<'a>(value: &'a Value, fragment: &str) -> Option<&'a Value> {
    if fragment.is_empty() { Some(value) } else { value.pointer(fragment) }
}

/// The JSON Schema primitive types.
const SCHEMA_TYPES: [&str; 7] =
    ["array", "boolean", "integer", "null", "number", "object", "string"];

/// Why a schema is not a valid JSON Schema: where inside it, what, and a hint.
pub(crate) struct SchemaProblem {
    /// JSON pointer inside the schema.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

/// Check that `schema` is a valid JSON Schema (draft 2020-12 unless `$schema` says otherwise)
/// and compiles (regex patterns, internal references).
pub(crate) fn check_schema(schema: &Value) -> Result<(), SchemaProblem> {
    if let Err(error) = jsonschema::meta::validate(schema) {
        let pointer = error.instance_path().as_str().to_owned();
        if pointer.ends_with("/type") || pointer.contains("/type/") {
            let found = error.instance();
            let shown = found.as_str().map_or_else(|| found.to_string(), str::to_owned);
            let hint = found
                .as_str()
                .and_then(|s| crate::located::did_you_mean(s, SCHEMA_TYPES))
                .map_or_else(
                    || format!("one of: {}", SCHEMA_TYPES.join(", ")),
                    |s| format!("did you mean `{s}`?"),
                );
            return Err(SchemaProblem {
                pointer,
                message: format!("`{shown}` is not a JSON Schema type"),
                hint: Some(hint),
            });
        }
        return Err(SchemaProblem { pointer, message: error.to_string(), hint: None });
    }
    if let Err(error) = jsonschema::options().offline().build(schema) {
        return Err(SchemaProblem {
            pointer: String::new(),
            message: error.to_string(),
            hint: None,
        });
    }
    Ok(())
}
