//! Why `serve` could not start or stopped ([`Error`]), and why one request
//! failed (`ApiError`: an answer, not an error of the server). Every module
//! that answers a request imports this one, and this one imports none of
//! them: an HTML error page is drawn by `pages` (`ApiError::into_page`).

use std::net::SocketAddr;
use std::sync::Arc;

use agentshape_store::ErrorKind;
use agentshape_store::query::Source;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::State;

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

/// An answer too big to mask whole (Note \[Page door\] in `mask`).
pub(crate) fn too_big_to_mask() -> Response {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "answer too big to mask secrets in (over 64 MiB)",
    )
    .into_response()
}

/// An error answer: a status and a message, as JSON.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}

impl From<agentshape_store::Error> for ApiError {
    fn from(e: agentshape_store::Error) -> Self {
        let status = match e.kind() {
            ErrorKind::Busy | ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            // Something this store cannot do (none of the pages now).
            ErrorKind::Usage => StatusCode::NOT_IMPLEMENTED,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

/// Run a read on a fresh read-only connection (SQLite) or the pool
/// (Postgres), off the async threads.
pub(crate) async fn read<T: Send + 'static>(
    state: &Arc<State>,
    f: impl FnOnce(&dyn Source) -> agentshape_store::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let st = Arc::clone(state);
    tokio::task::spawn_blocking(move || f(st.open()?.source()))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(ApiError::from)
}
