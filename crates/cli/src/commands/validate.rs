//! `agentshape validate`: one verdict per instance.

use std::io::{Read, Write as _};

use agentshape_core::validate::{Coercion, Validator};
use agentshape_core::{Violation, json};
use serde::Serialize;
use serde_json::Value;

use crate::args::ValidateArgs;
use crate::commands::parse::truncate;
use crate::commands::{LineRead, par_lines};
use crate::exit::{CliError, Exit};
use crate::input;
use crate::output::{MaskedLine, Out, Style};

/// Instances longer than this are not loaded (JSONL mode); 64 MiB like transcripts.
const MAX_LINE: usize = 64 << 20;

/// One verdict, as printed with `--json`.
#[derive(Debug, Serialize)]
struct Verdict {
    /// 1-based input line (`--jsonl` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    valid: bool,
    errors: Vec<Violation>,
    /// Coercions applied (`--coerce` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    coercions: Option<Vec<Coercion>>,
    /// The coerced instance (`--coerce` only, when something changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Value>,
}

/// Run `validate`.
///
/// # Errors
/// A missing input, a bad schema, or a failing stdout.
pub fn run(args: &ValidateArgs) -> anyhow::Result<Exit> {
    let validator = input::load_schema(&args.schema)?;
    let path = args
        .file
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("-"));
    input::check_exist(std::slice::from_ref(&path))?;
    let mut reader = input::open(&path)?;
    let mut out = Out::new(args.output);
    if !args.jsonl {
        // One instance is read whole: capped like a JSONL line, so
        // `validate s.json - < /dev/zero` ends instead of filling memory.
        let mut text = Vec::new();
        reader
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_to_end(&mut text)
            .map_err(|source| CliError::NoInput {
                path: input::display(&path),
                source,
            })?;
        if text.len() > MAX_LINE {
            return Err(CliError::NoInput {
                path: input::display(&path),
                source: std::io::Error::other("is larger than the 64 MiB limit"),
            }
            .into());
        }
        let verdict = judge(&validator, &text, None, args.coerce);
        let code = if verdict.valid {
            Exit::Ok
        } else {
            Exit::Invalid
        };
        write_verdict(&mut out, &verdict)?;
        out.flush()?;
        return Ok(code);
    }
    let mut exit = Exit::Ok;
    let (mut total, mut valid) = (0u64, 0u64);
    let json = out.json;
    par_lines(
        &mut *reader,
        MAX_LINE,
        |n, line, got| {
            let verdict = if got == LineRead::TooLong {
                failed(Some(n), "instance longer than 64 MiB; skipped")
            } else {
                judge(&validator, line, Some(n), args.coerce)
            };
            (verdict.valid, MaskedLine::new(render(&verdict, json)))
        },
        |results| {
            for (ok, _) in &results {
                total += 1;
                valid += u64::from(*ok);
                if !ok {
                    exit = Exit::Invalid;
                }
            }
            let lines: Vec<&MaskedLine> = results.iter().map(|r| &r.1).collect();
            out.masked_lines(&lines)
        },
    )?;
    if !out.json {
        let line = format!(
            "{total} instances: {valid} valid, {} invalid",
            total - valid
        );
        let style = if valid == total {
            Style::Ok
        } else {
            Style::Bad
        };
        out.line(&out.paint(style, &line))?;
    }
    out.flush()?;
    Ok(exit)
}

