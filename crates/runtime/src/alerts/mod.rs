//! Alerts at run time (issue 31): the evaluator that turns what the store
//! holds into firings, and the delivery loop that sends them.
//!
//! Note \[Alert loops\]: `serve`, `ops` and `watch` given `--alerts FILE`
//! start two threads, each with its own store handle, so neither ever
//! waits on (or makes wait) the server, the supervisor or an agent:
//! - the evaluator, every `interval`, measures each rule's facts
//!   (`agentshape_store::alerts::facts`), asks core which firings they
//!   make given the rule's last firing (read from the store: the
//!   cooldown's mark) and stores each new one with a pending delivery per
//!   destination; a firing already stored (its dedup key) is skipped;
//! - the delivery loop, woken by the evaluator or every `interval`, takes
//!   the due deliveries from the store (the store is the queue: bounded by
//!   the attempts a delivery gets, and what a restart resumes), claims
//!   each (Note \[Alert state in the store\]), tries it once within
//!   `timeout`, and records the outcome: delivered; or failed, retried
//!   after `backoff` doubled per attempt (at most `max_backoff`) until
//!   `attempts` are spent, then failed for good with its last error.
//!
//! A store that cannot be read or written is said once on the log (then
//! again when it recovers) and tried again at the next tick; it never
//! stops the command the loops run in.

mod send;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use agentshape_core::alerts::{LastFiring, RuleSet, evaluate, retry_delay_ms};
use agentshape_store::StoreUrl;
use agentshape_store::alerts::{self as stored, Attempt};
use agentshape_store::copy::Copyable;
use agentshape_store::time;

pub use send::{deliver, scrub};

/// Where the loops write a line (a `log = true` destination, a delivery
/// failed for good, the store unavailable): stderr, or the `ops` log.
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// The most deliveries one pass takes.
pub const DELIVERIES_PER_PASS: usize = 32;

/// The two running loops; [`Running::stop`] ends them.
pub struct Running {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    rules: Arc<RuleSet>,
    url: StoreUrl,
    log: Log,
}

impl Running {
    /// Stop both loops and wait for them (an attempt under way finishes
    /// first, within its timeout).
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }

    /// Stop both loops, then evaluate once more and make one delivery
    /// pass (each due delivery tried once): `ops --once` ends right after
    /// its cycle, and what the cycle's sessions made fire is sent before
    /// it exits. Retries left are resumed by the next start.
    pub fn finish(self) {
        let (rules, url, log) = (
            Arc::clone(&self.rules),
            self.url.clone(),
            Arc::clone(&self.log),
        );
        self.stop();
        let Ok(mut store) = url.open_copyable(true) else {
            return;
        };
        let health = Health::new("evaluating the alert rules");
        health.report(
            &log,
            evaluate_once(
                &rules,
                &mut *store,
                time::now_ms(),
                &mut stored::Memo::default(),
            ),
        );
        let client = send::Client::new(rules.settings.timeout_ms);
        let health = Health::new("delivering alerts");
        health.report(&log, deliver_once(&rules, &mut *store, &client, &log));
    }
}

