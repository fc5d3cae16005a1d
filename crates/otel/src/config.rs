//! Where spans go: the standard OpenTelemetry environment variables and the
//! command's flags, resolved once.
//!
//! Note \[Export settings\]: the variables are the ones every OpenTelemetry
//! SDK reads, so a machine already set up for a collector needs nothing
//! more: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the traces URL, used as is),
//! else `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL: `/v1/traces` is
//! appended), `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, values
//! URL-decoded), `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`. The
//! flags say the same for one command and win over the variables:
//! `--otlp-endpoint` (a base URL like the variable, or a URL that already
//! ends in `/v1/traces`), `--otlp-header KEY=VALUE` (a header of the same
//! name from the variable is replaced), `--otlp-content`. Export is on when
//! one of the endpoint variables or any of the flags is given (the endpoint
//! then defaults to the OTLP default, `http://localhost:4318`). Header
//! values are credentials: no message shows them, and a URL is shown
//! without its user's password and without its query.

use std::time::Duration;

use http::{HeaderName, HeaderValue};
use url::Url;

use crate::error::Error;

/// The OTLP/HTTP default base URL.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The traces path appended to a base URL.
pub const TRACES_PATH: &str = "/v1/traces";

/// The service name when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` names one.
pub const DEFAULT_SERVICE: &str = "agentshape";

/// What the command's flags say (`--otlp-endpoint`, `--otlp-header`,
/// `--otlp-content`).
#[derive(Debug, Clone, Default)]
pub struct OtlpFlags {
    /// `--otlp-endpoint`.
    pub endpoint: Option<String>,
    /// `--otlp-header`, each `KEY=VALUE`.
    pub headers: Vec<String>,
    /// `--otlp-content`.
    pub content: bool,
}

impl OtlpFlags {
    /// Whether any flag was given.
    pub fn any(&self) -> bool {
        self.endpoint.is_some() || !self.headers.is_empty() || self.content
    }
}

/// A resolved export configuration (Note \[Export settings\]).
#[derive(Clone)]
pub struct OtlpConfig {
    /// The traces URL spans are sent to.
    pub endpoint: Url,
    /// Headers sent with every request (credentials: never shown).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// `service.name`.
    pub service_name: String,
    /// Other resource attributes.
    pub resource: Vec<(String, String)>,
    /// Message contents on (`--otlp-content`).
    pub content: bool,
    /// How long one export request (retries included) may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpConfig")
            .field("endpoint", &shown(&self.endpoint))
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("service_name", &self.service_name)
            .field("content", &self.content)
            .finish_non_exhaustive()
    }
}

/// `url` as it may be shown: no password, no query, no fragment.
pub fn shown(url: &Url) -> String {
    let mut u = url.clone();
    if u.password().is_some() {
        let _ = u.set_password(Some("***"));
    }
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// `text` as it may be shown when it is not a URL we could parse: only its
/// scheme and host part up to the first `@`, `/` or `?`.
fn shown_raw(text: &str) -> String {
    let t = text.trim();
    match t.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
            let host: String = host.chars().take_while(|c| !"/?#".contains(*c)).collect();
            format!("{scheme}://{host}")
        }
        None => "(not a URL)".to_owned(),
    }
}

/// Percent-decoding (`%20` → space); a bad escape stays as written.
fn decode(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn endpoint(setting: &str, text: &str, base: bool) -> Result<Url, Error> {
    let bad = |reason: String| Error::Endpoint {
        setting: setting.to_owned(),
        reason,
    };
    let url = Url::parse(text.trim())
        .map_err(|e| bad(format!("not a URL ({e}): {}", shown_raw(text))))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(bad(format!(
            "not an http(s) URL with a host: {}",
            shown_raw(text)
        )));
    }
    if !base || url.path().trim_end_matches('/').ends_with(TRACES_PATH) {
        return Ok(url);
    }
    let mut url = url;
    let path = format!("{}{TRACES_PATH}", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url)
}

fn header(setting: &str, key: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let bad = |reason: String| Error::Header {
        setting: setting.to_owned(),
        reason,
    };
    let name = HeaderName::from_bytes(key.trim().as_bytes()).map_err(|_| {
        bad(format!(
            "`{}` is not a header name",
            key.trim().escape_debug()
        ))
    })?;
    let mut value = HeaderValue::from_str(value.trim())
        .map_err(|_| bad(format!("the value of `{name}` is not a valid header value")))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// `key=value,…` pairs, values percent-decoded; an entry without `=` is an error.
fn pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((decode(k.trim()), decode(v.trim()))),
            _ => Err(format!(
                "expected key=value, got an entry {}",
                if p.contains('=') {
                    "without a key"
                } else {
                    "without `=`"
                }
            )),
        })
        .collect()
}

