//! `agentshape parse`: one run summary per transcript file.

use agentshape_core::RunSummary;
use agentshape_core::decode::{DecodeOptions, summarize_reader};
use rayon::prelude::*;

use crate::args::ParseArgs;
use crate::commands::{format_of, report_bad_input};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style, clean};

/// Run `parse`.
///
/// Files are decoded in parallel (every core) in windows, and printed in the
/// order given, so output is deterministic whatever the scheduling. A file
/// that cannot be read is reported in its place and the rest go on (Note
/// [Batch exit codes]).
///
/// # Errors
/// A failing stdout.
pub fn run(args: &ParseArgs) -> anyhow::Result<Exit> {
    let opts = DecodeOptions {
        max_line_bytes: args.max_line_bytes,
        ..DecodeOptions::default()
    };
    let format = format_of(args.format);
    // Native sessions carry tokens but no cost: priced from the table
    // (built-in, extended by the user's price file; a bad one is exit 64).
    let prices =
        agentshape_runtime::pricing::load(None).map_err(|e| CliError::Usage(e.to_string()))?;
    let mut out = Out::new(args.output);
    let bar = out.progress(args.files.len() as u64, "files");
    let mut exit = Exit::Ok;
    // Large windows keep every core busy: a window waits for its slowest file.
    let window = (rayon::current_num_threads().max(1) * 64).max(256);
    for chunk in args.files.chunks(window) {
        let results: Vec<Result<RunSummary, CliError>> = chunk
            .par_iter()
            .map(|path| summarize(path, format, &opts))
            .collect();
        for result in results {
            bar.inc(1);
            match result {
                Ok(mut summary) => {
                    if let Some(info) = summary.session.as_deref_mut() {
                        agentshape_core::pricing::price_session(info, &prices);
                    }
                    exit = exit.worst(outcome(&summary));
                    if out.json {
                        out.json_line(&summary)?;
                    } else {
                        human(&mut out, &summary)?;
                    }
                }
                Err(e) => exit = exit.worst(report_bad_input(&mut out, &bar, &e)?),
            }
        }
    }
    bar.finish_and_clear();
    out.flush()?;
    Ok(exit)
}

/// Decode one input (a file or `-`) into its run summary, named after the path.
///
/// # Errors
/// The input cannot be opened or read.
pub(crate) fn summarize(
    path: &std::path::Path,
    format: agentshape_core::decode::Format,
    opts: &DecodeOptions,
) -> Result<RunSummary, CliError> {
    let reader = input::open(path)?;
    let mut summary = summarize_reader(reader, format, opts).map_err(|e| CliError::NoInput {
        path: input::display(path),
        source: std::io::Error::other(e),
    })?;
    summary.file = Some(input::display(path));
    Ok(summary)
}

/// The exit code a run summary alone implies: 3 when the agent reported an error.
pub fn outcome(summary: &RunSummary) -> Exit {
    match summary.error_category {
        Some(c) if !c.is_heuristic() => Exit::AgentError,
        _ => Exit::Ok,
    }
}

/// A few readable lines about one run.
pub fn human(out: &mut Out, s: &RunSummary) -> std::io::Result<()> {
    let name = s.file.as_deref().unwrap_or("-");
    // Native formats print as `--format` spells them (`claude-session`).
    let format = serde_json::to_value(s.format)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|_| s.format.is_native())
        .unwrap_or_else(|| format!("{:?}", s.format).to_lowercase());
    let mut head = vec![format];
    if let Some(m) = &s.model {
        head.push(clean(m).into_owned());
    }
    if let Some(r) = &s.result {
        if let Some(t) = r.num_turns {
            head.push(format!("{t} turns"));
        }
        if let Some(ms) = r.duration_ms {
            head.push(format!("{:.1} s", ms as f64 / 1000.0));
        }
        if let Some(c) = r.total_cost_usd {
            head.push(format!("${c:.4}"));
        }
        head.push(format!(
            "{} in / {} out tokens",
            r.usage.input_tokens, r.usage.output_tokens
        ));
    }
    head.push(format!("{} tool uses", s.tool_uses));
    let status = match (&s.error, s.error_category, s.saw_result) {
        (Some(_), Some(c), _) => out.paint(Style::Bad, &format!("error ({})", c.as_str())),
        (Some(_), None, _) => out.paint(Style::Bad, "error"),
        (None, Some(c), _) => out.paint(Style::Warn, &format!("suspect ({})", c.as_str())),
        (None, None, true) => out.paint(Style::Ok, "ok"),
        (None, None, false) => out.paint(Style::Warn, "no result"),
    };
    let title = out.paint(Style::Bold, name);
    out.line(&format!("{title}  {status}  {}", head.join(" · ")))?;
    if let Some(e) = &s.error {
        out.line(&format!("  error: {}", truncate(e, 160)))?;
    }
    if let Some(session) = &s.session {
        let t = &session.tokens;
        let errors: u64 = session.tool_errors.values().sum();
        let line = format!(
            "  session: {} {} · {} · {} prompts · {} in / {} out / {} cache read / {} cache write tokens · {} tool errors · {} sub-agents · {} compactions · {} API errors",
            session.agent,
            session.agent_version.as_deref().unwrap_or("?"),
            clean(session.project.as_deref().unwrap_or("-")),
            session.turns,
            t.input,
            t.output,
            t.cache_read,
            t.cache_write,
            errors,
            session.subagents.len(),
            session.compactions,
            session.api_error_count,
        );
        out.line(&out.paint(Style::Dim, &line))?;
    }
    if s.skipped_lines > 0 || s.blank_lines > 0 {
        let detail = format!(
            "  skipped {} of {} lines ({} malformed, {} non-object, {} too long), {} blank",
            s.skipped_lines,
            s.lines,
            s.malformed_lines,
            s.non_object_lines,
            s.too_long_lines,
            s.blank_lines
        );
        out.line(&out.paint(Style::Dim, &detail))?;
    }
    for w in &s.warnings {
        out.line(&out.paint(Style::Warn, &format!("  warning: {}", truncate(w, 160))))?;
    }
    Ok(())
}

/// At most `max` characters of `s`, with an ellipsis when cut, on one line,
/// cleaned for the terminal (Note [Terminal safety]).
pub fn truncate(s: &str, max: usize) -> String {
    let flat: String = clean(s)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}
