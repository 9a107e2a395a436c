//! Runbooks: reading the three formats into one representation ([`file`]) and checking them
//! against the project ([`check`]).

pub(crate) mod check;
pub(crate) mod file;
pub(crate) mod parallel;
pub(crate) mod variables;

/// The project's tools and runbooks by name, as the runbook checks resolve them.
pub(crate) type Index<'a> = crate::resolve::Index<'a, file::RunbookFile>;
