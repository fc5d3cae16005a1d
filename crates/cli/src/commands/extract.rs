//! `agentshape extract`: decode (auto) + extract + validate replies or transcripts.

use std::path::{Path, PathBuf};

use agentshape_core::decode::{DecodeOptions, Format};
use agentshape_core::extract::{ExtractOptions, extract_decoded, extract_text};
use agentshape_core::{Extraction, Method};
use indicatif::ProgressBar;
use rayon::prelude::*;
use serde_json::Value;

use crate::args::ExtractArgs;
use crate::commands::parse::truncate;
use crate::commands::{LineRead, format_of, par_lines, parse, report_bad_input};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style};

/// Run `extract`.
///
/// A file that cannot be read is reported in its place and the rest go on
/// (Note [Batch exit codes]).
///
/// # Errors
/// A bad schema or profile, or a failing stdout.
pub fn run(args: &ExtractArgs) -> anyhow::Result<Exit> {
    let selection = input::select(&args.schema)?;
    let files: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let opts = selection.options(args.coerce);
    let mut out = Out::new(args.output);
    if args.jsonl {
        let mut exit = Exit::Ok;
        for file in &files {
            exit = exit.worst(jsonl(file, args, &opts, &mut out)?);
        }
        out.flush()?;
        return Ok(exit);
    }
    let decode = DecodeOptions {
        max_line_bytes: args.max_line_bytes,
        ..DecodeOptions::default()
    };
    let format = format_of(args.format);
    let bar = out.progress(files.len() as u64, "files");
    let mut exit = Exit::Ok;
    // Large windows keep every core busy: a window waits for its slowest file.
    let window = (rayon::current_num_threads().max(1) * 64).max(256);
    for chunk in files.chunks(window) {
        let results: Vec<Result<Extraction, CliError>> = chunk
            .par_iter()
            .map(|path| one_file(path, format, &decode, &opts))
            .collect();
        for (path, result) in chunk.iter().zip(results) {
            bar.inc(1);
            let extraction = match result {
                Ok(e) => e,
                Err(e) => {
                    exit = exit.worst(report_bad_input(&mut out, &bar, &e)?);
                    continue;
                }
            };
            exit = exit.worst(outcome(&extraction));
            if out.json {
                out.json_line(&extraction)?;
            } else {
                human(&mut out, &input::display(path), &extraction)?;
            }
        }
    }
    bar.finish_and_clear();
    out.flush()?;
    Ok(exit)
}

/// Decode one input; a transcript goes through `extract_run`, plain text
/// through `extract_text`.
pub(crate) fn one_file(
    path: &Path,
    format: Format,
    decode: &DecodeOptions,
    opts: &ExtractOptions<'_>,
) -> Result<Extraction, CliError> {
    let summary = parse::summarize(path, format, decode)?;
    // Shared with `serve`'s playground, so both give the same answer.
    Ok(extract_decoded(summary, opts))
}

/// The exit code of one extraction (DESIGN.md's codes).
pub fn outcome(e: &Extraction) -> Exit {
    if let Some(run) = &e.run {
        if parse::outcome(run) == Exit::AgentError {
            return Exit::AgentError;
        }
    }
    if e.method == Method::None {
        Exit::NoOutput
    } else if e.valid {
        Exit::Ok
    } else {
        Exit::Invalid
    }
}

/// `--jsonl`: one reply per line, one result per line, in input order.
///
/// Note [JSONL replies]: a line is a JSON string (the reply) or an object whose
/// `text` field holds it; an `id` field, when present, is echoed so results
/// can be joined back. A line that is neither still gets a result line (value
/// null, method none, with `input_error`), so output lines match input lines
/// one to one and nothing is silently dropped; blank lines are skipped.
fn jsonl(
    path: &Path,
    args: &ExtractArgs,
    opts: &ExtractOptions<'_>,
    out: &mut Out,
) -> anyhow::Result<Exit> {
    let mut reader = match input::open(path) {
        Ok(r) => r,
        Err(e) => return Ok(report_bad_input(out, &ProgressBar::hidden(), &e)?),
    };
    let mut exit = Exit::Ok;
    let mut counts = Tally::default();
    let json = out.json;
    par_lines(
        &mut *reader,
        args.max_line_bytes,
        |n, line, got| one_line(n, line, got, opts, json),
        |(code, method, valid, bytes)| {
            exit = exit.worst(code);
            counts.add(method, valid);
            out.raw(&bytes)
        },
    )?;
    if !out.json {
        let summary = counts.render();
        out.line(&summary)?;
    }
    Ok(exit)
}

