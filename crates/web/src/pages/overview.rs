//! The Overview page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout("Overview", Nav::Overview, &[], &html! { h1 { "Overview" } })
}
