//! Alerts in the store (`agentshape_store::alerts`, Note [Alert state in
//! the store]): each condition's facts from the same sessions in a SQLite
//! file and a fresh Postgres database (the answers compared whole), and a
//! firing's life: stored once, claimed once, retried, delivered or failed.
#![allow(clippy::panic)] // a fact of the wrong kind is the test failing

use agentshape_core::alerts::{Fact, Firing, evaluate, parse_rules};
use agentshape_store::alerts::{self, Attempt};
use agentshape_store::copy::Copyable;
use agentshape_store::query::Source;
use agentshape_store::{PgStore, ServiceCheck, Session, SqliteStore, Store, time};
use serde_json::json;

/// 2027-01-15T12:00:00Z.
const NOW: i64 = 1_800_014_400_000;
const MIN: i64 = 60_000;

fn at(ms: i64) -> String {
    time::format_ms(ms)
}

fn session(id: &str, started: i64, status: &str) -> Session {
    let mut r = Session::new(id, &at(started), status);
    r.ended_at = Some(at(started + MIN));
    r
}

fn verdict(valid: bool) -> agentshape_store::Verdict {
    serde_json::from_value(json!({"valid": valid, "errors": [], "repairs": [], "coercions": []}))
        .unwrap()
}

fn fill(store: &mut dyn Store) {
    // Rejections of `review` in the last hour: 3 of 5 (one outside the window).
    for (i, valid) in [true, false, false, true, false].into_iter().enumerate() {
        let mut r = session(
            &format!("r{i}"),
            NOW - 50 * MIN + i64::try_from(i).unwrap() * MIN,
            "completed",
        );
        r.profile = Some("review".into());
        r.extraction_method = Some("fenced".into());
        r.verdict = Some(verdict(valid));
        r.cost_usd = Some(1.5);
        r.agent = Some("claude".into());
        store.write_session(&r).unwrap();
    }
    let mut old = session("r-old", NOW - 3 * 60 * MIN, "completed");
    old.profile = Some("review".into());
    old.extraction_method = Some("fenced".into());
    old.verdict = Some(verdict(false));
    old.cost_usd = Some(100.0);
    store.write_session(&old).unwrap();
    // Failures: one with a service checked, one without, one too old.
    let mut f1 = session("f1", NOW - 20 * MIN, "timeout");
    f1.error_category = Some("timeout".into());
    f1.error = Some("no answer in 600 s".into());
    f1.services.push(ServiceCheck {
        name: "jellyfin".into(),
        status: "down".into(),
        detail: None,
    });
    f1.cost_usd = Some(2.0);
    f1.agent = Some("codex".into());
    store.write_session(&f1).unwrap();
    let mut f2 = session("f2", NOW - 10 * MIN, "error");
    f2.error_category = Some("api_error".into());
    store.write_session(&f2).unwrap();
    let mut f3 = session("f3", NOW - 5 * 60 * MIN, "error");
    f3.error_category = Some("timeout".into());
    store.write_session(&f3).unwrap();
    // A lost run (heartbeat 5 minutes ago) and a live one.
    store
        .start_session(&Session::new("lost1", &at(NOW - 6 * MIN), "running"))
        .unwrap();
    store.heartbeat("lost1", &at(NOW - 5 * MIN)).unwrap();
    store
        .start_session(&Session::new("live1", &at(NOW - 6 * MIN), "running"))
        .unwrap();
    store.heartbeat("live1", &at(NOW - 1_000)).unwrap();
    // A secret in a summary (masked, and counted in `secrets_found`).
    let mut s = session("sec1", NOW - 30 * MIN, "completed");
    s.summary = Some("export GITHUB_TOKEN=ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7".into());
    store.write_session(&s).unwrap();
    // Sonarr last checked 7 hours ago.
    let mut q = session("q1", NOW - 7 * 60 * MIN, "completed");
    q.services.push(ServiceCheck {
        name: "sonarr".into(),
        status: "healthy".into(),
        detail: None,
    });
    store.write_session(&q).unwrap();
}

const RULES: &str = r#"
[[rule]]
name = "rate"
when = "rejection_rate"
profile = "review"
window = "1h"
above = 0.5
min_runs = 5
log = true

[[rule]]
name = "failed"
when = "session_failed"
log = true

[[rule]]
name = "failed-jellyfin"
when = "session_failed"
service = "jellyfin"
log = true

[[rule]]
name = "cost"
when = "cost_per_day"
above = 5
log = true

[[rule]]
name = "cost-codex"
when = "cost_per_day"
above = 5
agent = "codex"
log = true

[[rule]]
name = "lost"
when = "session_lost"
log = true

[[rule]]
name = "secrets"
when = "secrets_found"
log = true

[[rule]]
name = "sonarr-quiet"
when = "no_session"
service = "sonarr"
hours = 6
log = true

