//! The token check (Note \[Token\] in the crate root).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, Request, State as AxState};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::State;
use crate::api::ApiError;

/// The token `serve` requires: redacted in `Debug`, compared only in
/// constant time, so neither a log line nor a timing gives it away.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Wrap a token.
    pub fn new(token: impl Into<String>) -> Self {
        Token(token.into())
    }

    /// Whether `given` is this token, in constant time.
    pub fn matches(&self, given: &str) -> bool {
        constant_time_eq(given.as_bytes(), self.0.as_bytes())
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([REDACTED])")
    }
}

/// Equal in time that depends only on the lengths, not on where the bytes
/// differ: a remote caller cannot find the token a byte at a time.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The cookie a browser gets after opening a page with `?token=T`, so the
/// pages' links, `fetch` calls and `EventSource` carry the token without it
/// being in every URL. `HttpOnly` (no script reads it), `SameSite=Strict`
/// (another site's page cannot make the browser send it).
pub(crate) const COOKIE: &str = "agentshape_token";

/// The bearer token of the `Authorization` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The token cookie, if the request has one.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == COOKIE).then_some(v)
        })
}

fn query_token(req: &Request) -> Option<String> {
    Query::<HashMap<String, String>>::try_from_uri(req.uri())
        .ok()
        .and_then(|Query(mut q)| q.remove("token"))
}

/// A host name that only reaches this machine. Without a token, a request
/// naming any other host is refused: a web page on another site could
/// otherwise point its own DNS name at 127.0.0.1 (DNS rebinding) and read
/// the store through the visitor's browser.
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        // HTTP/1.0 without Host: not a browser.
        return true;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    };
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a state-changing request comes from one of our own pages: the
/// browser says so in `Origin` (or `Sec-Fetch-Site`), and no other site can
/// forge those. A request with a bearer header is a program, not a browser
/// led by another site, and needs no such proof.
fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin";
    }
    let (Some(origin), Some(host)) = (
        headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        headers.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) else {
        return false;
    };
    origin
        .split_once("://")
        .is_some_and(|(_, rest)| rest.trim_end_matches('/').eq_ignore_ascii_case(host))
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let mut res = ApiError::new(status, message).into_response();
    if status == StatusCode::UNAUTHORIZED {
        res.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    res
}

/// Let the request through when it may (Note \[Token\] in the crate root):
/// the token when one is set (header, cookie or `?token=`), a loopback
/// `Host` when none is, and same-origin proof for anything that changes
/// state. A good `?token=` also sets the cookie for the pages that follow.
pub(crate) async fn require_token(
    AxState(state): AxState<Arc<State>>,
    req: Request,
    next: Next,
) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let has_bearer = bearer(req.headers()).is_some();
    if !safe && !has_bearer && !same_origin(req.headers()) {
        return refuse(
            StatusCode::FORBIDDEN,
            "a request that changes something must come from this server's own pages (Origin) or carry the token in an Authorization header",
        );
    }
    let Some(expected) = state.token.as_ref() else {
        if !loopback_host(req.headers()) {
            return refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "without --token only loopback host names (localhost, 127.0.0.1, [::1]) are served",
            );
        }
        return next.run(req).await;
    };
    let from_query = query_token(&req);
    let given = bearer(req.headers())
        .or_else(|| cookie(req.headers()))
        .map(str::to_owned)
        .or_else(|| from_query.clone());
    if !given.is_some_and(|g| expected.matches(&g)) {
        return refuse(StatusCode::UNAUTHORIZED, "missing or wrong token");
    }
    let set_cookie = from_query.filter(|q| expected.matches(q));
    let mut res = next.run(req).await;
    if let Some(t) = set_cookie
        && let Ok(v) = header::HeaderValue::from_str(&format!(
            "{COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict"
        ))
    {
        res.headers_mut().append(header::SET_COOKIE, v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::{Token, constant_time_eq, loopback_host, same_origin};
    use axum::http::{HeaderMap, HeaderValue, header};

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_loopback_host_names_pass_without_a_token() {
        for ok in [
            "127.0.0.1:7878",
            "localhost:1",
            "[::1]:80",
            "LOCALHOST",
            "app.localhost:9",
        ] {
            assert!(loopback_host(&headers(&[(header::HOST, ok)])), "{ok}");
        }
        for bad in [
            "evil.example:7878",
            "10.0.0.5:7878",
            "[2001:db8::1]:80",
            "localhost.evil.example",
        ] {
            assert!(!loopback_host(&headers(&[(header::HOST, bad)])), "{bad}");
        }
    }

    #[test]
    fn same_origin_needs_the_browser_to_say_so() {
        let host = (header::HOST, "127.0.0.1:7878");
        assert!(same_origin(&headers(&[
            host.clone(),
            (header::ORIGIN, "http://127.0.0.1:7878")
        ])));
        assert!(!same_origin(&headers(&[
            host.clone(),
            (header::ORIGIN, "http://evil.example")
        ])));
        assert!(!same_origin(&headers(std::slice::from_ref(&host))));
        let fetch_site = header::HeaderName::from_static("sec-fetch-site");
        assert!(same_origin(&headers(&[
            host.clone(),
            (fetch_site.clone(), "same-origin")
        ])));
        assert!(!same_origin(&headers(&[
            host,
            (fetch_site, "cross-site"),
            (header::ORIGIN, "http://127.0.0.1:7878")
        ])));
    }

    #[test]
    fn a_token_never_shows_in_debug() {
        let t = Token::new("hunter2-token");
        assert!(!format!("{t:?}").contains("hunter2"));
        assert!(t.matches("hunter2-token") && !t.matches("hunter2"));
    }

    #[test]
    fn equal_only_when_every_byte_is() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
