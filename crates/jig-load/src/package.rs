//! Packages and how a project finds them (seed 004): manifest discovery by walking up, the
//! no-manifest fallback, `paths` overrides, and `require` pointing at a package root or straight
//! at a tools folder. The `std` package is always present, from the binary, unless the project
//! itself provides a package named `std` (which is how std is developed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jig_model::manifest::{MANIFEST_FILE_NAMES, Manifest};
use serde::Serialize;

use crate::located::Located;
use crate::refs::read_document;
use crate::shape;
use crate::vfs::{DiskFs, MemoryFs, STD_ROOT, Vfs, normalize, relative_to};
use crate::yaml::pointer_push;

/// The name of the built-in package.
pub const STD_PACKAGE: &str = "std";

/// What part a package plays in the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PackageRole {
    /// The project itself.
    Root,
    /// Reached through `require`.
    Required,
    /// The built-in catalog.
    Std,
}

/// A package as the loader sees it.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    /// Its identity (manifest `name`; the require key or directory name without a manifest).
    pub name: String,
    /// Root, std or required.
    pub role: PackageRole,
    /// The package root (canonical); nothing outside it may be referenced.
    pub root: PathBuf,
    /// The manifest file, when there is one.
    pub manifest_path: Option<PathBuf>,
    /// The parsed manifest.
    pub manifest: Option<Manifest>,
    /// Where tool files live.
    pub tools_dir: PathBuf,
    /// Where runbooks live (none for a tools-only package).
    pub runbooks_dir: Option<PathBuf>,
    /// Require key → index of the package in the layout.
    pub requires: BTreeMap<String, usize>,
    /// `exports.tools`, when declared.
    pub exports: Option<BTreeMap<String, String>>,
    /// Where its files are read from.
    pub vfs: Arc<dyn Vfs>,
}

impl Package {
    /// Whether this is the built-in package (embedded, or on disk while std is developed).
    pub fn is_std(&self) -> bool {
        self.name == STD_PACKAGE
    }

    /// The tool-file name (path below the tools dir, without `.tool.yaml`) of `path`.
    pub fn tool_stem(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.tools_dir).unwrap_or(path);
        let text = rel.to_string_lossy().replace('\\', "/");
        text.strip_suffix(".tool.yaml").unwrap_or(&text).to_owned()
    }

    /// The runbook name (path below the runbooks dir, without the extension) of `path`. A file
    /// named explicitly from outside the runbooks dir is named by its path below the root.
    pub fn runbook_name(&self, path: &Path) -> String {
        let rel = self
            .runbooks_dir
            .as_ref()
            .and_then(|d| path.strip_prefix(d).ok())
            .or_else(|| path.strip_prefix(&self.root).ok())
            .unwrap_or(path);
        let text = rel.to_string_lossy().replace('\\', "/");
        let text = text
            .strip_suffix(".runbook.yaml")
            .or_else(|| text.strip_suffix(".yaml"))
            .unwrap_or(&text);
        text.to_owned()
    }

    /// The name consumers see for a tool file: its export alias when it has one, else its stem.
    pub fn public_tool_name(&self, stem: &str) -> String {
        self.exports
            .as_ref()
            .and_then(|exports| exports.iter().find(|(_, target)| normalize_stem(target) == stem))
            .map_or_else(|| stem.to_owned(), |(alias, _)| alias.clone())
    }
}

/// An export target may be written with or without the `.tool.yaml` suffix.
pub(crate) fn normalize_stem(target: &str) -> &str {
    let target = target.strip_suffix(".tool.yaml").unwrap_or(target);
    target.strip_prefix("./").unwrap_or(target)
}

/// The packages of a project, root first.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The project root (the root package's directory).
    pub root: PathBuf,
    /// Every package; index 0 is the root.
    pub packages: Vec<Package>,
    /// Manifest files read, with their parsed form (for snippets and the watcher).
    pub manifests: Vec<Located>,
}

impl Layout {
    /// How a path is shown: relative to the project root, `<std>/…` for std.
    pub fn display(&self, path: &Path) -> String {
        display_path(path, &self.root)
    }
}

