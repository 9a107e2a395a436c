//! Filters over indexed symbols (`where` of `ast_query` and `ast_validate`).

use globset::{GlobBuilder, GlobMatcher};

use crate::{Kind, Symbol};

/// A filter that cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// An unknown symbol kind.
    #[error(
        "`type` `{0}` is not a symbol kind (fn, method, struct, enum, trait, impl, class, interface, type, const, module)"
    )]
    Kind(String),
    /// A glob that does not compile.
    #[error("`{field}` `{glob}`: {reason}")]
    Glob {
        /// `name_like` or `file_glob`.
        field: &'static str,
        /// The glob.
        glob: String,
        /// Why.
        reason: String,
    },
}

/// Every given field must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    kind: Option<Kind>,
    name_like: Option<GlobMatcher>,
    file_glob: Option<GlobMatcher>,
    exported: Option<bool>,
}

impl Filter {
    /// A filter from the `where` fields.
    pub fn new(
        kind: Option<&str>,
        name_like: Option<&str>,
        file_glob: Option<&str>,
        exported: Option<bool>,
    ) -> Result<Self, FilterError> {
        let kind = kind
            .map(|k| Kind::parse(k).ok_or_else(|| FilterError::Kind(k.to_owned())))
            .transpose()?;
        let glob = |field: &'static str, glob: &str, separator: bool| {
            GlobBuilder::new(glob)
                .literal_separator(separator)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| FilterError::Glob {
                    field,
                    glob: glob.to_owned(),
                    reason: e.to_string(),
                })
        };
        Ok(Self {
            kind,
            name_like: name_like.map(|g| glob("name_like", g, false)).transpose()?,
            file_glob: file_glob.map(|g| glob("file_glob", g, true)).transpose()?,
            exported,
        })
    }

    /// Whether `symbol` passes.
    pub fn matches(&self, symbol: &Symbol) -> bool {
        self.kind.is_none_or(|k| k == symbol.kind)
            && self.exported.is_none_or(|e| e == symbol.exported)
            && self.name_like.as_ref().is_none_or(|g| g.is_match(&symbol.name))
            && self.file_glob.as_ref().is_none_or(|g| g.is_match(&symbol.file))
    }
}
