//! Errors of the audit store.

use std::path::PathBuf;

/// Why an audit operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The database could not be opened.
    #[error("cannot open the audit store {target}: {source}")]
    Connect {
        /// The URL or path.
        target: String,
        /// The cause.
        source: sqlx::Error,
    },
    /// A migration failed.
    #[error("cannot migrate the audit store: {0}")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// A file next to the database (its directory, its lock) could not be used.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A statement failed.
    #[error("audit store: {0}")]
    Database(#[from] sqlx::Error),
    /// A transaction could not be committed; nothing of it was stored.
    #[error("audit store: commit failed: {0}")]
    Commit(String),
    /// Stored state the hash chain does not vouch for (changed behind it).
    #[error("audit store: {0}")]
    Tampered(String),
    /// A stored value cannot be read back.
    #[error("audit store: unreadable record ({0})")]
    Corrupt(String),
    /// The store was closed.
    #[error("audit store: closed")]
    Closed,
    /// A query's argument is not valid (a cursor from elsewhere).
    #[error("{0}")]
    BadQuery(String),
}

impl AuditError {
    /// Whether a unique constraint refused a row (e.g. a run with a request id already used).
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, Self::Database(sqlx::Error::Database(db)) if db.is_unique_violation())
    }

    /// Whether SQLite reported the database busy or locked (the writer retries these).
    pub fn is_busy(&self) -> bool {
        match self {
            Self::Database(sqlx::Error::Database(db)) => {
                let message = db.message().to_ascii_lowercase();
                message.contains("database is locked") || message.contains("busy")
            }
            _ => false,
        }
    }
}
