//! One agent session, end to end: stream → forensic log → decode → live hub
//! → extract + validate → session record → store.
//!
//! Note \[Session status\]: a session ends as exactly one of
//! - `completed`: the agent wrote a result that is not an error (the
//!   extraction's validity is reported separately);
//! - `error`: the result said `is_error` (api, rate limit, auth, max turns...);
//! - `failed`: no result before the stream ended: the agent crashed, was
//!   killed, or exited without finishing; what it printed is kept;
//! - `timeout`: the timeout expired and the process group was killed;
//! - `not_found`: the executable does not exist;
//! - `interrupted`: agentshape got SIGINT, SIGTERM or SIGHUP while the agent
//!   ran, passed it on to the agent's group and ended the session
//!   (`process`'s Note \[Interrupts\]). It wins over what the agent printed:
//!   the person or supervisor stopped the work, so even a result seen before
//!   the signal teaches the store nothing (`ingest` of the log can still
//!   judge it). `error` names the signal (`interrupted by SIGTERM`) and
//!   `error_category` is null: an interruption is a decision of whoever ran
//!   agentshape, not a failure of the agent or provider, and DESIGN's
//!   categories are about those. A signal that comes after the agent has
//!   exited changes nothing here (the CLI still exits `128 + N`).
//!
//! Events, memories and services are stored only for `completed` sessions: a
//! half-written answer must not teach the store anything. The session row,
//! its extraction method and the forensic log are kept for every status.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentshape_core::decode::{DecodeOptions, Decoder, Format};
use agentshape_core::extract::{ExtractOptions, MarkerGrammar, Methods, extract_run};
use agentshape_core::summary::SummaryBuilder;
use agentshape_core::validate::Validator;
use agentshape_core::{Extraction, Method, RunSummary};
use agentshape_store::{
    NewEvent, NewMemory, ServiceCheck, Session, Status, Store, Verdict, WriteReport, count, time,
};
use serde_json::{Value, json};

use crate::error::Result;
use crate::feed::{FeedOptions, FeedQueue, FeedStats};
use crate::forensic::{ForensicLog, SessionMeta};
use crate::hub::{Hub, HubBody};
use crate::partial::PartialTracker;
use crate::process::{self, Ending, LineSink, ProcessOptions, Source};
use crate::record::{self, Extracted, said};

/// Which agent CLI is run; decides the decoder and the flags added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    /// Claude Code: `--output-format stream-json --verbose --json-schema <schema>` are added.
    Claude,
    /// Codex CLI: `--json` is added.
    Codex,
    /// Any program printing a transcript; the format is detected.
    Raw,
    /// A recorded transcript replayed.
    Replay,
    /// `agentshape ask --provider local` as the agent: its stdout is the
    /// value, read as plain text (ops tiers: Note \[Local tiers\] in `ops`).
    Local,
}

impl AgentKind {
    /// The name stored in `sessions.agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Raw => "raw",
            AgentKind::Replay => "replay",
            AgentKind::Local => "local",
        }
    }

    /// Parse a stored name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "claude" => AgentKind::Claude,
            "codex" => AgentKind::Codex,
            "raw" => AgentKind::Raw,
            "replay" => AgentKind::Replay,
            "local" => AgentKind::Local,
            _ => return None,
        })
    }

    /// The decoder format of its transcript.
    pub(crate) fn format(self) -> Format {
        match self {
            AgentKind::Claude => Format::Claude,
            AgentKind::Codex => Format::Codex,
            AgentKind::Raw | AgentKind::Replay => Format::Auto,
            AgentKind::Local => Format::Text,
        }
    }
}

