//! Errors of the store.
//!
//! Note \[Store error kinds\]: callers (the CLI's exit codes, the runner's
//! retry and hint messages) need to know *what kind* of failure happened,
//! not its text. [`Error::kind`] classifies every error once, here, from
//! SQLite's primary result code or Postgres's SQLSTATE class, so nobody
//! matches on strings.

/// What kind of failure a store error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The database stayed locked or busy after the bounded retries (temporary).
    Busy,
    /// The database cannot be written: read-only file or folder, permission.
    ReadOnly,
    /// The file is not a database, or the database is damaged.
    Corrupt,
    /// A read-only command was given a store file that does not exist.
    Missing,
    /// The database was written by a newer agentshape.
    TooNew,
    /// The session id is already taken by a finished session.
    Conflict,
    /// Any other I/O failure (disk full, ...).
    Io,
    /// The database server cannot be reached: refused, timed out, gone
    /// (temporary: the same command may work later).
    Unavailable,
    /// The store location is not one we can open (`store copy --from x://`).
    Usage,
}

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
    /// A Postgres failure, with what was being done (the URL in the context
    /// has its password redacted).
    #[error("{context}: {}", pg_message(source))]
    Postgres {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: postgres::Error,
    },
    /// Connecting took longer than the connect timeout (a server that
    /// accepts but never answers; see Note \[Connect deadline\] in `postgres`).
    #[error("cannot reach the store `{url}`: no answer within {after_ms} ms")]
    ConnectTimeout {
        /// The store URL, password redacted.
        url: String,
        /// The deadline.
        after_ms: u64,
    },
    /// Something this backend does not do yet (the dashboard's pages read
    /// SQLite only).
    #[error("{what} is not available on a Postgres store yet")]
    Unsupported {
        /// What was asked.
        what: String,
    },
    /// A stored value of a type its column never holds (a row written by
    /// hand, or damaged), met while reading.
    #[error("unexpected row in the store: {what}")]
    Unexpected {
        /// Which value, and what it was.
        what: String,
    },
    /// A store location that names no backend we have.
    #[error("bad store `{url}`: {reason}")]
    BadUrl {
        /// The location as given, password redacted.
        url: String,
        /// Why.
        reason: String,
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
    /// A read-only command named a store that does not exist (nothing is created).
    #[error("store `{path}` does not exist (commands that only read never create it)")]
    Missing {
        /// The database path.
        path: String,
    },
    /// A read-only command named an empty database (a 0-byte SQLite file):
    /// nothing to read, and it is not initialised by commands that only
    /// read (Note \[Not a store\] in `sqlite`).
    #[error(
        "store `{path}` is an empty database, not yet an agentshape store \
         (commands that only read never initialise it; `run` and `ingest` do)"
    )]
    Empty {
        /// The database path.
        path: String,
    },
    /// A database that is not an agentshape store (another program's
    /// tables, no `sessions`).
    #[error(
        "store `{path}` is a database but not an agentshape store (it has no `sessions` table)"
    )]
    NotAStore {
        /// The database path.
        path: String,
    },
    /// A file operation around the database (creating it with its mode).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `start_session` for an id a finished session already has.
    #[error("session id `{id}` is already taken by a `{status}` session")]
    IdTaken {
        /// The session id.
        id: String,
        /// The status of the stored session.
        status: String,
    },
}

