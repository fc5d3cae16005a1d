//! One session's page (placeholder until it is built).

use axum::extract::Path;
use maud::{Markup, html};

use super::{Nav, layout};

/// `GET /sessions/{id}`: the page.
pub(crate) async fn page(Path(id): Path<String>) -> Markup {
    layout(
        "Session",
        Nav::Sessions,
        &[],
        &html! { h1 { "Session " (id) } },
    )
}
