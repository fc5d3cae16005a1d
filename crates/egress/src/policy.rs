//! The client every caller builds, and the one way requests are sent
//! (Note \[Outbound policy\]).

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, LOCATION, REFERER};

use crate::error::Error;

/// Redirects followed within one origin before giving up.
const MAX_SAME_ORIGIN_REDIRECTS: usize = 10;

/// Which redirects a client follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Redirects {
    /// None: every 3xx is answered to the caller, and [`send`] makes it
    /// [`Error::Redirect`].
    #[default]
    Never,
    /// Hops within the origin first asked (scheme, host and port), at most
    /// ten; a hop to another origin is stopped, and [`send`] makes it
    /// [`Error::Redirect`].
    SameOrigin,
}

/// How a client is built: timeouts and redirects. Every outbound request
/// of agentshape goes through a client built here.
#[derive(Debug, Clone)]
pub struct Policy {
    connect: Duration,
    total: Option<Duration>,
    stall: Option<Duration>,
    redirects: Redirects,
    system_roots: bool,
}

impl Policy {
    /// A policy whose requests take at most `total` (connecting included),
    /// following no redirect.
    pub fn new(total: Duration) -> Policy {
        Policy {
            connect: total,
            total: Some(total),
            stall: None,
            redirects: Redirects::Never,
            system_roots: true,
        }
    }

    /// A policy for downloads: connecting takes at most `connect`, and the
    /// transfer may last as long as it needs while it never stalls longer
    /// than `stall` (its size is the caller's limit).
    pub fn download(connect: Duration, stall: Duration) -> Policy {
        Policy {
            connect,
            total: None,
            stall: Some(stall),
            redirects: Redirects::Never,
            system_roots: true,
        }
    }

    /// Follow redirects as `redirects` says.
    #[must_use]
    pub fn redirects(mut self, redirects: Redirects) -> Policy {
        self.redirects = redirects;
        self
    }

    /// Whether to load the system's trust roots (plain-HTTP endpoints need
    /// none, and loading them costs a short command tens of milliseconds).
    #[must_use]
    pub fn system_roots(mut self, load: bool) -> Policy {
        self.system_roots = load;
        self
    }

    /// The total timeout, when there is one.
    pub fn total(&self) -> Option<Duration> {
        self.total
    }

    /// The stall (read) timeout, when there is one.
    pub fn stall(&self) -> Option<Duration> {
        self.stall
    }

    /// Build the client.
    ///
    /// # Errors
    /// [`Error::Client`] when the TLS backend cannot start. Callers have no
    /// fallback to a default client: it would follow redirects anywhere.
    pub fn client(&self) -> Result<reqwest::Client, Error> {
        let mut b = reqwest::Client::builder()
            .connect_timeout(self.connect)
            .referer(false)
            .user_agent(concat!("agentshape/", env!("CARGO_PKG_VERSION")))
            .redirect(match self.redirects {
                Redirects::Never => reqwest::redirect::Policy::none(),
                Redirects::SameOrigin => same_origin_only(),
            });
        if let Some(t) = self.total {
            b = b.timeout(t);
        }
        if let Some(t) = self.stall {
            b = b.read_timeout(t);
        }
        if !self.system_roots {
            b = b.tls_built_in_root_certs(false);
        }
        b.build().map_err(|e| Error::Client(crate::describe(e)))
    }
}