/// Parse and validate one instance.
///
/// A number the instance cannot hold exactly (a 23-digit integer, `1e400`)
/// is an error of kind `number`, never a silent change (core's Note [Big
/// numbers]).
///
/// Core reads the text in place and validates it, `x-invariants` included,
/// without building a `Value` (Note [Validating from text]); an instance that
/// reader or the native rule evaluator declines, or a schema-invalid one under
/// a schema with rules, is parsed and judged the full way. Both give the
/// same errors and messages.
fn judge(validator: &Validator, bytes: &[u8], line: Option<u64>, coerce: bool) -> Verdict {
    // Errors of schema-invalid instances come from the text read in place
    // too (core's Note [Errors from text]); core checks UTF-8, and a line
    // that is not UTF-8 is declined and reported below (Note [Bytes, not
    // text]).
    if !coerce {
        if let Some(errors) = validator.verdict_json(bytes) {
            return Verdict {
                line,
                valid: errors.is_empty(),
                errors,
                coercions: None,
                value: None,
            };
        }
    }
    let text = std::str::from_utf8(bytes);
    let parsed = match text {
        Ok(text) => json::parse(text),
        Err(_) => serde_json::from_slice::<Value>(bytes).map(|value| json::Parsed {
            value,
            inexact: Vec::new(),
        }),
    };
    let (instance, numbers) = match parsed {
        Ok(p) => (p.value, p.inexact),
        Err(e) => return failed(line, &format!("not valid JSON: {e}")),
    };
    let number_errors = || numbers.iter().map(agentshape_core::Violation::of_inexact);
    if coerce {
        let (value, coercions) = validator.coerce(instance);
        let mut errors: Vec<Violation> = number_errors().collect();
        errors.extend(validator.errors_and_invariants(&value));
        let changed = !coercions.is_empty();
        return Verdict {
            line,
            valid: errors.is_empty(),
            errors,
            coercions: Some(coercions),
            value: changed.then_some(value),
        };
    }
    // Fast path inside: most instances are valid, and `is_valid` does not
    // allocate; `x-invariants` rules run after the schema (kind `invariant`).
    let mut errors: Vec<Violation> = number_errors().collect();
    errors.extend(validator.errors_and_invariants(&instance));
    Verdict {
        line,
        valid: errors.is_empty(),
        errors,
        coercions: None,
        value: None,
    }
}

fn failed(line: Option<u64>, message: &str) -> Verdict {
    Verdict {
        line,
        valid: false,
        errors: vec![Violation {
            instance_path: String::new(),
            schema_path: String::new(),
            message: message.to_owned(),
            kind: None,
            rule: None,
        }],
        coercions: None,
        value: None,
    }
}

/// The bytes printed for one JSONL verdict: a JSON line, or (for people) a
/// line per invalid instance only.
fn render(v: &Verdict, json: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let (true, true, Some(n), None, None) = (
        json,
        v.valid && v.errors.is_empty(),
        v.line,
        &v.coercions,
        &v.value,
    ) {
        // The common line, written directly: byte for byte what
        // `serde_json` writes for it (`valid_lines_render_as_serde_json_does`).
        bytes.reserve(48);
        bytes.extend_from_slice(b"{\"line\":");
        // Writing into a `Vec` cannot fail.
        let _ = write!(bytes, "{n}");
        bytes.extend_from_slice(b",\"valid\":true,\"errors\":[]}\n");
    } else if json {
        // Serializing plain data cannot fail.
        let _ = serde_json::to_writer(&mut bytes, v);
        bytes.push(b'\n');
    } else if !v.valid {
        let first = v.errors.first().map_or(String::new(), |e| {
            let at = if e.instance_path.is_empty() {
                "(root)"
            } else {
                &e.instance_path
            };
            format!("{at}: {}", truncate(&e.message, 120))
        });
        let more = if v.errors.len() > 1 {
            format!(" (+{} more)", v.errors.len() - 1)
        } else {
            String::new()
        };
        bytes.extend_from_slice(
            format!("line {}: invalid: {first}{more}\n", v.line.unwrap_or(0)).as_bytes(),
        );
    }
    bytes
}

fn write_verdict(out: &mut Out, v: &Verdict) -> std::io::Result<()> {
    if out.json {
        return out.json_line(v);
    }
    if v.valid {
        out.line(&out.paint(Style::Ok, "valid"))?;
    } else {
        out.line(&out.paint(Style::Bad, &format!("invalid ({} errors)", v.errors.len())))?;
        for e in &v.errors {
            let at = if e.instance_path.is_empty() {
                "(root)"
            } else {
                &e.instance_path
            };
            out.line(&format!("  ✗ {at}: {}", e.message))?;
        }
    }
    if let Some(c) = &v.coercions {
        for c in c {
            out.line(&out.paint(
                Style::Dim,
                &format!("  coerced {} ({})", c.instance_path, c.kind),
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_lines_render_as_serde_json_does() {
        for n in [1, 9, 10, 12_345, u64::MAX] {
            let v = Verdict {
                line: Some(n),
                valid: true,
                errors: Vec::new(),
                coercions: None,
                value: None,
            };
            let mut want = serde_json::to_vec(&v).unwrap();
            want.push(b'\n');
            assert_eq!(render(&v, true), want, "{n}");
        }
    }
}