impl Error {
    /// The kind of failure (Note \[Store error kinds\]).
    pub fn kind(&self) -> ErrorKind {
        use rusqlite::ErrorCode as C;
        match self {
            Error::TooNew { .. } => ErrorKind::TooNew,
            Error::Missing { .. } | Error::Empty { .. } => ErrorKind::Missing,
            Error::IdTaken { .. } => ErrorKind::Conflict,
            Error::BadUrl { .. } | Error::Unsupported { .. } => ErrorKind::Usage,
            Error::ConnectTimeout { .. } => ErrorKind::Unavailable,
            Error::Unexpected { .. } | Error::NotAStore { .. } => ErrorKind::Corrupt,
            Error::Postgres { source, .. } => pg_kind(source),
            Error::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    ErrorKind::ReadOnly
                }
                // A folder that does not exist: the store cannot be created.
                std::io::ErrorKind::NotFound => ErrorKind::ReadOnly,
                _ => ErrorKind::Io,
            },
            Error::Sqlite { source, .. } => match source.sqlite_error_code() {
                Some(C::DatabaseBusy | C::DatabaseLocked) => ErrorKind::Busy,
                Some(
                    C::ReadOnly
                    | C::PermissionDenied
                    | C::CannotOpen
                    | C::AuthorizationForStatementDenied,
                ) => ErrorKind::ReadOnly,
                Some(C::NotADatabase | C::DatabaseCorrupt) => ErrorKind::Corrupt,
                _ => ErrorKind::Io,
            },
        }
    }

    /// Whether retrying may help (`SQLITE_BUSY` / `SQLITE_LOCKED`).
    pub fn is_busy(&self) -> bool {
        self.kind() == ErrorKind::Busy
    }

    /// Whether the feed's index of numbered entries (`feed_session_seq`)
    /// refused a row: a batch sent again whose first write landed (Note
    /// \[Feed writes land once\] in `writes`).
    pub(crate) fn is_feed_resend(&self) -> bool {
        match self {
            Error::Sqlite {
                source: rusqlite::Error::SqliteFailure(e, Some(msg)),
                ..
            } => {
                e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    && msg.contains("feed.seq")
            }
            Error::Postgres { source, .. } => source.as_db_error().is_some_and(|d| {
                *d.code() == postgres::error::SqlState::UNIQUE_VIOLATION
                    && d.constraint() == Some("feed_session_seq")
            }),
            _ => false,
        }
    }
}

/// The kind of a Postgres failure, from its SQLSTATE class when the server
/// sent one, else from how the connection failed.
fn pg_kind(e: &postgres::Error) -> ErrorKind {
    if let Some(state) = e.code() {
        let code = state.code();
        return match &code[..2] {
            // serialization failure, deadlock; lock not available; too many connections
            "40" | "55" | "53" => ErrorKind::Busy,
            // invalid authorization; insufficient privilege; read-only transaction
            "28" => ErrorKind::ReadOnly,
            "42" if code == "42501" => ErrorKind::ReadOnly,
            "25" if code == "25006" => ErrorKind::ReadOnly,
            // the database does not exist
            "3D" => ErrorKind::Missing,
            // shutting down / cannot connect now; connection exceptions
            "57" | "08" => ErrorKind::Unavailable,
            "XX" => ErrorKind::Corrupt,
            _ => ErrorKind::Io,
        };
    }
    // No SQLSTATE. A TLS failure (certificate not trusted, not for this
    // host; a server without TLS under `sslmode=require`) is not an outage:
    // trying again will not help (Note [sslmode] in `tls`).
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<crate::tls::TlsFailure>() {
            return ErrorKind::Io;
        }
        cause = c.source();
    }
    // The client's own TLS refusals ("server does not support TLS").
    if e.to_string().starts_with("error performing TLS handshake")
        && std::error::Error::source(e).is_none_or(|c| !c.is::<std::io::Error>())
    {
        return ErrorKind::Io;
    }
    // Otherwise the connection itself failed (refused, reset, closed,
    // DNS, socket path missing) — the server cannot be reached now.
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<std::io::Error>() {
            return ErrorKind::Unavailable;
        }
        cause = c.source();
    }
    if e.is_closed() {
        ErrorKind::Unavailable
    } else {
        ErrorKind::Io
    }
}

/// A Postgres error on one line: the server's message (and detail) when it
/// sent one, else the client's description with its cause.
fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.detail() {
            Some(d) => format!("{} ({})", db.message(), d),
            None => db.message().to_owned(),
        };
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
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

/// Attach context to a Postgres result.
pub(crate) trait PgContext<T> {
    fn pg(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> PgContext<T> for std::result::Result<T, postgres::Error> {
    fn pg(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Postgres {
            context: what(),
            source,
        })
    }
}
