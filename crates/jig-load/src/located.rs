//! A parsed file together with the means to turn a JSON pointer into a located [`Diagnostic`].

use std::sync::Arc;

use jig_model::Diagnostic;

use crate::yaml::Document;

/// A file the loader has read: what it is called in diagnostics, its text and its document.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    /// The name shown in diagnostics (relative to the project root).
    pub display: String,
    /// The parsed document.
    pub doc: Arc<Document>,
}

impl Located {
    /// A diagnostic at the value `pointer` points to.
    pub fn at(&self, mut diagnostic: Diagnostic, pointer: &str) -> Diagnostic {
        if let Some(pos) = self.doc.position(pointer) {
            diagnostic = diagnostic.at_line(pos.line, pos.column);
        }
        diagnostic.in_file(self.display.clone()).at_pointer(pointer)
    }

    /// A diagnostic at the key of the value `pointer` points to (for unknown fields, duplicate
    /// ids: the key is what the author must edit).
    pub fn at_key(&self, mut diagnostic: Diagnostic, pointer: &str) -> Diagnostic {
        if let Some(pos) = self.doc.key_position(pointer) {
            diagnostic = diagnostic.at_line(pos.line, pos.column);
        }
        diagnostic.in_file(self.display.clone()).at_pointer(pointer)
    }

    /// Remember where `pointer`'s value is, to locate diagnostics made later without the file.
    pub fn place(&self, pointer: &str) -> Place {
        let pos = self.doc.position(pointer);
        Place {
            file: self.display.clone(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            pointer: pointer.to_owned(),
        }
    }

    /// The 1-based line of `pointer`'s key, for messages that name a second location.
    pub fn line_of(&self, pointer: &str) -> u32 {
        self.doc.key_position(pointer).map_or(1, |p| p.line)
    }
}

/// A remembered location in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    file: String,
    line: Option<u32>,
    column: Option<u32>,
    pointer: String,
}

impl Place {
    /// Locate `diagnostic` here.
    pub fn locate(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        diagnostic.file = Some(self.file.clone());
        diagnostic.line = self.line;
        diagnostic.column = self.column;
        diagnostic.pointer = Some(self.pointer.clone());
        diagnostic
    }
}

/// "Did you mean" hints on diagnostics.
pub(crate) trait Suggest: Sized {
    /// Add "did you mean `x`?" when one of `candidates` is close to `name`.
    fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Self;
    /// As [`Suggest::suggest`], with `otherwise` as the hint when nothing is close.
    fn suggest_or<'a>(
        self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        otherwise: impl Into<String>,
    ) -> Self;
}

impl Suggest for Diagnostic {
    fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Self {
        match did_you_mean(name, candidates) {
            Some(close) => self.with_hint(format!("did you mean `{close}`?")),
            None => self,
        }
    }

    fn suggest_or<'a>(
        self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        otherwise: impl Into<String>,
    ) -> Self {
        match did_you_mean(name, candidates) {
            Some(close) => self.with_hint(format!("did you mean `{close}`?")),
            None => self.with_hint(otherwise),
        }
    }
}

/// The closest of `candidates` to `name`, when close enough to be a likely typo. Case and the
/// difference between snake_case and camelCase are ignored first, since those are the usual
/// slips (`timeout_ms` for `timeoutMs`).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let folded = fold(name);
    let lower = name.to_lowercase();
    // A typo is a few edits away (transpositions count once), or shares most characters in
    // order with a common prefix (Jaro–Winkler), which catches longer slips.
    let max_edits = (name.chars().count() / 3).max(1);
    let mut best: Option<(&str, (usize, u64))> = None;
    for candidate in candidates {
        if fold(candidate) == folded {
            return Some(candidate);
        }
        let other = candidate.to_lowercase();
        let edits = strsim::damerau_levenshtein(&lower, &other);
        let similarity = strsim::jaro_winkler(&lower, &other);
        if edits > max_edits && similarity < 0.8 {
            continue;
        }
        // Fewer edits first, then higher similarity.
        let rank = (edits, ((1.0 - similarity) * 1e6) as u64);
        if best.is_none_or(|(_, r)| rank < r) {
            best = Some((candidate, rank));
        }
    }
    best.map(|(c, _)| c)
}

fn fold(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}