fn same_origin_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > MAX_SAME_ORIGIN_REDIRECTS {
            attempt.error(format!("more than {MAX_SAME_ORIGIN_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// `url`'s origin as it may be shown: `scheme://host:port`, never its user
/// info, path or query.
pub fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

/// Send `request` with `client` under the policy: refused when it would
/// carry two credentials, without any `Referer`, and a redirect that was
/// not followed is an error.
///
/// # Errors
/// [`Error::TwoCredentials`] (nothing sent), [`Error::Transport`],
/// [`Error::Redirect`].
pub async fn send(
    client: &reqwest::Client,
    mut request: reqwest::Request,
) -> Result<reqwest::Response, Error> {
    let url = request.url();
    let userinfo = !url.username().is_empty() || url.password().is_some();
    let auth = request.headers().get_all(AUTHORIZATION).iter().count();
    // The builder turns user info into one `Authorization` header, so two
    // of them mean the URL's and the caller's.
    if auth > 1 || (userinfo && auth > 0) {
        return Err(Error::TwoCredentials);
    }
    request.headers_mut().remove(REFERER);
    let response = client.execute(request).await?;
    if let Some((status, to)) = redirect_target(&response) {
        return Err(Error::Redirect { status, to });
    }
    Ok(response)
}

/// The status and the origin of a 3xx with a `Location`; `None` for
/// anything else (a 304 has no `Location`: an ordinary answer).
fn redirect_target(response: &reqwest::Response) -> Option<(u16, String)> {
    if !response.status().is_redirection() {
        return None;
    }
    let location = response.headers().get(LOCATION)?.to_str().ok()?;
    let to = response.url().join(location).ok()?;
    Some((response.status().as_u16(), origin(&to)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::{Error, Policy, Redirects, send};
    use crate::{BodyError, read_capped};

    /// A loopback server answering every request with `answer` (raw
    /// HTTP/1.1, `{port}` replaced by its own port), keeping each request's
    /// head.
    fn server(answer: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&heads);
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                keep.lock().unwrap().push(head);
                let _ = s.write_all(answer.replace("{port}", &port.to_string()).as_bytes());
            }
        });
        (format!("http://127.0.0.1:{port}"), heads)
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_redirect_is_an_error_naming_the_status_and_the_origin_only() {
        let (url, heads) = server(
            "HTTP/1.1 307 Moved\r\nlocation: http://127.0.0.1:9/x?token=t0k3n\r\ncontent-length: 0\r\n\r\n",
        );
        let client = Policy::new(Duration::from_secs(5)).client().unwrap();
        let req = client.get(format!("{url}/a?apikey=k")).build().unwrap();
        let e = run(send(&client, req)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "HTTP 307 redirect to http://127.0.0.1:9 not followed (redirects are refused)"
        );
        assert_eq!(heads.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_referer_set_by_a_caller_is_not_sent() {
        let (url, heads) = server("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        let client = Policy::new(Duration::from_secs(5))
            .redirects(Redirects::SameOrigin)
            .client()
            .unwrap();
        let req = client
            .get(format!("{url}/a"))
            .header("referer", "http://x/?apikey=k")
            .build()
            .unwrap();
        let resp = run(send(&client, req)).unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let head = heads.lock().unwrap()[0].to_ascii_lowercase();
        assert!(!head.contains("referer"), "{head}");
    }

    #[test]
    fn user_info_and_an_authorization_header_are_refused_unsent() {
        let (url, heads) = server("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
        let client = Policy::new(Duration::from_secs(5)).client().unwrap();
        let with_user = url.replace("http://", "http://bob:pw@");
        let req = client
            .post(&with_user)
            .header("authorization", "Bearer t")
            .build()
            .unwrap();
        assert!(matches!(
            run(send(&client, req)).unwrap_err(),
            Error::TwoCredentials
        ));
        assert!(heads.lock().unwrap().is_empty());
        // Either alone is sent.
        let req = client.post(&with_user).build().unwrap();
        run(send(&client, req)).unwrap();
        let req = client
            .post(&url)
            .header("authorization", "Bearer t")
            .build()
            .unwrap();
        run(send(&client, req)).unwrap();
        assert_eq!(heads.lock().unwrap().len(), 2);
    }

    #[test]
    fn bodies_over_the_cap_are_refused_or_cut() {
        let client = Policy::new(Duration::from_secs(5)).client().unwrap();
        // Sent and read on one runtime: the response's timers live there.
        let capped = |url: String| {
            run(async {
                let resp = send(&client, client.get(&url).build().unwrap())
                    .await
                    .unwrap();
                read_capped(resp, 10).await.unwrap_err()
            })
        };
        let (url, _) = server("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n");
        let e = capped(url);
        assert!(
            matches!(
                e,
                BodyError::Declared {
                    declared: 100,
                    limit: 10
                }
            ),
            "{e}"
        );
        let (url, _) = server(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n8\r\naaaaaaaa\r\n8\r\naaaaaaaa\r\n0\r\n\r\n",
        );
        assert_eq!(
            capped(url).to_string(),
            "the response grew past the 10-byte cap; stopped after reading 16 bytes"
        );
    }
}