/// Add the flags an agent needs to stream structured output, unless the
/// caller already gave them.
///
/// Claude gets `--output-format stream-json`, `--verbose` and (with a schema)
/// `--json-schema <schema as compact JSON>`; with `partial`,
/// `--include-partial-messages`. Codex gets `--json`.
pub fn agent_args(
    kind: AgentKind,
    args: &[String],
    schema: Option<&Value>,
    partial: bool,
) -> Vec<String> {
    let mut out = args.to_vec();
    let has = |flag: &str| {
        args.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    match kind {
        AgentKind::Claude => {
            if !has("--output-format") {
                out.extend(["--output-format".to_owned(), "stream-json".to_owned()]);
            }
            if !has("--verbose") {
                out.push("--verbose".to_owned());
            }
            if let Some(schema) = schema {
                if !has("--json-schema") {
                    out.extend(["--json-schema".to_owned(), schema.to_string()]);
                }
            }
            if partial && !has("--include-partial-messages") {
                out.push("--include-partial-messages".to_owned());
            }
        }
        AgentKind::Codex => {
            if !has("--json") {
                out.push("--json".to_owned());
            }
        }
        AgentKind::Raw | AgentKind::Replay | AgentKind::Local => {}
    }
    out
}

/// A new session id (random UUID v4).
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Everything needed to run one session.
#[derive(Debug)]
pub struct SessionSpec<'a> {
    /// Session id (names the forensic log).
    pub id: String,
    /// Parent session (escalation).
    pub parent_id: Option<String>,
    /// Tier.
    pub tier: u32,
    /// Profile name, recorded.
    pub profile: Option<String>,
    /// Schema to validate with.
    pub validator: Option<&'a Validator>,
    /// Legacy marker grammar.
    pub markers: Option<MarkerGrammar<'a>>,
    /// The extraction methods allowed (the profile's `[extract] methods`).
    pub methods: Methods,
    /// Schema-aligned coercion (the profile's `coerce`).
    pub coerce: bool,
    /// Agent kind.
    pub agent: AgentKind,
    /// Configured model (recorded when the agent does not report one).
    pub model: Option<String>,
    /// The stream's source (flags already added).
    pub source: Source,
    /// Directory of the forensic logs.
    pub log_dir: PathBuf,
    /// Overall timeout.
    pub timeout: Option<Duration>,
    /// Publish the growing structured object.
    pub partial: bool,
    /// The legacy handoff files to honour when structured output is absent
    /// (the profile's `handoff` names in the state directory); the first
    /// that holds a fresh value is used, every one is removed.
    pub handoff: Vec<PathBuf>,
    /// Services the parent escalated for.
    pub escalated_for: Vec<String>,
    /// Grace periods, the stderr cap and the interrupts to honour.
    pub process: ProcessOptions,
    /// Heartbeat and live-feed intervals and bounds, used with a store
    /// (Note \[Live feed\] in `feed`).
    pub feed: FeedOptions,
}

/// What a session produced.
#[derive(Debug)]
pub struct SessionOutcome {
    /// The record written (or that would be written without a store).
    pub record: Session,
    /// The extraction.
    pub extraction: Extraction,
    /// The store's report, when a store was given and the write succeeded.
    pub report: Option<WriteReport>,
    /// The final store write failed after its retries: the session is only
    /// in its forensic log. Callers show the outcome, then fail with this
    /// error ([`crate::Error::StoreWrite`], naming `agentshape ingest`), so
    /// a session is never dropped silently.
    pub store_error: Option<Box<crate::Error>>,
    /// The forensic log.
    pub log_path: PathBuf,
    /// The missing executable, for [`Ending::NotFound`].
    pub not_found: Option<String>,
    /// What the live feed got, when a store was given.
    pub feed: Option<FeedStats>,
}

struct Pipeline<'h> {
    log: ForensicLog,
    decoder: Decoder,
    builder: SummaryBuilder,
    hub: &'h Hub,
    id: String,
    partial: Option<PartialTracker>,
    events: Vec<agentshape_core::Event>,
    /// The store's live feed, when there is a store (Note \[Live feed\]).
    feed: Option<FeedQueue>,
}

