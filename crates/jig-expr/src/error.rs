//! Errors of parsing and evaluating a template, located in its source.

/// Which phase failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// The template is not well formed, or names a function that does not exist.
    Parse,
    /// The template is well formed but could not be evaluated against these variables.
    Evaluate,
}

/// A template error, with the position (1-based line and column, in characters) it refers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line}, column {column})")]
pub struct Error {
    /// Which phase failed.
    pub phase: Phase,
    /// What went wrong, in words.
    pub message: String,
    /// Byte offset into the template source.
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    /// 1-based column of `offset`, in characters.
    pub column: usize,
}

impl Error {
    pub(crate) fn at(
        phase: Phase,
        source: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Self {
        let offset = offset.min(source.len());
        let before = source.get(..offset).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Self { phase, message: message.into(), offset, line, column }
    }
}

/// A located message before it is turned into an [`Error`] against its source.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub offset: usize,
    pub message: String,
}

impl Located {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        Self { offset, message: message.into() }
    }
}
