//! Per-file write locks (seed 002 §8): two calls that write the same file, or a file and a
//! directory holding it, run one after the other inside this process.
//!
//! A call names every path it writes and takes them all at once or waits, so two calls can never
//! each hold one path the other needs.

use std::collections::BTreeSet;
use std::path::{Component, Path};
use std::sync::{Condvar, Mutex, PoisonError};

/// The paths being written right now.
#[derive(Debug, Default)]
pub(crate) struct WriteLocks {
    held: Mutex<BTreeSet<String>>,
    released: Condvar,
}

/// Held paths; released on drop.
#[derive(Debug)]
pub(crate) struct Held<'a> {
    locks: &'a WriteLocks,
    paths: Vec<String>,
}

impl WriteLocks {
    /// Wait until none of `paths` (nor a directory above or below one of them) is being
    /// written, then hold them.
    pub fn lock<'a>(&'a self, paths: &[&str]) -> Held<'a> {
        let wanted: Vec<String> = paths.iter().map(|p| normalize(p)).collect();
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        while wanted.iter().any(|w| held.iter().any(|h| overlaps(w, h))) {
            held = self.released.wait(held).unwrap_or_else(PoisonError::into_inner);
        }
        held.extend(wanted.iter().cloned());
        Held { locks: self, paths: wanted }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut held = self.locks.held.lock().unwrap_or_else(PoisonError::into_inner);
        for path in &self.paths {
            held.remove(path);
        }
        drop(held);
        self.locks.released.notify_all();
    }
}

/// `a/./b/` and `a/b` are the same file.
fn normalize(path: &str) -> String {
    let parts: Vec<String> = Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// Whether one path is the other or lies beneath it.
fn overlaps(a: &str, b: &str) -> bool {
    let beneath = |inner: &str, outer: &str| {
        outer.is_empty()
            || inner == outer
            || inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with('/'))
    };
    beneath(a, b) || beneath(b, a)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;

    #[test]
    fn paths_overlap_by_component() {
        assert!(overlaps("src/a.rs", "src/a.rs"));
        assert!(overlaps("src/a.rs", "src"));
        assert!(overlaps("src", "src/a.rs"));
        assert!(!overlaps("src/a.rs", "src/a.rs.bak"));
        assert!(!overlaps("srcx/a.rs", "src"));
        assert_eq!(normalize("./src//a.rs"), "src/a.rs");
    }

    #[test]
    fn a_second_writer_waits_for_the_first() {
        let locks = Arc::new(WriteLocks::default());
        let first = locks.lock(&["src/a.rs"]);
        let entered = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (locks, entered) = (Arc::clone(&locks), Arc::clone(&entered));
            std::thread::spawn(move || {
                let _held = locks.lock(&["src"]);
                entered.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!entered.load(Ordering::SeqCst), "the directory lock waited for the file's");
        // Unrelated paths do not wait.
        drop(locks.lock(&["docs/x.md"]));
        drop(first);
        waiter.join().expect("waiter");
        assert!(entered.load(Ordering::SeqCst));
    }
}