impl LineSink for Pipeline<'_> {
    fn line(&mut self, line: &[u8]) -> Result<()> {
        // Note \[Write before decode\] in `forensic`.
        self.log.append(line)?;
        if let Some(p) = &mut self.partial {
            p.observe_line(line);
        }
        let mut events = std::mem::take(&mut self.events);
        self.decoder.feed(line, &mut |e| events.push(e));
        self.decoder.feed(b"\n", &mut |e| events.push(e));
        for e in events.drain(..) {
            self.publish(e);
        }
        self.events = events;
        Ok(())
    }

    fn part(&mut self, bytes: &[u8]) -> Result<()> {
        // Note \[Bounded lines\] in `process`: logged first, then decoded;
        // the decoder skips a line over its limit without holding it.
        self.log.append_part(bytes)?;
        let mut events = std::mem::take(&mut self.events);
        self.decoder.feed(bytes, &mut |e| events.push(e));
        for e in events.drain(..) {
            self.publish(e);
        }
        self.events = events;
        Ok(())
    }
}

impl Pipeline<'_> {
    fn publish(&mut self, e: agentshape_core::Event) {
        if let Some(p) = &mut self.partial {
            if let Some(snap) = p.feed(&e) {
                self.send(HubBody::Partial {
                    value: snap.value,
                    fields: snap.fields,
                });
            }
        }
        if self.hub.has_subscribers() || self.feed.is_some() {
            self.send(HubBody::Event { event: e.clone() });
        }
        self.builder.push(e);
    }

    /// To the live feed (queued) and the hub: the same body for both.
    fn send(&self, body: HubBody) {
        if let Some(f) = &self.feed {
            f.push(&body);
        }
        self.hub.publish(&self.id, body);
    }
}

