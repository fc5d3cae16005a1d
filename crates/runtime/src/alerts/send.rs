//! One attempt at one destination: a webhook POST, a command run, a log
//! line. Errors are one line, never holding a webhook's credentials (core's
//! Note \[Webhook credentials\]).

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentshape_core::alerts::{Destination, Format, Payload, Webhook, redact_url, slack_body};

use agentshape_egress::Policy;

use super::Log;

/// The delivery loop's HTTP client, on a runtime of its own (the loop is a
/// plain thread).
pub struct Client {
    http: Option<reqwest::Client>,
    rt: Option<tokio::runtime::Runtime>,
}

impl Client {
    /// A client whose requests give up after `timeout_ms`.
    pub fn new(timeout_ms: i64) -> Self {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(10_000));
        // The egress policy (its Note [Outbound policy]): a redirect could
        // carry the body and the headers to where the rule did not say, so
        // none is followed.
        let http = Policy::new(timeout).client().ok();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok();
        Client { http, rt }
    }
}

/// `message` with anything of `url` that may be secret replaced: the URL
/// whole, its userinfo, its query (core's Note \[Webhook credentials\]).
pub fn scrub(message: &str, url: &str) -> String {
    let mut out = message.replace(url, &redact_url(url));
    if let Some((_, rest)) = url.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && !userinfo.is_empty()
        {
            out = out.replace(userinfo, "***");
        }
        // Token-like path segments, as `redact_url` hides them.
        let path = rest.split(['?', '#']).next().unwrap_or("");
        let hidden = redact_url(url);
        for (seg, shown) in path
            .split('/')
            .zip(hidden.split_once("://").map_or("", |(_, r)| r).split('/'))
        {
            if shown == "***" && !seg.is_empty() {
                out = out.replace(seg, "***");
            }
        }
        if let Some((_, query)) = rest.split_once('?') {
            let query = query.split('#').next().unwrap_or("");
            if !query.is_empty() {
                out = out.replace(query, "***");
            }
        }
    }
    out
}

/// Try `dest` once with `payload`.
///
/// # Errors
/// Why it failed, in one line without credentials.
pub fn deliver(
    client: &Client,
    dest: &Destination,
    payload: &Payload,
    timeout_ms: i64,
    log: &Log,
) -> Result<(), String> {
    match dest {
        Destination::Log => {
            log(&format!(
                "agentshape: alert `{}`: {}",
                payload.rule, payload.summary
            ));
            Ok(())
        }
        Destination::Webhook(w) => post(client, w, payload),
        Destination::Command(argv) => run_command(argv, payload, timeout_ms),
    }
}

fn post(client: &Client, w: &Webhook, payload: &Payload) -> Result<(), String> {
    let (Some(http), Some(rt)) = (&client.http, &client.rt) else {
        return Err("no HTTP client could be made".to_owned());
    };
    let body = match w.format {
        Format::Json => serde_json::to_value(payload).unwrap_or_default(),
        Format::Slack => slack_body(payload),
    };
    let mut req = http
        .post(&w.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (k, v) in &w.headers {
        req = req.header(k, v);
    }
    let req = match req.build() {
        Ok(r) => r,
        Err(e) => return Err(scrub(&agentshape_egress::describe(e), &w.url)),
    };
    // Sent inside the runtime: the client's timers need it. The answer's
    // body is never read (its status says it all), so its size is moot.
    match rt.block_on(agentshape_egress::send(http, req)) {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("HTTP {}", r.status())),
        Err(e) => Err(scrub(&e.to_string(), &w.url)),
    }
}

/// Run the command (no shell: its words are passed as they are), the
/// firing as JSON on stdin and in `AGENTSHAPE_ALERT_*` variables; exit 0
/// within the timeout is delivered. agentshape's own variables
/// (`AGENTSHAPE_STORE`, `AGENTSHAPE_TOKEN`, ...) are withheld, as from an
/// agent.
fn run_command(argv: &[String], payload: &Payload, timeout_ms: i64) -> Result<(), String> {
    let Some((prog, words)) = argv.split_first() else {
        return Err("empty command".to_owned());
    };
    let json = serde_json::to_string(payload).unwrap_or_default();
    // As for an agent (Note [Huge pages for bulk only] in `pages.rs`).
    crate::pages::for_children();
    let mut cmd = Command::new(prog);
    cmd.args(words)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in crate::process::withheld_env(std::env::vars_os().map(|(k, _)| k), &[]) {
        cmd.env_remove(name);
    }
    cmd.env("AGENTSHAPE_ALERT_ID", payload.id.to_string())
        .env("AGENTSHAPE_ALERT_RULE", &payload.rule)
        .env("AGENTSHAPE_ALERT_CONDITION", &payload.condition)
        .env("AGENTSHAPE_ALERT_SUMMARY", &payload.summary)
        .env(
            "AGENTSHAPE_ALERT_SESSION",
            payload.session_id.as_deref().unwrap_or(""),
        )
        .env("AGENTSHAPE_ALERT_JSON", &json);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run `{prog}`: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its stdin is not a failure.
        let _ = stdin.write_all(json.as_bytes());
    }
    let deadline = Instant::now() + Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("`{prog}` exited with {status}")),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{prog}` did not finish within {timeout_ms} ms"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for `{prog}`: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbed_messages_hold_no_credentials() {
        let url = "https://bob:hunter2@hooks.example.com/services/x?token=t0k3n";
        let m = format!("error sending request for url ({url}): refused");
        let s = scrub(&m, url);
        assert_eq!(
            s,
            "error sending request for url (https://hooks.example.com/services/x): refused"
        );
        let s = scrub("bob:hunter2 and token=t0k3n", url);
        assert!(!s.contains("hunter2") && !s.contains("t0k3n"), "{s}");
        let slack = "https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX";
        assert_eq!(
            scrub(
                "no route to /services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX",
                slack
            ),
            "no route to /services/T0/B0/***"
        );
    }
}
