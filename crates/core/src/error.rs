//! Errors of the core library.
//!
//! Data is not an error: a malformed transcript line becomes an
//! [`Event::Skipped`](crate::Event::Skipped), an invalid instance becomes
//! [`Violation`](crate::Violation)s. `Err` is reserved for caller mistakes
//! (a bad schema, an unknown profile) and for I/O failures of a reader the
//! caller handed in.

/// An error of the core library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The JSON Schema could not be compiled.
    #[error("invalid schema: {message}")]
    InvalidSchema {
        /// What is wrong, in one line.
        message: String,
    },
    /// No built-in or configured profile has this name.
    #[error("unknown profile `{name}` (known: {known})")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// A profile definition could not be read.
    #[error("invalid profile `{name}`: {message}")]
    InvalidProfile {
        /// The profile's name (or its source).
        name: String,
        /// What is wrong, in one line.
        message: String,
    },
    /// A profile file has a bad key: unknown, of the wrong type, missing, or
    /// with a value that does not hold together.
    #[error("profile `{origin}`: `{key}`: {message}")]
    ProfileKey {
        /// The file (or built-in name) it came from.
        origin: String,
        /// The dotted key at fault (`markers.rule[0].fields[1]`).
        key: String,
        /// What is wrong, in one line.
        message: String,
    },
    /// Reading from a caller-supplied reader failed.
    #[error("i/o error while reading input")]
    Io(#[from] std::io::Error),
}

/// The result type of the core library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
