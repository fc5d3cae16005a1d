//! Headers every answer carries (issue 9, item 6).
//!
//! Note \[CSP\]: agent text is untrusted. Pages escape every interpolation
//! (maud), and the Content-Security-Policy is the second wall: scripts only
//! from our own `/assets/` (no inline script, no `eval`), no plugins, no
//! framing, forms and fetches only to this origin. A transcript holding
//! `<script>` or `<img onerror>` is text on the page; even if a bug let it
//! into the DOM as markup, the browser would refuse to run it.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The policy: see Note \[CSP\].
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
frame-ancestors 'none'";

/// Add the security headers to every response.
pub(crate) async fn headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}
