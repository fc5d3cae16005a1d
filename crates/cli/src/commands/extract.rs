//! `agentshape extract`: decode (auto) + extract + validate replies or transcripts.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use agentshape_core::decode::{DecodeOptions, Format};
use agentshape_core::extract::{
    ExtractOptions, extract_decoded, extract_text, extract_text_compact,
};
use agentshape_core::{Extraction, Method, json};
use indicatif::ProgressBar;
use rayon::prelude::*;
use serde_json::Value;

use crate::args::ExtractArgs;
use crate::commands::parse::truncate;
use crate::commands::{GroupLine, LineRead, format_of, par_line_groups, parse, report_bad_input};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{MaskedLine, Out, Style};

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
    par_line_groups(
        &mut *reader,
        args.max_line_bytes,
        MASK_GROUP,
        |lines| group_of_lines(lines, opts, json),
        |results| {
            for (code, method, valid, _) in &results {
                exit = exit.worst(*code);
                counts.add(*method, *valid);
            }
            let lines: Vec<&MaskedLine> = results.iter().map(|r| &r.3).collect();
            out.masked_lines(&lines)
        },
    )?;
    if !out.json {
        let summary = counts.render();
        out.line(&summary)?;
    }
    Ok(exit)
}

thread_local! {
    /// Each worker's buffer for the lines' `text` (core's Note [Reused
    /// text buffers]): taken out while a line is read, so a line read on
    /// the same thread meanwhile (a pool job run while one waits) gets an
    /// empty one instead of a borrow error.
    static TEXT_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Lines whose result lines' heads are checked for secrets together
/// (output's Note [Heads read together]).
const MASK_GROUP: usize = 16;

/// The result lines of a group of input lines, in order: each made, then
/// their heads read together (output's Note [Heads read together]).
fn group_of_lines(
    lines: &[GroupLine<'_>],
    opts: &ExtractOptions<'_>,
    json: bool,
) -> Vec<(Exit, Method, bool, MaskedLine)> {
    let mut scratch = TEXT_BUFFER.take();
    let made: Vec<(Exit, Method, bool, Made)> = lines
        .iter()
        .map(|&(n, line, got)| one_line_in(n, line, got, opts, json, &mut scratch))
        .collect();
    TEXT_BUFFER.set(scratch);
    let heads_clean = crate::output::heads_clean(made.iter().filter_map(|(_, _, _, m)| match m {
        Made::Object { head, .. } => Some(head.as_slice()),
        Made::Whole(_) => None,
    }));
    made.into_iter()
        .map(|(code, method, valid, made)| (code, method, valid, made.masked(heads_clean)))
        .collect()
}

/// A result line as [`one_line_in`] made it: whole, or a JSON line in the
/// parts [`MaskedLine::object`] masks apart (its Note [Own words after the
/// value]).
enum Made {
    Whole(Vec<u8>),
    Object {
        head: Vec<u8>,
        own: Vec<u8>,
        numbers: Vec<u8>,
    },
}

impl Made {
    /// The line masked; `heads_clean` when [`crate::output::heads_clean`]
    /// passed its head with the group's.
    fn masked(self, heads_clean: bool) -> MaskedLine {
        match self {
            Made::Whole(bytes) => MaskedLine::new(bytes),
            Made::Object { head, own, numbers } => {
                MaskedLine::object(head, &own, &numbers, heads_clean)
            }
        }
    }

    /// The line's bytes before masking.
    #[cfg(test)]
    fn bytes(self) -> Vec<u8> {
        match self {
            Made::Whole(bytes) => bytes,
            Made::Object {
                mut head,
                own,
                numbers,
            } => {
                head.extend_from_slice(&own);
                head.extend_from_slice(&numbers);
                head.extend_from_slice(b"}\n");
                head
            }
        }
    }
}

/// One line's result for [`group_of_lines`], with `text` unescaped into
/// `scratch`.
fn one_line_in(
    n: u64,
    line: &[u8],
    got: LineRead,
    opts: &ExtractOptions<'_>,
    json: bool,
    scratch: &mut Vec<u8>,
) -> (Exit, Method, bool, Made) {
    let reply = reply_of(line, got, scratch);
    if json {
        // The value is written as it is extracted (core's Note [Writing
        // from the tape]); `text_len` sizes the line as in `result_line`.
        let (extraction, made) = match reply {
            Ok((text, id)) => {
                let mut bytes = Vec::with_capacity(text.len() + 256);
                bytes.extend_from_slice(VALUE_FIELD);
                let e = extract_text_compact(&text, opts, &mut bytes);
                // The fields after the value are this program's words
                // unless they quote the input (coercions, errors,
                // warnings, a run, an id that is not a number).
                let own_only = e.coercions.is_empty()
                    && e.errors.is_empty()
                    && e.warnings.is_empty()
                    && e.run.is_none()
                    && id.as_ref().is_none_or(Value::is_number);
                let made = if own_only {
                    let mut own = Vec::with_capacity(128);
                    result_fields(&mut own, &e);
                    let mut numbers = Vec::with_capacity(32);
                    line_fields(&mut numbers, id.as_ref(), n, None);
                    Made::Object {
                        head: bytes,
                        own,
                        numbers,
                    }
                } else {
                    result_line_rest(&mut bytes, &e, id.as_ref(), n, None);
                    Made::Whole(bytes)
                };
                (e, made)
            }
            Err(msg) => {
                let e = Extraction::none();
                let bytes = result_line(&e, None, n, Some(&msg), 0);
                (e, Made::Whole(bytes))
            }
        };
        return (
            outcome(&extraction),
            extraction.method,
            extraction.valid,
            made,
        );
    }
    let (extraction, input_error) = match reply {
        Ok((text, _)) => (extract_text(&text, opts), None),
        Err(msg) => (Extraction::none(), Some(msg)),
    };
    let code = outcome(&extraction);
    let mut bytes = Vec::new();
    if code != Exit::Ok {
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
    (
        code,
        extraction.method,
        extraction.valid,
        Made::Whole(bytes),
    )
}

/// One `--json` result line: the extraction's fields, then `id` (when the
/// input line had one), `line` and `input_error` (when it was not a reply).
///
/// Serialised straight from the extraction: building a `serde_json::Map`
/// first copied the whole extracted value once more per line. The reference
/// for [`result_line`], which writes the same bytes faster.
#[cfg(test)]
fn result_line_serde(
    extraction: &Extraction,
    id: Option<Value>,
    line: u64,
    input_error: Option<&str>,
) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct ResultLine<'a> {
        #[serde(flatten)]
        extraction: &'a Extraction,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        line: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        input_error: Option<&'a str>,
    }
    let mut bytes = Vec::with_capacity(256);
    // Serializing plain data and JSON values cannot fail.
    let _ = serde_json::to_writer(
        &mut bytes,
        &ResultLine {
            extraction,
            id,
            line,
            input_error,
        },
    );
    bytes.push(b'\n');
    bytes
}

/// `result_line_serde`'s bytes (the test-only reference), written by hand: the values (most of the
/// bytes) through core's `json::write_compact`, the small fields through
/// `serde_json`. Byte for byte the same (`result_lines_are_byte_identical`).
///
/// `text_len`, the reply's length, sizes the buffer: the value came out of
/// that text and is written back about as long, so the line is allocated
/// once instead of growing from a guess.
fn result_line(
    extraction: &Extraction,
    id: Option<&Value>,
    line: u64,
    input_error: Option<&str>,
    text_len: usize,
) -> Vec<u8> {
    let value_len = extraction.value.as_ref().map_or(0, |v| match v {
        Value::String(s) => s.len(),
        _ => text_len,
    });
    let mut out = Vec::with_capacity(value_len + 256);
    out.extend_from_slice(VALUE_FIELD);
    match &extraction.value {
        Some(v) => json::write_compact(&mut out, v),
        None => out.extend_from_slice(b"null"),
    }
    result_line_rest(&mut out, extraction, id, line, input_error);
    out
}

/// How a result line starts: its value comes next.
const VALUE_FIELD: &[u8] = b"{\"value\":";

/// The fields of a result line after its value (written by the caller
/// after [`VALUE_FIELD`]), to the closing newline.
fn result_line_rest(
    out: &mut Vec<u8>,
    extraction: &Extraction,
    id: Option<&Value>,
    line: u64,
    input_error: Option<&str>,
) {
    result_fields(out, extraction);
    line_fields(out, id, line, input_error);
    out.extend_from_slice(b"}\n");
}

/// The extraction's fields after its value, each after a `,`: `method`
/// to `errors`, then `warnings` and `run` when it has them.
fn result_fields(out: &mut Vec<u8>, extraction: &Extraction) {
    out.extend_from_slice(b",\"method\":\"");
    out.extend_from_slice(extraction.method.as_str().as_bytes());
    out.extend_from_slice(b"\",\"repairs\":");
    // Serializing plain data cannot fail.
    let _ = serde_json::to_writer(&mut *out, &extraction.repairs);
    out.extend_from_slice(b",\"coercions\":");
    let _ = serde_json::to_writer(&mut *out, &extraction.coercions);
    out.extend_from_slice(if extraction.valid {
        b",\"valid\":true,\"errors\":"
    } else {
        b",\"valid\":false,\"errors\":"
    });
    let _ = serde_json::to_writer(&mut *out, &extraction.errors);
    if !extraction.warnings.is_empty() {
        out.extend_from_slice(b",\"warnings\":");
        let _ = serde_json::to_writer(&mut *out, &extraction.warnings);
    }
    if let Some(run) = &extraction.run {
        out.extend_from_slice(b",\"run\":");
        let _ = serde_json::to_writer(&mut *out, run);
    }
}

/// The input line's fields, each after a `,`: `id` (when it had one),
/// `line`, and `input_error` (when it was not a reply).
fn line_fields(out: &mut Vec<u8>, id: Option<&Value>, line: u64, input_error: Option<&str>) {
    if let Some(id) = id {
        out.extend_from_slice(b",\"id\":");
        json::write_compact(out, id);
    }
    out.extend_from_slice(b",\"line\":");
    out.extend_from_slice(line.to_string().as_bytes());
    if let Some(msg) = input_error {
        out.extend_from_slice(b",\"input_error\":");
        json::write_str(out, msg);
    }
}

/// The reply text (and id) of one JSONL line.
///
/// Note [Fast JSONL lines]: a line is usually `{"id", "text", ...}` with
/// other fields beside (a corpus line carries its whole `expected` value).
/// Core's `json::reply_of_line` reads `text` and `id` and checks the rest
/// without building it (Note [Reading reply lines] there); whatever it
/// declines (a repeated field, a `text` that is not a string, anything but
/// a string or an object, a number it is not sure of) goes through the
/// `Value` reading, which gives the same answers and messages as before
/// (`jsonl_reply_table`, and core's proptest against the `Value` reading).
/// The text is borrowed from `scratch` when core reads the line (its Note
/// [Reused text buffers]).
fn reply_of<'s>(
    line: &[u8],
    got: LineRead,
    scratch: &'s mut Vec<u8>,
) -> Result<(Cow<'s, str>, Option<Value>), String> {
    if got == LineRead::TooLong {
        return Err("line longer than --max-line-bytes; skipped".into());
    }
    if let Some((text, id)) = json::reply_of_line_into(line, scratch) {
        return Ok((Cow::Borrowed(text), id));
    }
    reply_of_value(line).map(|(text, id)| (Cow::Owned(text), id))
}

