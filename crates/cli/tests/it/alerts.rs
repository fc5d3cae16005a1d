//! Issue 31 item 3 through the binary: alert rules given to `serve`,
//! `watch` and `ops` with `--alerts FILE`, a webhook receiver on 127.0.0.1
//! (`agentshape_testkit::webhook`), and `agentshape alerts check|list`.
//! Rules evaluate every 100 ms here (`[settings] interval`), and retries
//! back off from 100 ms, so the tests wait milliseconds, not minutes.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use agentshape_store::{ServiceCheck, Session, SqliteStore, Store, time};
use agentshape_testkit::webhook::Receiver;
use serde_json::Value;

use crate::support::served::{self, Server};
use crate::support::{agentshape, agentshape_std, assert_exit, json_lines, wait_until};

const GUARD: Duration = Duration::from_secs(30);

/// `serve --alerts RULES` on the store `db`, its stderr kept.
fn serve(db: &Path, rules: &Path) -> Server {
    served::serve(db, &["--alerts", rules.to_str().unwrap()])
}

fn now() -> i64 {
    time::now_ms()
}

fn failed(id: &str, ended_ms: i64, category: &str) -> Session {
    let mut r = Session::new(id, &time::format_ms(ended_ms - 1_000), "error");
    r.ended_at = Some(time::format_ms(ended_ms));
    r.error_category = Some(category.to_owned());
    r.error = Some("the agent gave up".to_owned());
    r
}

fn open(db: &Path) -> SqliteStore {
    SqliteStore::open(db).unwrap()
}

fn rules_file(dir: &Path, body: &str) -> std::path::PathBuf {
    let p = dir.join("alerts.toml");
    std::fs::write(
        &p,
        format!(
            "[settings]\ninterval = \"100ms\"\nbackoff = \"100ms\"\nmax_backoff = \"400ms\"\ntimeout = \"2s\"\n\n{body}"
        ),
    )
    .unwrap();
    p
}

fn list(db: &Path) -> Vec<Value> {
    let out = agentshape()
        .args(["alerts", "list", "--json", "--store"])
        .arg(db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    json_lines(&out.stdout)
}

/// The requests to `path`.
fn to(rx: &Receiver, path: &str) -> Vec<Value> {
    rx.requests()
        .into_iter()
        .filter(|r| r.path == path)
        .map(|r| r.body)
        .collect()
}

/// A few evaluation and delivery rounds (interval 100 ms): long enough for
/// a second, wrong, POST to show.
fn settle() {
    std::thread::sleep(Duration::from_millis(800));
}

#[test]
fn alerts_check_prints_one_line_per_rule_and_a_bad_file_stops_serve_ops_and_watch_with_64() {
    let dir = tempfile::tempdir().unwrap();
    let good = rules_file(
        dir.path(),
        "[[rule]]\nname = \"lost\"\nwhen = \"session_lost\"\nlog = true\n\n\
         [[rule]]\nname = \"hook\"\nwhen = \"session_failed\"\ncategory = \"timeout\"\n\
         webhook = { url = \"https://bob:hunter2@hooks.example.com/x?token=t0k3n\" }\n",
    );
    let out = agentshape()
        .args(["alerts", "check"])
        .arg(&good)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vec![
            "lost: a session lost (no heartbeat); cooldown 0s; to log",
            "hook: a session failing with timeout; cooldown 0s; to webhook https://hooks.example.com/x",
        ]
    );
    assert!(!stdout.contains("hunter2") && !stdout.contains("t0k3n"));

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rule]]\nname = \"rate\"\nwhen = \"rejection_rate\"\nprofile = \"p\"\nwindow = \"1h\"\nabove = 2\nlog = true\n",
    )
    .unwrap();
    let want = format!(
        "agentshape: alerts file {}: rule `rate`: `above`: must be a fraction from 0 to below 1 (0.2 is 20%)",
        bad.display()
    );
    let db = dir.path().join("a.db");
    let ops_config = dir.path().join("ops.toml");
    std::fs::write(&ops_config, "not even read").unwrap();
    let runs: [Vec<std::ffi::OsString>; 4] = [
        vec!["alerts".into(), "check".into(), bad.clone().into()],
        vec![
            "serve".into(),
            "--addr".into(),
            "127.0.0.1:0".into(),
            "--store".into(),
            db.clone().into(),
            "--alerts".into(),
            bad.clone().into(),
        ],
        vec![
            "ops".into(),
            "--config".into(),
            ops_config.into(),
            "--alerts".into(),
            bad.clone().into(),
        ],
        vec![
            "watch".into(),
            "--store".into(),
            db.clone().into(),
            "--alerts".into(),
            bad.clone().into(),
            dir.path().into(),
        ],
    ];
    for args in runs {
        let out = agentshape()
            .args(&args)
            .env_remove("AGENTSHAPE_STORE")
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 64);
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            want,
            "{args:?}"
        );
    }
    // Nothing started: no store was made.
    assert!(!db.exists());
    // `import` has no loop to run them in.
    let out = agentshape()
        .args(["import", "--store"])
        .arg(&db)
        .arg("--alerts")
        .arg(&good)
        .arg(dir.path())
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--alerts is for `watch`"));
}

