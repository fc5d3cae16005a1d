//! `agentshape check`: `x-invariants` per file, contradictions across files.
//!
//! Each input is an agent's output: a JSON file, a reply with JSON in it, or a
//! transcript. It goes through the same decode + extract pipeline as `extract`
//! (a plain JSON file is a reply whose whole text is the value), is validated
//! against the schema and its invariants are evaluated. With
//! `--contradictions`, the extracted values are then compared across files.
//!
//! With `--json`, stdout carries one line per file
//! `{"file", "method", "valid", "errors"}` (invariant violations have
//! `kind: "invariant"` and `rule`), then one line per contradiction in the error
//! shape plus `kind: "contradiction"`, `key`, `values` (the items themselves go
//! only to `--out`). Exit 1 when anything was found, 0 when clean; 2/3 as
//! `extract` when a file has no value or reports an agent error.

use std::io::Write;

use agentshape_core::Extraction;
use agentshape_core::check::{Contradiction, ContradictionOptions, find_contradictions};
use agentshape_core::decode::DecodeOptions;
use anyhow::Context as _;
use rayon::prelude::*;
use serde::Serialize;

use crate::args::CheckArgs;
use crate::commands::parse::truncate;
use crate::commands::{extract, format_of, report_bad_input};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{Out, Style};

/// One file's verdict, as printed with `--json`.
#[derive(Debug, Serialize)]
struct FileVerdict<'a> {
    file: String,
    method: &'static str,
    valid: bool,
    errors: &'a [agentshape_core::Violation],
}

