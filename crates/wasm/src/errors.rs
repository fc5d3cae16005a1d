//! The error kinds, the same as the Python package's exceptions (Note
//! \[Exceptions and exit codes\] in crates/python's `errors`).
//!
//! Note \[Errors across the boundary\]: a failure crosses to JavaScript as a
//! plain `Error` whose `name` is the kind (`SchemaError`, ...); the
//! package's wrapper turns it into the `AgentshapeError` subclass of that
//! name, with its `exitCode`. Data is not an error (core's rule): an
//! invalid instance is a list of violations.

use std::fmt;

/// The category of a failure; its name is the JavaScript class's. The
/// outcome errors `InvalidOutputError` (1) and `AgentError` (3) are raised
/// by the package itself (`raiseForOutcome()`), from an extraction's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A caller mistake: an option or value out of range (exit 64).
    Usage,
    /// A schema that does not compile or is not JSON (exit 64).
    Schema,
    /// An unknown or bad profile (exit 64).
    Profile,
    /// A value JSON cannot hold (exit 64).
    NotJson,
    /// Input that cannot be read: text that is not JSON where JSON is required (exit 66).
    Input,
    /// No structured output found (exit 2): `repair` on text without JSON.
    NoOutput,
}

impl Kind {
    /// The JavaScript class name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Usage => "UsageError",
            Kind::Schema => "SchemaError",
            Kind::Profile => "ProfileError",
            Kind::NotJson => "NotJSONError",
            Kind::Input => "InputError",
            Kind::NoOutput => "NoOutputError",
        }
    }
}

/// A failure: its kind and one line for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure.
    pub kind: Kind,
    /// One line saying what and where.
    pub message: String,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }

    /// A caller mistake.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Kind::Usage, message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl From<agentshape_core::Error> for Failure {
    /// Every core error is a caller mistake (bad schema or profile), as in
    /// the Python package; core does no I/O here, so `Io` cannot happen.
    fn from(e: agentshape_core::Error) -> Self {
        use agentshape_core::Error as E;
        let kind = match e {
            E::InvalidSchema { .. } => Kind::Schema,
            E::UnknownProfile { .. } | E::InvalidProfile { .. } | E::ProfileKey { .. } => {
                Kind::Profile
            }
            E::Io(_) => Kind::Input,
            _ => Kind::Usage,
        };
        Failure::new(kind, e.to_string())
    }
}

/// Result of the pure layer.
pub type Result<T> = std::result::Result<T, Failure>;

/// Serialize `value` as JSON text (our own types only: they always serialize).
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Parse JSON text handed over by the package's wrapper, which made it with
/// `JSON.stringify`; `what` names the argument in the message.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Failure::usage(format!("{what}: {e}")))
}
