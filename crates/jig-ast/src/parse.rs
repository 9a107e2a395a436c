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

/// The import statements of `source` (`use`, `import`, `from … import`, Go import specs):
/// 1-based line and text, for rule `code.mod.import.rules`.
pub fn imports(language: Language, source: &[u8]) -> Vec<(usize, String)> {
    let kinds: &[&str] = match language {
        Language::Rust => &["use_declaration", "extern_crate_declaration"],
        Language::Python => &["import_statement", "import_from_statement"],
        Language::JavaScript | Language::TypeScript | Language::Tsx => &["import_statement"],
        Language::Go => &["import_spec"],
    };
    let Some(tree) = tree(language, source) else { return Vec::new() };
    let mut found = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if kinds.contains(&node.kind()) {
            found.push((node.start_position().row + 1, extract::text(node, source).to_owned()));
            continue;
        }
        stack.extend(node.named_children(&mut cursor));
    }
    found.sort();
    found
}
