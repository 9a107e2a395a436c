//! `rename_symbol`: the definition and every reference in the indexed files of the same
//! language family, computed in memory and checked to still parse before anything is written.
//!
//! References are found by name among identifier nodes (never in strings or comments); there
//! is no type resolution, so a same-named symbol elsewhere is renamed too. A rename onto a name
//! some indexed symbol already has is refused for that reason.

use crate::extract::{SyntaxError, first_error, text};
use crate::parse::tree;
use crate::{Index, Language};

/// A file's text before and after an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The file, relative to the workspace root.
    pub file: String,
    /// Its text before.
    pub before: String,
    /// Its text after.
    pub after: String,
    /// How many occurrences were renamed.
    pub occurrences: usize,
}

/// Why a rename was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// No symbol has the id.
    #[error("no indexed symbol has id `{0}`; run `ast_generate` or `ast_query` for current ids")]
    NotFound(String),
    /// The new name is not an identifier (or a reserved word), or is the old one.
    #[error("`{0}` is not a new identifier")]
    InvalidName(String),
    /// The new name is taken.
    #[error("`{name}` already names `{existing}`; renaming onto it would merge two symbols")]
    Conflict {
        /// The new name.
        name: String,
        /// The symbol that has it.
        existing: String,
    },
    /// After the edit a file no longer parses.
    #[error("after the rename `{}` no longer parses (line {}: {})", .0.file, .0.line, .0.message)]
    Broken(SyntaxError),
    /// A file could not be read.
    #[error("`{file}`: {reason}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
}

/// JavaScript, TypeScript and TSX import each other; the others stand alone.
fn family(language: Language) -> u8 {
    match language {
        Language::JavaScript | Language::TypeScript | Language::Tsx => 0,
        Language::Rust => 1,
        Language::Python => 2,
        Language::Go => 3,
    }
}

/// The edits renaming symbol `id` to `new_name`.
pub fn rename(
    index: &Index,
    id: &str,
    new_name: &str,
    read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<Edit>, EditError> {
    let target = index.symbol(id).ok_or_else(|| EditError::NotFound(id.to_owned()))?;
    let valid = new_name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && new_name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !valid || new_name == target.name || target.language.keywords().contains(&new_name) {
        return Err(EditError::InvalidName(new_name.to_owned()));
    }
    let language = target.language;
    if let Some(existing) =
        index.symbols().find(|s| family(s.language) == family(language) && s.name == new_name)
    {
        return Err(EditError::Conflict {
            name: new_name.to_owned(),
            existing: existing.id.clone(),
        });
    }
    let old = target.name.clone();
    let mut edits = Vec::new();
    for (file, entry) in index.files() {
        if family(entry.language) != family(language) {
            continue;
        }
        let bytes = read(file)
            .map_err(|e| EditError::Read { file: file.to_owned(), reason: e.to_string() })?;
        let Some(parsed) = tree(entry.language, &bytes) else { continue };
        let kinds = entry.language.identifier_kinds();
        let mut spans = Vec::new();
        let mut cursor = parsed.walk();
        let mut stack = vec![parsed.root_node()];
        while let Some(node) = stack.pop() {
            if kinds.contains(&node.kind()) && text(node, &bytes) == old {
                spans.push(node.byte_range());
            }
            stack.extend(node.children(&mut cursor));
        }
        if spans.is_empty() {
            continue;
        }
        spans.sort_by_key(|r| r.start);
        let before = String::from_utf8_lossy(&bytes).into_owned();
        let mut after = String::with_capacity(before.len());
        let mut last = 0;
        for span in &spans {
            after.push_str(&before[last..span.start]);
            after.push_str(new_name);
            last = span.end;
        }
        after.push_str(&before[last..]);
        let had_error = first_error(&parsed, &bytes, file).is_some();
        // A file that already had errors is left to them; one that parsed must still parse.
        let broken = (!had_error)
            .then(|| tree(entry.language, after.as_bytes()))
            .flatten()
            .and_then(|t| first_error(&t, after.as_bytes(), file));
        if let Some(error) = broken {
            return Err(EditError::Broken(error));
        }
        edits.push(Edit { file: file.to_owned(), before, after, occurrences: spans.len() });
    }
    Ok(edits)
}
