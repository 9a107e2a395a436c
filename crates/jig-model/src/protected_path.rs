//! Workspace paths no grant may name, judged by their text: for the loader's diagnostics, so a
//! toolpack or an upstream server's entry that grants one is an error in `jig validate` rather
//! than a call refused later. The sandbox judges what the kernel resolved again at every start
//! (`jig_policy::sandbox::Workspace::grant`); this is the early word, not the boundary.

use std::path::{Component, Path};

/// What a relative `path` would reach that a grant may not: Jig's state (for any access), a
/// repository's internals or a manifest (for `write`; a `.git` may be read, as `git log`
/// needs). `None` when it names none of them.
pub fn protected_by_name(path: &str, write: bool) -> Option<&'static str> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) => parts.push(name),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    if parts.first().is_some_and(|first| *first == ".jig") {
        return Some("Jig's state (`.jig`)");
    }
    if write && parts.iter().any(|part| *part == ".git") {
        return Some("a repository's internals (`.git`), which tools may only read");
    }
    let manifest = parts.last().is_some_and(|last| *last == "jig.yaml" || *last == "gert.yaml");
    (write && manifest).then_some("a manifest, which tools may only read")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_store_the_repository_and_a_manifest_is_caught() {
        for path in [".jig", "./.jig/x", "docs/../.jig"] {
            assert!(protected_by_name(path, false).is_some(), "{path}");
        }
        for path in [".git", "a/.git/hooks", "src/../.git"] {
            assert!(protected_by_name(path, true).is_some(), "{path}");
            assert!(protected_by_name(path, false).is_none(), "{path}");
        }
        assert!(protected_by_name("jig.yaml", true).is_some());
        assert!(protected_by_name("./pkg/gert.yaml", true).is_some());
        assert!(protected_by_name("jig.yaml", false).is_none());
        for path in ["src", ".", "docs/.jig", ".github", "vendor/jig.yaml.bak"] {
            assert!(protected_by_name(path, true).is_none(), "{path}");
        }
    }
}