/// Run one session; write it to `store` when given.
///
/// # Errors
/// I/O errors (the forensic log, spawning for reasons other than a missing
/// executable) and store errors. Agent failures are data: they are in the
/// outcome's status.
pub async fn run_session(
    spec: &SessionSpec<'_>,
    store: Option<&mut dyn Store>,
    hub: &Hub,
) -> Result<SessionOutcome> {
    let started_ms = time::now_ms();
    let started_at = time::format_ms(started_ms);
    let log = ForensicLog::create(&spec.log_dir, &spec.id)?;
    let log_path = log.path();
    let mut meta = SessionMeta {
        id: spec.id.clone(),
        parent_id: spec.parent_id.clone(),
        tier: spec.tier,
        profile: spec.profile.clone(),
        agent: Some(spec.agent.as_str().to_owned()),
        model: spec.model.clone(),
        command: match &spec.source {
            Source::Spawn(c) => std::iter::once(c.program.clone())
                .chain(c.args.iter().cloned())
                .collect(),
            Source::Replay { path, .. } => vec![path.display().to_string()],
        },
        started_at: started_at.clone(),
        status: "running".to_owned(),
        escalated_for: spec.escalated_for.clone(),
        log_path: Some(log_path.display().to_string()),
        ..SessionMeta::default()
    };
    log.write_meta(&meta)?;
    hub.publish(
        &spec.id,
        HubBody::Started {
            tier: spec.tier,
            parent_id: spec.parent_id.clone(),
        },
    );
    // Only a live agent has a stderr; created new and private like the log.
    let stderr = match &spec.source {
        Source::Spawn(_) => Some(log.create_stderr()?),
        Source::Replay { .. } => None,
    };
    let feed = store
        .is_some()
        .then(|| FeedQueue::new(&spec.id, spec.feed.clone()));
    let mut pipe = Pipeline {
        log,
        // With a store, tool results go to the live feed with their text
        // (cut to the feed's body cap) for the session page; the summary
        // ignores them, so `ingest`, which does not keep them, still
        // rebuilds the same record.
        decoder: Decoder::new(
            spec.agent.format(),
            DecodeOptions {
                keep_tool_results: feed.is_some(),
                ..DecodeOptions::default()
            },
        ),
        builder: SummaryBuilder::new(),
        hub,
        id: spec.id.clone(),
        partial: spec
            .partial
            .then(|| PartialTracker::new(spec.validator.map(Validator::schema))),
        events: Vec::new(),
        feed: feed.clone(),
    };
    let mut store = store;
    let store_arg = store
        .as_ref()
        .and_then(|s| s.location())
        .filter(|l| l != agentshape_store::DEFAULT_DB)
        .map(|l| format!(" --store {}", shell_word(&l)))
        .unwrap_or_default();
    let store_failed = |source| crate::Error::StoreWrite {
        id: spec.id.clone(),
        store_arg: store_arg.clone(),
        log: log_path.display().to_string(),
        source: Box::new(source),
    };
    if let Some(s) = store.as_mut() {
        // Visible from its start (Note \[Lost sessions\] in the store): a
        // run that cannot record its start stops before the agent runs.
        let mut running = Session::new(&spec.id, &started_at, "running");
        running.parent_id.clone_from(&spec.parent_id);
        running.tier = i64::from(spec.tier);
        running.profile.clone_from(&spec.profile);
        running.agent = Some(spec.agent.as_str().to_owned());
        running.model.clone_from(&spec.model);
        running.raw_log_path = Some(log_path.display().to_string());
        s.start_session(&running).map_err(store_failed)?;
    }
    let stream = process::stream(&spec.source, spec.timeout, &spec.process, stderr, &mut pipe);
    let streamed = match (store.as_mut(), &feed) {
        (Some(s), Some(feed)) => {
            tokio::pin!(stream);
            let mut beat = ticker(spec.feed.heartbeat);
            loop {
                tokio::select! {
                    streamed = &mut stream => break streamed?,
                    _ = beat.tick() => {
                        // A missed beat is harmless: the next one tries again.
                        let _ = s.heartbeat(&spec.id, &time::now());
                    }
                    // Note [Flush policy] in `feed`: a few ms after the first
                    // pending line, or a full batch; no timer while idle.
                    () = feed.due() => feed.flush(&mut **s, FLUSH_BATCHES),
                }
            }
        }
        _ => stream.await?,
    };
    let ending = streamed.ending;
    meta.stderr_dropped_bytes = streamed.stderr_dropped;
    let mut tail = Vec::new();
    pipe.decoder.finish(&mut |e| tail.push(e));
    for e in tail {
        pipe.publish(e);
    }
    let format = pipe.decoder.format();
    let summary = pipe.builder.finish(format);
    let ended_at = time::now();
    meta.ended_at = Some(ended_at);
    match ending {
        Ending::Exited { code, signal } => {
            meta.exit_code = code;
            meta.signal = signal;
        }
        Ending::TimedOut => {
            meta.process_error = Some("timeout".to_owned());
            meta.process_error_category = Some("timeout".to_owned());
        }
        Ending::NotFound => {
            let name = match &spec.source {
                Source::Spawn(c) => c.program.clone(),
                Source::Replay { path, .. } => path.display().to_string(),
            };
            meta.process_error = Some(format!("agent executable not found: {name}"));
            meta.process_error_category = Some("not_found".to_owned());
            meta.exit_code = Some(127);
        }
        Ending::Replayed => {}
        Ending::Interrupted {
            signal,
            code,
            agent_signal,
        } => {
            meta.exit_code = code;
            meta.signal = agent_signal;
            meta.interrupted_by = Some(signal);
            meta.process_error = Some(format!("interrupted by {}", process::signal_name(signal)));
        }
    }
    let opts = ExtractOptions {
        validator: spec.validator,
        markers: spec.markers,
        coerce: spec.coerce,
        methods: spec.methods,
    };
    let extraction = extract_run(&summary, &opts);
    // See Note \[Handoff fallback\]: only when structured output is absent.
    if extraction.method != Method::Structured {
        for path in &spec.handoff {
            let found = take_handoff(path, started_ms);
            if meta.handoff.is_none() {
                meta.handoff = found;
            }
        }
    }
    meta.status = status_of(&meta, &summary).to_owned();
    let record = build_record(&meta, &summary, &extraction, &log_path);
    pipe.log.write_meta(&meta)?;
    hub.publish(
        &spec.id,
        HubBody::Ended {
            status: record.status.to_string(),
            extraction_method: record.extraction_method.clone(),
        },
    );
    // Every line before the outcome (Note [Live feed] in `feed`).
    if let (Some(s), Some(f)) = (store.as_mut(), &feed) {
        f.drain(&mut **s);
    }
    let mut store_error = None;
    let report = match store {
        Some(s) => match s.write_session(&record) {
            Ok(report) => Some(report),
            Err(e) => {
                store_error = Some(Box::new(store_failed(e)));
                None
            }
        },
        None => None,
    };
    let not_found = (ending == Ending::NotFound).then(|| match &spec.source {
        Source::Spawn(c) => c.program.clone(),
        Source::Replay { path, .. } => path.display().to_string(),
    });
    Ok(SessionOutcome {
        record,
        extraction: Extraction {
            run: Some(Box::new(summary)),
            ..extraction
        },
        report,
        store_error,
        log_path,
        not_found,
        feed: feed.as_ref().map(FeedQueue::stats),
    })
}