/// Show `path` relative to `root`.
pub(crate) fn display_path(path: &Path, root: &Path) -> String {
    if path.starts_with(STD_ROOT) {
        return path.to_string_lossy().replace('\\', "/");
    }
    let rel = relative_to(path, root);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() { ".".to_owned() } else { text }
}

/// The manifest governing `start`: the nearest `jig.yaml` or `gert.yaml` at or above it.
pub fn find_manifest(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        MANIFEST_FILE_NAMES.iter().map(|name| dir.join(name)).find(|candidate| candidate.is_file())
    })
}

/// The root of the project around `start`: the directory of the nearest manifest, or `start`
/// itself when there is none; `None` when `start` does not exist. Commands that only read the
/// audit store use this instead of loading (and needing a valid) project.
pub fn project_root(start: &Path) -> Option<PathBuf> {
    let start = DiskFs.canonicalize(start)?;
    let dir = if DiskFs.is_file(&start) { start.parent()?.to_path_buf() } else { start };
    Some(find_manifest(&dir).and_then(|m| m.parent().map(Path::to_path_buf)).unwrap_or(dir))
}

/// Discover the project around `start` and every package it requires.
pub(crate) fn discover(start: &Path, with_std: bool, diagnostics: &mut Vec<Diagnostic>) -> Layout {
    let disk: Arc<dyn Vfs> = Arc::new(DiskFs);
    let Some(start) = disk.canonicalize(start) else {
        // Without this, a mistyped `--project` would load an empty project "successfully".
        diagnostics.push(
            Diagnostic::error(codes::FILE_IO, format!("no such directory: {}", start.display()))
                .with_hint("check `--project`, or run jig inside the project"),
        );
        let root = normalize(start);
        return Layout { root, packages: Vec::new(), manifests: Vec::new() };
    };
    let start_dir =
        if disk.is_file(&start) { start.parent().unwrap_or(&start).to_path_buf() } else { start };
    let manifest_path = find_manifest(&start_dir);
    let root = manifest_path
        .as_ref()
        .and_then(|m| m.parent())
        .map_or_else(|| start_dir.clone(), Path::to_path_buf);
    let mut builder = Builder {
        layout: Layout { root: root.clone(), packages: Vec::new(), manifests: Vec::new() },
        disk,
        diagnostics,
    };

    match &manifest_path {
        Some(path) => {
            builder.warn_if_both_manifests(path);
            builder.add_manifest_package(path, PackageRole::Root, None);
        }
        None => {
            // Seed 004 "no-manifest fallback": the directory is the root package, local-only.
            let name = root
                .file_name()
                .map_or_else(|| "project".to_owned(), |n| n.to_string_lossy().into_owned());
            builder.add_bare_package(&root, name, PackageRole::Root);
        }
    }
    let mut index = 0;
    while index < builder.layout.packages.len() {
        builder.add_requires(index);
        index += 1;
    }
    if with_std && !builder.layout.packages.iter().any(|p| p.name == STD_PACKAGE) {
        let vfs: Arc<dyn Vfs> = Arc::new(MemoryFs::std());
        let manifest_path = Path::new(STD_ROOT).join("jig.yaml");
        builder.add_package_from(&manifest_path, PackageRole::Std, None, vfs);
    }
    builder.layout
}

struct Builder<'d> {
    layout: Layout,
    disk: Arc<dyn Vfs>,
    diagnostics: &'d mut Vec<Diagnostic>,
}

