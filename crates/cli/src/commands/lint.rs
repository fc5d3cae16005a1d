//! `agentshape lint`: what a provider will reject or ignore in a schema;
//! `--fix` prints a schema it accepts.

use agentshape_core::lint::{Dialect, Finding, Severity, fix, lint};
use serde_json::json;

use crate::args::{LintArgs, ProviderArg};
use crate::exit::Exit;
use crate::input;
use crate::output::{Out, Style, eprint};

/// The lint dialect of a `--provider` value.
pub fn dialect_of(p: ProviderArg) -> Dialect {
    match p {
        // Claude Code hands the schema to the same models.
        ProviderArg::Anthropic | ProviderArg::ClaudeCode => Dialect::Anthropic,
        ProviderArg::Openai | ProviderArg::OpenaiResponses => Dialect::Openai,
        ProviderArg::Gemini => Dialect::Gemini,
        ProviderArg::Ollama => Dialect::Ollama,
        ProviderArg::Local => Dialect::Local,
    }
}

/// Run `lint`.
///
/// Exit 0 when the provider accepts the schema (findings of ignored keywords
/// only), 1 when it would reject it. With `--fix` the exit code is that of the
/// fixed schema.
///
/// # Errors
/// A missing or bad schema, or a failing stdout.
pub fn run(args: &LintArgs) -> anyhow::Result<Exit> {
    let validator = input::load_schema(&args.schema)?;
    let schema = validator.schema();
    let dialect = dialect_of(args.provider);
    let mut out = Out::new(args.output);
    let findings = lint(schema, dialect);
    if args.fix {
        let fixed = fix(schema, dialect);
        let left = lint(&fixed.schema, dialect);
        for f in &left {
            eprintln_finding(&out, f);
        }
        if out.json {
            out.json_line(&json!({
                "provider": dialect.as_str(), "schema": fixed.schema, "wrapped": fixed.wrapped,
                "changes": fixed.changes, "findings_before": findings, "findings": left,
            }))?;
        } else {
            // The schema is data for a file (`> fixed.json`), not text for
            // people: written as is (JSON escapes control characters).
            out.raw(serde_json::to_string_pretty(&fixed.schema)?.as_bytes())?;
            out.raw(b"\n")?;
        }
        out.flush()?;
        return Ok(exit_of(&left));
    }
    if out.json {
        out.json_line(&json!({
            "provider": dialect.as_str(),
            "accepted": !findings.iter().any(|f| f.severity == Severity::Error),
            "findings": findings,
        }))?;
    } else {
        for f in &findings {
            let sev = match f.severity {
                Severity::Error => out.paint(Style::Bad, "error"),
                Severity::Ignored => out.paint(Style::Bold, "ignored"),
            };
            let at = if f.pointer.is_empty() {
                "(root)"
            } else {
                &f.pointer
            };
            out.line(&format!("{sev} {at} [{}] {}", f.rule, f.message))?;
        }
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        out.line(&format!(
            "{}: {errors} errors, {} ignored{}",
            dialect.as_str(),
            findings.len() - errors,
            if errors > 0 { " (try --fix)" } else { "" }
        ))?;
    }
    out.flush()?;
    Ok(exit_of(&findings))
}

fn exit_of(findings: &[Finding]) -> Exit {
    if findings.iter().any(|f| f.severity == Severity::Error) {
        Exit::Invalid
    } else {
        Exit::Ok
    }
}

/// Findings left after `--fix` go to stderr, so stdout stays the schema.
fn eprintln_finding(_out: &Out, f: &Finding) {
    let at = if f.pointer.is_empty() {
        "(root)"
    } else {
        &f.pointer
    };
    eprint(&format!(
        "agentshape: after fix: {at} [{}] {}",
        f.rule, f.message
    ));
}
