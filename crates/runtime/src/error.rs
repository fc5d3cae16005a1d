//! Errors of the runtime crate.

/// An error of the runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O failure, with what was being done.
    #[error("{context}")]
    Io {
        /// What was being done ("spawning `claude`", "writing the forensic log").
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An input file missing or refused (Note [Regular files only] in
    /// `infile`): "profile `p.toml` is a FIFO, not a regular file".
    #[error("{what} {source}")]
    Input {
        /// What the file is for: "profile", "prompt", ...
        what: &'static str,
        /// Why it was refused.
        #[source]
        source: crate::infile::InputError,
    },
    /// A core error (bad schema, unknown profile, ...).
    #[error(transparent)]
    Core(#[from] agentshape_core::Error),
    /// A store error.
    #[error(transparent)]
    Store(#[from] agentshape_store::Error),
    /// A session id that is not a safe file name (it names the forensic log).
    #[error(
        "invalid session id {id:?}: {reason}; a session id is 1 to 128 characters of [A-Za-z0-9._-], not starting with `.`"
    )]
    SessionId {
        /// The id as given.
        id: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// A forensic log file (or a symlink) is already where a new session's
    /// log goes: a reused session id, or something planted there.
    #[error(
        "forensic log `{path}` already exists: a session id names a new log, so use another --session-id (a file or symlink there is never followed or appended to)"
    )]
    LogExists {
        /// The path.
        path: String,
    },
    /// A session could not be written to the store; its forensic log keeps it.
    #[error(
        "session `{id}` was not stored in the store ({source}); it is kept in its forensic log: add it later with `agentshape ingest{store_arg} {log}`"
    )]
    StoreWrite {
        /// The session id.
        id: String,
        /// ` --store LOCATION` when the store is not the default file (the
        /// password of a URL redacted), else empty: the exact command.
        store_arg: String,
        /// The forensic log to ingest.
        log: String,
        /// The store's error (its kind decides the exit code); boxed to keep
        /// every `Result` of the crate small.
        #[source]
        source: Box<agentshape_store::Error>,
    },
    /// A bad ops configuration.
    #[error("config `{path}`: {message}")]
    Config {
        /// The config file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// Wrap a refused input file named `what` (for `map_err`).
    pub fn input(what: &'static str) -> impl FnOnce(crate::infile::InputError) -> Error {
        move |source| Error::Input { what, source }
    }
}

/// The result type of the runtime crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
