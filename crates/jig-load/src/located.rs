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

    /// The 1-based line of `pointer`'s key, for messages that name a second location.
    pub fn line_of(&self, pointer: &str) -> u32 {
        self.doc.key_position(pointer).map_or(1, |p| p.line)
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
    let mut best: Option<(&str, f64)> = None;
    for candidate in candidates {
        if fold(candidate) == folded {
            return Some(candidate);
        }
        let score = strsim::jaro_winkler(&name.to_lowercase(), &candidate.to_lowercase());
        if score >= 0.8 && best.is_none_or(|(_, s)| score > s) {
            best = Some((candidate, score));
        }
    }
    best.map(|(c, _)| c)
}

fn fold(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}