#[test]
#[allow(clippy::many_single_char_names)] // rx, t, s and the sessions: short-lived and plain
fn alerts_each_condition_fires_once_at_the_right_moment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let u = rx.url();
    let rules = rules_file(
        dir.path(),
        &format!(
            r#"
[[rule]]
name = "rate"
when = "rejection_rate"
profile = "review"
window = "1h"
above = 0.5
min_runs = 3
webhook = {{ url = "{u}/rate" }}

[[rule]]
name = "failed"
when = "session_failed"
category = "timeout"
webhook = {{ url = "{u}/failed", headers = {{ Authorization = "Bearer h3ad3r" }} }}

[[rule]]
name = "cost"
when = "cost_per_day"
above = 20
webhook = {{ url = "{u}/cost" }}

[[rule]]
name = "lost"
when = "session_lost"
webhook = {{ url = "{u}/lost" }}

[[rule]]
name = "secrets"
when = "secrets_found"
webhook = {{ url = "{u}/secrets", format = "slack" }}

[[rule]]
name = "quiet"
when = "no_session"
service = "sonarr"
hours = 6
webhook = {{ url = "{u}/quiet" }}
"#
        ),
    );
    let t = now();
    {
        let mut s = open(&db);
        // 2 of 3 `review` runs rejected, but only 2 so far: under min_runs.
        for (i, valid) in [(0, true), (1, false)] {
            let mut r = Session::new(&format!("r{i}"), &time::format_ms(t - 60_000), "completed");
            r.ended_at = Some(time::format_ms(t - 50_000));
            r.profile = Some("review".into());
            r.extraction_method = Some("fenced".into());
            r.verdict = Some(
                serde_json::from_value(
                    serde_json::json!({"valid": valid, "errors": [], "repairs": [], "coercions": []}),
                )
                .unwrap(),
            );
            s.write_session(&r).unwrap();
        }
        // An `api_error` failure: not this rule's category.
        s.write_session(&failed("f0", t - 30_000, "api_error"))
            .unwrap();
        // Sonarr checked 5 hours ago: not quiet yet (the rule says 6).
        let mut q = Session::new("q1", &time::format_ms(t - 5 * 3_600_000), "completed");
        q.services.push(ServiceCheck {
            name: "sonarr".into(),
            status: "healthy".into(),
            detail: None,
        });
        s.write_session(&q).unwrap();
        // $15 today: under the $20.
        let mut c = Session::new("c1", &time::format_ms(t - 1_000), "completed");
        c.cost_usd = Some(15.0);
        s.write_session(&c).unwrap();
    }
    let server = serve(&db, &rules);
    settle();
    assert!(rx.requests().is_empty(), "{:?}", rx.requests());
    // Now each condition becomes true, one by one.
    let mut s = open(&db);
    let mut r = Session::new("r2", &time::format_ms(now() - 1_000), "completed");
    r.profile = Some("review".into());
    r.extraction_method = Some("fenced".into());
    r.verdict = Some(
        serde_json::from_value(
            serde_json::json!({"valid": false, "errors": [], "repairs": [], "coercions": []}),
        )
        .unwrap(),
    );
    s.write_session(&r).unwrap();
    wait_until("the rate alert", GUARD, || to(&rx, "/rate").len() == 1);
    s.write_session(&failed("f1", now(), "timeout")).unwrap();
    wait_until("the failure alert", GUARD, || to(&rx, "/failed").len() == 1);
    let mut c = Session::new("c2", &time::format_ms(now()), "completed");
    c.cost_usd = Some(6.5);
    s.write_session(&c).unwrap();
    wait_until("the cost alert", GUARD, || to(&rx, "/cost").len() == 1);
    s.start_session(&Session::new(
        "gone",
        &time::format_ms(now() - 60_000),
        "running",
    ))
    .unwrap();
    s.heartbeat("gone", &time::format_ms(now() - 30_000))
        .unwrap();
    wait_until("the lost alert", GUARD, || to(&rx, "/lost").len() == 1);
    let mut k = Session::new("leaky", &time::format_ms(now()), "completed");
    k.ended_at = Some(time::format_ms(now()));
    k.summary = Some("export GITHUB_TOKEN=ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7".into());
    s.write_session(&k).unwrap();
    wait_until("the secrets alert", GUARD, || {
        to(&rx, "/secrets").len() == 1
    });
    // Sonarr's last check moves back 7 hours (the store as a quiet night leaves it).
    drop(s);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE sessions SET started_at = ?1 WHERE id = 'q1'",
        [time::format_ms(now() - 7 * 3_600_000)],
    )
    .unwrap();
    wait_until("the quiet alert", GUARD, || to(&rx, "/quiet").len() == 1);
    settle();
    // Exactly one POST per condition, and what each said.
    let paths: Vec<String> = rx.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        vec!["/rate", "/failed", "/cost", "/lost", "/secrets", "/quiet"],
        "{}",
        server.stderr()
    );
    let rate = &to(&rx, "/rate")[0];
    assert_eq!(rate["rule"], "rate");
    assert_eq!(rate["condition"], "rejection_rate");
    assert_eq!(rate["details"]["runs"], 3);
    assert_eq!(rate["details"]["rejected"], 2);
    assert_eq!(rate["session_id"], "r2");
    let failed = &to(&rx, "/failed")[0];
    assert_eq!(failed["session_id"], "f1");
    assert_eq!(failed["key"], "session:f1");
    assert_eq!(failed["summary"], "session `f1` failed: timeout");
    let h = rx
        .requests()
        .into_iter()
        .find(|r| r.path == "/failed")
        .unwrap();
    assert_eq!(h.header("authorization"), Some("Bearer h3ad3r"));
    assert_eq!(h.header("content-type"), Some("application/json"));
    assert_eq!(to(&rx, "/cost")[0]["details"]["total_usd"], 21.5);
    assert_eq!(to(&rx, "/lost")[0]["session_id"], "gone");
    // Slack's shape: one `text` field, nothing else.
    let slack = &to(&rx, "/secrets")[0];
    assert_eq!(
        slack,
        &serde_json::json!({"text": "agentshape alert `secrets`: session `leaky`: 1 secret masked (github-pat); rotate them"})
    );
    assert_eq!(to(&rx, "/quiet")[0]["details"]["last_session"], "q1");
    // Stored, delivered, once each.
    let fired = list(&db);
    assert_eq!(fired.len(), 6);
    assert!(
        fired
            .iter()
            .all(|f| f["deliveries"][0]["state"] == "delivered"
                && f["deliveries"][0]["attempts"] == 1)
    );
}

