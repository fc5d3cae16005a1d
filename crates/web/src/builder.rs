//! The schema builder's API: list, open, lint, check and save schemas under `--schemas` (placeholder until it is built).

use std::sync::Arc;

use axum::Router;

use crate::State;

/// The routes under `/api/` this module answers.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
}
