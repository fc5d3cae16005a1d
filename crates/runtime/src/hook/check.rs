//! `hook stop` and `hook subagent-stop`: the verdict on a turn's final
//! message, the block count from the store, and the answer, within the
//! hook's budget.
//!
//! Note \[A hook never breaks the session\]: Claude Code waits for a hook
//! before it ends the turn, and a hook that fails or hangs is in the
//! user's way, so every failure here becomes an allowed stop (exit 0, no
//! stdout) with a one-line warning on stderr: hook input that is not JSON,
//! a profile that cannot be loaded, a session file that cannot be read, a
//! store that is locked or down. The answer never waits on the store for
//! long: the store is opened, drained of spooled calls and asked for the
//! block count on a thread of its own; the verdict waits for the count at
//! most [`CHAIN_WAIT`], and the row at most until the budget ends
//! ([`BUDGET`]); a row not written by then goes to the spool (Note \[The
//! hook's spool\]) and the process exits. Without the count (no store, or
//! too slow) the hook blocks only when `stop_hook_active` is false, i.e.
//! at most once in a row: it cannot know more, and must not loop.
//!
//! Note \[Blocks in a row\]: `--max-blocks` counts the blocks of one stop
//! chain: the calls for one session (and, for `SubagentStop`, one
//! sub-agent) in one turn, since the last one let through with a verdict
//! (the store's Note \[Hook chains\]). A call with `stop_hook_active` false
//! is a new turn's first try (Claude Code sets it only while a stop hook
//! keeps the turn going), so its count starts at nothing whatever the
//! store holds: a session of many turns gets `max_blocks` tries at each
//! turn, not in all. When the chain already holds `max_blocks` blocks, or
//! `stop_hook_active` has been true that many times, the stop is allowed
//! and the call recorded `gave_up`, and a `Stop` marks the session
//! invalid; later tries of that turn (sent back by another hook) are let
//! go too, with the same count, until a new turn (issue 40).

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use agentshape_core::Extraction;
use agentshape_core::extract::{ExtractOptions, extract_text};
use agentshape_core::hook::{BlockContext, HookInput, block_reason};
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use agentshape_store::{FeedEntry, HookCall, HookChain, Store, time};
use serde_json::json;

use super::HookError;
use super::spool::{Pushed, Spool};
use super::transcript;

/// The whole budget of one hook call, from the process start: Claude Code
/// users should never wait on it (the bound is 2 s).
pub const BUDGET: Duration = Duration::from_millis(1700);

/// How long the verdict waits for the store's block count.
pub const CHAIN_WAIT: Duration = Duration::from_millis(900);

/// The most bytes of the message kept in the store.
pub const MAX_STORED_MESSAGE: usize = 64 << 10;

/// What a message is judged against: a profile, a schema, or (neither)
/// "any JSON value".
pub struct Judge {
    /// Stored in the row's `profile`: the profile's name or path, or the schema's path.
    pub label: String,
    /// For the model: `the schema of profile claude-ops`.
    pub against: String,
    /// The compiled schema.
    pub validator: Option<Validator>,
    /// The profile (markers, methods, coercion).
    pub profile: Option<Profile>,
}

impl Judge {
    fn options(&self) -> ExtractOptions<'_> {
        let p = self.profile.as_ref();
        ExtractOptions {
            validator: self.validator.as_ref(),
            markers: p.and_then(Profile::grammar),
            coerce: p.is_some_and(|p| p.coerce),
            methods: p.map(|p| p.methods).unwrap_or_default(),
        }
    }
}

/// How `hook stop` / `hook subagent-stop` judge.
pub struct CheckOptions {
    /// `SubagentStop` (the sub-agent's file, `--profile-for`).
    pub subagent: bool,
    /// `--profile`/`--schema`; `Err` says why it could not be loaded.
    pub default: Result<Judge, HookError>,
    /// `--profile-for TYPE=PROFILE`, each loaded or why not.
    pub by_type: Vec<(String, Result<Judge, HookError>)>,
    /// Sub-agent types not in `by_type` are judged by `default` (false when
    /// only `--profile-for` was given: they are then allowed unchecked).
    pub other_types: bool,
    /// `--max-blocks`.
    pub max_blocks: u32,
    /// When the process started (the budget counts from there).
    pub started: Instant,
}