#[test]
fn alerts_cooldown_holds_a_second_failure_and_lets_the_next_one_through() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\ncooldown = \"10m\"\n\
             webhook = {{ url = \"{}/f\" }}\n",
            rx.url()
        ),
    );
    drop(open(&db));
    let _server = serve(&db, &rules);
    let t = now();
    let mut s = open(&db);
    s.write_session(&failed("a", t, "timeout")).unwrap();
    wait_until("the first alert", GUARD, || to(&rx, "/f").len() == 1);
    // Within the cooldown of the first (measured on the events' times).
    s.write_session(&failed("b", t + 1_000, "timeout")).unwrap();
    settle();
    assert_eq!(to(&rx, "/f").len(), 1);
    // Ten minutes after the first: fires.
    s.write_session(&failed("c", t + 600_000, "timeout"))
        .unwrap();
    wait_until("the next alert", GUARD, || to(&rx, "/f").len() == 2);
    settle();
    let got: Vec<Value> = to(&rx, "/f")
        .iter()
        .map(|b| b["session_id"].clone())
        .collect();
    assert_eq!(got, vec!["a", "c"]);
}

#[test]
fn alerts_a_restart_does_not_repeat_and_resumes_a_pending_delivery_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"{}/f\" }}\nlog = true\n",
            rx.url()
        ),
    );
    open(&db)
        .write_session(&failed("a", now(), "timeout"))
        .unwrap();
    // The receiver fails: the delivery stays pending, retried.
    rx.answer(500);
    let first = serve(&db, &rules);
    // The attempt reached the receiver, and its failure is in the store
    // (the receiver sees the request before `serve` writes what came back).
    wait_until("a failed attempt", GUARD, || {
        !to(&rx, "/f").is_empty()
            && list(&db)
                .first()
                .is_some_and(|f| f["deliveries"][1]["last_error"].is_string())
    });
    drop(first); // SIGKILL
    let fired = list(&db);
    assert_eq!(fired.len(), 1);
    let webhook = &fired[0]["deliveries"][1];
    assert_eq!(webhook["destination"], "webhook");
    assert_eq!(webhook["state"], "pending");
    assert_eq!(webhook["last_error"], "HTTP 500 Internal Server Error");
    assert_eq!(
        fired[0]["deliveries"][0]["state"], "delivered",
        "the log line"
    );
    let before = to(&rx, "/f").len();
    rx.answer(200);
    let second = serve(&db, &rules);
    wait_until("the resumed delivery", GUARD, || {
        list(&db)[0]["deliveries"][1]["state"] == "delivered"
    });
    settle();
    assert_eq!(to(&rx, "/f").len(), before + 1, "{}", second.stderr());
    // The log line was not said again: that delivery was done.
    assert!(
        !second.stderr().contains("alert `failed`"),
        "{}",
        second.stderr()
    );
    drop(second);
    let third = serve(&db, &rules);
    settle();
    assert_eq!(to(&rx, "/f").len(), before + 1, "{}", third.stderr());
    assert_eq!(list(&db).len(), 1);
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn alerts_an_unreachable_webhook_is_retried_then_failed_and_its_credentials_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let port = closed_port();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"http://bob:hunter2@127.0.0.1:{port}/hook/path?token=t0k3n\", \
             headers = {{ X-Api-Key = \"h3ad3r\" }} }}\n"
        ),
    );
    // Three attempts, not the default five.
    let text = std::fs::read_to_string(&rules)
        .unwrap()
        .replace("[settings]\n", "[settings]\nattempts = 3\n");
    std::fs::write(&rules, text).unwrap();
    open(&db)
        .write_session(&failed("a", now(), "timeout"))
        .unwrap();
    let server = serve(&db, &rules);
    wait_until("the delivery to fail", GUARD, || {
        list(&db)
            .first()
            .is_some_and(|f| f["deliveries"][0]["state"] == "failed")
    });
    let fired = list(&db);
    let d = &fired[0]["deliveries"][0];
    assert_eq!(d["attempts"], 3);
    assert_eq!(d["target"], format!("http://127.0.0.1:{port}/hook/path"));
    let err = d["last_error"].as_str().unwrap();
    assert!(err.contains("onnect"), "{err}");
    wait_until("the failure on stderr", GUARD, || {
        server.stderr().contains("failed after 3 attempts")
    });
    let human = agentshape()
        .args(["alerts", "list", "--store"])
        .arg(&db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&human, 0);
    let human = String::from_utf8_lossy(&human.stdout).into_owned();
    assert!(human.contains("webhook http://127.0.0.1:"), "{human}");
    assert!(human.contains("failed after 3 attempts"), "{human}");
    let later = agentshape()
        .args(["alerts", "list", "--since", "2099-01-01", "--store"])
        .arg(&db)
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&later, 0);
    assert_eq!(
        String::from_utf8_lossy(&later.stdout),
        "No alerts have fired.\n"
    );
    let page = reqwest::blocking_get(&format!("{}/alerts", server.base));
    assert!(
        page.contains("session <code>a</code> failed: timeout"),
        "{page}"
    );
    assert!(page.contains("href=\"/sessions/a\""), "{page}");
    assert!(page.contains("failed"), "{page}");
    let api = reqwest::blocking_get(&format!("{}/api/alerts", server.base));
    let v: Value = serde_json::from_str(&api).unwrap();
    assert_eq!(v["alerts"][0]["deliveries"][0]["state"], "failed", "{api}");
    let json = serde_json::to_string(&fired).unwrap();
    for (what, text) in [
        ("/api/alerts", api),
        ("stderr", server.stderr()),
        ("alerts list", human),
        ("alerts list --json", json),
        ("the page", page),
    ] {
        for secret in ["hunter2", "bob:", "t0k3n", "token=", "h3ad3r"] {
            assert!(!text.contains(secret), "{what} shows `{secret}`: {text}");
        }
    }
}

