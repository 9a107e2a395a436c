//! What the index knows about a symbol.

use serde::Serialize;

use crate::Language;

/// Kinds of symbol (the `nodeType` of the AST tools' schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A free function.
    Fn,
    /// A function inside a type, impl, trait or class.
    Method,
    /// A struct.
    Struct,
    /// An enum.
    Enum,
    /// A trait.
    Trait,
    /// A Rust `impl` block.
    Impl,
    /// A class.
    Class,
    /// An interface.
    Interface,
    /// A type alias or other named type.
    Type,
    /// A constant or static.
    Const,
    /// A module.
    Module,
}

impl Kind {
    /// The name in the schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fn => "fn",
            Self::Method => "method",
            Self::Struct => "struct",
            Self::Enum => "enum",
            Self::Trait => "trait",
            Self::Impl => "impl",
            Self::Class => "class",
            Self::Interface => "interface",
            Self::Type => "type",
            Self::Const => "const",
            Self::Module => "module",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Fn,
            Self::Method,
            Self::Struct,
            Self::Enum,
            Self::Trait,
            Self::Impl,
            Self::Class,
            Self::Interface,
            Self::Type,
            Self::Const,
            Self::Module,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// A byte range of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// After the last byte.
    pub end: usize,
}

/// A symbol defined in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// Stable while the file keeps the symbol: `file:kind:name`, with `#n` for the n-th
    /// symbol of the same kind and name in the file.
    pub id: String,
    /// Its kind.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Its name.
    pub name: String,
    /// The file, relative to the workspace root.
    pub file: String,
    /// Where the whole definition is.
    pub span: Span,
    /// 1-based line of the definition.
    #[serde(skip)]
    pub line: usize,
    /// Whether it is part of the module's public interface.
    pub exported: bool,
    /// Whether it has a doc comment (or docstring).
    pub has_doc: bool,
    /// Its language.
    #[serde(skip)]
    pub language: Language,
}
