//! The page door: every page, API answer and feed event is masked on its
//! way out (issue 29).
//!
//! Note \[Page door\]: the store masks what it writes (the store's Note
//! \[Store door\]), but a store may hold rows written before masking existed
//! or with `--no-mask`, so `serve` masks again where rows become responses,
//! at two choke points: this layer for every HTML page and JSON answer
//! (masked as a whole, after rendering: JSON keeps its shape; in HTML a
//! secret is masked as its escaped text reads), and `feed::Row::new` for
//! SSE events (the feed's JSON body, before it is framed). With masking off
//! (`serve --no-mask`) every page carries a banner saying so.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use agentshape_core::secrets::Masker;

use crate::State;

/// The largest answer masked whole; a bigger one (never made by these
/// pages, whose lists and transcripts are paged) is refused rather than
/// sent unmasked.
const MAX_MASKED_BYTES: usize = 64 << 20;

/// What every page says when masking is off.
pub(crate) const OFF_BANNER: &str = "secret masking is OFF: raw credentials are shown";

/// The layer of Note \[Page door\].
pub(crate) async fn responses(
    AxState(state): AxState<Arc<State>>,
    req: Request,
    next: Next,
) -> Response {
    let resp = next.run(req).await;
    let kind = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let html = kind.starts_with("text/html");
    let json = kind.starts_with("application/json");
    if !html && !json {
        return resp;
    }
    if state.masker.is_none() && !html {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MASKED_BYTES).await else {
        return crate::error::too_big_to_mask();
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let out = match &state.masker {
        Some(m) if json => m.mask_json_text(text).text.into_owned(),
        Some(m) => mask_html(m, text),
        None => with_banner(text),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(out))
}

/// A page with every secret masked: found in the page's text with its
/// entities read (`api_key=&quot;sk-…&quot;` reads as the quoted value the
/// rules know), then replaced where it stands, escaped as the page has it.
pub(crate) fn mask_html(m: &Masker, page: &str) -> String {
    let read = unescape(page);
    let found = m.scan(&read);
    if found.is_empty() {
        return page.to_owned();
    }
    let mut pairs: Vec<(String, String)> = found
        .iter()
        .map(|f| {
            (
                read[f.start..f.end].to_owned(),
                format!("[REDACTED:{}:{}]", f.rule, f.fingerprint),
            )
        })
        .collect();
    // Longer secrets first, so one inside another is not left half masked.
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    pairs.dedup_by(|a, b| a.0 == b.0);
    let mut out = page.to_owned();
    for (secret, mask) in pairs {
        for form in [escape(&secret), secret] {
            if !form.is_empty() && out.contains(&form) {
                out = out.replace(&form, &mask);
            }
        }
    }
    out
}

/// The entities a page escapes text with, read back.
fn unescape(page: &str) -> String {
    page.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Text escaped as maud escapes it.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page with the `--no-mask` banner first in its main part.
fn with_banner(page: &str) -> String {
    let banner = format!("<p class=\"no-mask\" role=\"alert\"><strong>{OFF_BANNER}</strong></p>");
    match page.find("<main>") {
        Some(i) => {
            let at = i + "<main>".len();
            format!("{}{banner}{}", &page[..at], &page[at..])
        }
        None => page.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_escaped_in_html_is_masked() {
        let m = Masker::builtin(agentshape_core::secrets::MaskKey::from_bytes([1; 32]));
        let key = "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";
        let page = format!("<pre>client = OpenAI(api_key=&quot;{key}&quot;)</pre>");
        let out = mask_html(&m, &page);
        assert!(!out.contains(key), "{out}");
        assert!(out.contains("api_key=&quot;[REDACTED:"), "{out}");
    }

    #[test]
    fn the_banner_goes_first_in_main() {
        let page = with_banner("<html><body><nav></nav><main><h1>x</h1></main></body></html>");
        assert!(page.contains(&format!(
            "<main><p class=\"no-mask\" role=\"alert\"><strong>{OFF_BANNER}"
        )));
    }
}
