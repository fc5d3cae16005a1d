//! Why `serve` could not start or stopped.

use std::net::SocketAddr;

/// Why `serve` could not start or stopped. Request failures are not here:
/// they are answers (a JSON `{"error"}` with a 4xx or 5xx), not errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be bound (in use, not ours, no permission).
    #[error("cannot listen on `{addr}`: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The store could not be opened or read at start.
    #[error(transparent)]
    Store(#[from] agentshape_store::Error),
    /// The server failed while accepting connections.
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
}
