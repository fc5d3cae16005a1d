//! The Memories page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout("Memories", Nav::Memories, &[], &html! { h1 { "Memories" } })
}
