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
//! - the delivery loop, woken by the evaluator, by a finished attempt or
//!   every `interval`, takes the due deliveries from the store (the store
//!   is the queue: bounded by the attempts a delivery gets, and what a
//!   restart resumes), claims each (Note \[Alert state in the store\]),
//!   hands it to its destination's worker, which tries it once within
//!   `timeout`, and records the outcome: delivered; or failed, retried
//!   after `backoff` doubled per attempt (at most `max_backoff`) until
//!   `attempts` are spent, then failed for good with its last error.
//!
//! Note \[One worker per destination\]: a destination (a rule's webhook,
//! command or log line) has one worker thread and at most one attempt
//! under way, and the loop asks the store only for deliveries of idle
//! destinations (`due_except`). So a webhook that takes its whole
//! `timeout` to fail holds back its own deliveries, never another
//! destination's; at most [`MAX_WORKERS`] destinations are tried at once.
//! Nothing is queued in memory and nothing is dropped: a delivery whose
//! destination is busy stays due in the store and is taken when the
//! worker is free (a claim is made only when the attempt starts, so its
//! deadline holds).
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

/// The most destinations tried at the same time (Note \[One worker per
/// destination\]).
pub const MAX_WORKERS: usize = 16;

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
    let (wake, woken) = mpsc::channel::<Event>();
    let wake_done = wake.clone();
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
            .spawn(move || deliver_loop(&rules, send_store, &stop, &woken, &wake_done, &log))?
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
    wake: &mpsc::Sender<Event>,
    log: &Log,
) {
    let health = Health::new("evaluating the alert rules");
    let mut memo = stored::Memo::default();
    while !stop.load(Ordering::Relaxed) {
        let now = time::now_ms();
        if let Some(ids) = health.report(log, evaluate_once(rules, &mut *store, now, &mut memo))
            && !ids.is_empty()
        {
            let _ = wake.send(Event::Fired);
        }
        nap(stop, rules.settings.interval_ms);
    }
}

/// One pass over the deliveries due at `now_ms`, one after the other on
/// this thread (`ops --once`'s last pass, and tests): how many were tried.
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
        let result = match target {
            Some(dest) => deliver(client, dest, &d.payload, s.timeout_ms, log),
            None => Err(format!(
                "the rules file has no destination `{}` in rule `{}` any more",
                d.destination, d.payload.rule
            )),
        };
        let outcome = outcome(rules, d, result, log);
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

/// What an attempt at `d` that ended with `result` means for the store:
/// delivered, retried later, or failed for good (said on the log).
fn outcome(rules: &RuleSet, d: &stored::Due, result: Result<(), String>, log: &Log) -> Attempt {
    let s = &rules.settings;
    let target = rules
        .rule(&d.payload.rule)
        .and_then(|r| r.destination(&d.destination));
    let attempt = d.attempts.saturating_add(1);
    match result {
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
    }
}

/// What wakes the delivery loop.
enum Event {
    /// The evaluator stored new firings.
    Fired,
    /// A worker finished an attempt.
    Done(Box<Finished>),
}

/// One attempt a worker finished, for the loop to record.
struct Finished {
    due: stored::Due,
    result: Result<(), String>,
}

/// A destination: its rule's name and its id within the rule.
type DestKey = (String, String);

/// The workers of Note \[One worker per destination\]: one thread per
/// destination seen, started at its first delivery, each with its own
/// client; `busy` holds the destinations with an attempt under way.
struct Workers {
    rules: Arc<RuleSet>,
    log: Log,
    done: mpsc::Sender<Event>,
    senders: std::collections::HashMap<DestKey, mpsc::Sender<stored::Due>>,
    threads: Vec<JoinHandle<()>>,
    busy: std::collections::HashSet<DestKey>,
}

impl Workers {
    fn new(rules: Arc<RuleSet>, log: Log, done: mpsc::Sender<Event>) -> Self {
        Workers {
            rules,
            log,
            done,
            senders: std::collections::HashMap::new(),
            threads: Vec::new(),
            busy: std::collections::HashSet::new(),
        }
    }

    fn busy(&self) -> Vec<DestKey> {
        self.busy.iter().cloned().collect()
    }