/// Opens the store, on the store thread.
pub type OpenStore = Box<dyn FnOnce() -> std::result::Result<Box<dyn Store>, HookError> + Send>;

/// Whether the call's row reached the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// Written.
    Yes,
    /// Kept in the spool for the next call.
    Spooled,
    /// Not kept (no session id, or the spool failed too).
    No,
}

/// What the hook answers.
#[derive(Debug)]
pub struct Answer {
    /// The one JSON value for stdout (`{"decision":"block",…}`); `None` allows.
    pub stdout: Option<String>,
    /// One line each, for stderr.
    pub warnings: Vec<String>,
    /// The row recorded (or spooled), when there was a session to link it to.
    pub call: Option<HookCall>,
    /// Where the row went.
    pub stored: Stored,
    /// The store thread's work after the answer (Note \[Draining after the answer\]).
    pub settle: Settle,
}

/// Note \[Draining after the answer\]: the drain before the block count is
/// short (it delays the verdict), so a backlog (50 hooks at once on a
/// fresh store, issue 40) could outlast many calls. Once the call's own row
/// is written, the store thread goes on draining until the budget ends;
/// the caller prints the answer first, then [`Settle::wait`]s for that at
/// most until the budget's end, so the answer never waits on it and the
/// process still ends within the budget.
#[derive(Debug, Default)]
pub struct Settle(Option<(mpsc::Receiver<()>, Instant)>);

impl Settle {
    /// Wait for the drain after the answer, at most until the budget ends.
    pub fn wait(self) {
        if let Some((drained, until)) = self.0 {
            let _ = drained.recv_timeout(until.saturating_duration_since(Instant::now()));
        }
    }
}

/// The store's side of one call, on its own thread.
struct StoreSide {
    chain: mpsc::Receiver<std::result::Result<HookChain, HookError>>,
    call: mpsc::Sender<(HookCall, Vec<FeedEntry>)>,
    done: mpsc::Receiver<std::result::Result<(), HookError>>,
    drained: mpsc::Receiver<()>,
    /// The call's spooled line, when the wait for the row ended first:
    /// whichever side sees the row written marks it, under this lock.
    spooled: Arc<Mutex<Option<Pushed>>>,
}

impl StoreSide {
    fn start(
        open: OpenStore,
        spool: Option<Spool>,
        session: String,
        agent: Option<String>,
        drain_until: Instant,
        budget_end: Instant,
    ) -> StoreSide {
        let (chain_tx, chain) = mpsc::channel();
        let (call, call_rx) = mpsc::channel::<(HookCall, Vec<FeedEntry>)>();
        let (done_tx, done) = mpsc::channel();
        let (drained_tx, drained) = mpsc::channel();
        let spooled = Arc::new(Mutex::new(None::<Pushed>));
        let slot = Arc::clone(&spooled);
        std::thread::spawn(move || {
            let mut store = match open() {
                Ok(s) => s,
                Err(e) => {
                    let _ = chain_tx.send(Err(e));
                    return;
                }
            };
            if let Some(s) = &spool {
                // Before the count, so spooled blocks count too.
                let _ = s.drain(&mut *store, drain_until);
            }
            let _ = chain_tx.send(
                store
                    .hook_chain(&session, agent.as_deref())
                    .map_err(HookError::Store),
            );
            if let Ok((c, feed)) = call_rx.recv() {
                let saved = store.save_hook(&c, &feed).map(|_| ());
                let ok = saved.is_ok();
                {
                    let slot = slot.lock();
                    let _ = done_tx.send(saved.map_err(HookError::Store));
                    // Spooled while this commit ran: mark it, not twice.
                    if let (true, Ok(mut slot)) = (ok, slot)
                        && let Some(p) = slot.take()
                    {
                        let _ = p.mark_written();
                    }
                }
                // Note [Draining after the answer].
                if let (true, Some(s)) = (ok, &spool) {
                    let _ = s.drain(&mut *store, budget_end);
                }
            }
            let _ = drained_tx.send(());
        });
        StoreSide {
            chain,
            call,
            done,
            drained,
            spooled,
        }
    }
}