/// Blocking GET of a page's body (a small client for one test).
mod reqwest {
    pub(super) fn blocking_get(url: &str) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async { ::reqwest::get(url).await.unwrap().text().await.unwrap() })
    }
}

#[test]
fn alerts_a_command_runs_without_a_shell_with_the_firing_on_stdin_and_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let script = dir.path().join("record.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$OUT/args\"\n\
         cat > \"$OUT/stdin\"\ngrep THP_enabled /proc/self/status > \"$OUT/pages\"\n\
         printf '%s' \"$AGENTSHAPE_ALERT_RULE $AGENTSHAPE_ALERT_SESSION ${AGENTSHAPE_STORE:-none}\" > \"$OUT/env\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let marker = dir.path().join("pwned");
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\n\
             command = [{:?}, \"a; touch {m}\", \"$(touch {m})\", \"`touch {m}`\"]\n",
            script.display().to_string(),
            m = marker.display()
        ),
    );
    open(&db)
        .write_session(&failed("s1", now(), "timeout"))
        .unwrap();
    let mut child = agentshape_std()
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(&db)
        .arg("--alerts")
        .arg(&rules)
        .env("OUT", &out)
        .env("AGENTSHAPE_STORE", &db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the command", GUARD, || out.join("env").exists());
    settle();
    let _ = child.kill();
    let _ = child.wait();
    let args = std::fs::read_to_string(out.join("args")).unwrap();
    let m = marker.display();
    assert_eq!(args, format!("a; touch {m}\n$(touch {m})\n`touch {m}`\n"));
    assert!(!marker.exists(), "a shell ran the arguments");
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stdin")).unwrap()).unwrap();
    assert_eq!(stdin["rule"], "failed");
    assert_eq!(stdin["session_id"], "s1");
    // Its own variables, and none of agentshape's (the store's location).
    assert_eq!(
        std::fs::read_to_string(out.join("env")).unwrap(),
        "failed s1 none"
    );
    assert_eq!(list(&db)[0]["deliveries"][0]["state"], "delivered");
    // The page setting agentshape was started with, this test's (runtime's
    // Note [Huge pages for bulk only]), not the small pages it runs on.
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    let own = own.lines().find(|l| l.starts_with("THP_enabled:")).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("pages")).unwrap().trim(),
        own
    );
}

