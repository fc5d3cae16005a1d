//! Errors of the store.

/// An error of the store: the database could not be opened, migrated or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A SQLite failure, with what was being done.
    #[error("{context}: {source}")]
    Sqlite {
        /// What was being done ("opening `agentshape.db`", "writing session `abc`").
        context: String,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer agentshape.
    #[error("database `{path}` has schema version {found}, newer than this agentshape ({known})")]
    TooNew {
        /// The database path.
        path: String,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
}

/// The result type of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attach context to a rusqlite result.
pub(crate) trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, rusqlite::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Sqlite {
            context: what(),
            source,
        })
    }
}