fn until(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// `text` cut to at most `max` bytes at a char boundary.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Judge one hook input and answer (Note \[A hook never breaks the
/// session\]). `open` opens the store on the store thread; `spool` keeps
/// what it cannot take in time.
pub fn check(input: &[u8], opts: &CheckOptions, open: OpenStore, spool: Option<&Spool>) -> Answer {
    let mut warnings = Vec::new();
    let input = match HookInput::parse(input) {
        Ok(i) => i,
        Err(e) => {
            return Answer {
                stdout: None,
                warnings: vec![format!("{e}; allowing the stop")],
                call: None,
                stored: Stored::No,
                settle: Settle::default(),
            };
        }
    };
    if !input.ignored.is_empty() {
        warnings.push(format!(
            "hook input fields of an unexpected type ignored: {}",
            input.ignored.join(", ")
        ));
    }
    let event = if opts.subagent {
        "SubagentStop"
    } else {
        "Stop"
    };
    let agent = if opts.subagent {
        input.agent_id.clone()
    } else {
        None
    };
    let side = input.session_id.clone().map(|s| {
        StoreSide::start(
            open,
            spool.cloned(),
            s,
            agent.clone(),
            opts.started + CHAIN_WAIT / 2,
            opts.started + BUDGET,
        )
    });
    if input.session_id.is_none() {
        warnings.push("hook input has no session_id: nothing is recorded".to_owned());
    }
    let mut call = HookCall {
        session_id: input.session_id.clone().unwrap_or_default(),
        agent_id: agent.clone(),
        agent_type: if opts.subagent {
            input.agent_type.clone()
        } else {
            None
        },
        event: event.to_owned(),
        verdict: "allowed".to_owned(),
        method: None,
        errors: None,
        blocks: 0,
        stop_hook_active: input.stop_hook_active,
        profile: None,
        reason: None,
        message: None,
        warning: None,
        created_at: time::now(),
        project: input.cwd.clone(),
        transcript_path: input.transcript_path.clone(),
        output: None,
    };
    let mut stdout = None;
    match judge_of(opts, &input) {
        Err(why) => {
            warnings.push(format!("{why}; allowing the stop"));
        }
        Ok(None) => {}
        Ok(Some(judge)) => {
            call.profile = Some(judge.label.clone());
            match message_of(&input, opts.subagent) {
                Err(why) => warnings.push(format!("{why}; allowing the stop")),
                Ok((message, from_file)) => {
                    if from_file {
                        call.warning = Some(
                            "no last_assistant_message: read the session file (it may lag behind)"
                                .to_owned(),
                        );
                    }
                    let extraction = extract_text(&message, &judge.options());
                    call.method = Some(extraction.method.as_str().to_owned());
                    call.message = Some(cut(&message, MAX_STORED_MESSAGE));
                    if extraction.valid {
                        "valid".clone_into(&mut call.verdict);
                        call.output = extraction.value;
                    } else {
                        call.errors = serde_json::to_value(&extraction.errors).ok();
                        let chain = side.as_ref().map(|s| {
                            s.chain
                                .recv_timeout(until(opts.started + CHAIN_WAIT))
                                .map_err(|_| HookError::Timeout)
                                .and_then(|r| r)
                        });
                        stdout = decide(
                            &mut call,
                            &mut warnings,
                            chain,
                            opts.max_blocks,
                            judge,
                            &extraction,
                            message.trim().is_empty(),
                        );
                        call.output = extraction.value;
                    }
                }
            }
        }
    }
    if let Some(w) = warnings.first() {
        call.warning.get_or_insert_with(|| w.clone());
    }
    let (stored, settle) = match side {
        None => (Stored::No, Settle::default()),
        Some(side) => {
            let stored = record(&side, &call, spool, opts.started, &mut warnings);
            let settle = match stored {
                Stored::Yes => Settle(Some((side.drained, opts.started + BUDGET))),
                _ => Settle::default(),
            };
            (stored, settle)
        }
    };
    Answer {
        stdout,
        warnings,
        call: input.session_id.is_some().then_some(call),
        stored,
        settle,
    }
}

/// The judge for this input: `Ok(None)` when this sub-agent type has none
/// (allowed without a check, not a failure).
fn judge_of<'a>(
    opts: &'a CheckOptions,
    input: &HookInput,
) -> Result<Option<&'a Judge>, &'a HookError> {
    if opts.subagent {
        if let Some(t) = input.agent_type.as_deref() {
            if let Some((_, j)) = opts.by_type.iter().find(|(k, _)| k == t) {
                return j.as_ref().map(Some);
            }
        }
        if !opts.other_types {
            return Ok(None);
        }
    }
    opts.default.as_ref().map(Some)
}

