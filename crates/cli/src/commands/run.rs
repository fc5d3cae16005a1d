//! `agentshape run`: run an agent (or replay a transcript) through the whole
//! pipeline: forensic log, live hub, extract + validate, store.

use std::io::Write;
use std::time::Duration;

use agentshape_runtime::feed::FeedOptions;
use agentshape_runtime::forensic::check_session_id;
use agentshape_runtime::hub::Hub;
use agentshape_runtime::loopflow;
use agentshape_runtime::process::{AgentCommand, Interrupts, ProcessOptions, Source};
use agentshape_runtime::runner::{
    AgentKind, SessionOutcome, SessionSpec, agent_args, new_session_id, run_session,
};
use agentshape_store::{Store, StoreUrl};
use serde_json::{Value, json};

use crate::args::{AgentArg, RunArgs};
use crate::commands::extract;
use crate::commands::parse::truncate;
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style};

/// The runtime all agent commands use: one thread is plenty for one agent's pipes.
///
/// Keep it current-thread: agents are spawned from the main thread, and the
/// parent-death signal (runtime `process`'s Note \[Parent death\]) fires
/// when the *thread* that spawned the agent exits, which for the main thread
/// is when agentshape exits.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Print every hub message as a JSON line on stderr until the hub closes.
pub fn spawn_live_printer(hub: &Hub) -> tokio::task::JoinHandle<()> {
    let mut rx = hub.subscribe();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(msg) => {
                    let mut err = std::io::stderr().lock();
                    if serde_json::to_writer(&mut err, &*msg).is_ok() {
                        let _ = err.write_all(b"\n");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}

/// The exit code of a finished session (runtime's Note [Session status]).
/// An `interrupted` session gives 130 here; callers that know the signal
/// use [`Exit::interrupted`].
pub fn session_exit(outcome: &SessionOutcome) -> Exit {
    match outcome.record.status.as_str() {
        "interrupted" => Exit::Interrupt,
        "not_found" => Exit::NotFound,
        "timeout" | "error" => Exit::AgentError,
        "failed" => Exit::Invalid,
        _ => extract::outcome(&outcome.extraction),
    }
}

/// Catch SIGINT, SIGTERM and SIGHUP for the agents `rt` runs (runtime
/// `process`'s Note \[Interrupts\]): from now on they no longer end
/// agentshape at once; the caller checks [`Interrupts::first`] and exits
/// `128 + N` once the session is written.
///
/// # Errors
/// When a handler cannot be installed.
pub fn listen(rt: &tokio::runtime::Runtime) -> anyhow::Result<Interrupts> {
    let _guard = rt.enter();
    Ok(Interrupts::listen()?)
}

/// The heartbeat and live-feed intervals of a session that writes to a
/// store: the defaults, with `AGENTSHAPE_HEARTBEAT_MS` and
/// `AGENTSHAPE_FEED_FLUSH_MS` (milliseconds) for tests that watch a run's
/// heartbeat or feed. Read here, in the binary, so the libraries stay free
/// of the environment; an unparsable or zero value keeps the default, and
/// the heartbeat is never slower than the default (readers call a session
/// `lost` after three default beats: the store's Note \[Lost sessions\]).
pub fn feed_options() -> FeedOptions {
    let ms = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&n| n > 0)
            .map(Duration::from_millis)
    };
    let d = FeedOptions::default();
    FeedOptions {
        heartbeat: ms("AGENTSHAPE_HEARTBEAT_MS").map_or(d.heartbeat, |h| h.min(d.heartbeat)),
        flush: ms("AGENTSHAPE_FEED_FLUSH_MS").unwrap_or(d.flush),
        ..d
    }
}

/// Errors of the runner that are the user's to fix: a bad or reused
/// session id is a usage error (64).
pub fn runner_error(e: agentshape_runtime::Error) -> anyhow::Error {
    match e {
        agentshape_runtime::Error::SessionId { .. }
        | agentshape_runtime::Error::LogExists { .. } => CliError::Usage(e.to_string()).into(),
        other => other.into(),
    }
}