/// Start the evaluator and the delivery loop on `url` (Note \[Alert loops\]).
///
/// # Errors
/// When the store cannot be opened for writing (the caller's first
/// message), or a thread cannot be started.
pub fn start(rules: RuleSet, url: &StoreUrl, log: Log) -> std::io::Result<Running> {
    let open = |url: &StoreUrl| {
        url.open_copyable(true)
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    let eval_store = open(url)?;
    let send_store = open(url)?;
    let rules = Arc::new(rules);
    let stop = Arc::new(AtomicBool::new(false));
    let (wake, woken) = mpsc::channel::<()>();
    let evaluator = {
        let (rules, stop, log) = (Arc::clone(&rules), Arc::clone(&stop), Arc::clone(&log));
        std::thread::Builder::new()
            .name("alerts-evaluate".to_owned())
            .spawn(move || evaluate_loop(&rules, eval_store, &stop, &wake, &log))?
    };
    let sender = {
        let (rules, stop, log) = (Arc::clone(&rules), Arc::clone(&stop), Arc::clone(&log));
        std::thread::Builder::new()
            .name("alerts-deliver".to_owned())
            .spawn(move || deliver_loop(&rules, send_store, &stop, &woken, &log))?
    };
    Ok(Running {
        stop,
        threads: vec![evaluator, sender],
        rules,
        url: url.clone(),
        log,
    })
}

/// Said once while the store fails, and once when it works again.
struct Health {
    what: &'static str,
    failing: Mutex<bool>,
}

impl Health {
    fn new(what: &'static str) -> Self {
        Health {
            what,
            failing: Mutex::new(false),
        }
    }

    fn report<T>(&self, log: &Log, r: agentshape_store::Result<T>) -> Option<T> {
        let mut failing = self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match r {
            Ok(v) => {
                if *failing {
                    log(&format!(
                        "agentshape: alerts: the store works again ({})",
                        self.what
                    ));
                    *failing = false;
                }
                Some(v)
            }
            Err(e) => {
                if !*failing {
                    log(&format!(
                        "agentshape: alerts: {} failed, will try again: {e}",
                        self.what
                    ));
                    *failing = true;
                }
                None
            }
        }
    }
}

/// Sleep `ms`, waking early to stop.
fn nap(stop: &AtomicBool, ms: i64) {
    let mut left = u64::try_from(ms.max(0)).unwrap_or(0);
    while left > 0 && !stop.load(Ordering::Relaxed) {
        let slice = left.min(50);
        std::thread::sleep(Duration::from_millis(slice));
        left -= slice;
    }
}

/// One evaluation of every rule at `now_ms`: the new firings' ids.
///
/// # Errors
/// The first store failure (the rules before it have been stored).
pub fn evaluate_once(
    rules: &RuleSet,
    store: &mut dyn Copyable,
    now_ms: i64,
    memo: &mut stored::Memo,
) -> agentshape_store::Result<Vec<i64>> {
    let mut fired = Vec::new();
    for rule in &rules.rules {
        let last = stored::last_event_ms(store.copy_rows(), &rule.name)?
            .map(|event_at_ms| LastFiring { event_at_ms });
        // Events before the last firing's cooldown ends can no longer fire:
        // they are not read (each condition reads at most a bounded number
        // of events, oldest first, which must be the ones that can).
        let since = last.map_or(i64::MIN, |l| l.event_at_ms.saturating_add(rule.cooldown_ms));
        let since = since.max(now_ms.saturating_sub(rule.lookback_ms));
        let facts = stored::facts_with(store.copy_rows(), &rule.condition, now_ms, since, memo)?;
        if facts.is_empty() {
            continue;
        }
        let firings = evaluate(rule, &facts, last, now_ms);
        if firings.is_empty() {
            continue;
        }
        let dests: Vec<(String, String)> = rule
            .destination_ids()
            .into_iter()
            .zip(
                rule.destinations
                    .iter()
                    .map(agentshape_core::alerts::Destination::target),
            )
            .collect();
        for f in &firings {
            if let Some(id) = stored::record(store, f, now_ms, &dests)? {
                fired.push(id);
            }
        }
    }
    Ok(fired)
}

fn evaluate_loop(
    rules: &RuleSet,
    mut store: Box<dyn Copyable>,
    stop: &AtomicBool,
    wake: &mpsc::Sender<()>,
    log: &Log,
) {
    let health = Health::new("evaluating the alert rules");
    let mut memo = stored::Memo::default();
    while !stop.load(Ordering::Relaxed) {
        let now = time::now_ms();
        if let Some(ids) = health.report(log, evaluate_once(rules, &mut *store, now, &mut memo))
            && !ids.is_empty()
        {
            let _ = wake.send(());
        }
        nap(stop, rules.settings.interval_ms);
    }
}

/// One pass over the deliveries due at `now_ms`: how many were tried.
///
/// # Errors
/// The first store failure.
pub fn deliver_once(
    rules: &RuleSet,
    store: &mut dyn Copyable,
    client: &send::Client,
    log: &Log,
) -> agentshape_store::Result<usize> {
    let now = time::now_ms();
    let due = stored::due(store.copy_rows(), now, DELIVERIES_PER_PASS)?;
    let s = &rules.settings;
    let mut tried = 0;
    for d in &due {
        let target = rules
            .rule(&d.payload.rule)
            .and_then(|r| r.destination(&d.destination));
        let deadline = time::now_ms() + s.timeout_ms + 5_000;
        if !stored::claim(store, d, deadline)? {
            continue;
        }
        tried += 1;
        let attempt = d.attempts.saturating_add(1);
        let result = match target {
            Some(dest) => deliver(client, dest, &d.payload, s.timeout_ms, log),
            None => Err(format!(
                "the rules file has no destination `{}` in rule `{}` any more",
                d.destination, d.payload.rule
            )),
        };
        let outcome = match result {
            Ok(()) => Attempt::Delivered,
            Err(error) if target.is_none() || attempt >= s.attempts => {
                log(&format!(
                    "agentshape: alert `{}` (#{}): {} {} failed after {attempt} attempt{}: {error}",
                    d.payload.rule,
                    d.payload.id,
                    d.destination,
                    target
                        .map(agentshape_core::alerts::Destination::target)
                        .unwrap_or_default(),
                    if attempt == 1 { "" } else { "s" }
                ));
                Attempt::Failed { error }
            }
            Err(error) => Attempt::Retry {
                error,
                next_at_ms: time::now_ms() + retry_delay_ms(s, attempt),
            },
        };
        stored::settle(
            store,
            d.payload.id,
            &d.destination,
            &outcome,
            time::now_ms(),
        )?;
    }
    Ok(tried)
}

fn deliver_loop(
    rules: &RuleSet,
    mut store: Box<dyn Copyable>,
    stop: &AtomicBool,
    woken: &mpsc::Receiver<()>,
    log: &Log,
) {
    let health = Health::new("delivering alerts");
    let client = send::Client::new(rules.settings.timeout_ms);
    // Short enough that a retry's backoff (tests use milliseconds) is kept
    // close to, long enough to cost nothing.
    let idle = rules
        .settings
        .interval_ms
        .min(rules.settings.backoff_ms)
        .clamp(10, 1_000);
    while !stop.load(Ordering::Relaxed) {
        let tried = health
            .report(log, deliver_once(rules, &mut *store, &client, log))
            .unwrap_or(0);
        if tried == 0 {
            let _ = woken.recv_timeout(Duration::from_millis(u64::try_from(idle).unwrap_or(100)));
        }
    }
}