const NO_TEXT: &str = "object has no string `text` field";

/// [`reply_of`] through a whole `Value`: the reference reading.
fn reply_of_value(line: &[u8]) -> Result<(String, Option<Value>), String> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::String(s)) => Ok((s, None)),
        Ok(Value::Object(mut m)) => match m.remove("text") {
            Some(Value::String(s)) => Ok((s, m.remove("id"))),
            _ => Err(NO_TEXT.into()),
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
    // Core's warnings about the choice (several top-level values, which
    // one was taken), shown as the run's are.
    for w in &e.warnings {
        out.line(&out.paint(Style::Warn, &format!("  warning: {}", truncate(w, 140))))?;
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

    /// Every line shape gives the same text, id and message as reading the
    /// whole line into a `Value` did (the fast reader must not change them).
    #[test]
    fn jsonl_reply_table() {
        type Row = (
            &'static str,
            Result<(&'static str, Option<Value>), &'static str>,
        );
        let rows: &[Row] = &[
            (r#""a\nb""#, Ok(("a\nb", None))),
            (r#"{"text": "x"}"#, Ok(("x", None))),
            (r#"{"id": 3, "text": "x"}"#, Ok(("x", Some(Value::from(3))))),
            (
                r#"{"text": "x", "id": "r-1"}"#,
                Ok(("x", Some(Value::from("r-1")))),
            ),
            // A null id is still echoed, as the `Value` reading did.
            (r#"{"id": null, "text": "x"}"#, Ok(("x", Some(Value::Null)))),
            (
                r#"{"id": {"k": [1]}, "text": "x"}"#,
                Ok(("x", Some(serde_json::json!({"k": [1]})))),
            ),
            // Other fields, however deep, are skipped, not kept.
            (
                r#"{"id": 1, "kind": "clean", "text": "t", "expected": {"a": [1, {"b": null}]}}"#,
                Ok(("t", Some(Value::from(1)))),
            ),
            // A repeated field: the last one wins, as in a `Value`.
            (r#"{"text": "a", "text": "b"}"#, Ok(("b", None))),
            (
                r#"{"id": 1, "id": 2, "text": "a"}"#,
                Ok(("a", Some(Value::from(2)))),
            ),
            (r#"{"text": 1}"#, Err("object has no string `text` field")),
            (
                r#"{"text": null}"#,
                Err("object has no string `text` field"),
            ),
            (r#"{"id": 1}"#, Err("object has no string `text` field")),
            (
                "[1]",
                Err("expected a JSON string or an object with a `text` field"),
            ),
            (
                "42",
                Err("expected a JSON string or an object with a `text` field"),
            ),
            ("nope", Err("not JSON")),
            (r#"{"text": "x"} trailing"#, Err("not JSON")),
            (r#"{"text": "x""#, Err("not JSON")),
        ];
        let mut scratch = Vec::new();
        for (line, want) in rows {
            let got = reply_of(line.as_bytes(), LineRead::Line, &mut scratch);
            match (got, want) {
                (Ok((text, id)), Ok((t, i))) => {
                    assert_eq!((&*text, &id), (*t, i), "line {line}");
                }
                (Err(msg), Err(prefix)) => {
                    assert!(msg.starts_with(prefix), "line {line}: {msg}");
                }
                (got, _) => panic!("line {line}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn jsonl_result_line_has_the_extraction_then_id_line_and_input_error() {
        let mut e = Extraction::none();
        e.value = Some(serde_json::json!({"a": 1}));
        e.method = Method::Bare;
        e.valid = true;
        let bytes = result_line(&e, Some(&Value::from(7)), 3, None, 0);
        assert_eq!(bytes.last(), Some(&b'\n'));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"value": {"a": 1}, "method": "bare", "repairs": [],
                "coercions": [], "valid": true, "errors": [], "id": 7, "line": 3})
        );
        let bytes = result_line(&Extraction::none(), None, 9, Some("bad"), 0);
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"value": null, "method": "none", "repairs": [],
                "coercions": [], "valid": false, "errors": [], "line": 9,
                "input_error": "bad"})
        );
    }

    /// The hand-written result line is byte for byte the serde one, for
    /// every field combination and awkward strings.
    #[test]
    fn result_lines_are_byte_identical() {
        let text = "a\"b\\c\n\u{1}\u{7f}é😀 ".repeat(9);
        let values = [
            None,
            Some(
                serde_json::json!({"s": text, "n": [1, -2, 2.5, 1e300, null, true],
                                    "o": {"k\"": {}}, "e": []}),
            ),
            Some(Value::from(text.clone())),
            Some(Value::from(u64::MAX)),
        ];
        for value in values {
            for valid in [true, false] {
                let mut e = Extraction::none();
                e.value.clone_from(&value);
                e.method = Method::Repaired;
                e.valid = valid;
                e.repairs = vec![agentshape_core::outcome::Repair::TrailingComma];
                if !valid {
                    e.errors.push(agentshape_core::Violation {
                        instance_path: "/a".into(),
                        schema_path: "/b".into(),
                        message: text.clone(),
                        kind: None,
                        rule: None,
                    });
                    // Core's warnings (several top-level values), escaped alike.
                    e.warnings.push(format!("2 top-level values; {text}"));
                }
                for id in [
                    None,
                    Some(Value::Null),
                    Some(serde_json::json!({"x": [text]})),
                ] {
                    for err in [None, Some("not JSON: \"x\"\n")] {
                        let want = result_line_serde(&e, id.clone(), 42, err);
                        let got = result_line(&e, id.as_ref(), 42, err, 100);
                        assert_eq!(
                            String::from_utf8(got).unwrap(),
                            String::from_utf8(want).unwrap()
                        );
                    }
                }
            }
        }
    }

    /// The inputs (text) of core's shared extract table.
    fn table_inputs() -> Vec<String> {
        const CASES: &str = include_str!("../../../core/tests/data/extract/cases.jsonl");
        CASES
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|row| {
                serde_json::from_str::<Value>(row).unwrap()["input"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    /// A `--json` line of `extract --jsonl` (its value written as it is
    /// extracted) is the serde line of [`extract_text`]'s extraction, for
    /// every input of core's shared extract table, with and without an id.
    #[test]
    fn jsonl_json_lines_are_the_serde_lines_of_extract_text() {
        let opts = ExtractOptions::default();
        let mut seen = 0;
        // And replies holding secrets, in the value and beside it.
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let planted = [
            format!(r#"Here: {{"api_key": "{token}", "n": 1}}"#),
            format!("```json\n[\"{token}\"]\n```"),
            format!(
                r#"{{unquoted_key: 'x', note: "password = hunter2hunter2hunter2"}} and {token}"#
            ),
        ];
        let texts = table_inputs().into_iter().chain(planted);
        for text in texts {
            let text = text.as_str();
            for id in [None, Some(Value::from("r-1")), Some(Value::from(12))] {
                let mut line = serde_json::json!({"text": text});
                if let Some(id) = &id {
                    line["id"] = id.clone();
                }
                let line = serde_json::to_vec(&line).unwrap();
                let (.., got) = one_line_in(5, &line, LineRead::Line, &opts, true, &mut Vec::new());
                let got = got.bytes();
                // Masked in parts (Note [Own words after the value]) as whole.
                let (.., made) =
                    one_line_in(5, &line, LineRead::Line, &opts, true, &mut Vec::new());
                let masked = made.masked(false);
                assert_eq!(masked.bytes(), MaskedLine::new(got.clone()).bytes());
                assert!(!String::from_utf8_lossy(masked.bytes()).contains(&token));
                let want = result_line_serde(&extract_text(text, &opts), id, 5, None);
                assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(want).unwrap()
                );
                seen += 1;
            }
        }
        assert!(seen > 200, "only {seen} lines");
    }

    /// Output's Note [Heads read together]: lines made and masked 16 at a
    /// time print byte for byte what each line masked alone prints, in
    /// groups that hold no secret, one, or several, with secrets in the
    /// value (the head) and beside it; and the secrets are masked.
    #[test]
    fn heads_read_together_print_what_each_line_alone_prints() {
        let opts = ExtractOptions::default();
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let mut texts = table_inputs();
        // Secrets at a few places, so some groups of 16 hold none.
        for (i, planted) in [
            format!(r#"Here: {{"api_key": "{token}", "n": 1}}"#),
            format!("```json\n[\"{token}\"]\n```"),
            format!(r#"{{"note": "AKIAIOSFODNN7EXAMPLE and {token}"}}"#),
        ]
        .into_iter()
        .enumerate()
        {
            let at = (i * 37 + 5).min(texts.len());
            texts.insert(at, planted);
        }
        let lines: Vec<Vec<u8>> = texts
            .iter()
            .map(|t| serde_json::to_vec(&serde_json::json!({"text": t})).unwrap())
            .collect();
        assert!(lines.len() > 48, "only {} lines", lines.len());
        let (mut clean_groups, mut masked) = (0, 0);
        for (g, group) in lines.chunks(MASK_GROUP).enumerate() {
            let numbered: Vec<GroupLine<'_>> = group
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    (
                        (g * MASK_GROUP + i + 1) as u64,
                        l.as_slice(),
                        LineRead::Line,
                    )
                })
                .collect();
            let together = group_of_lines(&numbered, &opts, true);
            let heads: Vec<Vec<u8>> = numbered
                .iter()
                .filter_map(|&(n, line, got)| {
                    match one_line_in(n, line, got, &opts, true, &mut Vec::new()).3 {
                        Made::Object { head, .. } => Some(head),
                        Made::Whole(_) => None,
                    }
                })
                .collect();
            clean_groups +=
                usize::from(crate::output::heads_clean(heads.iter().map(Vec::as_slice)));
            for (&(n, line, got), (.., t)) in numbered.iter().zip(&together) {
                let (.., made) = one_line_in(n, line, got, &opts, true, &mut Vec::new());
                let alone = made.masked(false);
                assert_eq!(
                    String::from_utf8_lossy(t.bytes()),
                    String::from_utf8_lossy(alone.bytes()),
                    "line {n}"
                );
                assert!(!String::from_utf8_lossy(t.bytes()).contains(&token));
                masked += usize::from(String::from_utf8_lossy(t.bytes()).contains("[REDACTED:"));
            }
        }
        assert!(clean_groups > 0, "no group was read together as clean");
        assert!(masked >= 3, "{masked} lines masked");
    }

    #[test]
    fn jsonl_lines_are_strings_or_text_objects() {
        let scratch = &mut Vec::new();
        let (t, id) = reply_of(br#""hello {}""#, LineRead::Line, scratch).unwrap();
        assert_eq!((&*t, id), ("hello {}", None));
        let (t, id) = reply_of(br#"{"id": 7, "text": "x"}"#, LineRead::Line, scratch).unwrap();
        assert_eq!((&*t, id), ("x", Some(Value::from(7))));
        assert!(reply_of(b"[1]", LineRead::Line, scratch).is_err());
        assert!(reply_of(b"{\"text\": 1}", LineRead::Line, scratch).is_err());
        assert!(reply_of(b"nope", LineRead::Line, scratch).is_err());
    }
}