/// Run `run`.
///
/// # Errors
/// Usage errors, a missing transcript, forensic log or store failures.
pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    let selection = input::select(&args.schema)?;
    // Recorded: the built-in's name, or the profile file's absolute path.
    let profile = args
        .schema
        .profile
        .as_deref()
        .map(|p| agentshape_runtime::profile::profile_label(p, std::path::Path::new(".")));
    let is_loop = selection
        .profile
        .as_ref()
        .is_some_and(|p| p.name == "claude-loop");
    let kind = match args.agent {
        AgentArg::Claude => AgentKind::Claude,
        AgentArg::Codex => AgentKind::Codex,
        AgentArg::Raw => AgentKind::Raw,
        AgentArg::Replay => AgentKind::Replay,
    };
    let (kind, source) = if let Some(path) = &args.replay {
        input::check_exist(std::slice::from_ref(path))?;
        if !args.command.is_empty() {
            return Err(CliError::Usage("--replay takes no command after `--`".into()).into());
        }
        (
            AgentKind::Replay,
            Source::Replay {
                path: path.clone(),
                pace: args.pace.map(Duration::from_millis),
            },
        )
    } else if kind == AgentKind::Replay {
        return Err(CliError::Usage("--agent replay needs --replay FILE".into()).into());
    } else {
        let Some((program, rest)) = args.command.split_first() else {
            return Err(CliError::Usage(
                "no agent command: give one after `--` (or --replay FILE)".into(),
            )
            .into());
        };
        let schema = selection
            .validator
            .as_ref()
            .map(agentshape_core::validate::Validator::schema);
        (
            kind,
            Source::Spawn(AgentCommand {
                program: program.clone(),
                args: agent_args(kind, rest, schema, args.partial),
                env: Vec::new(),
                // Runtime `process`'s Note [Agents get no credentials of ours].
                pass_env: selection
                    .profile
                    .as_ref()
                    .map(|p| p.pass_env.clone())
                    .unwrap_or_default(),
                stdin: None,
            }),
        )
    };
    let timeout = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
        Some(_) => {
            return Err(
                CliError::Usage("--timeout must be a positive number of seconds".into()).into(),
            );
        }
        None => None,
    };
    if let Some(id) = &args.session_id {
        // Before anything is created: a bad id writes nothing anywhere.
        check_session_id(id).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    // Before anything is created: a bad --otlp-* is a usage error (64).
    let live = crate::otel::Live::start(&args.otlp, crate::otel::FINISH, 1)?;
    let url = if args.no_store {
        None
    } else {
        Some(StoreUrl::resolve(args.store.as_deref())?)
    };
    let mut store = match &url {
        Some(u) => Some(u.open()?),
        None => None,
    };
    if let Some(s) = &store {
        crate::mask::use_store_key(s.mask_key());
    }
    let id = args.session_id.clone().unwrap_or_else(new_session_id);
    let spec = SessionSpec {
        id,
        parent_id: None,
        tier: 1,
        profile: profile.clone(),
        validator: selection.validator.as_ref(),
        markers: selection.markers(),
        methods: selection.options(false).methods,
        coerce: selection.options(false).coerce,
        agent: kind,
        model: None,
        source,
        log_dir: args.log_dir.clone(),
        timeout,
        partial: args.partial,
        handoff: Vec::new(),
        escalated_for: Vec::new(),
        process: ProcessOptions::default(),
        feed: feed_options(),
    };
    let rt = runtime()?;
    let interrupts = listen(&rt)?;
    let spec = SessionSpec {
        process: ProcessOptions {
            interrupts: Some(interrupts.clone()),
            ..ProcessOptions::default()
        },
        ..spec
    };
    let (outcome, folds) = rt
        .block_on(async {
            let hub = Hub::default();
            let printer = args.live.then(|| spawn_live_printer(&hub));
            let folds = live
                .as_ref()
                .map(|l| crate::otel::Folds::spawn(&hub, l.content));
            let result = run_session(
                &spec,
                store.as_deref_mut().map(|s| s as &mut dyn Store),
                &hub,
            )
            .await;
            drop(hub);
            if let Some(p) = printer {
                let _ = p.await;
            }
            let folds = match folds {
                Some((f, task)) => {
                    let _ = task.await;
                    Some(f)
                }
                None => None,
            };
            result.map(|o| (o, folds))
        })
        .map_err(runner_error)?;
    // Note [Live export never fails a run] in `otel`.
    let otlp = live.map(|l| {
        l.send(&crate::otel::finished_trace(
            url.as_ref(),
            folds.as_ref(),
            &outcome,
            l.content,
        ));
        l.finish(crate::otel::FINISH)
    });
    let mut exit = session_exit(&outcome);
    let mut out = Out::new(args.output);
    let mut loop_entry: Option<Value> = None;
    if is_loop && outcome.record.status == "completed" {
        let verdict = loopflow::judge(
            &outcome.extraction,
            args.story.as_deref(),
            &outcome.record.id,
            &agentshape_store::time::now(),
        );
        loopflow::append(&args.actions_log, &verdict.entry)?;
        if let Some(w) = &verdict.warning {
            for line in w.lines() {
                crate::output::eprint(&format!("[WARN] {line}"));
            }
        }
        exit = match verdict.code {
            0 => Exit::Ok,
            1 => Exit::Invalid,
            _ => Exit::NoOutput,
        };
        loop_entry = serde_json::to_value(&verdict.entry).ok();
    }
    if let Some(name) = &outcome.not_found {
        let _ = writeln!(
            std::io::stderr(),
            "agentshape: agent executable not found: {name}"
        );
    }
    if out.json {
        let mut v = serde_json::to_value(&outcome.extraction)?;
        v["session"] = session_json(&outcome);
        if let Some(e) = loop_entry {
            v["action"] = e;
        }
        if let Some(r) = &otlp {
            v["otlp"] = crate::otel::report_json(r);
        }
        out.json_line(&v)?;
    } else {
        human(&mut out, &outcome)?;
        if let Some(r) = &otlp {
            out.line(&format!("  {}", crate::otel::report_line(r)))?;
        }
    }
    out.flush()?;
    // The outcome is shown; a session the store could not take fails the
    // command with the store's code and the `ingest` hint (that comes first:
    // it says where the session is).
    if let Some(e) = outcome.store_error {
        return Err(anyhow::Error::from(*e));
    }
    // A signal, even one that came after the agent ended, is what the run
    // reports: the session is written, then `128 + N` as the shell expects.
    if let Some(sig) = interrupts.first() {
        return Ok(Exit::interrupted(sig));
    }
    Ok(exit)
}

