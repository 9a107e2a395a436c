//! Projects built on disk for each test, and ways to look at what the loader said.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_load::{LoadFailure, LoadOptions, Loader, Snapshot};
use jig_model::Diagnostic;

/// A project in a temporary directory.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("temp dir") }
    }

    /// A project whose root package is `name` with the given extra manifest lines.
    pub fn with_manifest(manifest: &str) -> Self {
        let project = Self::new();
        project.file("jig.yaml", manifest);
        project
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write `contents` to `rel`, creating directories.
    pub fn file(&self, rel: &str, contents: &str) -> &Self {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write");
        self
    }

    /// Load from the root, without the built-in std package (tests of the loader itself).
    pub fn load(&self) -> Result<Arc<Snapshot>, LoadFailure> {
        self.load_from(".")
    }

    /// Load starting from `rel` (a directory inside the project).
    pub fn load_from(&self, rel: &str) -> Result<Arc<Snapshot>, LoadFailure> {
        let options = LoadOptions { with_std: false, ..LoadOptions::default() };
        Loader::with_options(self.path(rel), options).load()
    }

    /// Load, expecting success.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.load() {
            Ok(snapshot) => snapshot,
            Err(failure) => panic!("expected a valid project, got:\n{}", render(&failure)),
        }
    }

    /// Load, expecting failure; the errors and warnings.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self.load() {
            Ok(_) => panic!("expected the project to be invalid"),
            Err(failure) => failure.diagnostics,
        }
    }

    /// The codes of the errors a failed load reports.
    pub fn error_codes(&self) -> Vec<String> {
        self.diagnostics().into_iter().filter(Diagnostic::is_error).map(|d| d.code).collect()
    }

    /// The one error with `code`; fails when there is none or several.
    pub fn error(&self, code: &str) -> Diagnostic {
        let all = self.diagnostics();
        let found: Vec<&Diagnostic> =
            all.iter().filter(|d| d.code == code && d.is_error()).collect();
        assert_eq!(found.len(), 1, "expected one `{code}` error, got:\n{}", dump(&all));
        found[0].clone()
    }
}

/// A valid toolpack with `id`, to start tests from.
pub fn toolpack(id: &str) -> String {
    format!(
        "id: {id}\n\
         version: 1.0.0\n\
         deterministic: true\n\
         timeoutMs: 1000\n\
         limits: {{ maxInputBytes: 1024, maxOutputBytes: 1024 }}\n\
         inputSchema: {{ type: object }}\n\
         outputSchema: {{ type: object }}\n\
         execution: {{ kind: cli, cmd: [echo, hi] }}\n"
    )
}

/// `toolpack(id)` with the line starting `key:` replaced by `line` (or `line` appended).
pub fn toolpack_with(id: &str, key: &str, line: &str) -> String {
    let base = toolpack(id);
    let prefix = format!("{key}:");
    if base.lines().any(|l| l.starts_with(&prefix)) {
        base.lines()
            .map(|l| if l.starts_with(&prefix) { line.to_owned() } else { l.to_owned() })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    } else {
        format!("{base}{line}\n")
    }
}

pub fn render(failure: &LoadFailure) -> String {
    jig_load::render::render(&failure.diagnostics, &failure.root, false)
}

pub fn dump(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            format!(
                "{:?} {} {}:{}:{} {}",
                d.severity,
                d.code,
                d.file.as_deref().unwrap_or("-"),
                d.line.unwrap_or(0),
                d.column.unwrap_or(0),
                d.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The repository root (for toolpacks/ and tests/fixtures/).
pub fn repo_root() -> PathBuf {
    Path::new(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str())
        .join("../..")
        .canonicalize()
        .expect("repo root")
}
