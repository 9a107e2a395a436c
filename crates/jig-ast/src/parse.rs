//! Parsing one file, with a parser per thread and language kept for reuse.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Parser, Tree};

use crate::extract::{self, SyntaxError};
use crate::{Language, Symbol};

/// A parsed file: its symbols and its first syntax error.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Symbols defined in it.
    pub symbols: Vec<Symbol>,
    /// Its first syntax error, if it has one.
    pub error: Option<SyntaxError>,
}

thread_local! {
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// The syntax tree of `source`.
pub(crate) fn tree(language: Language, source: &[u8]) -> Option<Tree> {
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language).or_insert_with(|| {
            let mut parser = Parser::new();
            // Grammars are compiled in and match the tree-sitter version: this cannot fail.
            let _ = parser.set_language(&language.grammar());
            parser
        });
        parser.parse(source, None)
    })
}

/// Parse `source` of `file` as `language`.
pub fn parse(language: Language, file: &str, source: &[u8]) -> Parsed {
    match tree(language, source) {
        Some(tree) => Parsed {
            symbols: extract::symbols(language, &tree, source, file),
            error: extract::first_error(&tree, source, file),
        },
        None => Parsed {
            symbols: Vec::new(),
            error: Some(SyntaxError {
                file: file.to_owned(),
                line: 1,
                message: "the parser gave up".to_owned(),
            }),
        },
    }
}

/// The first syntax error of `source`, when `file` is in a language Jig parses (rule
/// `code.ast.parsed`). `None` when the file is not source code Jig knows.
pub fn check_syntax(file: &str, source: &[u8]) -> Option<Result<(), SyntaxError>> {
    let language = Language::of_path(file)?;
    let tree = tree(language, source)?;
    Some(match extract::first_error(&tree, source, file) {
        Some(error) => Err(error),
        None => Ok(()),
    })
}