/// Run `check`.
///
/// A file that cannot be read is reported in its place, left out of the
/// contradictions, and the rest go on (Note [Batch exit codes]).
///
/// # Errors
/// A bad schema, rule or option, or a failing output.
pub fn run(args: &CheckArgs) -> anyhow::Result<Exit> {
    let selection = input::select(&args.schema)?;
    let defaults = selection
        .profile
        .as_ref()
        .and_then(|p| p.contradictions.clone());
    let contradictions = contradiction_options(args, defaults)?;
    if selection.validator.is_none() && contradictions.is_none() {
        return Err(CliError::Usage(
            "nothing to check: give --schema or --profile (invariants) and/or --contradictions"
                .into(),
        )
        .into());
    }
    let opts = selection.options(false);
    let decode = DecodeOptions::default();
    let format = format_of(args.format);
    let mut out = Out::new(args.output);
    let bar = out.progress(args.files.len() as u64, "files");
    let results: Vec<Result<Extraction, CliError>> = args
        .files
        .par_iter()
        .map(|path| {
            let r = extract::one_file(path, format, &decode, &opts);
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    let mut exit = Exit::Ok;
    let mut extractions = Vec::with_capacity(results.len());
    let mut with_findings = 0usize;
    for (path, result) in args.files.iter().zip(results) {
        let e = match result {
            Ok(e) => e,
            Err(err) => {
                exit = exit.worst(report_bad_input(&mut out, &bar, &err)?);
                continue;
            }
        };
        exit = exit.worst(extract::outcome(&e));
        let name = input::display(path);
        with_findings += usize::from(!e.errors.is_empty());
        if out.json {
            out.json_line(&FileVerdict {
                file: name.clone(),
                method: e.method.as_str(),
                valid: e.valid,
                errors: &e.errors,
            })?;
        } else {
            human_file(&mut out, &name, &e)?;
        }
        extractions.push((name, e));
    }
    let mut found = 0usize;
    if let Some(copts) = contradictions {
        let sources: Vec<(&str, &serde_json::Value)> = extractions
            .iter()
            .filter_map(|(name, e)| e.value.as_ref().map(|v| (name.as_str(), v)))
            .collect();
        let report = find_contradictions(&sources, &copts);
        found = report.contradictions.len();
        if found > 0 {
            exit = exit.worst(Exit::Invalid);
        }
        for c in &report.contradictions {
            if out.json {
                out.json_line(&Contradiction {
                    items: Vec::new(),
                    ..c.clone()
                })?;
            } else {
                out.line(&out.paint(Style::Bad, &format!("✗ contradiction: {}", c.message)))?;
            }
        }
        if !out.json {
            for s in &report.skipped {
                let line = format!("  note: {}: {}", s.source, s.reason);
                out.line(&out.paint(Style::Warn, &line))?;
            }
        }
        if let Some(path) = &args.out {
            write_report(path, &report)?;
            if !out.json {
                out.line(&out.paint(
                    Style::Dim,
                    &format!("contradictions report written to {}", path.display()),
                ))?;
            }
        }
    }
    if !out.json {
        let files = extractions.len();
        let line = format!(
            "{files} files: {with_findings} with findings; {found} contradiction{}",
            if found == 1 { "" } else { "s" }
        );
        let style = if exit == Exit::Ok {
            Style::Ok
        } else {
            Style::Bad
        };
        out.line(&out.paint(style, &line))?;
    }
    out.flush()?;
    Ok(exit)
}

/// The contradiction options, when any contradiction flag was given: the
/// profile's `[contradictions]` (else the code-review shape), then the flags.
fn contradiction_options(
    args: &CheckArgs,
    defaults: Option<ContradictionOptions>,
) -> Result<Option<ContradictionOptions>, CliError> {
    let wanted = args.contradictions
        || args.items.is_some()
        || args.key.is_some()
        || args.compare.is_some()
        || args.near_lines.is_some()
        || args.out.is_some();
    if !wanted {
        return Ok(None);
    }
    let mut opts = defaults.unwrap_or_default();
    if let Some(items) = &args.items {
        if !(items.is_empty() || items.starts_with('/')) {
            return Err(CliError::Usage(format!(
                "--items `{items}` is not a JSON Pointer (like `/findings`, or `` for the whole output)"
            )));
        }
        opts.items.clone_from(items);
    }
    let fields = |flag: &str, v: &[String]| -> Result<Vec<String>, CliError> {
        let v: Vec<String> = v
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        if v.is_empty() {
            return Err(CliError::Usage(format!(
                "--{flag} needs at least one field"
            )));
        }
        Ok(v)
    };
    if let Some(key) = &args.key {
        opts.key = fields("key", key)?;
    }
    if let Some(compare) = &args.compare {
        opts.compare = fields("compare", compare)?;
    }
    if args.near_lines.is_some() {
        opts.near_lines = args.near_lines;
    }
    Ok(Some(opts))
}

fn write_report(
    path: &std::path::Path,
    report: &agentshape_core::check::ContradictionReport,
) -> anyhow::Result<()> {
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        serde_json::to_writer_pretty(&mut f, report)?;
        f.write_all(b"\n")?;
        f.flush()
    };
    write()
        .map_err(|e| CliError::Usage(format!("cannot write `{}`: {e}", path.display())))
        .context("--out")?;
    Ok(())
}

fn human_file(out: &mut Out, name: &str, e: &Extraction) -> std::io::Result<()> {
    let invariants = e.errors.iter().filter(|v| v.rule.is_some()).count();
    let schema = e.errors.len() - invariants;
    let verdict = match (e.value.is_some(), schema, invariants) {
        (false, ..) => out.paint(Style::Bad, "nothing found"),
        (true, 0, 0) => out.paint(Style::Ok, "ok"),
        (true, s, i) => {
            let mut parts = Vec::new();
            if s > 0 {
                parts.push(format!("{s} schema error{}", if s == 1 { "" } else { "s" }));
            }
            if i > 0 {
                parts.push(format!(
                    "{i} invariant{} violated",
                    if i == 1 { "" } else { "s" }
                ));
            }
            out.paint(Style::Bad, &parts.join(", "))
        }
    };
    let title = out.paint(Style::Bold, name);
    out.line(&format!("{title}  {verdict}  via {}", e.method.as_str()))?;
    if let Some(err) = e.run.as_ref().and_then(|r| r.error.as_ref()) {
        out.line(&out.paint(
            Style::Bad,
            &format!("  agent error: {}", truncate(err, 140)),
        ))?;
    }
    for v in &e.errors {
        let at = if v.instance_path.is_empty() {
            "(root)"
        } else {
            &v.instance_path
        };
        out.line(&out.paint(
            Style::Bad,
            &format!("  ✗ {at}: {}", truncate(&v.message, 160)),
        ))?;
        if let Some(rule) = &v.rule {
            out.line(&out.paint(Style::Dim, &format!("    rule: {rule}")))?;
        }
    }
    Ok(())
}
