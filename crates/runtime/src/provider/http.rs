//! The one HTTP path every provider shares: POST JSON, read the body in
//! chunks up to a cap, mask the key in it, decode it with core, keep the
//! status and `retry-after`.
//!
//! Note [Same-origin redirects]: a base URL that answers 3xx to another
//! origin (scheme, host or port) is not followed. reqwest strips
//! `Authorization` on such a hop but not custom key headers (`x-api-key`,
//! `x-goog-api-key`), and a 307/308 would resend the whole prompt too; so
//! the client follows redirects only within the origin the user gave (at
//! most 10; agentshape-egress's `Redirects::SameOrigin`, with no `Referer`
//! on the hop) and reports any other as [`ProviderError::Redirect`], naming
//! the origin (never its path or query, which may carry tokens). Not
//! retried: the same request gets the same redirect.
//!
//! Note [Body cap]: a provider body is read chunk by chunk and never past
//! `Config::max_body_bytes` (default 16 MiB, `ask --max-body-bytes`): a
//! `Content-Length` over the cap is refused before reading, and a body that
//! grows past it (an endless stream) is dropped, which closes the
//! connection. Both are [`ProviderError::BadResponse`], not retried (the
//! server would send the same). A body cut short (the connection closed
//! before `Content-Length` bytes) is `BadResponse` too, but transient, and
//! retried like a failed connection. A 2xx body that is not a JSON object
//! is `BadResponse` (never "empty content"): there is nothing to decode. A
//! non-2xx body that is not JSON keeps its status category, with a note
//! that the body was not JSON. The whole request, body included, is bounded
//! by the client's timeout.

use std::time::Duration;

use agentshape_core::decode::{DecodeOptions, decode_bytes};
use agentshape_egress::{BodyError, Policy, Redirects};
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{Kind, ProviderError, Reply, Secret};

/// A reqwest client for one provider.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    kind: Kind,
    /// The client, or why it could not be built (reported by the first call).
    client: Result<reqwest::Client, String>,
    max_body: u64,
    /// The key, masked wherever the server echoes it (Note [Key masking]).
    key: Option<Secret>,
}

impl Http {
    pub(crate) fn new(kind: Kind, timeout: Duration, max_body: u64, key: Option<Secret>) -> Self {
        // Building fails only when the TLS backend cannot initialize. No
        // fallback to a default client: it would follow redirects anywhere.
        let client = Policy::new(timeout)
            .redirects(Redirects::SameOrigin)
            .client()
            .map_err(|e| e.to_string());
        Http {
            kind,
            client,
            max_body,
            key,
        }
    }

    /// POST `body` to `url` with `headers`; any HTTP status is a [`Reply`].
    /// Every text that comes back has the key masked.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<Reply, ProviderError> {
        let result = self.send(url, headers, body).await;
        match &self.key {
            Some(key) => result.map_err(|e| e.masked(key)),
            None => result,
        }
    }

    async fn send(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<Reply, ProviderError> {
        let provider = self.kind.as_str();
        let transport = |message: String, timeout: bool| ProviderError::Transport {
            provider,
            timeout,
            // Without the URL: a user-supplied base URL could carry credentials.
            message,
        };
        let client = self.client.as_ref().map_err(|e| ProviderError::Transport {
            provider,
            timeout: false,
            message: format!("cannot build the HTTP client: {e}"),
        })?;
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let request = client
            .post(url)
            .headers(headers)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes)
            .build()
            .map_err(|e| transport(agentshape_egress::describe(e), false))?;
        let resp = match agentshape_egress::send(client, request).await {
            Ok(r) => r,
            // Only a redirect the policy stopped gets here: another origin.
            Err(agentshape_egress::Error::Redirect { status, to }) => {
                return Err(ProviderError::Redirect {
                    provider,
                    status,
                    origin: to,
                });
            }
            Err(e) => {
                let timeout = e.is_timeout();
                return Err(transport(e.to_string(), timeout));
            }
        };
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let bad = |message: String, transient: bool| ProviderError::BadResponse {
            provider,
            status,
            message,
            transient,
        };
        let raw = match agentshape_egress::read_capped(resp, self.max_body).await {
            Ok(raw) => raw,
            Err(BodyError::Declared { declared, limit }) => {
                return Err(bad(
                    format!(
                        "Content-Length {declared} is over the {limit}-byte cap (--max-body-bytes); not read"
                    ),
                    false,
                ));
            }
            // Dropping the response closed the connection.
            Err(BodyError::TooLarge { limit, read }) => {
                return Err(bad(
                    format!(
                        "the body grew past the {limit}-byte cap (--max-body-bytes); stopped after reading {read} bytes"
                    ),
                    false,
                ));
            }
            Err(BodyError::Cut {
                timeout: true,
                message,
                ..
            }) => return Err(transport(message, true)),
            Err(BodyError::Cut {
                read,
                declared,
                message,
                ..
            }) => {
                let of = declared.map(|n| format!(" of {n}")).unwrap_or_default();
                return Err(bad(
                    format!("truncated after {read}{of} bytes: {message}"),
                    true,
                ));
            }
            Err(e) => return Err(bad(e.to_string(), false)),
        };
        let cap = usize::try_from(self.max_body).unwrap_or(usize::MAX);
        let raw = match self.key.as_ref().and_then(|k| k.mask_bytes(&raw)) {
            Some(masked) => masked,
            None => raw,
        };
        let not_json = json_problem(&raw);
        let ok = (200..300).contains(&status);
        if let (true, Some(problem)) = (ok, &not_json) {
            return Err(bad(problem.clone(), false));
        }
        let opts = DecodeOptions {
            max_line_bytes: DecodeOptions::default().max_line_bytes.max(cap),
            ..DecodeOptions::default()
        };
        let mut summary = decode_bytes(&raw, self.kind.format(), &opts);
        if !ok {
            if let Some(r) = summary.result.as_mut() {
                r.api_error_status.get_or_insert(Value::from(status));
            }
            if let Some(problem) = not_json {
                summary.error.get_or_insert(problem);
            }
        }
        Ok(Reply {
            status: Some(status),
            retry_after,
            summary,
        })
    }
}

