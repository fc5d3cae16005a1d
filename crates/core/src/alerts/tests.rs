#![allow(clippy::unwrap_used)]

use super::*;
use crate::alerts::rules::{duration, parse_duration};

const FULL: &str = r#"
[settings]
interval = "2s"
attempts = 3
backoff = "100ms"
max_backoff = "1s"
timeout = "5s"
lookback = "2h"

[[rule]]
name = "review-rejections"
when = "rejection_rate"
profile = "code-review"
window = "1h"
above = 0.2
min_runs = 10
cooldown = "30m"
webhook = [{ url = "https://user:pass@hooks.example.com/services/T1/B2?token=abc", format = "slack" }, { url = "https://hooks.example.com/b", headers = { Authorization = "Bearer s3cret" } }]

[[rule]]
name = "timeouts"
when = "session_failed"
category = ["timeout", "overloaded"]
service = "jellyfin"
command = ["notify", "--to", "ops; rm -rf /"]
log = true

[[rule]]
name = "spend"
when = "cost_per_day"
above = 25
agent = "claude"
webhook = [{ url = "http://127.0.0.1:9/a" }, { url = "http://127.0.0.1:9/b" }]

[[rule]]
name = "lost"
when = "session_lost"
log = true

[[rule]]
name = "leaks"
when = "secrets_found"
lookback = "0s"
log = true

[[rule]]
name = "jellyfin-quiet"
when = "no_session"
service = "jellyfin"
hours = 6
log = true
"#;

#[test]
fn a_full_file_parses_into_rules() {
    let set = parse_rules(FULL).unwrap();
    assert_eq!(set.settings.interval_ms, 2_000);
    assert_eq!(set.settings.attempts, 3);
    assert_eq!(set.settings.lookback_ms, 7_200_000);
    assert_eq!(set.rules.len(), 6);
    let r = &set.rules[0];
    assert_eq!(
        r.condition,
        Condition::RejectionRate {
            profile: "code-review".into(),
            window_ms: 3_600_000,
            above: 0.2,
            min_runs: 10
        }
    );
    assert_eq!(r.cooldown_ms, 1_800_000);
    let Destination::Webhook(w) = &r.destinations[0] else {
        panic!("{:?}", r.destinations)
    };
    assert_eq!(w.format, Format::Slack);
    let Destination::Webhook(w) = &r.destinations[1] else {
        panic!("{:?}", r.destinations)
    };
    assert_eq!(
        w.headers,
        vec![("Authorization".into(), "Bearer s3cret".into())]
    );
    let dbg = format!("{r:?}");
    assert!(
        !dbg.contains("pass") && !dbg.contains("abc") && !dbg.contains("s3cret"),
        "{dbg}"
    );
    assert_eq!(
        set.rules[1].destinations,
        vec![
            Destination::Command(vec!["notify".into(), "--to".into(), "ops; rm -rf /".into()]),
            Destination::Log
        ]
    );
    assert_eq!(set.rules[2].destination_ids(), vec!["webhook", "webhook#2"]);
    assert!(set.rules[2].destination("webhook#2").is_some());
    assert_eq!(set.rules[3].condition, Condition::SessionLost);
    assert_eq!(set.rules[4].lookback_ms, 0);
    assert_eq!(set.rules[5].lookback_ms, 7_200_000);
    assert_eq!(
        set.rules[5].condition,
        Condition::NoSession {
            service: "jellyfin".into(),
            quiet_ms: 6 * 3_600_000
        }
    );
    let line = set.rules[0].describe();
    assert_eq!(
        line,
        "review-rejections: rejection rate of profile `code-review` above 20% over 1h (at least 10 runs); cooldown 30m; to webhook https://hooks.example.com/services/T1/B2, webhook https://hooks.example.com/b"
    );
}

