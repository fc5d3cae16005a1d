//! The Playground page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout(
        "Playground",
        Nav::Playground,
        &[],
        &html! { h1 { "Playground" } },
    )
}