fn one_line(
    n: u64,
    line: &[u8],
    got: LineRead,
    opts: &ExtractOptions<'_>,
    json: bool,
) -> (Exit, Method, bool, Vec<u8>) {
    let (extraction, id, input_error) = match reply_of(line, got) {
        Ok((text, id)) => (extract_text(&text, opts), id, None),
        Err(msg) => (Extraction::none(), None, Some(msg)),
    };
    let code = outcome(&extraction);
    let mut bytes = Vec::new();
    if json {
        let mut obj = match serde_json::to_value(&extraction) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        if let Some(id) = id {
            obj.insert("id".into(), id);
        }
        obj.insert("line".into(), Value::from(n));
        if let Some(msg) = input_error {
            obj.insert("input_error".into(), Value::String(msg));
        }
        // Serializing a map of JSON values cannot fail.
        let _ = serde_json::to_writer(&mut bytes, &obj);
        bytes.push(b'\n');
    } else if code != Exit::Ok {
        let what = match (&input_error, extraction.method) {
            (Some(msg), _) => msg.clone(),
            (None, Method::None) => "no structured output".into(),
            (None, m) => format!(
                "{} but invalid: {}",
                m.as_str(),
                extraction
                    .errors
                    .first()
                    .map(|e| format!("{} {}", e.instance_path, e.message))
                    .unwrap_or_default()
            ),
        };
        bytes.extend_from_slice(format!("line {n}: {}\n", truncate(&what, 160)).as_bytes());
    }
    (code, extraction.method, extraction.valid, bytes)
}

/// The reply text (and id) of one JSONL line.
fn reply_of(line: &[u8], got: LineRead) -> Result<(String, Option<Value>), String> {
    if got == LineRead::TooLong {
        return Err("line longer than --max-line-bytes; skipped".into());
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::String(s)) => Ok((s, None)),
        Ok(Value::Object(mut m)) => match m.remove("text") {
            Some(Value::String(s)) => Ok((s, m.remove("id"))),
            _ => Err("object has no string `text` field".into()),
        },
        Ok(_) => Err("expected a JSON string or an object with a `text` field".into()),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

/// Counts for the human summary of a JSONL run.
#[derive(Default)]
struct Tally {
    total: u64,
    valid: u64,
    by_method: std::collections::BTreeMap<&'static str, u64>,
}

impl Tally {
    fn add(&mut self, method: Method, valid: bool) {
        self.total += 1;
        self.valid += u64::from(valid);
        *self.by_method.entry(method.as_str()).or_default() += 1;
    }

    fn render(&self) -> String {
        let methods: Vec<String> = self
            .by_method
            .iter()
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        format!(
            "{} replies: {} valid, {} not ({})",
            self.total,
            self.valid,
            self.total - self.valid,
            methods.join(", ")
        )
    }
}

/// A few readable lines about one extraction.
fn human(out: &mut Out, name: &str, e: &Extraction) -> std::io::Result<()> {
    let verdict = match (e.method, e.valid) {
        (Method::None, _) => out.paint(Style::Bad, "nothing found"),
        (_, true) => out.paint(Style::Ok, "valid"),
        (_, false) => out.paint(Style::Bad, &format!("invalid ({} errors)", e.errors.len())),
    };
    let title = out.paint(Style::Bold, name);
    out.line(&format!("{title}  {verdict}  via {}", e.method.as_str()))?;
    if let Some(run) = &e.run {
        if let Some(err) = &run.error {
            let cat = run.error_category.map_or("error", |c| c.as_str());
            out.line(&out.paint(
                Style::Bad,
                &format!("  agent error ({cat}): {}", truncate(err, 140)),
            ))?;
        }
        for w in &run.warnings {
            out.line(&out.paint(Style::Warn, &format!("  warning: {}", truncate(w, 140))))?;
        }
    }
    if let Some(value) = &e.value {
        for line in describe(value) {
            out.line(&format!("  {line}"))?;
        }
    }
    if !e.repairs.is_empty() {
        let names: Vec<String> = e
            .repairs
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        out.line(&out.paint(Style::Dim, &format!("  repairs: {}", names.join(", "))))?;
    }
    if !e.coercions.is_empty() {
        out.line(&out.paint(Style::Dim, &format!("  coercions: {}", e.coercions.len())))?;
    }
    for err in e.errors.iter().take(5) {
        let at = if err.instance_path.is_empty() {
            "(root)"
        } else {
            &err.instance_path
        };
        out.line(&out.paint(
            Style::Bad,
            &format!("  ✗ {at}: {}", truncate(&err.message, 120)),
        ))?;
    }
    if e.errors.len() > 5 {
        out.line(&format!("  … {} more errors", e.errors.len() - 5))?;
    }
    Ok(())
}

/// One short line per top-level member of the value.
fn describe(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) => map
            .iter()
            .take(8)
            .map(|(k, v)| {
                let shown = match v {
                    Value::String(s) => truncate(s, 90),
                    Value::Array(a) => format!("[{} items]", a.len()),
                    Value::Object(o) => truncate(&Value::Object(o.clone()).to_string(), 90),
                    other => other.to_string(),
                };
                format!("{k}: {shown}")
            })
            .collect(),
        other => vec![truncate(&other.to_string(), 100)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_lines_are_strings_or_text_objects() {
        let (t, id) = reply_of(br#""hello {}""#, LineRead::Line).unwrap();
        assert_eq!((t.as_str(), id), ("hello {}", None));
        let (t, id) = reply_of(br#"{"id": 7, "text": "x"}"#, LineRead::Line).unwrap();
        assert_eq!((t.as_str(), id), ("x", Some(Value::from(7))));
        assert!(reply_of(b"[1]", LineRead::Line).is_err());
        assert!(reply_of(b"{\"text\": 1}", LineRead::Line).is_err());
        assert!(reply_of(b"nope", LineRead::Line).is_err());
    }
}