#[test]
fn alerts_watch_evaluates_the_rules_while_it_follows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\nwebhook = {{ url = \"{}/w\" }}\n",
            rx.url()
        ),
    );
    open(&db)
        .write_session(&failed("w1", now(), "timeout"))
        .unwrap();
    let empty = dir.path().join("sessions");
    std::fs::create_dir(&empty).unwrap();
    let mut child = agentshape_std()
        .args(["watch", "--store"])
        .arg(&db)
        .arg("--alerts")
        .arg(&rules)
        .arg(&empty)
        .env_remove("AGENTSHAPE_STORE")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the alert", GUARD, || to(&rx, "/w").len() == 1);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(to(&rx, "/w")[0]["session_id"], "w1");
}

#[test]
fn alerts_ops_once_sends_what_its_cycle_made_fire_before_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rx = Receiver::start();
    std::fs::create_dir_all(d.join("agents")).unwrap();
    let calm = std::fs::read_to_string(crate::support::example("healthy-structured.ndjson"))
        .unwrap()
        .replace("\"needed\":true", "\"needed\":false");
    std::fs::write(d.join("agents/t1.ndjson"), calm).unwrap();
    std::fs::write(d.join("p1.md"), "tier 1 prompt").unwrap();
    let db = d.join("agentshape.db");
    std::fs::write(
        d.join("ops.toml"),
        format!(
            "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\nstate_dir = {:?}\n\n[policy]\nmax_tier = 1\n\n\
             [[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = \"p1.md\"\n",
            crate::support::fake_agent(),
            db.display().to_string(),
            d.join("logs").display().to_string(),
            d.join("state").display().to_string(),
        ),
    )
    .unwrap();
    // The tier-1 session costs $0.0841 and checks jellyfin, not lidarr;
    // lidarr is not quiet yet (the store's first session is seconds old).
    let rules = rules_file(
        d,
        &format!(
            "[[rule]]\nname = \"spend\"\nwhen = \"cost_per_day\"\nabove = 0.05\nwebhook = {{ url = \"{0}/spend\" }}\n\n\
             [[rule]]\nname = \"jellyfin\"\nwhen = \"no_session\"\nservice = \"jellyfin\"\nhours = 1\nwebhook = {{ url = \"{0}/jellyfin\" }}\n\n\
             [[rule]]\nname = \"lidarr\"\nwhen = \"no_session\"\nservice = \"lidarr\"\nhours = 1\nwebhook = {{ url = \"{0}/lidarr\" }}\n",
            rx.url()
        ),
    );
    let out = agentshape()
        .args(["ops", "--once", "--config"])
        .arg(d.join("ops.toml"))
        .arg("--alerts")
        .arg(&rules)
        .env("FAKE_DIR", d.join("agents"))
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let paths: Vec<String> = rx.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/spend".to_owned()), "{paths:?}");
    assert_eq!(paths, vec!["/spend"]);
    assert_eq!(to(&rx, "/spend")[0]["details"]["total_usd"], 0.0841);
}

