//! The stylesheet and the JavaScript modules, compiled into the binary: no
//! CDN, no build step, nothing fetched at run time. Served under `/assets/`
//! with their content type and `nosniff`, so the CSP's `script-src 'self'`
//! admits exactly these files.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `(name, content type, body)` of every asset.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../assets/app.css"),
    ),
    (
        "live.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/live.js"),
    ),
    (
        "lists.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/lists.js"),
    ),
    (
        "builder.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/builder.js"),
    ),
    (
        "session.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/session.js"),
    ),
    (
        "theme.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/theme.js"),
    ),
    (
        "keys.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/keys.js"),
    ),
    (
        "playground.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/playground.js"),
    ),
];

/// `GET /assets/{name}`: one embedded file, or 404.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, ty, body)) => (
            [
                (header::CONTENT_TYPE, *ty),
                // Embedded in the binary: a new binary may change them, so revalidate.
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_asset_is_named_once_and_not_empty() {
        let mut names: Vec<&str> = super::ASSETS.iter().map(|a| a.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::ASSETS.len());
        assert!(super::ASSETS.iter().all(|a| !a.2.trim().is_empty()));
    }
}
