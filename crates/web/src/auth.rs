//! The token check (Note \[Token\] in the crate root).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, Request, State as AxState};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::State;
use crate::error::ApiError;

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

    /// The shortest token taken on a non-loopback address (16).
    pub const MIN_CHARS: usize = MIN_TOKEN_CHARS;

    /// Check `token` for serving on `addr` before binding it: never empty
    /// (or blank), and at least [`Token::MIN_CHARS`] characters unless
    /// `addr` is a loopback address (where only this machine's users can
    /// try it).
    ///
    /// # Errors
    /// A one-line message naming the flag, the address and the limit.
    pub fn check(token: &str, addr: std::net::SocketAddr) -> Result<(), String> {
        check_token(token, addr)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([REDACTED])")
    }
}

/// The shortest token `serve` takes on an address other hosts can reach:
/// 16 characters (`openssl rand -hex 16` gives 32). A token is all that
/// stands between the network and every prompt and answer in the store, and
/// the constant-time compare does nothing against guessing a short one.
pub(crate) const MIN_TOKEN_CHARS: usize = 16;

/// See [`Token::check`].
pub(crate) fn check_token(token: &str, addr: std::net::SocketAddr) -> Result<(), String> {
    if token.trim().is_empty() {
        return Err("--token must not be empty".to_owned());
    }
    let n = token.chars().count();
    if !addr.ip().is_loopback() && n < MIN_TOKEN_CHARS {
        return Err(format!(
            "--token (or AGENTSHAPE_TOKEN) is {n} characters: serving on {addr}, which other hosts can reach, needs at least {MIN_TOKEN_CHARS} (e.g. `openssl rand -hex 16`)"
        ));
    }
    Ok(())
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
///
/// `Origin` is an origin: scheme, host and port, all three compared with
/// ours (`serve` speaks plain `http`; the port is the `Host` header's, 80
/// when it names none). `https://host:port` or `ws://host:port` is another
/// origin than the page that was served from `http://host:port`.
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
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    match (authority(rest), authority(host)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// `host[:port]` as (lower-case host, port), the port 80 (`http`'s) when
/// absent; `None` for anything else (a path, user info, a bad port).
fn authority(s: &str) -> Option<(String, u16)> {
    if s.is_empty() || s.contains(['/', '@', '?', '#', ' ']) {
        return None;
    }
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (format!("[{h}]"), after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (s.to_owned(), None),
        }
    };
    if host.is_empty() || (host.contains(':') && !host.starts_with('[')) {
        return None;
    }
    let port = match port {
        None => 80,
        Some(p) => p.parse().ok()?,
    };
    Some((host.to_ascii_lowercase(), port))
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
    // `?token=` first: it is what the user just typed or clicked, while a
    // cookie may hold the token of an earlier `serve` (restarted with a new
    // one since); checked first, it would shut the user out until they
    // cleared their cookies. A good `?token=` replaces that cookie.
    let from_query = query_token(&req);
    let given = from_query.clone().or_else(|| {
        bearer(req.headers())
            .or_else(|| cookie(req.headers()))
            .map(str::to_owned)
    });
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
    use super::{
        MIN_TOKEN_CHARS, Token, check_token, constant_time_eq, loopback_host, same_origin,
    };
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

    /// Scheme, host and port: all three, with `http`'s default port.
    #[test]
    fn an_origin_is_scheme_host_and_port() {
        let same = |origin: &'static str, host: &'static str| {
            same_origin(&headers(&[(header::HOST, host), (header::ORIGIN, origin)]))
        };
        assert!(same("http://127.0.0.1:7878", "127.0.0.1:7878"));
        assert!(same("HTTP://LocalHost:7878", "localhost:7878"));
        assert!(same("http://example.org", "example.org:80"));
        assert!(same("http://example.org:80", "example.org"));
        assert!(same("http://[::1]:7878", "[::1]:7878"));
        for (origin, host) in [
            ("https://127.0.0.1:7878", "127.0.0.1:7878"),
            ("ws://127.0.0.1:7878", "127.0.0.1:7878"),
            ("foo://127.0.0.1:7878", "127.0.0.1:7878"),
            ("http://127.0.0.1:7879", "127.0.0.1:7878"),
            ("http://127.0.0.1", "127.0.0.1:7878"),
            ("http://evil@127.0.0.1:7878", "127.0.0.1:7878"),
            ("http://127.0.0.1:7878/x", "127.0.0.1:7878"),
            ("http://127.0.0.1:7878", "127.0.0.1:x"),
            ("null", "127.0.0.1:7878"),
        ] {
            assert!(!same(origin, host), "{origin} vs {host}");
        }
    }

    #[test]
    fn a_short_token_is_refused_off_loopback_only() {
        let any: std::net::SocketAddr = "0.0.0.0:7878".parse().unwrap();
        let lan: std::net::SocketAddr = "10.0.0.5:7878".parse().unwrap();
        let lo: std::net::SocketAddr = "127.0.0.1:7878".parse().unwrap();
        let lo6: std::net::SocketAddr = "[::1]:7878".parse().unwrap();
        let short = "x".repeat(MIN_TOKEN_CHARS - 1);
        let long = "x".repeat(MIN_TOKEN_CHARS);
        for addr in [any, lan] {
            let e = check_token(&short, addr).unwrap_err();
            assert!(
                e.contains("15 characters")
                    && e.contains("at least 16")
                    && e.contains(&addr.to_string()),
                "{e}"
            );
            assert!(check_token("k", addr).is_err());
            assert!(check_token(&long, addr).is_ok());
            // Characters, not bytes: 16 of them however they are encoded.
            assert!(check_token(&"é".repeat(8), addr).is_err());
        }
        for addr in [lo, lo6] {
            assert!(check_token("k", addr).is_ok());
            assert!(check_token(" ", addr).is_err(), "never empty");
        }
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