impl Builder<'_> {
    fn display(&self, path: &Path) -> String {
        self.layout.display(path)
    }

    fn warn_if_both_manifests(&mut self, path: &Path) {
        let dir = path.parent().unwrap_or(Path::new("."));
        let present: Vec<_> =
            MANIFEST_FILE_NAMES.iter().filter(|n| dir.join(n).is_file()).collect();
        if present.len() > 1 {
            let ignored = dir.join(present[1]);
            self.diagnostics.push(
                Diagnostic::warning(
                    codes::MANIFEST_CONFLICT,
                    format!("both {} and {} exist; {} is used", present[0], present[1], present[0]),
                )
                .in_file(self.display(&ignored))
                .with_hint("keep one manifest per package"),
            );
        }
    }

    fn add_manifest_package(
        &mut self,
        manifest_path: &Path,
        role: PackageRole,
        require_key: Option<&str>,
    ) -> Option<usize> {
        let disk = Arc::clone(&self.disk);
        self.add_package_from(manifest_path, role, require_key, disk)
    }

    fn add_package_from(
        &mut self,
        manifest_path: &Path,
        role: PackageRole,
        require_key: Option<&str>,
        vfs: Arc<dyn Vfs>,
    ) -> Option<usize> {
        let display = self.display(manifest_path);
        let root = manifest_path.parent().unwrap_or(Path::new("."));
        let located = match read_document(vfs.as_ref(), root, manifest_path, &display) {
            Ok(located) => located,
            Err(diagnostic) => {
                self.diagnostics.push(diagnostic);
                return None;
            }
        };
        let manifest: Manifest = match shape::check(&located, FileFormat::Manifest) {
            Ok(m) => m,
            Err(mut found) => {
                self.diagnostics.append(&mut found);
                self.layout.manifests.push(located);
                return None;
            }
        };
        if let Some(policy) = &manifest.policy {
            self.diagnostics.extend(crate::policy_check::check(policy, &located));
        }
        if let Some(auth) = manifest.config.as_ref().and_then(|c| c.auth.as_ref()) {
            self.diagnostics.extend(crate::auth_check::check(auth, &located));
        }
        if let Some(audit) = manifest.config.as_ref().and_then(|c| c.audit.as_ref()) {
            self.diagnostics.extend(forward_problems(&audit.forward, &located));
        }
        let root = manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let tools_dir = self.package_dir(&root, manifest.tools_dir(), &located, "/paths/tools");
        let runbooks_dir =
            self.package_dir(&root, manifest.runbooks_dir(), &located, "/paths/runbooks");
        if let (Some(key), PackageRole::Required) = (require_key, role)
            && key != manifest.name
        {
            self.diagnostics.push(located.at(
                    Diagnostic::warning(
                        codes::PACKAGE_NAME_MISMATCH,
                        format!("required as `{key}`, but the package calls itself `{}`", manifest.name),
                    )
                    .with_hint(format!(
                        "references use the require key (`{key}/…`); tool ids use the package name (`{}/…`)",
                        manifest.name
                    )),
                    "/name",
                ));
        }
        let package = Package {
            name: manifest.name.clone(),
            role,
            root,
            manifest_path: Some(manifest_path.to_path_buf()),
            exports: manifest.exports.as_ref().map(|e| e.tools.clone()),
            manifest: Some(manifest),
            tools_dir: tools_dir.unwrap_or_else(|| manifest_path.with_file_name("tools")),
            runbooks_dir,
            requires: BTreeMap::new(),
            vfs,
        };
        self.layout.manifests.push(located);
        self.push_package(package)
    }

    fn add_bare_package(&mut self, root: &Path, name: String, role: PackageRole) -> Option<usize> {
        let package = Package {
            name,
            role,
            root: root.to_path_buf(),
            manifest_path: None,
            manifest: None,
            tools_dir: root.join("tools"),
            runbooks_dir: Some(root.join("runbooks")),
            requires: BTreeMap::new(),
            exports: None,
            vfs: Arc::clone(&self.disk),
        };
        self.push_package(package)
    }

    fn push_package(&mut self, package: Package) -> Option<usize> {
        if let Some(existing) =
            self.layout.packages.iter().find(|p| p.name == package.name && p.root != package.root)
        {
            let message = format!(
                "two packages are named `{}`: {} and {}",
                package.name,
                self.display(&existing.root),
                self.display(&package.root)
            );
            let mut diagnostic = Diagnostic::error(codes::PACKAGE_DUPLICATE, message)
                .with_hint("package names must be unique in a project");
            if let Some(path) = &package.manifest_path {
                diagnostic = diagnostic.in_file(self.display(path));
            }
            self.diagnostics.push(diagnostic);
            return None;
        }
        self.layout.packages.push(package);
        Some(self.layout.packages.len() - 1)
    }

    /// A directory named in `paths`, confined to the package.
    fn package_dir(
        &mut self,
        root: &Path,
        rel: &str,
        manifest: &Located,
        pointer: &str,
    ) -> Option<PathBuf> {
        let dir = normalize(&root.join(rel));
        if Path::new(rel).is_absolute() || !dir.starts_with(root) {
            self.diagnostics.push(
                manifest.at(
                    Diagnostic::error(
                        codes::PACKAGE_PATH,
                        format!("`{rel}` is outside the package"),
                    )
                    .with_hint("paths are relative to the manifest and stay inside the package"),
                    pointer,
                ),
            );
            return None;
        }
        Some(dir)
    }

    fn add_requires(&mut self, index: usize) {
        let package = &self.layout.packages[index];
        let Some(manifest) = package.manifest.clone() else { return };
        let Some(manifest_path) = package.manifest_path.clone() else { return };
        let root = package.root.clone();
        if package.role == PackageRole::Std {
            return;
        }
        let located = self
            .layout
            .manifests
            .iter()
            .find(|m| m.display == self.display(&manifest_path))
            .cloned();
        for (key, rel) in &manifest.require {
            let pointer = pointer_push("/require", key);
            let target = normalize(&root.join(rel));
            let Some(target) = self.disk.canonicalize(&target).filter(|t| self.disk.is_dir(t))
            else {
                let diagnostic = Diagnostic::error(
                    codes::PACKAGE_NOT_FOUND,
                    format!("required package `{key}`: `{rel}` is not a directory"),
                )
                .with_hint("`require` paths are relative to this manifest and point at a package root or a tools/ folder");
                self.push_at(diagnostic, located.as_ref(), &pointer);
                continue;
            };
            let found =
                self.layout.packages.iter().position(|p| {
                    p.root == target || (p.manifest.is_none() && p.tools_dir == target)
                });
            let required = match found {
                Some(existing) => Some(existing),
                None => {
                    let manifest_file = MANIFEST_FILE_NAMES
                        .iter()
                        .map(|n| target.join(n))
                        .find(|p| self.disk.is_file(p));
                    match manifest_file {
                        Some(manifest_file) => self.add_manifest_package(
                            &manifest_file,
                            PackageRole::Required,
                            Some(key),
                        ),
                        None if self.disk.is_dir(&target.join("tools")) => {
                            self.add_bare_package(&target, key.clone(), PackageRole::Required)
                        }
                        None => self.add_tools_only(&target, key),
                    }
                }
            };
            if let Some(required) = required {
                self.layout.packages[index].requires.insert(key.clone(), required);
            }
        }
    }

    /// `require` pointing straight at a tools folder: a tool-only package named by its key.
    fn add_tools_only(&mut self, dir: &Path, key: &str) -> Option<usize> {
        let package = Package {
            name: key.to_owned(),
            role: PackageRole::Required,
            root: dir.to_path_buf(),
            manifest_path: None,
            manifest: None,
            tools_dir: dir.to_path_buf(),
            runbooks_dir: None,
            requires: BTreeMap::new(),
            exports: None,
            vfs: Arc::clone(&self.disk),
        };
        self.push_package(package)
    }

    fn push_at(&mut self, diagnostic: Diagnostic, located: Option<&Located>, pointer: &str) {
        let diagnostic = match located {
            Some(located) => located.at(diagnostic, pointer),
            None => diagnostic,
        };
        self.diagnostics.push(diagnostic);
    }
}

/// Problems of `config.audit.forward` the schema cannot express: each forwarder's URL, shape
/// and format, and names that would share a place in the store.
fn forward_problems(
    forward: &[jig_model::manifest::AuditForward],
    manifest: &Located,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, forwarder) in forward.iter().enumerate() {
        for (field, message) in forwarder.problems() {
            out.push(manifest.at(
                Diagnostic::error(codes::FIELD_INVALID, format!("audit forwarder: {message}")),
                &format!("/config/audit/forward/{i}/{field}"),
            ));
        }
        if !names.insert(forwarder.name.as_str()) {
            out.push(manifest.at(
                Diagnostic::error(
                    codes::FIELD_INVALID,
                    format!(
                        "two audit forwarders are named `{}`: each keeps its own place",
                        forwarder.name
                    ),
                ),
                &format!("/config/audit/forward/{i}/name"),
            ));
        }
    }
    out
}
