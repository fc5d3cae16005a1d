//! `agentshape model fetch|list`: the local models' cache.

use std::io::IsTerminal;
use std::path::Path;

use agentshape_runtime::model::fetch::{FetchError, FetchOptions, Fetched, Progress, fetch};
use agentshape_runtime::model::{DEFAULT_MODEL, KnownModel, ModelError, cache_dir, catalog};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use crate::args::{ModelAction, ModelArgs, OutputArgs};
use crate::exit::{CliError, Exit};
use crate::output::{Out, Style, clean, eprint};

/// Run `model`.
///
/// # Errors
/// No cache directory, an unusable `AGENTSHAPE_MODEL_REGISTRY`, a failing stdout.
pub fn run(args: &ModelArgs) -> anyhow::Result<Exit> {
    match &args.action {
        ModelAction::Fetch {
            names,
            force,
            index_url,
            output,
        } => fetch_all(names, *force, index_url, *output),
        ModelAction::List { output } => list(*output),
    }
}

/// The exit code of a failed fetch (the table in `model fetch --help`).
fn exit_of(e: &FetchError) -> Exit {
    match e {
        FetchError::Network { .. } | FetchError::Status { .. } => Exit::AgentError,
        FetchError::Mismatch(_) => Exit::DataErr,
        FetchError::Cache { .. } => Exit::CantCreate,
        _ => Exit::Usage,
    }
}

fn usage(e: &ModelError) -> CliError {
    CliError::Usage(e.to_string())
}

