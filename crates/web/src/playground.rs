//! The playground's API: extract a pasted reply or transcript and show every step (placeholder until it is built).

use std::sync::Arc;

use axum::Router;

use crate::State;

/// The routes under `/api/` this module answers.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
}
