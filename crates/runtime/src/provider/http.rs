//! The one HTTP path every provider shares: POST JSON, read the body whole,
//! decode it with core, keep the status and `retry-after`.

use std::time::Duration;

use agentshape_core::decode::decode_body;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{Kind, ProviderError, Reply};

/// A reqwest client for one provider.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    kind: Kind,
    client: reqwest::Client,
}

impl Http {
    pub(crate) fn new(kind: Kind, timeout: Duration) -> Self {
        // Building fails only when the TLS backend cannot initialize; fall
        // back to the default client, whose first request reports it.
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .unwrap_or_default();
        Http { kind, client }
    }

    /// POST `body` to `url` with `headers`; any HTTP status is a [`Reply`].
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<Reply, ProviderError> {
        let provider = self.kind.as_str();
        let transport = |e: reqwest::Error| ProviderError::Transport {
            provider,
            timeout: e.is_timeout(),
            // Without the URL: a user-supplied base URL could carry credentials.
            message: e.without_url().to_string(),
        };
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let resp = self
            .client
            .post(url)
            .headers(headers)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes)
            .send()
            .await
            .map_err(transport)?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let body = resp.bytes().await.map_err(transport)?;
        let mut summary = decode_body(&body, self.kind.format());
        if !(200..300).contains(&status) {
            if let Some(r) = summary.result.as_mut() {
                r.api_error_status.get_or_insert(Value::from(status));
            }
        }
        Ok(Reply {
            status: Some(status),
            retry_after,
            summary,
        })
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds); an HTTP date is ignored.
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
