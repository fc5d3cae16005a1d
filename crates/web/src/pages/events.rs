//! The Events page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout("Events", Nav::Events, &[], &html! { h1 { "Events" } })
}
