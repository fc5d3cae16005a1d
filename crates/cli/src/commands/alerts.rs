//! `agentshape alerts`: check a rules file, list the stored firings; and
//! the `--alerts FILE` of `serve`, `ops` and `watch` (issue 31; the loops
//! are the runtime's Note \[Alert loops\]).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use agentshape_core::alerts::{RuleSet, parse_rules};
use agentshape_runtime::alerts::{Log, Running};
use agentshape_store::StoreUrl;
use agentshape_store::alerts::{self as stored, FiringRow};

use crate::args::{AlertsAction, AlertsArgs};
use crate::exit::{CliError, Exit};
use crate::output::{Out, eprint};

/// The largest rules file read.
pub const MAX_RULES_BYTES: u64 = 1 << 20;

/// Read and check a rules file: a missing one is 66, anything else wrong
/// (not a regular file, too big, not UTF-8, a bad rule) is 64, in one
/// line naming the file (and the rule and field).
///
/// # Errors
/// As said.
pub fn load(path: &Path) -> Result<RuleSet, CliError> {
    let shown = path.display();
    let text = agentshape_runtime::infile::read_to_string(path, MAX_RULES_BYTES).map_err(|e| {
        if e.is_missing() {
            CliError::NoInput {
                path: shown.to_string(),
                source: e.into_io(),
            }
        } else {
            CliError::Usage(format!("alerts file {shown}: {}", e.into_io()))
        }
    })?;
    parse_rules(&text).map_err(|e| CliError::Usage(format!("alerts file {shown}: {e}")))
}

/// The loops' log: stderr, through the output's masker.
pub fn stderr_log() -> Log {
    Arc::new(|line: &str| eprint(line))
}

/// Start the loops for `--alerts` on `url`, saying so on stderr.
///
/// # Errors
/// When the store cannot be opened.
pub fn start(rules: RuleSet, url: &StoreUrl) -> anyhow::Result<Running> {
    let n = rules.rules.len();
    let running = agentshape_runtime::alerts::start(rules, url, stderr_log())?;
    eprint(&format!(
        "agentshape: alerts: {n} rule{} watching {url}",
        if n == 1 { "" } else { "s" }
    ));
    Ok(running)
}

/// Run `alerts`.
///
/// # Errors
/// A bad or missing rules file (64, 66); a bad store location (64), a
/// missing store (66), store failures.
pub fn run(args: &AlertsArgs) -> anyhow::Result<Exit> {
    match &args.action {
        AlertsAction::Check { file, output } => {
            let set = load(file)?;
            let mut out = Out::new(*output);
            for r in &set.rules {
                if out.json {
                    out.json_line(&serde_json::json!({
                        "rule": r.name,
                        "when": r.condition.name(),
                        "summary": r.describe(),
                    }))?;
                } else {
                    out.line(&r.describe())?;
                }
            }
            out.flush()?;
            Ok(Exit::Ok)
        }
        AlertsAction::List {
            store,
            since,
            limit,
            output,
        } => {
            let url = StoreUrl::parse(&store.location)?;
            let since = since.map(agentshape_store::time::format_ms);
            let store = url.open_copyable(false)?;
            let rows = stored::firings(store.copy_rows(), since.as_deref(), None, *limit as usize)?;
            let mut out = Out::new(*output);
            if out.json {
                for f in &rows {
                    out.json_line(f)?;
                }
            } else if rows.is_empty() {
                out.line("No alerts have fired.")?;
            } else {
                for f in &rows {
                    out.line(&human(f))?;
                }
            }
            out.flush()?;
            Ok(Exit::Ok)
        }
    }
}

/// One firing on one line: when, rule, what, each delivery's state.
fn human(f: &FiringRow) -> String {
    let ds: Vec<String> = f
        .deliveries
        .iter()
        .map(|d| {
            let mut s = format!("{} {} {}", d.destination, d.target, d.state);
            if d.attempts > 1 || d.state == "failed" {
                let _ = write!(s, " after {} attempts", d.attempts);
            }
            if d.state != "delivered"
                && let Some(e) = &d.last_error
            {
                let _ = write!(s, " ({e})");
            }
            s
        })
        .collect();
    format!(
        "{}  {}  {}  [{}]",
        f.fired_at,
        f.rule,
        f.summary,
        ds.join("; ")
    )
}