#[test]
fn errors_name_the_rule_and_the_field_on_one_line() {
    let rule = |body: &str| format!("[[rule]]\nname = \"r\"\n{body}\n");
    let cases: &[(String, &str)] = &[
        ("x = [".into(), "not valid TOML at line 1:"),
        (String::new(), "no rules: add at least one `[[rule]]` table"),
        (
            "[[rule]]\nwhen = \"session_lost\"\nlog = true".into(),
            "rule #1: `name`: missing",
        ),
        (rule("log = true"), "rule `r`: `when`: missing"),
        (
            rule("when = \"nope\"\nlog = true"),
            "rule `r`: `when`: unknown condition `nope`",
        ),
        (
            rule("when = \"session_lost\""),
            "rule `r`: `webhook`: no destination",
        ),
        (
            rule(
                "when = \"rejection_rate\"\nprofile = \"p\"\nwindow = \"1h\"\nabove = 1.5\nlog = true",
            ),
            "rule `r`: `above`: must be a fraction from 0 to below 1",
        ),
        (
            rule("when = \"rejection_rate\"\nprofile = \"p\"\nabove = 0.5\nlog = true"),
            "rule `r`: `window`: missing",
        ),
        (
            rule("when = \"session_lost\"\ncooldown = \"soon\"\nlog = true"),
            "rule `r`: `cooldown`: expected a duration such as \"30m\"",
        ),
        (
            rule("when = \"session_lost\"\nwebhook = { url = \"ftp://u:p@h/x\" }"),
            "rule `r`: `webhook.url`: must be an http:// or https:// URL (ftp://h/x)",
        ),
        (
            rule(
                "when = \"session_lost\"\nwebhook = { url = \"https://u:p@h/x\", headers = { authorization = \"Bearer t\" } }",
            ),
            "rule `r`: `webhook.headers.Authorization`: the URL carries credentials too (https://h/x): give one of the two",
        ),
        (
            rule("when = \"session_lost\"\nwebhook = { url = \"https://h/x\", format = \"xml\" }"),
            "rule `r`: `webhook.format`: must be \"json\" or \"slack\"",
        ),
        (
            rule("when = \"session_lost\"\ncommand = \"notify ops\""),
            "rule `r`: `command`: must be a list of strings",
        ),
        (
            rule("when = \"session_lost\"\nprofile = \"p\"\nlog = true"),
            "rule `r`: `profile`: not a field of `session_lost`",
        ),
        (
            rule("when = \"session_lost\"\nlgo = true"),
            "rule `r`: `lgo`: unknown field",
        ),
        (
            rule("when = \"no_session\"\nservice = \"s\"\nlog = true"),
            "rule `r`: `hours`: missing",
        ),
        (
            format!(
                "{}{}",
                rule("when = \"session_lost\"\nlog = true"),
                rule("when = \"session_lost\"\nlog = true")
            ),
            "rule `r`: `name`: another rule has this name",
        ),
        (
            format!(
                "[settings]\nattempts = 0\n{}",
                rule("when = \"session_lost\"\nlog = true")
            ),
            "[settings] `attempts`: must be a whole number from 1 to 100",
        ),
    ];
    for (text, want) in cases {
        let e = parse_rules(text).unwrap_err().to_string();
        assert!(e.starts_with(want), "{text:?}\n got: {e}\nwant: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn urls_lose_their_credentials() {
    let cases = [
        (
            "https://user:pass@hooks.example.com/a/b?token=x#f",
            "https://hooks.example.com/a/b",
        ),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("HTTPS://h.example/p?x", "https://h.example/p"),
        ("https://a@b@h/p", "https://h/p"),
        ("not a url", "(unparsable URL)"),
        (
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/services/T00000000/B00000000/***",
        ),
        (
            "https://discord.com/api/webhooks/1234567890/abcDEF123456ghiJKL",
            "https://discord.com/api/webhooks/1234567890/***",
        ),
        (
            "https://h.example/agentshape/alerts-webhook",
            "https://h.example/agentshape/alerts-webhook",
        ),
    ];
    for (url, want) in cases {
        assert_eq!(redact_url(url), want, "{url}");
    }
}

#[test]
fn retry_delays_double_up_to_the_cap() {
    let s = Settings {
        backoff_ms: 100,
        max_backoff_ms: 1_000,
        ..Settings::default()
    };
    let got: Vec<i64> = (1..=6).map(|n| retry_delay_ms(&s, n)).collect();
    assert_eq!(got, vec![100, 200, 400, 800, 1_000, 1_000]);
    assert_eq!(retry_delay_ms(&s, u32::MAX), 1_000);
}

#[test]
fn durations_round_trip() {
    for (t, ms) in [
        ("30m", 1_800_000),
        ("2h", 7_200_000),
        ("500ms", 500),
        ("1w", 604_800_000),
    ] {
        assert_eq!(parse_duration(t), Some(ms));
        assert_eq!(duration(ms), t);
    }
    assert_eq!(parse_duration("5"), None);
    assert_eq!(parse_duration("99999999999999999w"), None);
}

fn rule(toml: &str) -> Rule {
    parse_rules(&format!("[[rule]]\nname = \"r\"\nlog = true\n{toml}"))
        .unwrap()
        .rules
        .remove(0)
}

const H: i64 = 3_600_000;
const NOW: i64 = 1_800_000_000_000;

fn failed(id: &str, cat: &str, at: i64) -> Fact {
    Fact::Failed {
        session_id: id.into(),
        category: cat.into(),
        ended_at_ms: at,
        profile: None,
        error: None,
    }
}

fn keys(f: &[Firing]) -> Vec<&str> {
    f.iter().map(|f| f.key.as_str()).collect()
}

#[test]
fn the_rate_fires_above_the_threshold_with_enough_runs() {
    let r = rule(
        "when = \"rejection_rate\"\nprofile = \"p\"\nwindow = \"1h\"\nabove = 0.2\nmin_runs = 5\ncooldown = \"30m\"",
    );
    let rate = |runs, rejected| Fact::Rate {
        runs,
        rejected,
        example: Some("s9".into()),
    };
    let cases = [
        (rate(4, 4), 0, "too few runs"),
        (rate(10, 2), 0, "at the threshold, not above"),
        (rate(10, 3), 1, "above"),
        (rate(0, 0), 0, "nothing"),
    ];
    for (fact, n, why) in cases {
        assert_eq!(evaluate(&r, &[fact], None, NOW).len(), n, "{why}");
    }
    let f = &evaluate(&r, &[rate(10, 3)], None, NOW)[0];
    assert_eq!(f.session_id.as_deref(), Some("s9"));
    assert_eq!(f.event_at_ms, NOW);
    assert_eq!(f.key, format!("rate:{}", NOW / (30 * 60_000)));
    assert_eq!(
        f.summary,
        "profile `p`: 3 of 10 runs rejected (30%) in the last 1h, above 20%"
    );
    // Within the cooldown: nothing; after it: again.
    let last = Some(LastFiring { event_at_ms: NOW });
    assert!(evaluate(&r, &[rate(10, 3)], last, NOW + 29 * 60_000).is_empty());
    let again = evaluate(&r, &[rate(10, 3)], last, NOW + 30 * 60_000);
    assert_eq!(again.len(), 1);
    assert_ne!(again[0].key, f.key);
    // Without a cooldown, the window is the rate's: once an hour here.
    let bare = rule("when = \"rejection_rate\"\nprofile = \"p\"\nwindow = \"1h\"\nabove = 0.2");
    let first = evaluate(&bare, &[rate(10, 3)], None, NOW);
    assert_eq!(first[0].key, format!("rate:{}", NOW / H));
    assert!(evaluate(&bare, &[rate(10, 3)], last, NOW + 59 * 60_000).is_empty());
    assert_eq!(evaluate(&bare, &[rate(10, 3)], last, NOW + H).len(), 1);
}

#[test]
fn failures_fire_once_each_and_the_cooldown_holds_a_burst() {
    let any = rule("when = \"session_failed\"");
    let facts = [
        failed("b", "timeout", NOW - 2_000),
        failed("a", "api_error", NOW - 3_000),
    ];
    assert_eq!(
        keys(&evaluate(&any, &facts, None, NOW)),
        vec!["session:a", "session:b"]
    );
    let only = rule("when = \"session_failed\"\ncategory = \"timeout\"");
    assert_eq!(keys(&evaluate(&only, &facts, None, NOW)), vec!["session:b"]);
    let cool = rule("when = \"session_failed\"\ncooldown = \"10m\"");
    let burst = [
        failed("a", "timeout", NOW - 5 * 60_000),
        failed("b", "timeout", NOW - 4 * 60_000),
        failed("c", "timeout", NOW + 5 * 60_000),
        failed("d", "timeout", NOW + 6 * 60_000),
    ];
    assert_eq!(
        keys(&evaluate(&cool, &burst, None, NOW + 6 * 60_000)),
        vec!["session:a", "session:c"]
    );
    // The mark read back from the store after a restart gives the same answer.
    let last = Some(LastFiring {
        event_at_ms: NOW - 5 * 60_000,
    });
    assert_eq!(
        keys(&evaluate(&cool, &burst[1..], last, NOW + 6 * 60_000)),
        vec!["session:c"]
    );
    // Older than the lookback (1h by default): not alerted.
    assert!(evaluate(&any, &[failed("old", "timeout", NOW - 2 * H)], None, NOW).is_empty());
}

#[test]
fn cost_lost_secrets_and_quiet_services() {
    let cost = rule("when = \"cost_per_day\"\nabove = 10");
    let day = |total| Fact::Cost {
        day: "2027-01-15".into(),
        total,
        sessions: 4,
    };
    assert!(evaluate(&cost, &[day(10.0)], None, NOW).is_empty());
    let f = evaluate(&cost, &[day(12.5)], None, NOW);
    assert_eq!(keys(&f), vec!["cost:2027-01-15"]);
    assert_eq!(
        f[0].summary,
        "cost on 2027-01-15: $12.50 over 4 sessions, above $10.00"
    );

    let lost = rule("when = \"session_lost\"");
    let fact = Fact::Lost {
        session_id: "s1".into(),
        lost_at_ms: NOW - 1_000,
        heartbeat_at: "2027-01-15T08:00:00.000Z".into(),
    };
    let f = evaluate(&lost, &[fact], None, NOW);
    assert_eq!(f[0].session_id.as_deref(), Some("s1"));
    assert_eq!(f[0].event_at_ms, NOW - 1_000);

    let secrets = rule("when = \"secrets_found\"");
    let fact = |count| Fact::Secrets {
        session_id: "s2".into(),
        count,
        rules: vec!["aws-access-key".into(), "github-pat".into()],
        last_ms: NOW,
    };
    assert!(evaluate(&secrets, &[fact(0)], None, NOW).is_empty());
    assert_eq!(
        evaluate(&secrets, &[fact(2)], None, NOW)[0].summary,
        "session `s2`: 2 secrets masked (aws-access-key, github-pat); rotate them"
    );

    let quiet = rule("when = \"no_session\"\nservice = \"jf\"\nhours = 6");
    let q = |last_ms| Fact::Quiet {
        last_ms,
        last_session: last_ms.map(|_| "s3".to_owned()),
        first_ms: Some(NOW - 30 * H),
    };
    assert!(evaluate(&quiet, &[q(Some(NOW - 5 * H))], None, NOW).is_empty());
    let f = evaluate(&quiet, &[q(Some(NOW - 6 * H))], None, NOW);
    assert_eq!(f[0].key, format!("quiet:{}", NOW - 6 * H));
    assert_eq!(f[0].event_at_ms, NOW);
    // Quiet for days before the rule was read: still fires (a state, not an event).
    assert_eq!(
        evaluate(&quiet, &[q(Some(NOW - 72 * H))], None, NOW).len(),
        1
    );
    assert_eq!(
        keys(&evaluate(&quiet, &[q(None)], None, NOW)),
        vec!["quiet:never"]
    );
    // A fact of another condition is not this rule's.
    assert!(evaluate(&quiet, &[day(99.0)], None, NOW).is_empty());
}

#[test]
fn the_slack_body_is_one_text_field() {
    let p = Payload {
        id: 1,
        rule: "lost".into(),
        condition: "session_lost".into(),
        key: "lost:s1".into(),
        summary: "session `s1` lost".into(),
        session_id: Some("s1".into()),
        event_at: "t".into(),
        fired_at: "t".into(),
        details: serde_json::json!({}),
    };
    assert_eq!(
        slack_body(&p),
        serde_json::json!({"text": "agentshape alert `lost`: session `s1` lost"})
    );
}
