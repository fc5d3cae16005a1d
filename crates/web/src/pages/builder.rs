//! The Schema builder page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout(
        "Schema builder",
        Nav::Builder,
        &[],
        &html! { h1 { "Schema builder" } },
    )
}
