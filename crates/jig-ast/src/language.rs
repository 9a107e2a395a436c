//! The languages Jig indexes, by file extension, with their tree-sitter grammars.

use std::path::Path;

use serde::Serialize;

/// A source language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`
    JavaScript,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.go`
    Go,
}

impl Language {
    /// The language of a file, by its extension.
    pub fn of_path(path: &str) -> Option<Self> {
        let extension = Path::new(path).extension()?.to_str()?;
        Some(match extension {
            "rs" => Self::Rust,
            "py" | "pyi" => Self::Python,
            "js" | "mjs" | "cjs" | "jsx" => Self::JavaScript,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "go" => Self::Go,
            _ => return None,
        })
    }

    /// The name used in tool arguments (`rust`, `python`, `javascript`, `typescript`, `go`);
    /// TSX counts as TypeScript.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Python => "python",
            Self::JavaScript => "javascript",
            Self::TypeScript | Self::Tsx => "typescript",
            Self::Go => "go",
        }
    }

    /// The grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Node kinds that are a name written in code (what a rename rewrites); strings and
    /// comments are other kinds, so they are never touched.
    pub fn identifier_kinds(self) -> &'static [&'static str] {
        match self {
            Self::Rust => &["identifier", "type_identifier", "field_identifier"],
            Self::Python => &["identifier"],
            Self::JavaScript | Self::TypeScript | Self::Tsx => &[
                "identifier",
                "property_identifier",
                "type_identifier",
                "shorthand_property_identifier",
                "shorthand_property_identifier_pattern",
            ],
            Self::Go => &["identifier", "type_identifier", "field_identifier"],
        }
    }

    /// Reserved words, which can never name a symbol (the parsers accept some of them where
    /// a name goes, so a rename checks this list too).
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            Self::Rust => &[
                "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
                "enum", "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop",
                "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static",
                "struct", "super", "trait", "true", "try", "type", "unsafe", "use", "where",
                "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
                "typeof", "unsized", "virtual", "yield",
            ],
            Self::Python => &[
                "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
                "continue", "def", "del", "elif", "else", "except", "finally", "for", "from",
                "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
                "raise", "return", "try", "while", "with", "yield",
            ],
            Self::JavaScript | Self::TypeScript | Self::Tsx => &[
                "break",
                "case",
                "catch",
                "class",
                "const",
                "continue",
                "debugger",
                "default",
                "delete",
                "do",
                "else",
                "enum",
                "export",
                "extends",
                "false",
                "finally",
                "for",
                "function",
                "if",
                "import",
                "in",
                "instanceof",
                "new",
                "null",
                "return",
                "super",
                "switch",
                "this",
                "throw",
                "true",
                "try",
                "typeof",
                "var",
                "void",
                "while",
                "with",
                "yield",
                "let",
                "static",
                "implements",
                "interface",
                "package",
                "private",
                "protected",
                "public",
                "await",
            ],
            Self::Go => &[
                "break",
                "case",
                "chan",
                "const",
                "continue",
                "default",
                "defer",
                "else",
                "fallthrough",
                "for",
                "func",
                "go",
                "goto",
                "if",
                "import",
                "interface",
                "map",
                "package",
                "range",
                "return",
                "select",
                "struct",
                "switch",
                "type",
                "var",
            ],
        }
    }

    /// The formatter that reads source on stdin and writes it formatted, if the language has
    /// a conventional one.
    pub fn formatter(self) -> Option<&'static [&'static str]> {
        match self {
            Self::Rust => Some(&["rustfmt", "--edition", "2024", "--emit", "stdout", "--quiet"]),
            Self::Go => Some(&["gofmt"]),
            Self::Python => Some(&["black", "--quiet", "-"]),
            Self::JavaScript => Some(&["prettier", "--stdin-filepath", "file.js"]),
            Self::TypeScript => Some(&["prettier", "--stdin-filepath", "file.ts"]),
            Self::Tsx => Some(&["prettier", "--stdin-filepath", "file.tsx"]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::of_path("src/lib.rs"), Some(Language::Rust));
        assert_eq!(Language::of_path("a/b.tsx"), Some(Language::Tsx));
        assert_eq!(Language::of_path("main.go"), Some(Language::Go));
        assert_eq!(Language::of_path("README.md"), None);
        assert_eq!(Language::Tsx.name(), "typescript");
    }
}
