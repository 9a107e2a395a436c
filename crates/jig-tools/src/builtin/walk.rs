//! Walking the workspace for `fs_list` and `grep`: ripgrep's `ignore` walker (parallel,
//! .gitignore-aware), narrowed to a glob's literal directory prefix before it starts.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder, WalkParallel};
use jig_model::ErrorCode;
use jig_policy::sandbox::SandboxError;

use super::call::Call;
use jig_exec::ToolError;

/// Directories `grep` skips unless asked (seed 002: "skips binary and vendor by default").
const VENDOR: [&str; 3] = ["vendor", "node_modules", "third_party"];

/// What to walk and which files count.
#[derive(Debug)]
pub(super) struct Scope {
    /// The workspace root (file names are reported relative to it).
    pub root: PathBuf,
    /// Where the walk starts; `None` when the glob's directory does not exist.
    pub start: Option<PathBuf>,
    /// Files must match this, relative to the root.
    pub matcher: Option<GlobMatcher>,
}

impl Scope {
    /// The scope of `glob` (`None`: every file). A glob naming a directory means everything
    /// beneath it.
    pub fn new(call: &Call, glob: Option<&str>) -> Result<Self, ToolError> {
        let root = call.workspace.root().to_path_buf();
        let Some(glob) =
            glob.map(|g| g.trim_start_matches("./")).filter(|g| !g.is_empty() && *g != ".")
        else {
            return Ok(Self { start: Some(root.clone()), root, matcher: None });
        };
        let components: Vec<&str> = glob.split('/').collect();
        let literal = components
            .iter()
            .take_while(|c| !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
            .count();
        let mut pattern = glob.to_owned();
        let prefix = if literal == components.len() {
            // No wildcard: a directory means its contents, a file means itself.
            if call.workspace.dir().metadata(glob).is_ok_and(|m| m.is_dir()) {
                pattern = format!("{}/**", glob.trim_end_matches('/'));
                glob.trim_end_matches('/').to_owned()
            } else {
                components[..literal - 1].join("/")
            }
        } else {
            components[..literal].join("/")
        };
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                ToolError::new(ErrorCode::ValidationFail, format!("argument `glob` `{glob}`: {e}"))
            })?
            .compile_matcher();
        let start = if prefix.is_empty() {
            Some(root.clone())
        } else {
            // The kernel checks the prefix lies beneath the root before anything walks it.
            match call.workspace.dir().open_dir(&prefix) {
                Ok(_) => Some(root.join(&prefix)),
                Err(e) => match SandboxError::io(&prefix, e) {
                    SandboxError::NotFound { .. } => None,
                    SandboxError::Io { source, .. } if source.raw_os_error() == Some(20) => None,
                    other => return Err(other.into()),
                },
            }
        };
        Ok(Self { root, start, matcher: Some(matcher) })
    }

    /// A parallel walker from the start, honouring .gitignore/.ignore/.jigignore.
    pub fn walker(&self, start: &Path, include_hidden: bool, skip_vendor: bool) -> WalkParallel {
        let mut builder = WalkBuilder::new(start);
        builder
            .hidden(!include_hidden)
            .add_custom_ignore_filename(".jigignore")
            .filter_entry(move |entry| keep_dir(entry, skip_vendor));
        builder.build_parallel()
    }

    /// Walk in parallel and keep what `pick` makes of each selected file (its entry and its
    /// path relative to the root), unsorted. Empty when the glob's directory does not exist;
    /// an error when the call runs out of time.
    pub fn collect<T: Send>(
        &self,
        call: &Call,
        include_hidden: bool,
        skip_vendor: bool,
        pick: impl Fn(&DirEntry, String) -> Option<T> + Sync,
    ) -> Result<Vec<T>, ToolError> {
        let Some(start) = &self.start else { return Ok(Vec::new()) };
        let found = std::sync::Mutex::new(Vec::new());
        let visited = std::sync::atomic::AtomicUsize::new(0);
        self.walker(start, include_hidden, skip_vendor).run(|| {
            let mut batch = Batch::new(&found);
            let (visited, pick) = (&visited, &pick);
            Box::new(move |entry| {
                // Checking the clock every 1024 entries keeps it off the hot path.
                if visited.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 1024 == 0
                    && call.should_stop()
                {
                    return ignore::WalkState::Quit;
                }
                if let Ok(entry) = entry
                    && let Some(path) = self.selects(&entry)
                    && let Some(item) = pick(&entry, path)
                {
                    batch.local.push(item);
                }
                ignore::WalkState::Continue
            })
        });
        call.check_time()?;
        Ok(found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// `entry`'s path relative to the root, if it is a file the glob selects.
    pub fn selects(&self, entry: &DirEntry) -> Option<String> {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let relative = entry.path().strip_prefix(&self.root).ok()?;
        if self.matcher.as_ref().is_some_and(|m| !m.is_match(relative)) {
            return None;
        }
        Some(relative.to_string_lossy().into_owned())
    }
}

/// `.git` is never walked; vendored trees only when asked.
fn keep_dir(entry: &DirEntry, skip_vendor: bool) -> bool {
    if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_dir()) {
        return true;
    }
    let name = entry.file_name();
    name != ".git" && !(skip_vendor && VENDOR.iter().any(|v| name == *v))
}

/// One walker thread's findings, handed to the shared list when the thread is done with it
/// (the walker drops each thread's visitor at the end).
pub(super) struct Batch<'a, T> {
    pub local: Vec<T>,
    shared: &'a std::sync::Mutex<Vec<T>>,
}

impl<'a, T> Batch<'a, T> {
    pub fn new(shared: &'a std::sync::Mutex<Vec<T>>) -> Self {
        Self { local: Vec::new(), shared }
    }
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .append(&mut self.local);
    }
}
