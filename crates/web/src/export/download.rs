//! `GET /sessions/{id}/export.html`: the session page's Download link, the
//! file `agentshape export html` writes (Note \[Export\]). It is behind
//! the same token check as every route, and masked by the page door
//! (Note \[Page door\]) as `export html` masks it.

use std::sync::Arc;

use agentshape_store::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State as AxState};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Format, Options, export, file_name};
use crate::State;
use crate::pages::error_page;

/// The file, as an attachment named after the session; the 404 page for
/// an unknown id.
pub(crate) async fn download(
    AxState(state): AxState<Arc<State>>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let Ok(Path(id)) = path else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "the session id in the address is not valid UTF-8",
        );
    };
    let st = Arc::clone(&state);
    let key = id.clone();
    let made = tokio::task::spawn_blocking(move || {
        export(st.open()?.source(), &key, Format::Html, &Options::default())
    })
    .await;
    match made {
        Ok(Ok(Some(page))) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}\"", file_name(&id, Format::Html)),
                ),
                (header::CACHE_CONTROL, "no-store".to_owned()),
            ],
            page,
        )
            .into_response(),
        Ok(Ok(None)) => error_page(
            StatusCode::NOT_FOUND,
            &format!("no session `{}`", id.replace(char::is_control, "\u{FFFD}")),
        ),
        Ok(Err(e)) if e.kind() == ErrorKind::Busy => error_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "the store is busy with writers; try again in a moment",
        ),
        Ok(Err(e)) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => error_page(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}
