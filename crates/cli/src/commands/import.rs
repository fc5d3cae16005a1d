//! `agentshape import` and `agentshape watch`: the sessions agents wrote
//! themselves, into the store (runtime's `native`); `serve --watch` shares
//! [`Plan`] and [`follow`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentshape_runtime::native::Agent;
use agentshape_runtime::native::discover::{self, Env, Root};
use agentshape_runtime::native::import::{Change, FileReport, ImportOptions, Importer, import_all};
use agentshape_runtime::native::watch::{WatchOptions, watch};
use agentshape_store::{Store, StoreUrl};

use crate::args::{NativeAgent, NativeArgs};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, eprint};
use crate::prices::load_prices;

/// What to import, resolved from the options: checked before any work.
pub struct Plan {
    /// Where to look.
    pub roots: Vec<Root>,
    /// How to import.
    pub opts: ImportOptions,
    /// `--since`.
    pub since_ms: Option<i64>,
    /// Paths named that are neither a regular file nor a folder (a device,
    /// a FIFO, a socket), as given: reported skipped, never opened (a FIFO
    /// would block the import until a writer came).
    pub special: Vec<String>,
    /// Files named on the command line (canonical): their skips are said.
    pub named: std::collections::HashSet<String>,
}

impl Plan {
    /// Resolve the paths (66 for a missing one), the standard folders (a
    /// missing one said once on stderr), the profile and the prices.
    ///
    /// # Errors
    /// A missing PATH (66), a bad profile or price file (64/66).
    pub fn new(
        paths: &[PathBuf],
        agent: Option<NativeAgent>,
        since_ms: Option<i64>,
        profile: Option<&str>,
    ) -> anyhow::Result<Plan> {
        let agent = agent.map(|a| match a {
            NativeAgent::Claude => Agent::Claude,
            NativeAgent::Codex => Agent::Codex,
            NativeAgent::Gemini => Agent::Gemini,
        });
        let mut roots = Vec::new();
        let mut special = Vec::new();
        let mut named = std::collections::HashSet::new();
        for p in paths {
            // Absolute, so a file keeps one mark whatever the working folder.
            let path = std::fs::canonicalize(p).map_err(|source| CliError::NoInput {
                path: input::display(p),
                source,
            })?;
            // `stat`, never `open`: opening a FIFO waits for a writer.
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => {
                    named.insert(path.display().to_string());
                }
                Ok(m) if m.is_dir() => {}
                _ => {
                    special.push(input::display(p));
                    continue;
                }
            }
            roots.push(Root { agent: None, path });
        }
        if paths.is_empty() {
            for root in discover::standard_roots(&Env::from_process(), agent) {
                let name = root.agent.map_or("", Agent::as_str);
                if root.path.is_dir() {
                    roots.push(Root {
                        path: std::fs::canonicalize(&root.path).unwrap_or(root.path),
                        ..root
                    });
                } else {
                    eprint(&format!(
                        "agentshape: no {name} sessions at {} (skipped)",
                        root.path.display()
                    ));
                }
            }
        }
        let (profile, profile_label) = match profile {
            Some(name) => (
                Some(input::load_profile(name)?),
                Some(agentshape_runtime::profile::profile_label(
                    name,
                    std::path::Path::new("."),
                )),
            ),
            None => (None, None),
        };
        let prices = load_prices()?;
        Ok(Plan {
            roots,
            opts: ImportOptions {
                agent,
                profile,
                profile_label,
                prices,
                ..ImportOptions::default()
            },
            since_ms,
            special,
            named,
        })
    }
}