/// Why `body` is not a JSON object, with how many bytes were read; `None`
/// when it is one. Checked without building the value.
fn json_problem(body: &[u8]) -> Option<String> {
    let n = body.len();
    // JSON is UTF-8 (RFC 8259); `IgnoredAny` skips strings unchecked.
    if let Err(e) = std::str::from_utf8(body) {
        return Some(format!(
            "not JSON ({n} bytes read): invalid UTF-8 at byte {}",
            e.valid_up_to()
        ));
    }
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Some(format!("not JSON ({n} bytes read): {e}"));
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    (first != Some(&b'{')).then(|| format!("not a JSON object ({n} bytes read)"))
}

/// Headers carrying an API key, marked sensitive so they never show in
/// `Debug` output; no header when there is no key or it is not a valid value.
pub(crate) fn key_headers(name: reqwest::header::HeaderName, value: Option<String>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(Ok(mut v)) = value.map(|v| reqwest::header::HeaderValue::from_str(&v)) {
        v.set_sensitive(true);
        headers.insert(name, v);
    }
    headers
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds); an HTTP date is ignored.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    let secs = get("retry-after").and_then(|v| v.parse::<f64>().ok())?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn bodies_that_are_not_a_json_object_say_why_and_how_long() {
        let cases: [(&[u8], Option<&str>); 6] = [
            (br#" {"ok": true}"#, None),
            (
                b"",
                Some("not JSON (0 bytes read): EOF while parsing a value"),
            ),
            (b"<html>", Some("not JSON (6 bytes read): expected value")),
            (b"[1]", Some("not a JSON object (3 bytes read)")),
            (
                b"{\"a\": \"\xff\"}",
                Some("not JSON (10 bytes read): invalid UTF-8 at byte 7"),
            ),
            (
                br#"{"a": 1"#,
                Some("not JSON (7 bytes read): EOF while parsing an object"),
            ),
        ];
        for (body, want) in cases {
            let got = json_problem(body);
            match want {
                None => assert_eq!(got, None),
                Some(w) => assert!(
                    got.as_deref().is_some_and(|g| g.starts_with(w)),
                    "{got:?}, want {w}"
                ),
            }
        }
    }

    #[test]
    fn retry_after_headers() {
        let cases: [(&str, &str, Option<Duration>); 4] = [
            ("retry-after", "2", Some(Duration::from_secs(2))),
            ("retry-after-ms", "250", Some(Duration::from_millis(250))),
            ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT", None),
            ("retry-after", "-1", None),
        ];
        for (name, value, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_static(value));
            assert_eq!(retry_after(&h), want, "{name}: {value}");
        }
    }
}
