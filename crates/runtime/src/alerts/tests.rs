#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use agentshape_core::alerts::parse_rules;
use agentshape_store::copy::Copyable;
use agentshape_store::{Session, SqliteStore, Store, alerts as stored, time};

use super::{Log, deliver_once, evaluate_once, send};

/// A failure is retried after `backoff`, then after twice that, and
/// recorded as failed after `attempts`, each wait measured in the store's
/// `next_at` (nothing is tried before it is due).
#[test]
fn a_failing_destination_backs_off_then_is_failed_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let rules = parse_rules(
        "[settings]\nattempts = 3\nbackoff = \"1s\"\nmax_backoff = \"10s\"\ntimeout = \"5s\"\n\n\
         [[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\ncommand = [\"false\"]\n",
    )
    .unwrap();
    let now = time::now_ms();
    let mut r = Session::new("s1", &time::format_ms(now - 1_000), "error");
    r.ended_at = Some(time::format_ms(now));
    r.error_category = Some("timeout".into());
    store.write_session(&r).unwrap();
    let fired = evaluate_once(&rules, &mut store, now, &mut stored::Memo::default()).unwrap();
    assert_eq!(fired.len(), 1);
    // Evaluated again: already fired.
    assert!(
        evaluate_once(&rules, &mut store, now + 10, &mut stored::Memo::default())
            .unwrap()
            .is_empty()
    );
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let keep = Arc::clone(&lines);
    let log: Log = Arc::new(move |l: &str| keep.lock().unwrap().push(l.to_owned()));
    let client = send::Client::new(5_000);
    let state = |store: &SqliteStore| {
        let f = stored::firings(store.copy_rows(), None, None, 1).unwrap();
        let d = &f[0].deliveries[0];
        (d.state.clone(), d.attempts, d.last_error.clone())
    };
    let mut waits = Vec::new();
    for attempt in 1..=3u32 {
        let t = std::time::Instant::now();
        // Poll until the attempt is due (a hang guard of 10 s).
        loop {
            let tried = deliver_once(&rules, &mut store, &client, &log).unwrap();
            if tried == 1 {
                break;
            }
            assert!(t.elapsed().as_secs() < 10, "attempt {attempt} never came");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        waits.push(t.elapsed().as_millis());
        assert_eq!(state(&store).1, attempt);
    }
    // Attempt 1 at once; 2 after 1 s; 3 after 2 s.
    assert!(waits[0] < 1_000, "{waits:?}");
    assert!(waits[1] >= 950, "{waits:?}");
    assert!(waits[2] >= 1_950, "{waits:?}");
    let (st, attempts, err) = state(&store);
    assert_eq!((st.as_str(), attempts), ("failed", 3));
    assert!(err.unwrap().starts_with("`false` exited with"));
    // Failed for good: said once, never tried again.
    let said = lines.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("failed after 3 attempts"), "{said:?}");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(deliver_once(&rules, &mut store, &client, &log).unwrap(), 0);
}

/// More failures than one evaluation takes (100 firings a tick) all fire,
/// each once, over the next ticks: each reads on from the last firing.
#[test]
fn a_burst_larger_than_a_tick_fires_every_session_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let rules = parse_rules("[[rule]]\nname = \"failed\"\nwhen = \"session_failed\"\nlog = true\n")
        .unwrap();
    let now = time::now_ms();
    for i in 0..650i64 {
        let mut r = Session::new(
            &format!("s{i:03}"),
            &time::format_ms(now - 700_000),
            "error",
        );
        r.ended_at = Some(time::format_ms(now - 650_000 + i * 1_000));
        r.error_category = Some("timeout".into());
        store.write_session(&r).unwrap();
    }
    let mut memo = stored::Memo::default();
    let mut per_tick = Vec::new();
    loop {
        let n = evaluate_once(&rules, &mut store, now, &mut memo)
            .unwrap()
            .len();
        if n == 0 {
            break;
        }
        per_tick.push(n);
        assert!(per_tick.len() < 20, "{per_tick:?}");
    }
    assert_eq!(per_tick.iter().sum::<usize>(), 650, "{per_tick:?}");
    assert_eq!(stored::counts(store.copy_rows()).unwrap().0, 650);
}
