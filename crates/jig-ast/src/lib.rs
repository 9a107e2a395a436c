//! Jig's code index: tree-sitter parses of Rust, Python, JavaScript, TypeScript and Go.
//!
//! An [`Index`] maps files to the [`Symbol`]s defined in them (kind, name, span, whether
//! exported and documented) and their first syntax error; [`Index::refresh`] re-parses only
//! files whose size or modification time changed, in parallel. [`Filter`] selects symbols
//! for queries and rules; [`rename`] computes a structural rename in memory; [`check_syntax`]
//! is rule `code.ast.parsed` for one file. Nothing here does I/O except through the `read`
//! functions callers pass, so the callers' sandbox applies.

mod extract;
mod index;
mod language;
mod parse;
mod query;
mod rename;
mod symbol;

pub use extract::SyntaxError;
pub use index::{FileEntry, Index, Refresh, Source, Stamp};
pub use language::Language;
pub use parse::{Parsed, check_syntax, imports, parse};
pub use query::{Filter, FilterError};
pub use rename::{Edit, EditError, rename};
pub use symbol::{Kind, Span, Symbol};
