//! Limits on what a request may cost before a handler sees it: the time its
//! body may take, and an address that must decode to UTF-8.
//!
//! Note \[Slow bodies\]: hyper's `header_read_timeout` ends a connection
//! whose head trickles, but once the head is in, the handler reads the body
//! at the client's pace, forever: 250 connections that sent a head and a
//! byte of body held 250 file descriptors until `serve` could accept
//! nothing more. So the body of every request is read against a deadline,
//! the client timeout (30 s) counted from when its head was in. A body
//! still incomplete then ends in an error for the handler that reads it;
//! whatever the handler made of that, the answer is `408` (JSON, with
//! `Connection: close`, so hyper closes the connection and its descriptor).
//! A whole body rather than a minimum rate: the largest body `serve` takes
//! is 4 MiB (the playground), which takes under 30 s at any link that can
//! load the dashboard, and a deadline cannot be gamed by sending one byte
//! a second.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::body::HttpBody as _;
use axum::extract::{Request, State as AxState};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::State;
use crate::error::ApiError;

/// Give the request's body a deadline (Note \[Slow bodies\]).
pub(crate) async fn body_deadline(
    AxState(state): AxState<Arc<State>>,
    req: Request,
    next: Next,
) -> Response {
    // Most requests (every GET) have no body: nothing to watch.
    if req.body().is_end_stream() {
        return next.run(req).await;
    }
    let limit = state.client_timeout;
    let expired = Arc::new(AtomicBool::new(false));
    let (parts, body) = req.into_parts();
    let body = Body::from_stream(timed(body, limit, Arc::clone(&expired)));
    let res = next.run(Request::from_parts(parts, body)).await;
    if expired.load(Ordering::Relaxed) {
        return too_slow(limit);
    }
    res
}

/// The body's chunks until `limit` has passed; then an error, and `expired`.
fn timed(
    body: Body,
    limit: Duration,
    expired: Arc<AtomicBool>,
) -> impl futures_util::Stream<Item = Result<axum::body::Bytes, axum::Error>> + Send {
    let deadline = tokio::time::Instant::now() + limit;
    let chunks = body.into_data_stream();
    futures_util::stream::unfold(Some(chunks), move |chunks| {
        let expired = Arc::clone(&expired);
        async move {
            let mut chunks = chunks?;
            match tokio::time::timeout_at(deadline, chunks.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(chunks))),
                Ok(None) => None,
                Err(_) => {
                    expired.store(true, Ordering::Relaxed);
                    let e = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the request body took too long",
                    );
                    Some((Err(axum::Error::new(e)), None))
                }
            }
        }
    })
}

/// The answer to a body that missed its deadline.
fn too_slow(limit: Duration) -> Response {
    let mut res = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "the request body did not arrive within the client timeout ({} s)",
            limit.as_secs_f64()
        ),
    )
    .into_response();
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// An address whose percent-escapes do not decode to UTF-8 (`/assets/%FF`)
/// is a `400` with the API's JSON error, whichever route it names: left to
/// the routes, each extractor answered it its own way (`text/plain`).
pub(crate) async fn utf8_path(req: Request, next: Next) -> Response {
    if decodes_to_utf8(req.uri().path()) {
        return next.run(req).await;
    }
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "the path in the address is not valid UTF-8 once its %-escapes are decoded",
    )
    .into_response()
}

/// Whether `path`'s `%XX` escapes decode to UTF-8 (a `%` not followed by
/// two hex digits stays as it is, as the router takes it).
fn decodes_to_utf8(path: &str) -> bool {
    if !path.contains('%') {
        return true;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            // Two hex digits: at most 0xFF.
            out.push(u8::try_from(h * 16 + l).unwrap_or(u8::MAX));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    std::str::from_utf8(&out).is_ok()
}

#[cfg(test)]
mod tests {
    use super::decodes_to_utf8;

    #[test]
    fn percent_escapes_are_decoded_before_the_utf8_check() {
        for good in ["/", "/sessions/a%20b", "/x/%C3%A9", "/100%", "/%zz", "/%4"] {
            assert!(decodes_to_utf8(good), "{good}");
        }
        for bad in ["/assets/%FF", "/x/%C3", "/x/%c3%28", "/%ED%A0%80"] {
            assert!(!decodes_to_utf8(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_body_past_its_deadline_ends_in_an_error_and_says_so() {
        use futures_util::StreamExt;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::Duration;
        // A body that never ends: one chunk, then nothing.
        let stream = futures_util::stream::iter([Ok::<_, std::io::Error>(
            axum::body::Bytes::from_static(b"{"),
        )])
        .chain(futures_util::stream::pending());
        let body = axum::body::Body::from_stream(stream);
        let expired = Arc::new(AtomicBool::new(false));
        let mut timed = Box::pin(super::timed(
            body,
            Duration::from_millis(50),
            Arc::clone(&expired),
        ));
        assert_eq!(&timed.next().await.unwrap().unwrap()[..], b"{");
        assert!(timed.next().await.unwrap().is_err());
        assert!(expired.load(Ordering::Relaxed));
        assert!(timed.next().await.is_none());
    }
}