impl OtlpConfig {
    /// The configuration from `flags` and the environment `env` (a lookup,
    /// so tests need not touch the process's); `Ok(None)`: export is off.
    ///
    /// # Errors
    /// A bad endpoint, header or resource attribute, as one line that
    /// names the setting and shows no credential.
    pub fn resolve(
        flags: &OtlpFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>, Error> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let traces = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        if !flags.any() && traces.is_none() && base.is_none() {
            return Ok(None);
        }
        let endpoint = match (&flags.endpoint, traces, base) {
            (Some(e), _, _) => endpoint("--otlp-endpoint", e, true)?,
            (None, Some(t), _) => endpoint("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &t, false)?,
            (None, None, Some(b)) => endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", &b, true)?,
            (None, None, None) => endpoint("--otlp-endpoint", DEFAULT_ENDPOINT, true)?,
        };
        let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
        if let Some(text) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            let setting = "OTEL_EXPORTER_OTLP_HEADERS";
            for (k, v) in pairs(&text).map_err(|reason| Error::Header {
                setting: setting.to_owned(),
                reason,
            })? {
                headers.push(header(setting, &k, &v)?);
            }
        }
        for h in &flags.headers {
            let Some((k, v)) = h.split_once('=') else {
                return Err(Error::Header {
                    setting: "--otlp-header".to_owned(),
                    reason: "expected KEY=VALUE (no `=` given)".to_owned(),
                });
            };
            let (name, value) = header("--otlp-header", k, v)?;
            // The flag wins over the variable's header of the same name.
            headers.retain(|(n, _)| *n != name);
            headers.push((name, value));
        }
        let mut resource = match var("OTEL_RESOURCE_ATTRIBUTES") {
            Some(text) => pairs(&text).map_err(Error::Resource)?,
            None => Vec::new(),
        };
        let from_resource = resource
            .iter()
            .position(|(k, _)| k == "service.name")
            .map(|i| resource.remove(i).1);
        let service_name = var("OTEL_SERVICE_NAME")
            .or(from_resource)
            .unwrap_or_else(|| DEFAULT_SERVICE.to_owned());
        Ok(Some(OtlpConfig {
            endpoint,
            headers,
            service_name,
            resource,
            content: flags.content,
            timeout: Duration::from_secs(10),
        }))
    }

    /// The endpoint as it may be shown (Note \[Export settings\]).
    pub fn shown_endpoint(&self) -> String {
        shown(&self.endpoint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn flags(endpoint: Option<&str>, headers: &[&str]) -> OtlpFlags {
        OtlpFlags {
            endpoint: endpoint.map(str::to_owned),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            content: false,
        }
    }

    #[test]
    fn off_without_flags_or_endpoint_variables() {
        let none = OtlpConfig::resolve(&OtlpFlags::default(), &env(&[("OTEL_SERVICE_NAME", "x")]));
        assert!(none.unwrap().is_none());
    }

    #[test]
    fn endpoints_from_variables_and_flags() {
        let c = OtlpConfig::resolve(
            &OtlpFlags::default(),
            &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.as_str(), "http://collector:4318/v1/traces");
        let c = OtlpConfig::resolve(
            &OtlpFlags::default(),
            &env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "https://b/custom/path",
                ),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.as_str(), "https://b/custom/path");
        // The flag wins; a URL already ending in /v1/traces is kept.
        let c = OtlpConfig::resolve(
            &flags(Some("http://c:1/v1/traces"), &[]),
            &env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/x")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.as_str(), "http://c:1/v1/traces");
        // Any flag turns export on, at the default endpoint.
        let c = OtlpConfig::resolve(
            &OtlpFlags {
                content: true,
                ..OtlpFlags::default()
            },
            &env(&[]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.as_str(), "http://localhost:4318/v1/traces");
        assert_eq!(c.service_name, "agentshape");
    }

    #[test]
    fn headers_decoded_flag_wins_and_values_never_shown() {
        let c = OtlpConfig::resolve(
            &flags(Some("http://h:1"), &["x-b=flag"]),
            &env(&[(
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Basic%20c2VjcmV0,x-b=env",
            )]),
        )
        .unwrap()
        .unwrap();
        let got: Vec<(String, String)> = c
            .headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            got,
            [
                ("authorization".to_owned(), "Basic c2VjcmV0".to_owned()),
                ("x-b".to_owned(), "flag".to_owned())
            ]
        );
        assert!(!format!("{c:?}").contains("c2VjcmV0"));
        let e = OtlpConfig::resolve(&flags(Some("http://h:1"), &["tokenonly-s3cret"]), &env(&[]))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--otlp-header: expected KEY=VALUE (no `=` given)");
        let e = OtlpConfig::resolve(&flags(Some("http://h:1"), &["bad name=s3cret"]), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a header name") && !e.contains("s3cret"),
            "{e}"
        );
        let e = OtlpConfig::resolve(&flags(Some("http://h:1"), &["k=s3cr\u{7f}et"]), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cr"), "{e}");
    }

    #[test]
    fn bad_endpoints_are_one_line_without_the_password() {
        let e = OtlpConfig::resolve(&flags(Some("ftp://u:pw123@h/x"), &[]), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--otlp-endpoint: not an http(s) URL"), "{e}");
        assert!(!e.contains("pw123"), "{e}");
        let e = OtlpConfig::resolve(&flags(Some("u:pw123@nohost"), &[]), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pw123"), "{e}");
        let c = OtlpConfig::resolve(&flags(Some("https://u:pw123@h/?token=abc"), &[]), &env(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(c.shown_endpoint(), "https://u:***@h/v1/traces");
    }

    #[test]
    fn service_name_and_resource() {
        let c = OtlpConfig::resolve(
            &flags(Some("http://h"), &[]),
            &env(&[(
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=ops,deployment.environment=prod%2Deu",
            )]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.service_name, "ops");
        assert_eq!(
            c.resource,
            [("deployment.environment".to_owned(), "prod-eu".to_owned())]
        );
        let e = OtlpConfig::resolve(
            &flags(Some("http://h"), &[]),
            &env(&[("OTEL_RESOURCE_ATTRIBUTES", "novalue")]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "OTEL_RESOURCE_ATTRIBUTES: expected key=value, got an entry without `=`"
        );
    }
}
