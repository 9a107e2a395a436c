//! Which database a store is on. A leaf: the statements, the writer and the store all ask it.

/// Which database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}
