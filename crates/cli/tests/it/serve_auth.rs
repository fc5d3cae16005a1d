//! `serve`'s token and origin checks (issue 27, part 4): a token in the URL
//! beats an old cookie and replaces it, a short token is refused where other
//! hosts can reach the server, and an `Origin` is scheme, host and port.

use crate::support::assert_exit_for;
use crate::support::served::serve;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const TOKEN: &str = "new-token-0123456789";
const OLD: &str = "old-token-9876543210";

/// After a restart with a new token, the browser still holds the old one
/// in its cookie: opening `?token=NEW` must let the user in and replace it.
#[test]
fn a_token_in_the_url_wins_over_an_old_cookie_and_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("a.db"), &["--token", TOKEN]);
    let rt = rt();
    let client = reqwest::Client::new();
    let get = |path: &str, cookie: &str| {
        let resp = rt
            .block_on(
                client
                    .get(server.url(path))
                    .header("cookie", format!("agentshape_token={cookie}"))
                    .send(),
            )
            .unwrap();
        let set: Vec<String> = resp
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        (resp.status().as_u16(), set)
    };
    let (status, set) = get(&format!("/api/sessions?token={TOKEN}"), OLD);
    assert_eq!(status, 200);
    assert!(
        set.iter()
            .any(|c| c.starts_with(&format!("agentshape_token={TOKEN};"))),
        "the old cookie is replaced: {set:?}"
    );
    // The new cookie alone is enough; the old one alone is not.
    assert_eq!(get("/api/sessions", TOKEN).0, 200);
    assert_eq!(get("/api/sessions", OLD).0, 401);
    // A wrong token in the URL is refused even beside a good cookie: what
    // the user typed is what is checked.
    let (status, set) = get(&format!("/api/sessions?token={OLD}"), TOKEN);
    assert_eq!(status, 401);
    assert!(set.is_empty(), "{set:?}");
}

/// A token shorter than 16 characters is refused before anything is bound
/// on an address other hosts can reach (`0.0.0.0`: the check comes first,
/// so nothing listens); on loopback any non-empty token is taken.
#[test]
fn a_short_token_is_refused_off_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    for (how, token) in [("flag", "k"), ("flag", "0123456789abcde"), ("env", "short")] {
        let mut cmd = crate::support::agentshape();
        cmd.args(["serve", "--addr", "0.0.0.0:0", "--store"])
            .arg(&db);
        if how == "flag" {
            cmd.args(["--token", token]);
        } else {
            cmd.env("AGENTSHAPE_TOKEN", token);
        }
        let out = cmd
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 64, format_args!("{how} {token}"));
        assert!(
            err.contains(&format!("is {} characters", token.len()))
                && err.contains("at least 16")
                && err.contains("0.0.0.0:0"),
            "{err}"
        );
        assert!(
            !err.contains(token) || token.len() < 2,
            "the token is not echoed: {err}"
        );
        assert!(!err.contains("listening"), "{err}");
    }
    // Loopback: a short token is the user's business.
    let server = serve(&db, &["--token", "k"]);
    let resp = rt()
        .block_on(
            reqwest::Client::new()
                .get(server.url("/api/sessions"))
                .bearer_auth("k")
                .send(),
        )
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}

/// A request that changes something, from a browser that sends `Origin`
/// but no `Sec-Fetch-Site`: another scheme on the same host and port is
/// another origin.
#[test]
fn the_origin_check_compares_the_scheme_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&dir.path().join("o.db"), &[]);
    let rt = rt();
    let client = reqwest::Client::new();
    let post = |origin: String| {
        rt.block_on(
            client
                .post(server.url("/api/lint"))
                .header("origin", origin)
                .header("content-type", "application/json")
                .body(r#"{"schema": {"type": "object"}}"#)
                .send(),
        )
        .unwrap()
        .status()
        .as_u16()
    };
    assert_eq!(post(server.base.clone()), 200);
    for other in [
        server.base.replace("http://", "https://"),
        server.base.replace("http://", "ws://"),
        format!("{}0", server.base),
    ] {
        assert_eq!(post(other.clone()), 403, "{other}");
    }
}
