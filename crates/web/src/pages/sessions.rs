//! The Sessions page (placeholder until it is built).

use maud::{Markup, html};

use super::{Nav, layout};

/// `GET`: the page.
pub(crate) async fn page() -> Markup {
    layout("Sessions", Nav::Sessions, &[], &html! { h1 { "Sessions" } })
}