/// Run `import` (or `watch`).
///
/// # Errors
/// See [`Plan::new`]; store failures with their own codes.
pub fn run(args: &NativeArgs, follow_on: bool) -> anyhow::Result<Exit> {
    let rules = match (&args.alerts, follow_on) {
        (Some(_), false) => {
            return Err(CliError::Usage(
                "--alerts is for `watch` (and `serve`, `ops`): `import` reads once and ends; \
                 run `agentshape watch --alerts FILE` or `serve --alerts FILE`"
                    .to_owned(),
            )
            .into());
        }
        (Some(file), true) => Some(super::alerts::load(file)?),
        (None, _) => None,
    };
    let url = StoreUrl::parse(&args.store.location)?;
    let plan = Plan::new(&args.paths, args.agent, args.since, args.profile.as_deref())?;
    let mut store = url.open()?;
    crate::mask::use_store_key(store.mask_key());
    let mut importer = Importer::new(&*store, plan.opts.clone())?;
    let mut out = Out::new(args.output);
    let export = NativeExport::start(&args.otlp, &url)?;
    if follow_on {
        let alerts = match rules {
            Some(r) => Some(super::alerts::start(r, &url)?),
            None => None,
        };
        let exit = follow(&plan, &mut importer, &mut *store, &mut out, export.as_ref());
        if let Some(a) = alerts {
            a.stop();
        }
        if let Some(e) = export {
            // Stdout under --json holds JSON lines only: the summary is one too.
            let r = e.live.finish(crate::otel::FINISH);
            if out.json {
                out.json_line(&serde_json::json!({ "otlp": crate::otel::report_json(&r) }))?;
            } else {
                out.line(&crate::otel::report_line(&r))?;
            }
            out.flush()?;
        }
        return exit;
    }
    let files = discover::files(&plan.roots, plan.since_ms);
    let bar = out.progress(files.len() as u64, "files");
    let mut reports = special_reports(&plan);
    reports.extend(import_all(&mut importer, &mut *store, &files, &mut |_| {
        bar.inc(1);
    })?);
    bar.finish_and_clear();
    let mut tally = Tally::default();
    for r in &reports {
        tally.add(r);
        if let Some(e) = &export {
            e.changed(r);
        }
        if out.json {
            out.json_line(r)?;
            continue;
        }
        warn(r);
        if let Some(e) = &r.error {
            eprint(&format!("agentshape: {}: {e}", r.path));
        } else if matches!(r.change, Change::New | Change::Grown | Change::Replaced)
            || (r.change == Change::Skipped && plan.is_named(&r.path))
        {
            out.line(&human(r))?;
        }
    }
    let otlp = export.map(|e| e.live.finish(crate::otel::FINISH));
    if out.json {
        if let Some(r) = &otlp {
            out.json_line(&serde_json::json!({ "otlp": crate::otel::report_json(r) }))?;
        }
    } else {
        out.line(&tally.line())?;
        if let Some(r) = &otlp {
            out.line(&crate::otel::report_line(r))?;
        }
    }
    out.flush()?;
    Ok(if tally.failed > 0 {
        Exit::NoInput
    } else {
        Exit::Ok
    })
}

impl Plan {
    /// Whether `path` was named on the command line (a file, or a special
    /// file): a skip is then said, not only counted.
    fn is_named(&self, path: &str) -> bool {
        self.named.contains(path) || self.special.iter().any(|p| p == path)
    }
}

/// A skipped report for each special file named (see [`Plan::special`]).
fn special_reports(plan: &Plan) -> Vec<FileReport> {
    plan.special
        .iter()
        .map(|p| FileReport::skipped(p, "not a regular file".to_owned()))
        .collect()
}

/// A report's warnings on stderr, one line each.
fn warn(r: &FileReport) {
    for w in &r.warnings {
        eprint(&format!("agentshape: warning: {w}"));
    }
}

/// One line for people about a file that changed, or a named file skipped.
fn human(r: &FileReport) -> String {
    if r.change == Change::Skipped {
        return format!(
            "{}: skipped: {}",
            r.path,
            r.skipped.as_deref().unwrap_or("-")
        );
    }
    let change = match r.change {
        Change::New => "new",
        Change::Grown => "grown",
        Change::Replaced => "replaced",
        Change::Unchanged => "unchanged",
        Change::Skipped => "skipped",
    };
    let skipped = if r.lines_skipped > 0 {
        format!(", {} skipped", r.lines_skipped)
    } else {
        String::new()
    };
    format!(
        "{}: {change} session {} ({}, {} lines added{skipped}, {})",
        r.path,
        r.session_id.as_deref().unwrap_or("-"),
        r.agent.as_deref().unwrap_or("-"),
        r.lines_added,
        r.status.as_deref().unwrap_or("-"),
    )
}

/// Counts for the summary line.
#[derive(Debug, Default)]
struct Tally {
    new: u64,
    grown: u64,
    replaced: u64,
    unchanged: u64,
    skipped: u64,
    failed: u64,
    lines: u64,
}

impl Tally {
    fn add(&mut self, r: &FileReport) {
        match r.change {
            Change::New => self.new += 1,
            Change::Grown => self.grown += 1,
            Change::Replaced => self.replaced += 1,
            Change::Unchanged => self.unchanged += 1,
            Change::Skipped if r.error.is_some() => self.failed += 1,
            Change::Skipped => self.skipped += 1,
        }
        self.lines += r.lines_added;
    }

