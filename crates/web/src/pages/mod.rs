//! The HTML pages (issue 9, item 3-5), rendered on the server with maud so
//! every interpolated string is escaped (Note \[CSP\] in `security`). Each
//! page has a JSON twin under `/api/`; a page reads the same store queries.
//!
//! Every page is `layout(..)` around its body: one stylesheet, the nav, and
//! the page's own script module from `/assets/` (never inline script).

mod alerts;
pub(crate) use alerts::PAGE as ALERTS_PAGE;
mod builder;
mod chart;
pub(crate) mod events;
mod memories;
pub(crate) mod numbers;
pub(crate) mod overview;
mod playground;
mod secrets;
pub(crate) mod session;
pub(crate) mod sessions;
mod usage;
mod validation;

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{DOCTYPE, Markup, html};

use crate::State;
use crate::error::ApiError;

/// The pages' routes (merged into the app by `router` in the crate root).
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/", get(overview::page))
        .route("/sessions", get(sessions::page))
        .route("/sessions/{id}", get(session::page))
        .route("/events", get(events::page))
        .route("/memories", get(memories::page))
        .route("/alerts", get(alerts::page))
        .route("/builder", get(builder::page))
        .route("/playground", get(playground::page))
        // Every page declares its icon (`layout`), so a browser does not ask
        // for this; a client that asks anyway gets "nothing", not a 404.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
}

/// Which nav entry is highlighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Overview,
    Sessions,
    Events,
    Memories,
    Alerts,
    Builder,
    Playground,
}

const NAV: &[(Nav, &str, &str)] = &[
    (Nav::Overview, "/", "Overview"),
    (Nav::Sessions, "/sessions", "Sessions"),
    (Nav::Events, "/events", "Events"),
    (Nav::Memories, "/memories", "Memories"),
    (Nav::Alerts, "/alerts", "Alerts"),
    (Nav::Builder, "/builder", "Schema builder"),
    (Nav::Playground, "/playground", "Playground"),
];

/// The page around `body`: title, nav, stylesheet, and the script modules
/// named in `scripts` (file names under `/assets/`).
pub(crate) fn layout(title: &str, active: Nav, scripts: &[&str], body: &Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · agentshape" }
                // No icon, said explicitly: without it every page load asks
                // for `/favicon.ico` (a 404 in the browser console). The CSP
                // admits `data:` images.
                link rel="icon" href="data:,";
                link rel="stylesheet" href="/assets/app.css";
                // A classic script, neither deferred nor a module: it runs
                // before the body is drawn, so a chosen theme never
                // flashes the other one first (Note [Theme]).
                script src="/assets/theme.js" {}
                @for s in scripts {
                    script type="module" src={ "/assets/" (s) } {}
                }
                script type="module" src="/assets/keys.js" {}
            }
            body data-page=(title) {
                header.top {
                    a.brand href="/" { "agentshape" }
                    nav {
                        @for (nav, href, label) in NAV {
                            a href=(href) class=[(*nav == active).then_some("active")] { (label) }
                        }
                    }
                    span #live-status .live { }
                    button #theme-toggle .theme-toggle type="button"
                        title="Light or dark, kept in this browser (the system's until chosen)" {
                        "Theme"
                    }
                    a #keys-link href="#keys-help" title="Keyboard shortcuts (?)" { "Keys" }
                }
                main { (body) }
                (keys_help())
            }
        }
    }
}

/// The keys' help, opened by `?` (`keys.js`; Note \[Keys\] there). A
/// `<dialog>`: shown modal, Esc closes it without a script of ours.
fn keys_help() -> Markup {
    const KEYS: &[(&str, &str)] = &[
        ("j", "next turn (a prompt or an answer) on a session's page"),
        ("k", "previous turn"),
        ("/", "search sessions and transcripts"),
        ("?", "this help"),
        ("Esc", "close it"),
    ];
    html! {
        dialog #keys-help aria-labelledby="keys-help-title" {
            h2 #keys-help-title { "Keys" }
            dl.keys {
                @for (k, what) in KEYS { dt { kbd { (k) } } dd { (what) } }
            }
            p.muted { "Keys do nothing while you type in a field." }
            button #keys-help-close type="button" { "Close" }
        }
    }
}

/// An HTML error page with its status (404 for an unknown session, 503
/// while the store is busy): a page, not JSON, because a person reads it.
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    let body = html! {
        h1 { (status.as_u16()) " " (status.canonical_reason().unwrap_or("")) }
        p #error-message { (message) }
        p { a href="/" { "Back to the overview" } }
    };
    (status, layout("Error", Nav::Overview, &[], &body)).into_response()
}

impl ApiError {
    /// The same failure as an HTML page, for the pages (a person reads it).
    /// Here, not beside `ApiError`, so that `error` imports no page.
    pub(crate) fn into_page(self) -> Response {
        error_page(self.status, &self.message)
    }
}