    /// Hand `d` to its destination's worker; false when it could not be
    /// started (the claim then lapses and the delivery is due again).
    fn start(&mut self, key: DestKey, d: stored::Due) -> bool {
        if !self.senders.contains_key(&key) {
            let (tx, rx) = mpsc::channel::<stored::Due>();
            let (rules, log, done) = (
                Arc::clone(&self.rules),
                Arc::clone(&self.log),
                self.done.clone(),
            );
            let Ok(t) = std::thread::Builder::new()
                .name("alerts-worker".to_owned())
                .spawn(move || work(&rules, &rx, &done, &log))
            else {
                return false;
            };
            self.threads.push(t);
            self.senders.insert(key.clone(), tx);
        }
        let sent = self.senders.get(&key).is_some_and(|tx| tx.send(d).is_ok());
        if sent {
            self.busy.insert(key);
        }
        sent
    }

    fn finished(&mut self, due: &stored::Due) {
        self.busy
            .remove(&(due.payload.rule.clone(), due.destination.clone()));
    }

    /// Let every worker finish its attempt and end.
    fn close(&mut self) {
        self.senders.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A worker's life: one attempt at a time, each reported to the loop.
fn work(
    rules: &RuleSet,
    jobs: &mpsc::Receiver<stored::Due>,
    done: &mpsc::Sender<Event>,
    log: &Log,
) {
    let client = send::Client::new(rules.settings.timeout_ms);
    for due in jobs {
        let target = rules
            .rule(&due.payload.rule)
            .and_then(|r| r.destination(&due.destination));
        let result = match target {
            Some(dest) => deliver(&client, dest, &due.payload, rules.settings.timeout_ms, log),
            None => Err(format!(
                "the rules file has no destination `{}` in rule `{}` any more",
                due.destination, due.payload.rule
            )),
        };
        if done
            .send(Event::Done(Box::new(Finished { due, result })))
            .is_err()
        {
            return;
        }
    }
}

/// Hand the due deliveries of idle destinations to their workers: how
/// many were started.
fn dispatch(
    rules: &RuleSet,
    store: &mut dyn Copyable,
    workers: &mut Workers,
) -> agentshape_store::Result<usize> {
    let busy = workers.busy();
    if busy.len() >= MAX_WORKERS {
        return Ok(0);
    }
    let due = stored::due_except(
        store.copy_rows(),
        time::now_ms(),
        DELIVERIES_PER_PASS,
        &busy,
    )?;
    let mut started = 0;
    for d in due {
        let key = (d.payload.rule.clone(), d.destination.clone());
        if workers.busy.contains(&key) {
            continue;
        }
        if workers.busy.len() >= MAX_WORKERS {
            break;
        }
        let deadline = time::now_ms() + rules.settings.timeout_ms + 5_000;
        if !stored::claim(store, &d, deadline)? {
            continue;
        }
        if workers.start(key, d) {
            started += 1;
        }
    }
    Ok(started)
}

/// Record a finished attempt in the store.
fn record(
    rules: &RuleSet,
    store: &mut dyn Copyable,
    f: Finished,
    log: &Log,
) -> agentshape_store::Result<()> {
    let outcome = outcome(rules, &f.due, f.result, log);
    stored::settle(
        store,
        f.due.payload.id,
        &f.due.destination,
        &outcome,
        time::now_ms(),
    )
}

fn deliver_loop(
    rules: &Arc<RuleSet>,
    mut store: Box<dyn Copyable>,
    stop: &AtomicBool,
    events: &mpsc::Receiver<Event>,
    done: &mpsc::Sender<Event>,
    log: &Log,
) {
    let health = Health::new("delivering alerts");
    let mut workers = Workers::new(Arc::clone(rules), Arc::clone(log), done.clone());
    // Short enough that a retry's backoff (tests use milliseconds) is kept
    // close to, long enough to cost nothing.
    let idle = rules
        .settings
        .interval_ms
        .min(rules.settings.backoff_ms)
        .clamp(10, 1_000);
    let idle = Duration::from_millis(u64::try_from(idle).unwrap_or(100));
    let handle = |event: Event, workers: &mut Workers, store: &mut dyn Copyable| {
        if let Event::Done(f) = event {
            workers.finished(&f.due);
            health.report(log, record(rules, store, *f, log));
        }
    };
    while !stop.load(Ordering::Relaxed) {
        while let Ok(event) = events.try_recv() {
            handle(event, &mut workers, &mut *store);
        }
        let started = health
            .report(log, dispatch(rules, &mut *store, &mut workers))
            .unwrap_or(0);
        if started == 0 || workers.busy.len() >= MAX_WORKERS {
            if let Ok(event) = events.recv_timeout(idle) {
                handle(event, &mut workers, &mut *store);
            }
        }
    }
    // The attempts under way finish (within their timeout) and are recorded.
    workers.close();
    while let Ok(event) = events.try_recv() {
        handle(event, &mut workers, &mut *store);
    }
}