/// The `session` object of `run --json`.
pub fn session_json(o: &SessionOutcome) -> Value {
    let r = &o.record;
    json!({
        "id": r.id, "parent_id": r.parent_id, "tier": r.tier, "status": r.status,
        "exit_code": r.exit_code, "error": r.error, "error_category": r.error_category,
        "extraction_method": r.extraction_method, "raw_log_path": r.raw_log_path,
        "store": o.report,
        "store_error": o.store_error.as_ref().map(ToString::to_string),
    })
}

/// A readable summary of one session.
pub fn human(out: &mut Out, o: &SessionOutcome) -> std::io::Result<()> {
    let r = &o.record;
    let style = match r.status.as_str() {
        "completed" if o.extraction.valid => Style::Ok,
        "completed" => Style::Warn,
        _ => Style::Bad,
    };
    let status = out.paint(style, r.status.as_str());
    let method = r.extraction_method.as_deref().unwrap_or("none");
    let valid = if o.extraction.valid {
        "valid"
    } else {
        "invalid"
    };
    out.line(&format!(
        "session {} (tier {}): {status}, {method}, {valid}",
        r.id, r.tier
    ))?;
    if let Some(s) = &r.summary {
        out.line(&format!("  summary: {}", truncate(s, 160)))?;
    }
    if let Some(e) = &r.error {
        out.line(&format!(
            "  error [{}]: {}",
            r.error_category.as_deref().unwrap_or("?"),
            truncate(e, 160)
        ))?;
    }
    if let Some(rep) = &o.report {
        if rep.inserted {
            out.line(&format!(
                "  stored: {} events ({} rejected), {} new memories, {} reinforced ({} rejected), {} services",
                rep.events, rep.events_rejected, rep.memories_new, rep.memories_reinforced,
                rep.memories_rejected, rep.services
            ))?;
        } else {
            out.line("  stored: already in the store, nothing added")?;
        }
        for w in &rep.warnings {
            out.line(&format!("  warning: {w}"))?;
        }
    }
    for e in o.extraction.errors.iter().take(5) {
        out.line(&format!("  {}: {}", e.instance_path, e.message))?;
    }
    out.line(&format!("  log: {}", o.log_path.display()))
}
