//! A webhook URL as it may be printed, and whether it can be a webhook.
//!
//! Note \[Webhook credentials\]: a webhook URL often is a credential
//! (Slack's `hooks.slack.com/services/T…/B…/x…`, a `?token=`, a
//! `user:pass@`), and so are header values. Nothing agentshape prints,
//! stores or serves holds them: messages, `alerts list`, the dashboard and
//! the stored delivery rows name a webhook by [`redact_url`]'s
//! `scheme://host[:port]/path` only, with the path's token-like segments
//! hidden, and the HTTP client's errors are formatted without their URL.

/// `url` without what may be secret (Note \[Webhook credentials\]):
/// `scheme://host[:port]/path`, no userinfo, query or fragment, and a path
/// segment that looks like a token as `***`. Anything that is not such a
/// URL is shown as `(unparsable URL)`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(unparsable URL)".to_owned();
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return "(unparsable URL)".to_owned();
    }
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let path: Vec<&str> = path
        .split('/')
        .map(|seg| if token_like(seg) { "***" } else { seg })
        .collect();
    format!("{}://{host}{}", scheme.to_ascii_lowercase(), path.join("/"))
}

/// A path segment that looks like a secret rather than a name: some
/// services put the token in the path (Slack's
/// `/services/T…/B…/<24 characters>`, Discord's `/api/webhooks/<id>/<68
/// characters>`). Long (24 characters or more), or 16 or more mixing
/// letters and digits.
fn token_like(seg: &str) -> bool {
    let n = seg.chars().count();
    let mixed =
        seg.chars().any(|c| c.is_ascii_digit()) && seg.chars().any(|c| c.is_ascii_alphabetic());
    n >= 24 || (n >= 16 && mixed)
}

/// Why `url` cannot be a webhook, or `None`: it must be `http` or `https`
/// with a host. Never says the URL itself.
pub(crate) fn url_problem(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("must be an http:// or https:// URL");
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some("must be an http:// or https:// URL");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return Some("has no host");
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("holds a space or a control character");
    }
    None
}