#[test]
fn alerts_on_a_postgres_store_fire_once_and_list_the_same() {
    let url = agentshape_testkit::pg::fresh_db();
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\nwebhook = {{ url = \"{}/pg\" }}\n",
            rx.url()
        ),
    );
    agentshape_store::PgStore::open(&url)
        .unwrap()
        .write_session(&failed("p1", now(), "timeout"))
        .unwrap();
    let mut child = agentshape_std()
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--store",
            &url,
            "--alerts",
        ])
        .arg(&rules)
        .env_remove("AGENTSHAPE_STORE")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the alert", GUARD, || to(&rx, "/pg").len() == 1);
    settle();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(to(&rx, "/pg").len(), 1);
    let out = agentshape()
        .args(["alerts", "list", "--json", "--store", &url])
        .env_remove("AGENTSHAPE_STORE")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let listed = json_lines(&out.stdout);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["session_id"], "p1");
    assert_eq!(listed[0]["deliveries"][0]["state"], "delivered");
}

/// Issue 40 §2: a webhook URL with user info plus an `Authorization`
/// header would send two credentials. `serve --alerts` refuses the rules
/// when it reads them (exit 64, one line naming the rule and the field, no
/// credential shown), before anything starts or is sent; the egress
/// policy refuses such a request too (its own tests).
#[test]
fn alerts_a_webhook_with_user_info_and_an_authorization_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"http://bob:hunter2@127.0.0.1:{}/hook\", \
             headers = {{ Authorization = \"Bearer t0k3n\" }} }}\n",
            rx.port()
        ),
    );
    let out = agentshape()
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(&db)
        .arg("--alerts")
        .arg(&rules)
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("AGENTSHAPE_TOKEN")
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 64);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "rule `failed`: `webhook.headers.Authorization`: the URL carries credentials too"
        ),
        "{err}"
    );
    for secret in ["hunter2", "t0k3n", "bob"] {
        assert!(!err.contains(secret), "`{secret}` shown: {err}");
    }
    assert!(rx.requests().is_empty(), "{:?}", rx.requests());
    assert!(!db.exists(), "nothing started");
}

/// Issue 40 §5: a webhook that never answers (each attempt takes its whole
/// 2 s timeout) does not hold back another rule's healthy webhook: all 30
/// of its deliveries arrive within a few seconds, while the slow one is
/// still being tried.
#[test]
fn alerts_a_slow_webhook_does_not_hold_back_a_healthy_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    // Connections are accepted by the kernel, never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let rx = Receiver::start();
    let rules = rules_file(
        dir.path(),
        &format!(
            "[[rule]]\nname = \"slow\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"http://{}/slow\" }}\n\n\
             [[rule]]\nname = \"healthy\"\nwhen = \"session_failed\"\n\
             webhook = {{ url = \"{}/healthy\" }}\n",
            silent.local_addr().unwrap(),
            rx.url()
        ),
    );
    let mut store = open(&db);
    let t0 = now();
    for i in 0..30 {
        store
            .write_session(&failed(&format!("s{i:02}"), t0 - 60_000 + i, "timeout"))
            .unwrap();
    }
    drop(store);
    let started = std::time::Instant::now();
    let _server = serve(&db, &rules);
    wait_until("the healthy webhook's 30 deliveries", GUARD, || {
        to(&rx, "/healthy").len() >= 30
    });
    let took = started.elapsed();
    // Sequential delivery took 2 s per slow attempt between two healthy ones.
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(to(&rx, "/healthy").len(), 30);
}
