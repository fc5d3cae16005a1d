//! What a request or a body read can fail with, each one line without the
//! URL (it may hold credentials).

/// A request that could not be sent or was refused by the policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The HTTP client could not be built (the TLS backend failed).
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The server answered with a redirect the policy does not follow.
    #[error("HTTP {status} redirect to {to} not followed (redirects are refused)")]
    Redirect {
        /// The 3xx status.
        status: u16,
        /// Where it pointed: scheme, host and port only.
        to: String,
    },
    /// The URL's user info and an `Authorization` header would both be sent.
    #[error(
        "the URL has credentials (user:password@) and an Authorization header is set too; refusing to send both"
    )]
    TwoCredentials,
    /// Connecting, sending or waiting failed.
    #[error("{message}")]
    Transport {
        /// The error and its causes, without the URL.
        message: String,
        /// Whether a timeout ended it.
        timeout: bool,
    },
}

impl Error {
    /// Whether a timeout ended the request.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Transport { timeout: true, .. })
    }
}

impl From<reqwest::Error> for Error {
    fn from(e: reqwest::Error) -> Self {
        Error::Transport {
            timeout: e.is_timeout(),
            message: describe(e),
        }
    }
}

/// A response body that could not be read within its limit.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// `Content-Length` is over the limit: nothing was read.
    #[error("the response declares {declared} bytes, over the {limit}-byte cap; not read")]
    Declared {
        /// What `Content-Length` said.
        declared: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// The body grew past the limit; reading stopped there.
    #[error("the response grew past the {limit}-byte cap; stopped after reading {read} bytes")]
    TooLarge {
        /// The caller's limit.
        limit: u64,
        /// Bytes read, the chunk that went over included.
        read: u64,
    },
    /// The connection failed or timed out while reading.
    #[error("the response was cut after {read} bytes: {message}")]
    Cut {
        /// Bytes read before.
        read: u64,
        /// `Content-Length`, when the server gave one.
        declared: Option<u64>,
        /// The error and its causes, without the URL.
        message: String,
        /// Whether a timeout ended it.
        timeout: bool,
    },
}

/// A reqwest error and its causes, one line, without the URL (a URL may
/// carry credentials).
pub fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}
