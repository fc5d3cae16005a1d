//! The token check (Note \[Token\] in the crate root).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, Request, State as AxState};
use axum::http::{HeaderMap, StatusCode, header};
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

/// The bearer token of the `Authorization` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Let the request through when no token is set or it carries the right one.
pub(crate) async fn require_token(
    AxState(state): AxState<Arc<State>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(expected) = state.token.as_ref() else {
        return next.run(req).await;
    };
    let from_header = bearer(req.headers()).map(str::to_owned);
    let given = from_header.or_else(|| {
        Query::<HashMap<String, String>>::try_from_uri(req.uri())
            .ok()
            .and_then(|Query(mut q)| q.remove("token"))
    });
    if given.is_some_and(|g| expected.matches(&g)) {
        next.run(req).await
    } else {
        let mut res =
            ApiError::new(StatusCode::UNAUTHORIZED, "missing or wrong token").into_response();
        res.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        res
    }
}

#[cfg(test)]
mod tests {
    use super::{Token, constant_time_eq};

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