    fn line(&self) -> String {
        let mut s = format!(
            "{} files: {} new, {} grown, {} replaced, {} unchanged, {} skipped; {} lines added",
            self.new + self.grown + self.replaced + self.unchanged + self.skipped + self.failed,
            self.new,
            self.grown,
            self.replaced,
            self.unchanged,
            self.skipped,
            self.lines
        );
        if self.failed > 0 {
            use std::fmt::Write as _;
            let _ = write!(s, "; {} could not be read", self.failed);
        }
        s
    }
}

/// `watch`: import, then follow until Ctrl-C or SIGTERM, one line per
/// file that changed.
fn follow(
    plan: &Plan,
    importer: &mut Importer,
    store: &mut dyn Store,
    out: &mut Out,
    export: Option<&NativeExport>,
) -> anyhow::Result<Exit> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            rt.block_on(crate::signals::stopped());
        }
        flag.store(true, Ordering::Relaxed);
    });
    let opts = WatchOptions {
        since_ms: plan.since_ms,
        ..WatchOptions::default()
    };
    let mut failed: Option<std::io::Error> = None;
    let json = out.json;
    for r in special_reports(plan) {
        if json {
            out.json_line(&r)?;
        } else {
            out.line(&human(&r))?;
        }
    }
    watch(&plan.roots, opts, importer, store, &stop, &mut |r| {
        if let Some(e) = export {
            e.changed(r);
        }
        if !json {
            warn(r);
        }
        let written = if json {
            out.json_line(r)
        } else if let Some(e) = &r.error {
            eprint(&format!("agentshape: {}: {e}", r.path));
            Ok(())
        } else if r.change == Change::Skipped {
            Ok(())
        } else {
            out.line(&human(r))
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            failed.get_or_insert(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    Ok(Exit::Ok)
}

/// `serve --watch`: follow the plan's roots on a thread of its own with
/// its own store handle, until `stop`; what changed is said on stderr.
pub fn follow_in_background(
    plan: Plan,
    url: &StoreUrl,
    stop: Arc<AtomicBool>,
    otlp: &crate::args::OtlpArgs,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let mut store = url.open()?;
    let export = NativeExport::start(otlp, url)?;
    let mut importer = Importer::new(&*store, plan.opts.clone())?;
    let opts = WatchOptions {
        since_ms: plan.since_ms,
        ..WatchOptions::default()
    };
    for r in special_reports(&plan) {
        eprint(&format!("agentshape: watch: {}", human(&r)));
    }
    Ok(std::thread::spawn(move || {
        let result = watch(
            &plan.roots,
            opts,
            &mut importer,
            &mut *store,
            &stop,
            &mut |r| {
                if let Some(e) = &export {
                    e.changed(r);
                }
                if let Some(e) = &r.error {
                    eprint(&format!("agentshape: watch: {}: {e}", r.path));
                }
                for w in &r.warnings {
                    eprint(&format!("agentshape: watch: warning: {w}"));
                }
            },
        );
        if let Err(e) = result {
            eprint(&format!("agentshape: watch: {e}"));
        }
        if let Some(e) = export {
            let r = e.live.finish(crate::otel::FINISH);
            eprint(&format!(
                "agentshape: watch: {}",
                crate::otel::report_line(&r)
            ));
        }
    }))
}

/// `import`/`watch` with OpenTelemetry export: each session a pass changed
/// is read back from the store (a read-only handle of its own) and its
/// spans not sent yet leave (otel's Note \[Sent once\]): a session that
/// grows sends its new tool calls and its root again (its end moved), not
/// the whole session. What was sent is kept in memory only: a restarted
/// `watch` sends each session's spans again, with the same ids.
struct NativeExport {
    live: crate::otel::Live,
    reader: crate::otel::Reader,
}

impl NativeExport {
    fn start(args: &crate::args::OtlpArgs, url: &StoreUrl) -> anyhow::Result<Option<NativeExport>> {
        let Some(mut live) = crate::otel::Live::start(args, crate::otel::FINISH, 1)? else {
            return Ok(None);
        };
        // A native session may still grow: a call's span waits for its result.
        live.opts.skip_open_tools = true;
        let reader = crate::otel::Reader::open(url)?;
        Ok(Some(NativeExport { live, reader }))
    }

    fn changed(&self, r: &FileReport) {
        if !matches!(r.change, Change::New | Change::Grown | Change::Replaced) {
            return;
        }
        let Some(id) = &r.session_id else { return };
        match agentshape_otel::stored::load(self.reader.source(), id, self.live.content) {
            Ok(Some(trace)) => self.live.send(&trace),
            Ok(None) => {}
            Err(e) => eprint(&format!(
                "agentshape: warning: OpenTelemetry export of `{id}`: {e}"
            )),
        }
    }
}