[[rule]]
name = "jellyfin-quiet"
when = "no_session"
service = "jellyfin"
hours = 6
log = true

[[rule]]
name = "radarr-quiet"
when = "no_session"
service = "radarr"
hours = 6
log = true
"#;

/// Every rule's facts and firings at NOW, as one list of (rule, facts, keys).
fn everything(store: &dyn Copyable) -> Vec<(String, Vec<Fact>, Vec<String>)> {
    let set = parse_rules(RULES).unwrap();
    set.rules
        .iter()
        .map(|r| {
            let facts =
                alerts::facts(store.copy_rows(), &r.condition, NOW, NOW - r.lookback_ms).unwrap();
            let keys = evaluate(r, &facts, None, NOW)
                .into_iter()
                .map(|f| f.key)
                .collect();
            (r.name.clone(), facts, keys)
        })
        .collect()
}

fn check(got: &[(String, Vec<Fact>, Vec<String>)]) {
    let keys = |name: &str| -> Vec<&str> {
        got.iter()
            .find(|(n, ..)| n == name)
            .unwrap()
            .2
            .iter()
            .map(String::as_str)
            .collect()
    };
    let facts = |name: &str| &got.iter().find(|(n, ..)| n == name).unwrap().1;
    assert_eq!(
        facts("rate"),
        &vec![Fact::Rate {
            runs: 5,
            rejected: 3,
            example: Some("r4".into())
        }]
    );
    assert_eq!(keys("rate").len(), 1);
    assert_eq!(keys("failed"), vec!["session:f1", "session:f2"]);
    assert_eq!(keys("failed-jellyfin"), vec!["session:f1"]);
    // Today: r0..r4 (7.5) + f1 (2.0); r-old started 3 hours ago, also today.
    let Fact::Cost {
        total, sessions, ..
    } = facts("cost")[0]
    else {
        panic!()
    };
    assert!((total - 109.5).abs() < 1e-9, "{total}");
    assert_eq!(sessions, 7);
    assert_eq!(keys("cost"), vec!["cost:2027-01-15"]);
    assert!(keys("cost-codex").is_empty(), "{:?}", facts("cost-codex"));
    assert_eq!(keys("lost"), vec!["lost:lost1"]);
    assert_eq!(keys("secrets"), vec!["secrets:sec1"]);
    let Fact::Secrets { rules, count, .. } = &facts("secrets")[0] else {
        panic!()
    };
    assert_eq!(
        (rules.as_slice(), *count),
        (&["github-pat".to_owned()][..], 1)
    );
    assert_eq!(
        keys("sonarr-quiet"),
        vec![format!("quiet:{}", NOW - 7 * 60 * MIN)]
    );
    assert!(keys("jellyfin-quiet").is_empty());
    assert_eq!(keys("radarr-quiet"), vec!["quiet:never"]);
}

#[test]
fn alerts_facts_are_the_same_on_sqlite_and_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    fill(&mut lite);
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    fill(&mut pg);
    let a = everything(&lite);
    check(&a);
    let b = everything(&pg);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

fn firing(key: &str, summary: &str) -> Firing {
    Firing {
        rule: "failed".into(),
        condition: "session_failed",
        key: key.into(),
        event_at_ms: NOW - MIN,
        session_id: Some("f1".into()),
        summary: summary.into(),
        details: json!({"error": "token ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7"}),
    }
}

