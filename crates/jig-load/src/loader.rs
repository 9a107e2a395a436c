//! The load pipeline: discover packages, list their files, parse what is not cached (in
//! parallel), check everything that spans files, and build a snapshot or fail with every
//! diagnostic.
//!
//! A [`Loader`] keeps parsed files between loads. [`Loader::reload`] takes the paths that
//! changed (from the watcher) and re-parses only those, plus the tools whose `$ref`s point at
//! them; the directory walk is redone only when a file appeared or vanished, or a manifest
//! changed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use jig_model::diagnostic::codes;
use jig_model::manifest::MANIFEST_FILE_NAMES;
use jig_model::{Diagnostic, Sha256Hash, ToolDef};
use rayon::prelude::*;

use crate::located::Suggest;
use crate::package::{self, Layout, Package, PackageRole, display_path};
use crate::refs::SchemaFiles;
use crate::runbooks::Index;
use crate::runbooks::{check, file as runbook_file};
use crate::snapshot::{LoadFailure, PackageSummary, RunbookEntry, ScenarioEntry, Snapshot};
use crate::toolfile::{self, ToolContext, ToolFile};
use crate::yaml::pointer_push;

mod runbook_files;
mod tools;

pub use runbook_files::scenarios_beside;
use runbook_files::{runbook_entries, runbooks_in, scenarios_for};
use tools::{check_exports, collect_tools, upstream_tools};

/// What to load besides the project's own files.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Include the built-in `std` package (on by default; off only in tests of the loader).
    pub with_std: bool,
    /// Runbook files named explicitly (any `.yaml`, not only `*.runbook.yaml`).
    pub extra_runbooks: Vec<PathBuf>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self { with_std: true, extra_runbooks: Vec::new() }
    }
}

/// Load the project around `start` once.
pub fn load(start: &Path) -> Result<Arc<Snapshot>, LoadFailure> {
    Loader::new(start).load()
}

/// Loads a project and keeps what it parsed, for fast reloads.
#[derive(Debug)]
pub struct Loader {
    start: PathBuf,
    options: LoadOptions,
    schema_files: SchemaFiles,
    tools: HashMap<PathBuf, CachedTool>,
    /// `$ref` target → the tool files built from it.
    dependents: HashMap<PathBuf, HashSet<PathBuf>>,
    runbooks: HashMap<PathBuf, Arc<runbook_file::RunbookFile>>,
    state: Option<State>,
    /// Tool files to parse again at the next assembly; `None` after a discovery, when every
    /// file is checked against the cache.
    dirty: Option<HashSet<PathBuf>>,
}

#[derive(Debug)]
struct CachedTool {
    /// Package identity the entries were built for (ids depend on it).
    context: String,
    file: Arc<ToolFile>,
}

/// The discovered layout, the file inventory, and the tools indexed by name.
#[derive(Debug)]
struct State {
    layout: Layout,
    layout_diagnostics: Vec<Diagnostic>,
    /// Per package: its tool files and runbook files.
    tool_files: Vec<Vec<PathBuf>>,
    runbook_files: Vec<Vec<PathBuf>>,
    known: HashSet<PathBuf>,
    /// Per package: the identity its tools are built for.
    contexts: Vec<String>,
    /// Per package: tool-file name → file. Kept up to date by each assembly.
    index: Vec<BTreeMap<String, Arc<ToolFile>>>,
}

impl Loader {
    /// A loader for the project around `start` (a directory, or a file inside the project).
    pub fn new(start: impl Into<PathBuf>) -> Self {
        Self::with_options(start, LoadOptions::default())
    }

    /// A loader with options.
    pub fn with_options(start: impl Into<PathBuf>, options: LoadOptions) -> Self {
        Self {
            start: start.into(),
            options,
            schema_files: SchemaFiles::default(),
            tools: HashMap::new(),
            dependents: HashMap::new(),
            runbooks: HashMap::new(),
            state: None,
            dirty: None,
        }
    }