/// `s` as one shell word: as is when it holds only characters no shell
/// treats specially, else in single quotes (a quote inside closed and
/// reopened), so the `ingest` hint can be pasted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@%+=,".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// At most this many feed batches are written per wake of the select loop,
/// so a backlog does not keep the agent's stream unread for long.
const FLUSH_BATCHES: usize = 16;

/// An interval whose first tick is one period away and that skips missed
/// ticks (a zero period is taken as 1 ms).
fn ticker(every: Duration) -> tokio::time::Interval {
    let every = every.max(Duration::from_millis(1));
    let mut t = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    t
}

/// The final status (Note \[Session status\]).
fn status_of(meta: &SessionMeta, summary: &RunSummary) -> &'static str {
    if meta.interrupted_by.is_some() {
        return "interrupted";
    }
    match meta.process_error_category.as_deref() {
        Some("timeout") => return "timeout",
        Some("not_found") => return "not_found",
        _ => {}
    }
    // Note [Text sessions]: a plain-text transcript (a raw agent's prose, a
    // local ops tier's `ask` output) has no result event to wait for; the
    // agent's clean exit is its result.
    if summary.format == Format::Text && meta.signal.is_none() && meta.exit_code == Some(0) {
        return "completed";
    }
    if meta.signal.is_some() || !summary.saw_result {
        return "failed";
    }
    let is_error = summary.result.as_ref().is_some_and(|r| r.is_error)
        || summary.error_category.is_some_and(|c| !c.is_heuristic());
    if is_error { "error" } else { "completed" }
}

/// Note \[Handoff fallback\]: the legacy `handoff.json` is read once and
/// removed, whatever it holds, so it can never be read by a later cycle; one
/// last modified before this session started is from an earlier cycle and is
/// ignored (seed 000's race: "file from previous cycle").
fn take_handoff(path: &Path, started_ms: i64) -> Option<Value> {
    let modified_ms = std::fs::metadata(path)
        .ok()?
        .modified()
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
    // Note [Regular files only] in `infile`: a FIFO or device planted as the
    // handoff is removed unread, never waited on or read forever.
    let text = crate::infile::read(path, crate::infile::MAX_CONFIG_BYTES).ok();
    let _ = std::fs::remove_file(path);
    // File times have coarser resolution than our clock on some filesystems: allow 1 s.
    if modified_ms + 1000 < started_ms {
        return None;
    }
    serde_json::from_slice(&text?).ok()
}