fn life(store: &mut dyn Copyable) -> String {
    let dests = vec![
        ("webhook".to_owned(), "https://h.example/x".to_owned()),
        ("log".to_owned(), "stderr".to_owned()),
    ];
    let id = alerts::record(
        store,
        &firing("session:f1", "session `f1` failed"),
        NOW,
        &dests,
    )
    .unwrap()
    .expect("new");
    // The same key again: stored once, no second set of deliveries.
    assert_eq!(
        alerts::record(store, &firing("session:f1", "again"), NOW + 5, &dests).unwrap(),
        None
    );
    assert_eq!(
        alerts::last_event_ms(store.copy_rows(), "failed").unwrap(),
        Some(NOW - MIN)
    );
    assert_eq!(
        alerts::last_event_ms(store.copy_rows(), "other").unwrap(),
        None
    );
    let due = alerts::due(store.copy_rows(), NOW, 10).unwrap();
    assert_eq!(due.len(), 2);
    assert_eq!(due[0].payload.id, id);
    assert!(
        !due[0].payload.details.to_string().contains("ghp_Xq7"),
        "masked at the door: {}",
        due[0].payload.details
    );
    // One claim wins; a second with the same view loses.
    assert!(alerts::claim(store, &due[0], NOW + 10_000).unwrap());
    assert!(!alerts::claim(store, &due[0], NOW + 10_000).unwrap());
    assert!(
        alerts::due(store.copy_rows(), NOW + 5_000, 10)
            .unwrap()
            .iter()
            .all(|d| d.destination != due[0].destination)
    );
    alerts::settle(
        store,
        id,
        &due[0].destination,
        &Attempt::Retry {
            error: "HTTP 500".into(),
            next_at_ms: NOW + 1_000,
        },
        NOW,
    )
    .unwrap();
    let again = alerts::due(store.copy_rows(), NOW + 1_000, 10).unwrap();
    let d = again
        .iter()
        .find(|d| d.destination == due[0].destination)
        .unwrap();
    assert_eq!(d.attempts, 1);
    assert!(alerts::claim(store, d, NOW + 20_000).unwrap());
    alerts::settle(
        store,
        id,
        &d.destination,
        &Attempt::Failed {
            error: "HTTP 500 again".into(),
        },
        NOW + 2_000,
    )
    .unwrap();
    let other = &due[1];
    assert!(alerts::claim(store, other, NOW + 10_000).unwrap());
    alerts::settle(
        store,
        id,
        &other.destination,
        &Attempt::Delivered,
        NOW + 3_000,
    )
    .unwrap();
    assert!(
        alerts::due(store.copy_rows(), NOW + 100_000, 10)
            .unwrap()
            .is_empty()
    );
    let listed = alerts::firings(store.copy_rows(), None, None, 10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(alerts::counts(store.copy_rows()).unwrap(), (1, 1));
    let mut v = serde_json::to_value(&listed).unwrap();
    v[0]["id"] = json!(0);
    // The fingerprint is keyed by the store's own key.
    let d = v[0]["details"]["error"].as_str().unwrap().to_owned();
    assert!(d.starts_with("token [REDACTED:github-pat:"), "{d}");
    v[0]["details"] = json!("masked");
    v.to_string()
}

#[test]
fn alerts_a_firing_is_stored_once_and_its_deliveries_settle_the_same_on_both() {
    let dir = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let a = life(&mut lite);
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let b = life(&mut pg);
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    let ds = &v[0]["deliveries"];
    // Due oldest first, then by destination: `log` was tried first.
    assert_eq!(ds[0]["destination"], "log");
    assert_eq!(ds[0]["state"], "failed");
    assert_eq!(ds[0]["attempts"], 2);
    assert_eq!(ds[0]["last_error"], "HTTP 500 again");
    assert_eq!(ds[1]["state"], "delivered");
    assert_eq!(ds[1]["target"], "https://h.example/x");
    assert_eq!(v[0]["summary"], "session `f1` failed");
    // The dashboard's reader gives the same rows.
    let ro = SqliteStore::open_read_only(&dir.path().join("a.db")).unwrap();
    let src: &dyn Source = &ro;
    let mut w =
        serde_json::to_value(alerts::firings(&alerts::SourceRows(src), None, None, 10).unwrap())
            .unwrap();
    w[0]["id"] = json!(0);
    w[0]["details"] = json!("masked");
    assert_eq!(w, v);
}

#[test]
fn alerts_store_copy_brings_firings_with_their_deliveries_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let dests = vec![("webhook".to_owned(), "https://h.example/x".to_owned())];
    let id = alerts::record(&mut lite, &firing("session:f1", "one"), NOW, &dests)
        .unwrap()
        .unwrap();
    let d = &alerts::due(lite.copy_rows(), NOW, 1).unwrap()[0];
    assert!(alerts::claim(&mut lite, d, NOW + 1).unwrap());
    alerts::settle(&mut lite, id, "webhook", &Attempt::Delivered, NOW).unwrap();
    alerts::record(&mut lite, &firing("session:f2", "two"), NOW, &dests).unwrap();
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let r = agentshape_store::copy(&lite, &mut pg).unwrap();
    assert_eq!((r.alert_firings, r.alert_firings_skipped), (2, 0));
    let again = agentshape_store::copy(&lite, &mut pg).unwrap();
    assert_eq!((again.alert_firings, again.alert_firings_skipped), (0, 2));
    let strip = |rows: Vec<alerts::FiringRow>| {
        rows.into_iter()
            .map(|mut f| {
                f.id = 0;
                f.details = json!(null);
                f
            })
            .collect::<Vec<_>>()
    };
    let a = strip(alerts::firings(lite.copy_rows(), None, None, 10).unwrap());
    let b = strip(alerts::firings(pg.copy_rows(), None, None, 10).unwrap());
    assert_eq!(a, b);
    assert_eq!(b[1].deliveries[0].state, "delivered");
    assert_eq!(b[0].deliveries[0].state, "pending");
    // The copy's pending delivery is due there.
    assert_eq!(alerts::due(pg.copy_rows(), NOW, 10).unwrap().len(), 1);
}