fn fetch_all(
    names: &[String],
    force: bool,
    index_url: &str,
    output: OutputArgs,
) -> anyhow::Result<Exit> {
    let models = catalog().map_err(|e| usage(&e))?;
    let default = [DEFAULT_MODEL.to_owned()];
    let names = if names.is_empty() {
        &default[..]
    } else {
        names
    };
    // Every name is checked before anything is downloaded: a typo in the
    // second name must not cost the first one's 100 MB first.
    let mut chosen: Vec<KnownModel> = Vec::new();
    for n in names {
        let Some(m) = models.iter().find(|m| m.name == n) else {
            return Err(CliError::Usage(format!(
                "unknown model `{n}`; the known models are: {}",
                models.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
            ))
            .into());
        };
        if !chosen.contains(m) {
            chosen.push(*m);
        }
    }
    let dir = cache_dir().map_err(|e| usage(&e))?;
    let opts = FetchOptions {
        index_url: index_url.to_owned(),
        dir,
        force,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut out = Out::new(output);
    let mut worst = Exit::Ok;
    for m in &chosen {
        let mut bar = Bar::new(output.quiet, m.name);
        // Note [An interrupted fetch cleans up]: SIGINT or SIGTERM drops
        // the fetch future, whose guards remove the temporary files (the
        // model only ever appears by the final rename), and exits 130/143.
        let result = rt.block_on(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let terminated = async {
                match term.as_mut() {
                    Some(t) => t.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = fetch(m, &opts, &mut bar) => Ok(r),
                _ = tokio::signal::ctrl_c() => Err(Exit::Interrupt),
                _ = terminated => Err(Exit::Terminated),
            }
        });
        let result = match result {
            Ok(r) => r,
            Err(code) => {
                bar.finish();
                eprint(&format!(
                    "agentshape: model `{}`: interrupted; nothing was cached",
                    m.name
                ));
                out.flush()?;
                return Ok(code);
            }
        };
        match result {
            Ok(r) => {
                if out.json {
                    out.json_line(&json!({
                        "name": r.name,
                        "status": match r.status {
                            Fetched::Downloaded => "downloaded",
                            Fetched::AlreadyThere => "already_there",
                        },
                        "path": r.path.display().to_string(),
                        "size": r.size,
                        "url": r.url,
                    }))?;
                } else {
                    let what = match r.status {
                        Fetched::Downloaded => out.paint(Style::Ok, "fetched"),
                        Fetched::AlreadyThere => out.paint(Style::Ok, "ok, already there"),
                    };
                    out.line(&format!(
                        "{what} {} ({}) {}",
                        r.name,
                        human_size(r.size),
                        r.path.display()
                    ))?;
                }
            }
            Err(e) => {
                let code = exit_of(&e);
                eprint(&format!(
                    "agentshape: model `{}`: {}",
                    m.name,
                    clean(&e.to_string())
                ));
                if out.json {
                    out.json_line(&json!({
                        "name": m.name, "error": e.to_string(), "exit": code as u8,
                    }))?;
                }
                worst = worst.worst(code);
            }
        }
    }
    out.flush()?;
    Ok(worst)
}

fn list(output: OutputArgs) -> anyhow::Result<Exit> {
    let models = catalog().map_err(|e| usage(&e))?;
    let dir = cache_dir().map_err(|e| usage(&e))?;
    let mut out = Out::new(output);
    for m in &models {
        let path = dir.join(m.file);
        // Present with the pinned size; the sha256 is checked by fetch (and
        // again by nothing else: hashing 100 MB per `list` would be slow).
        let cached = std::fs::metadata(&path).is_ok_and(|md| md.is_file() && md.len() == m.size);
        if out.json {
            out.json_line(&json!({
                "name": m.name, "file": m.file, "size": m.size, "cached": cached,
                "path": path.display().to_string(), "known": true,
                "default": m.name == DEFAULT_MODEL, "description": m.description,
            }))?;
        } else {
            let state = if cached {
                out.paint(Style::Ok, "cached    ")
            } else {
                out.paint(Style::Bold, "not cached")
            };
            out.line(&format!(
                "{state} {:<14} {:>8}  {}  {}",
                m.name,
                human_size(m.size),
                path.display(),
                m.description
            ))?;
        }
    }
    for (file, size) in strays(&dir, &models) {
        let path = dir.join(&file);
        if out.json {
            out.json_line(&json!({
                "name": null, "file": file, "size": size, "cached": true,
                "path": path.display().to_string(), "known": false,
            }))?;
        } else {
            out.line(&format!(
                "{} {:<14} {:>8}  {}  (use with --model PATH)",
                out.paint(Style::Ok, "file      "),
                "-",
                human_size(size),
                clean(&path.display().to_string())
            ))?;
        }
    }
    if !out.json {
        let n = models
            .iter()
            .filter(|m| std::fs::metadata(dir.join(m.file)).is_ok_and(|md| md.len() == m.size))
            .count();
        if n < models.len() {
            eprint(&format!(
                "agentshape: {n} of {} known models cached in {}; `agentshape model fetch NAME` downloads one",
                models.len(),
                dir.display()
            ));
        }
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// Other `.gguf` files in the cache (usable with `--model PATH`), sorted.
fn strays(dir: &Path, models: &[KnownModel]) -> Vec<(String, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, u64)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let md = e.metadata().ok()?;
            let gguf = Path::new(&name)
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("gguf"));
            (md.is_file()
                && gguf
                && !name.starts_with('.')
                && !models.iter().any(|m| m.file == name))
            .then_some((name, md.len()))
        })
        .collect();
    found.sort();
    found
}

fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.1} KB", bytes as f64 / 1e3)
    }
}

/// The download bar: on stderr, only when it is a terminal and not `--quiet`.
struct Bar {
    inner: ProgressBar,
    show: bool,
    name: &'static str,
}

impl Bar {
    fn new(quiet: bool, name: &'static str) -> Bar {
        Bar {
            inner: ProgressBar::hidden(),
            show: !quiet && std::io::stderr().is_terminal(),
            name,
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, what: &str, total: Option<u64>) {
        if !self.show {
            return;
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {} [{{bar:30}}] {{bytes}}/{{total_bytes}} {{bytes_per_sec}} eta {{eta}}",
            self.name
        )) {
            bar.set_style(style.progress_chars("=> "));
        }
        self.inner = bar;
    }

    fn advance(&mut self, n: u64) {
        self.inner.inc(n);
    }

    fn finish(&mut self) {
        self.inner.finish_and_clear();
    }
}