    /// Load everything from scratch.
    pub fn load(&mut self) -> Result<Arc<Snapshot>, LoadFailure> {
        self.tools.clear();
        self.dependents.clear();
        self.runbooks.clear();
        self.schema_files = SchemaFiles::default();
        self.state = Some(self.discover());
        self.dirty = None;
        self.assemble()
    }

    /// Load again after `changed` paths changed on disk (created, modified, removed or renamed).
    /// Only those files, and the tools whose `$ref`s lead to them, are parsed again.
    pub fn reload(&mut self, changed: &[PathBuf]) -> Result<Arc<Snapshot>, LoadFailure> {
        let Some(state) = &self.state else { return self.load() };
        // The file list is walked again only when it may have changed: a manifest, a tool or
        // runbook file that appeared or vanished, or a directory. Editors' temporary files and
        // edits of known files do not cost a walk.
        let rediscover = changed.iter().any(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            // Plain `.yaml` runbooks (gert's layout) count as listed files too.
            let listed = name.ends_with(".yaml");
            MANIFEST_FILE_NAMES.contains(&name.as_ref())
                || (listed && state.known.contains(p) != p.is_file())
                || p.is_dir()
                || (!p.exists() && state.known.iter().any(|k| k.starts_with(p)))
        });

        self.schema_files.invalidate(changed);
        let mut dirty: HashSet<PathBuf> = changed.iter().cloned().collect();
        for path in changed {
            if let Some(users) = self.dependents.get(path) {
                dirty.extend(users.iter().cloned());
            }
        }
        for path in &dirty {
            self.tools.remove(path);
            self.runbooks.remove(path);
        }
        if rediscover {
            self.state = Some(self.discover());
            self.dirty = None;
        } else if let Some(pending) = &mut self.dirty {
            pending.extend(dirty);
        } else if self.state.as_ref().is_some_and(|s| !s.index.is_empty()) {
            self.dirty = Some(dirty);
        }
        self.assemble()
    }

    /// The directories the watcher must observe: every package root on disk.
    pub fn watch_roots(&self) -> Vec<PathBuf> {
        let Some(state) = &self.state else { return Vec::new() };
        let mut roots: Vec<PathBuf> = state
            .layout
            .packages
            .iter()
            .filter(|p| p.role != PackageRole::Std)
            .map(|p| p.root.clone())
            .collect();
        roots.sort();
        roots.dedup();
        // A root inside another root is already watched recursively.
        let all = roots.clone();
        roots.retain(|r| !all.iter().any(|other| other != r && r.starts_with(other)));
        roots
    }

    /// The project root (after a load).
    pub fn root(&self) -> Option<&Path> {
        self.state.as_ref().map(|s| s.layout.root.as_path())
    }

    fn discover(&self) -> State {
        let mut layout_diagnostics = Vec::new();
        let layout = package::discover(&self.start, self.options.with_std, &mut layout_diagnostics);
        let mut tool_files = Vec::new();
        let mut runbook_files = Vec::new();
        let mut known = HashSet::new();
        for package in &layout.packages {
            let tools = package.vfs.walk(&package.tools_dir, ".tool.yaml");
            let mut runbooks =
                package.runbooks_dir.as_ref().map(|d| runbooks_in(package, d)).unwrap_or_default();
            for extra in &self.options.extra_runbooks {
                let extra = package.vfs.canonicalize(extra).unwrap_or_else(|| extra.clone());
                if owner(&layout, &extra).is_some_and(|owner| std::ptr::eq(owner, package))
                    && !runbooks.contains(&extra)
                {
                    runbooks.push(extra);
                }
            }
            known.extend(tools.iter().cloned());
            known.extend(runbooks.iter().cloned());
            tool_files.push(tools);
            runbook_files.push(runbooks);
        }
        let contexts = layout.packages.iter().map(package_context).collect();
        State {
            layout,
            layout_diagnostics,
            tool_files,
            runbook_files,
            known,
            contexts,
            index: Vec::new(),
        }
    }

    /// Parse what needs parsing and bring the index up to date.
    fn parse_tools(&mut self) {
        let Some(state) = &mut self.state else { return };
        let layout = &state.layout;
        let contexts = &state.contexts;
        let todo: Vec<(usize, &PathBuf)> = match self.dirty.take() {
            // After a discovery: every file the cache does not hold for its package identity.
            None => state
                .tool_files
                .iter()
                .enumerate()
                .flat_map(|(p, files)| files.iter().map(move |f| (p, f)))
                .filter(|(p, f)| self.tools.get(*f).is_none_or(|c| c.context != contexts[*p]))
                .collect(),
            // After edits: only the dirty files that are tool files of some package.
            Some(dirty) => state
                .tool_files
                .iter()
                .enumerate()
                .flat_map(|(p, files)| {
                    let owned = files.iter().filter(|f| dirty.contains(*f));
                    owned.map(move |f| (p, f))
                })
                .collect(),
        };
        let display = |path: &Path| display_path(path, &layout.root);
        let schema_files = &self.schema_files;
        let load = |(p, path): &(usize, &PathBuf)| {
            let ctx = ToolContext {
                package: &layout.packages[*p],
                files: schema_files,
                display: &display,
            };
            (*p, toolfile::load(&ctx, path))
        };
        // A few files (the built-ins, a small project, one edit) parse faster on this thread
        // than the I/O pool starts its threads.
        let pool = if todo.len() > SMALL { io_pool() } else { None };
        let parsed: Vec<(usize, ToolFile)> = match pool {
            Some(pool) => pool.install(|| todo.par_iter().map(load).collect()),
            None => todo.iter().map(load).collect(),
        };
        let full = state.index.is_empty();
        if full {
            state.index = vec![BTreeMap::new(); layout.packages.len()];
        }
        for (p, file) in parsed {
            let path = file.path.clone();
            for dep in &file.deps {
                self.dependents.entry(dep.clone()).or_default().insert(path.clone());
            }
            let file = Arc::new(file);
            if !full {
                state.index[p].insert(file.stem.clone(), Arc::clone(&file));
            }
            self.tools.insert(path, CachedTool { context: contexts[p].clone(), file });
        }
        if full {
            for (p, files) in state.tool_files.iter().enumerate() {
                for path in files {
                    if let Some(cached) = self.tools.get(path) {
                        state.index[p].insert(cached.file.stem.clone(), Arc::clone(&cached.file));
                    }
                }
            }
        }
    }

    fn assemble(&mut self) -> Result<Arc<Snapshot>, LoadFailure> {
        self.parse_tools();
        let Some(state) = &self.state else { unreachable!("discover runs first") };
        let layout = &state.layout;
        let mut diagnostics = state.layout_diagnostics.clone();
        let display = |path: &Path| display_path(path, &layout.root);

        for runbooks in &state.runbook_files {
            for path in runbooks {
                if !self.runbooks.contains_key(path) {
                    let package = owner(layout, path).unwrap_or(&layout.packages[0]);
                    let file = runbook_file::load(
                        package.vfs.as_ref(),
                        &package.root,
                        path,
                        &display(path),
                    );
                    self.runbooks.insert(path.clone(), Arc::new(file));
                }
            }
        }
        let mut index =
            Index { packages: &layout.packages, tools: &state.index, runbooks: Vec::new() };
        for (p, package) in layout.packages.iter().enumerate() {
            let mut runbooks = BTreeMap::new();
            for path in &state.runbook_files[p] {
                let Some(cached) = self.runbooks.get(path) else { continue };
                let mut file = (**cached).clone();
                file.scenarios = scenarios_for(package, path, &display, &mut diagnostics);
                runbooks.insert(package.runbook_name(path), Arc::new(file));
            }
            index.runbooks.push(runbooks);
        }

        // Per-file diagnostics, then checks that span files.
        for files in index.tools {
            for file in files.values().filter(|f| !f.diagnostics.is_empty()) {
                diagnostics.extend(file.diagnostics.iter().cloned());
            }
        }
        let mut tools = collect_tools(&index, &mut diagnostics);
        let mcp_servers = upstream_tools(layout, &mut tools, &mut diagnostics);
        check_exports(layout, &index, &mut diagnostics);
        // The layers above the project are read with it, so every surface (validate, list,
        // call, serve) stops on a layer it cannot read, and a reload picks up their changes.
        let layers = crate::layers::read_layers().unwrap_or_else(|mut problems| {
            diagnostics.append(&mut problems);
            Vec::new()
        });
        for (p, runbooks) in index.runbooks.iter().enumerate() {
            for file in runbooks.values() {
                diagnostics.extend(file.diagnostics.iter().cloned());
                check::check(&index, p, file, &mut diagnostics);
            }
        }

        diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        diagnostics.dedup();
        if diagnostics.iter().any(Diagnostic::is_error) {
            return Err(LoadFailure { root: layout.root.clone(), diagnostics });
        }
        let runbooks = runbook_entries(layout, &index, &display);
        let packages = layout
            .packages
            .iter()
            .map(|p| PackageSummary {
                name: p.name.clone(),
                role: p.role,
                root: display(&p.root),
                manifest: p.manifest_path.as_deref().map(display),
            })
            .collect();
        let root_manifest = layout
            .packages
            .first()
            .filter(|p| p.role == PackageRole::Root)
            .and_then(|p| p.manifest.as_ref());
        let policy = root_manifest.and_then(|m| m.policy.clone());
        let mut snapshot =
            Snapshot::new(layout.root.clone(), packages, tools, runbooks, diagnostics, policy);
        let config = root_manifest.and_then(|m| m.config.as_ref());
        snapshot.extensions = config.map(|c| c.extensions.clone()).unwrap_or_default();
        snapshot.auth = config.and_then(|c| c.auth.clone()).filter(crate::auth_check::usable);
        snapshot.mcp_servers = mcp_servers;
        snapshot.layers = layers;
        snapshot.notifications = root_manifest.and_then(|m| m.notifications.clone());
        let audit = config.and_then(|c| c.audit.as_ref());
        snapshot.forward = audit.map(|a| a.forward.clone()).unwrap_or_default();
        snapshot.publish = audit.and_then(|a| a.publish.clone());
        snapshot.origin = audit.and_then(|a| a.origin.clone()).unwrap_or_else(|| {
            format!("jig/{}", root_manifest.map_or("project", |m| m.name.as_str()))
        });
        Ok(Arc::new(snapshot))
    }
}

/// Tool files up to this many are parsed without the I/O pool: starting its threads cost a
/// one-shot `jig call` on a small project more than parsing in parallel saved.
const SMALL: usize = 64;

/// Parsing is mostly waiting for the disk when the page cache is cold, so it runs on more
/// threads than there are cores. `None` if the pool cannot be built (then rayon's global pool).
fn io_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        rayon::ThreadPoolBuilder::new()
            .num_threads((cores * 8).clamp(4, 32))
            .thread_name(|i| format!("jig-load-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Identity of a package as far as its tools' ids are concerned.
fn package_context(package: &Package) -> String {
    format!(
        "{}|{:?}|{:?}|{}",
        package.name,
        package.role,
        package.exports,
        package.tools_dir.display()
    )
}

/// The package whose root holds `path` (the deepest one).
fn owner<'a>(layout: &'a Layout, path: &Path) -> Option<&'a Package> {
    layout
        .packages
        .iter()
        .filter(|p| path.starts_with(&p.root))
        .max_by_key(|p| p.root.components().count())
}