/// The message to judge, and whether it came from the session file.
fn message_of(input: &HookInput, subagent: bool) -> Result<(String, bool), HookError> {
    if let Some(m) = &input.last_assistant_message {
        return Ok((m.clone(), false));
    }
    let (path, keep_sidechain) = match (subagent, &input.agent_transcript_path) {
        (true, Some(p)) => (p, true),
        _ => match &input.transcript_path {
            Some(p) => (p, false),
            None => return Err(HookError::NoMessage),
        },
    };
    let path = expand_home(path);
    match transcript::last_message(&path, keep_sidechain) {
        Ok(Some(m)) => Ok((m, true)),
        Ok(None) => Err(HookError::NoAssistantText { path }),
        Err(e) => Err(HookError::Transcript(e)),
    }
}

/// `~/…` as Claude Code may write it.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

/// Block or give up (Note \[Blocks in a row\]); the stdout of a block.
#[allow(clippy::too_many_arguments)]
fn decide(
    call: &mut HookCall,
    warnings: &mut Vec<String>,
    chain: Option<Result<HookChain, HookError>>,
    max_blocks: u32,
    judge: &Judge,
    extraction: &Extraction,
    empty: bool,
) -> Option<String> {
    let active = u32::from(call.stop_hook_active);
    let (so_far, give_up) = match chain {
        // A new turn: what the store holds is the last turn's chain.
        Some(Ok(_)) if !call.stop_hook_active => (0, max_blocks == 0),
        Some(Ok(c)) => {
            let so_far = c.blocks.max(active);
            (
                so_far,
                so_far >= max_blocks || c.active + active >= max_blocks,
            )
        }
        Some(Err(e)) => {
            warnings.push(format!(
                "store unavailable ({e}): blocks in a row unknown, blocking only when stop_hook_active is false"
            ));
            (active, active > 0 || max_blocks == 0)
        }
        None => (active, active > 0 || max_blocks == 0),
    };
    if give_up {
        "gave_up".clone_into(&mut call.verdict);
        call.blocks = so_far;
        return None;
    }
    "blocked".clone_into(&mut call.verdict);
    call.blocks = so_far + 1;
    let reason = block_reason(&BlockContext {
        extraction,
        against: &judge.against,
        schema: judge.validator.as_ref().map(Validator::schema),
        empty,
        block: so_far,
        max_blocks,
    });
    call.reason = Some(reason.clone());
    Some(json!({"decision": "block", "reason": reason}).to_string())
}

/// Hand the row to the store thread and wait for it until the budget ends;
/// else spool it.
fn record(
    side: &StoreSide,
    call: &HookCall,
    spool: Option<&Spool>,
    started: Instant,
    warnings: &mut Vec<String>,
) -> Stored {
    let deadline = started + BUDGET;
    let why = if side.call.send((call.clone(), Vec::new())).is_err() {
        // The thread ended: the store could not be opened. Its error is in the chain.
        match side.chain.try_recv() {
            Ok(Err(e)) => e,
            _ => HookError::Closed,
        }
    } else {
        match side.done.recv_timeout(until(deadline)) {
            Ok(Ok(())) => return Stored::Yes,
            Ok(Err(e)) => e,
            Err(_) => HookError::Timeout,
        }
    };
    let Some(s) = spool else {
        warnings.push(format!("{why}: the call was not recorded"));
        return Stored::No;
    };
    match s.push(call, &[]) {
        Ok(pushed) => {
            // The store may take the call after the wait ended after all:
            // its line is then marked written, here or by the store thread.
            let Ok(mut slot) = side.spooled.lock() else {
                return Stored::Spooled;
            };
            if matches!(side.done.try_recv(), Ok(Ok(()))) && pushed.mark_written().is_ok() {
                return Stored::Yes;
            }
            *slot = Some(pushed);
            drop(slot);
            warnings.push(format!(
                "{why}: the call was kept in {} for the next hook",
                s.path().display()
            ));
            Stored::Spooled
        }
        Err(e) => {
            warnings.push(format!("{why}; and not kept: {e}"));
            Stored::No
        }
    }
}
