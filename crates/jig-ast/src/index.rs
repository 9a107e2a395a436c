//! The symbol index of a workspace: files with their symbols, re-parsed only when their size
//! or modification time changed.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::extract::SyntaxError;
use crate::parse::parse;
use crate::{Language, Symbol};

/// What identifies a version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Modification time, nanoseconds since the epoch.
    pub modified_ns: u128,
    /// Size in bytes.
    pub len: u64,
}

/// A file to index.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path relative to the workspace root.
    pub path: String,
    /// Its current stamp.
    pub stamp: Stamp,
}

/// One indexed file.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// Its language.
    pub language: Language,
    /// The stamp it was parsed at.
    pub stamp: Stamp,
    /// Its symbols.
    pub symbols: Vec<Symbol>,
    /// Its first syntax error.
    pub error: Option<SyntaxError>,
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Files parsed (new or changed).
    pub parsed: usize,
    /// Files that could not be read: path and reason.
    pub unreadable: Vec<(String, String)>,
}

/// The index.
#[derive(Debug, Clone, Default)]
pub struct Index {
    files: BTreeMap<String, FileEntry>,
}

impl Index {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse the `sources` that are new or changed (all of them unless `incremental`), in
    /// parallel; `read` loads a file's bytes.
    pub fn refresh(
        &mut self,
        sources: &[Source],
        incremental: bool,
        read: &(dyn Fn(&str) -> std::io::Result<Vec<u8>> + Sync),
    ) -> Refresh {
        let stale: Vec<(&Source, Language)> = sources
            .iter()
            .filter_map(|source| Language::of_path(&source.path).map(|l| (source, l)))
            .filter(|(source, _)| {
                !incremental || self.files.get(&source.path).is_none_or(|e| e.stamp != source.stamp)
            })
            .collect();
        let results: Vec<(String, Result<FileEntry, String>)> = stale
            .par_iter()
            .map(|(source, language)| {
                let entry = read(&source.path).map_err(|e| e.to_string()).map(|bytes| {
                    let parsed = parse(*language, &source.path, &bytes);
                    FileEntry {
                        language: *language,
                        stamp: source.stamp,
                        symbols: parsed.symbols,
                        error: parsed.error,
                    }
                });
                (source.path.clone(), entry)
            })
            .collect();
        let mut refresh = Refresh::default();
        for (path, entry) in results {
            match entry {
                Ok(entry) => {
                    refresh.parsed += 1;
                    self.files.insert(path, entry);
                }
                Err(why) => {
                    self.files.remove(&path);
                    refresh.unreadable.push((path, why));
                }
            }
        }
        refresh
    }

    /// Re-parse one file from `source` text just written (the lifecycle's sync step).
    pub fn update(&mut self, path: &str, stamp: Stamp, source: &[u8]) {
        if let Some(language) = Language::of_path(path) {
            let parsed = parse(language, path, source);
            self.files.insert(
                path.to_owned(),
                FileEntry { language, stamp, symbols: parsed.symbols, error: parsed.error },
            );
        }
    }

    /// Drop a file (deleted or moved away).
    pub fn forget(&mut self, path: &str) {
        self.files.remove(path);
        let prefix = format!("{}/", path.trim_end_matches('/'));
        self.files.retain(|p, _| !p.starts_with(&prefix));
    }

    /// Keep only files for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.files.retain(|path, _| keep(path));
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Indexed files.
    pub fn files(&self) -> impl Iterator<Item = (&str, &FileEntry)> {
        self.files.iter().map(|(path, entry)| (path.as_str(), entry))
    }

    /// Whether `path` is indexed.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Every symbol, by file then position.
    pub fn symbols(&self) -> impl Iterator<Item = &Symbol> {
        self.files.values().flat_map(|entry| entry.symbols.iter())
    }

    /// The symbol with `id`.
    pub fn symbol(&self, id: &str) -> Option<&Symbol> {
        let file = id.split(':').next()?;
        self.files.get(file)?.symbols.iter().find(|s| s.id == id)
    }

    /// Syntax errors of indexed files.
    pub fn errors(&self) -> impl Iterator<Item = &SyntaxError> {
        self.files.values().filter_map(|entry| entry.error.as_ref())
    }
}