/// The escalation object a legacy handoff file implies.
fn escalation_from_handoff(h: &Value) -> Value {
    let needed = h
        .get("needed")
        .or_else(|| h.get("escalate"))
        .and_then(Value::as_bool);
    let tier = h.get("recommended_tier").and_then(Value::as_u64);
    let reason = h.get("reason").and_then(Value::as_str);
    let context = h
        .get("context")
        .or_else(|| h.get("investigation_findings"))
        .and_then(Value::as_str);
    let failed = h
        .get("failed_checks")
        .or_else(|| h.get("services_affected"))
        .cloned()
        .unwrap_or_else(|| json!([]));
    let mut esc =
        json!({"needed": needed.unwrap_or(tier.is_some_and(|t| t > 1) || reason.is_some())});
    if let Some(r) = reason {
        esc["reason"] = json!(r);
    }
    if let Some(c) = context {
        esc["context"] = json!(c);
    }
    if failed.is_array() {
        esc["failed_checks"] = failed;
    }
    esc
}

/// Build the session record from what the session produced. Deterministic in
/// its inputs, so `ingest` rebuilds exactly what `run` wrote.
pub fn build_record(
    meta: &SessionMeta,
    summary: &RunSummary,
    extraction: &Extraction,
    log_path: &Path,
) -> Session {
    let status = Status::parse(&meta.status);
    let mut r = record::from_summary(&meta.id, &meta.started_at, status.clone(), summary);
    r.parent_id.clone_from(&meta.parent_id);
    r.tier = i64::from(meta.tier);
    r.profile.clone_from(&meta.profile);
    r.agent.clone_from(&meta.agent);
    if r.model.is_none() {
        r.model.clone_from(&meta.model);
    }
    r.exit_code = meta.exit_code.map(i64::from);
    r.ended_at.clone_from(&meta.ended_at);
    if let Some(res) = &summary.result {
        r.cost_usd = res.total_cost_usd;
        r.duration_ms = res.duration_ms.map(count);
        r.num_turns = res.num_turns.map(count);
        r.input_tokens = count(res.usage.input_tokens);
        r.output_tokens = count(res.usage.output_tokens);
    }
    // The process's own failure says more than the transcript's.
    if meta.process_error.is_some() {
        r.error.clone_from(&meta.process_error);
    }
    if meta.process_error_category.is_some() {
        r.error_category.clone_from(&meta.process_error_category);
    }
    if status == Status::Interrupted {
        // See Note [Session status]: not a failure of the agent, so no category.
        r.error_category = None;
    }
    if r.error.is_none() && status == Status::Failed {
        r.error = Some(match (meta.signal, meta.exit_code) {
            (Some(s), _) => format!("agent killed by signal {s} before a result"),
            (None, Some(c)) => format!("agent exited with code {c} before a result"),
            (None, None) => "stream ended before a result".to_owned(),
        });
    }
    r.raw_log_path = Some(log_path.display().to_string());
    r.escalated_for.clone_from(&meta.escalated_for);
    let mut method = extraction.method.as_str().to_owned();
    let mut value = extraction.value.clone();
    if let Some(h) = &meta.handoff {
        method = if extraction.method == Method::None {
            "handoff".to_owned()
        } else {
            format!("{method}+handoff")
        };
        let v = value.get_or_insert_with(|| {
            json!({"summary": "", "events": [], "escalation": {"needed": false}, "services_checked": []})
        });
        if v.is_object() {
            v["escalation"] = escalation_from_handoff(h);
        }
    }
    // Both come from the extraction alone, so `ingest` writes the same columns.
    Extracted {
        method,
        value,
        verdict: Some(Verdict::of(extraction)),
    }
    .apply(&mut r);
    let Some(v) = r.output.clone() else { return r };
    r.escalation = v.get("escalation").map(ToString::to_string);
    if status != Status::Completed {
        return r;
    }
    for e in v
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        r.events.push(NewEvent {
            level: said(e, "level").unwrap_or_default(),
            service: said(e, "service"),
            message: said(e, "message").unwrap_or_default(),
        });
    }
    // Issue 5: a failed `x-invariants` rule is a finding, never blocking:
    // stored as a warning event beside the agent's own events.
    for err in &extraction.errors {
        if err.kind == Some(agentshape_core::outcome::ViolationKind::Invariant) {
            let at = if err.instance_path.is_empty() {
                "(root)"
            } else {
                &err.instance_path
            };
            r.events.push(NewEvent {
                level: "warning".to_owned(),
                service: None,
                message: format!("invariant failed at {at}: {}", err.message),
            });
        }
    }
    for m in v
        .get("memories")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        r.memories.push(NewMemory {
            key: said(m, "key").unwrap_or_default(),
            value: said(m, "value").unwrap_or_default(),
        });
    }
    for s in v
        .get("services_checked")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some(name), Some(status)) = (said(s, "name"), said(s, "status")) {
            r.services.push(ServiceCheck {
                name,
                status,
                detail: said(s, "detail"),
            });
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_core::extract::Repair;
    use agentshape_core::outcome::{Violation, ViolationKind};

    fn meta(status: &str) -> SessionMeta {
        SessionMeta {
            id: "s".to_owned(),
            started_at: "2025-07-14T03:00:00.000Z".to_owned(),
            status: status.to_owned(),
            ..SessionMeta::default()
        }
    }

    fn extraction() -> Extraction {
        Extraction {
            value: Some(json!({"summary": "ok", "events": [{"level": "loud", "message": "m"}]})),
            method: Method::Repaired,
            repairs: vec![Repair::TrailingComma],
            coercions: Vec::new(),
            valid: false,
            errors: vec![
                Violation {
                    instance_path: "/events/0/level".to_owned(),
                    schema_path: "/properties/events/items/properties/level/enum".to_owned(),
                    message: "not one of".to_owned(),
                    kind: None,
                    rule: None,
                },
                Violation {
                    instance_path: String::new(),
                    schema_path: "/x-invariants/0".to_owned(),
                    message: "count".to_owned(),
                    kind: Some(ViolationKind::Invariant),
                    rule: Some("self.a == 1".to_owned()),
                },
            ],
            warnings: Vec::new(),
            run: None,
        }
    }

    #[test]
    fn build_record_keeps_the_output_and_the_verdict_for_every_status() {
        for status in ["completed", "error", "failed"] {
            let r = build_record(
                &meta(status),
                &RunSummary::default(),
                &extraction(),
                Path::new("logs/s.ndjson"),
            );
            assert_eq!(r.output, extraction().value, "{status}");
            let v = serde_json::to_value(r.verdict.unwrap()).unwrap();
            assert_eq!(v["valid"], false);
            assert_eq!(v["repairs"], json!(["trailing_comma"]));
            assert_eq!(v["coercions"], json!([]));
            assert_eq!(v["errors"][0]["instance_path"], "/events/0/level");
            assert!(v["errors"][0].get("kind").is_none());
            assert_eq!(v["errors"][1]["kind"], "invariant");
            assert_eq!(v["errors"][1]["rule"], "self.a == 1");
        }
        // Nothing found: no output, a verdict that says invalid with no errors.
        let r = build_record(
            &meta("completed"),
            &RunSummary::default(),
            &Extraction::none(),
            Path::new("l"),
        );
        assert_eq!(r.output, None);
        assert_eq!(
            r.verdict.map(|v| serde_json::to_value(v).unwrap()),
            Some(json!({"valid": false, "errors": [], "repairs": [], "coercions": []}))
        );
    }

    #[test]
    fn build_record_is_deterministic() {
        let a = build_record(
            &meta("completed"),
            &RunSummary::default(),
            &extraction(),
            Path::new("l"),
        );
        let b = build_record(
            &meta("completed"),
            &RunSummary::default(),
            &extraction(),
            Path::new("l"),
        );
        assert_eq!(a, b);
    }
}
