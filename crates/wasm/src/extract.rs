//! `extract` and `Extractor`: core's extract stage (with validate and check
//! when a schema is given), and `repair`, the drop-in for `jsonrepair`.
//!
//! The text is one reply, as in `agentshape extract --jsonl`; with a
//! `format` it is a transcript, decoded first (the Python package's Note
//! \[Replies and transcripts\]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use agentshape_core::decode::{DecodeOptions, Format, decode_bytes};
use agentshape_core::extract::{
    ExtractOptions, Methods, extract_decoded, extract_text, extract_text_compact,
};
use agentshape_core::outcome::{Coercion, Repair};
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use agentshape_core::{Extraction, Method, RunSummary, Violation, json};
use serde::{Deserialize, Serialize};

use crate::decode::format_of;
use crate::errors::{Failure, Kind, Result, from_json};
use crate::schema::{self, ProfileForm};

/// `extract`'s options other than the schema (which comes compiled).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// A built-in profile name or `{toml, schemas}`.
    pub profile: Option<ProfileForm>,
    /// Apply schema-aligned coercions.
    pub coerce: bool,
    /// Decode the text as a transcript of this format first.
    pub format: Option<String>,
}

/// What an extraction needs, compiled once.
#[derive(Debug)]
pub struct Setup {
    validator: Option<Rc<Validator>>,
    profile: Option<Profile>,
    coerce: bool,
    format: Option<Format>,
}

impl Setup {
    /// Resolve the options; `validator` (the schema) wins over the
    /// profile's own schema, as `--schema` does not combine with `--profile`.
    pub fn new(validator: Option<Rc<Validator>>, options: &str) -> Result<Setup> {
        let opts: Options = from_json(options, "extract options")?;
        let profile = opts.profile.as_ref().map(schema::profile).transpose()?;
        let validator = match (validator, &profile) {
            (Some(v), _) => Some(v),
            (None, Some(p)) => Some(Rc::new(Validator::new(&p.schema).map_err(|e| {
                Failure::new(Kind::Profile, format!("profile `{}`: {e}", p.name))
            })?)),
            (None, None) => None,
        };
        let format = opts.format.as_deref().map(format_of).transpose()?;
        Ok(Setup {
            validator,
            profile,
            coerce: opts.coerce,
            format,
        })
    }

    fn options(&self) -> ExtractOptions<'_> {
        ExtractOptions {
            validator: self.validator.as_deref(),
            markers: self.profile.as_ref().and_then(Profile::grammar),
            coerce: self.coerce || self.profile.as_ref().is_some_and(|p| p.coerce),
            methods: self
                .profile
                .as_ref()
                .map_or_else(Methods::default, |p| p.methods),
        }
    }

    /// Extract from one text.
    pub fn run(&self, text: &str) -> Extraction {
        let opts = self.options();
        match self.format {
            None => extract_text(text, &opts),
            Some(f) => extract_decoded(
                decode_bytes(text.as_bytes(), f, &DecodeOptions::default()),
                &opts,
            ),
        }
    }

    /// Extract from one text, as the JSON the package reads (a reply's
    /// value written as it is extracted: Note \[Writing the result\]).
    pub fn run_json(&self, text: &str) -> String {
        let mut out = Vec::with_capacity(text.len() + 256);
        self.run_into(text, &mut out);
        text_of(out)
    }

    /// [`Self::run_json`] appended to `out`.
    pub fn run_into(&self, text: &str, out: &mut Vec<u8>) {
        match self.format {
            None => compact_result_into(text, &self.options(), out),
            Some(_) => out.extend_from_slice(result_json(&self.run(text)).as_bytes()),
        }
    }
}

/// An extraction as the package reads it, but its `value`: the CLI's
/// fields plus what its `exitCode` and `raiseForOutcome()` need
/// (Note \[Writing the result\]).
#[derive(Serialize)]
struct Rest<'a> {
    method: Method,
    repairs: &'a [Repair],
    coercions: &'a [Coercion],
    valid: bool,
    errors: &'a [Violation],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a RunSummary>,
    exit_code: u8,
    /// Why the run failed, for `AgentError`'s message.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_error: Option<&'a str>,
}

/// The result JSON of `extraction`: `{"value": ..., ...Rest}`, the fields
/// in `Extraction`'s order.
///
/// Note \[Writing the result\]: the value is most of the result's bytes.
/// Writing it with serde was a seventh of `extract`'s time in a V8 profile
/// (2026-11-29, its byte-at-a-time string escaping), so core's
/// `json::write_compact` writes it (the same bytes: core's
/// `compact_writer_agrees_with_serde_json`). For a reply, better still,
/// the value is never built: core's `extract_text_compact` writes a strict
/// candidate as it checks it and a repaired one from its nodes, as
/// `agentshape extract --jsonl --json` does (2026-11-30: building,
/// writing and dropping the `Value` were 29% of `extract`'s profile;
/// `the_result_is_what_serde_writes` holds the two to the same bytes). The
/// other fields are few: written by hand for the common result, else by
/// serde (`finish`). The destructuring in `finish` has no `..`, so a field
/// added to `Extraction` fails to compile there until `Rest` carries it;
/// the same test checks every result's bytes against serde's.
pub fn result_json(extraction: &Extraction) -> String {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(VALUE_FIELD);
    match &extraction.value {
        Some(v) => json::write_compact(&mut out, v),
        None => out.extend_from_slice(b"null"),
    }
    finish(&mut out, extraction);
    text_of(out)
}

/// The result's opening, up to its value.
const VALUE_FIELD: &[u8] = b"{\"value\":";

/// The result JSON of extracting from the reply `text`, its value written
/// by core as it is found (Note \[Writing the result\]).
pub fn compact_result_json(text: &str, opts: &ExtractOptions<'_>) -> String {
    let mut out = Vec::with_capacity(text.len() + 256);
    compact_result_into(text, opts, &mut out);
    text_of(out)
}

/// [`compact_result_json`] appended to `out` (its bytes are UTF-8: the
/// writers' and serde's).
pub fn compact_result_into(text: &str, opts: &ExtractOptions<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(VALUE_FIELD);
    let extraction = extract_text_compact(text, opts, out);
    finish(out, &extraction);
}

/// Bytes the JSON writers made, as text.
fn text_of(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|_| "null".to_owned())
}

thread_local! {
    /// Where the fields after the value in the last result start, and
    /// which common fields they are ([`rest_info`]).
    static REST_INFO: Cell<u32> = const { Cell::new(0) };
    /// The distinct fields of common results met so far, by number less
    /// one (at most [`REST_IDS`]).
    static COMMON_RESTS: RefCell<Vec<CommonRest>> = const { RefCell::new(Vec::new()) };
}

/// A common result's fields after its value: what they are made of, and
/// their text ([`rest_info`]).
struct CommonRest {
    method: Method,
    valid: bool,
    repairs: Vec<Repair>,
    text: Vec<u8>,
}

/// Distinct common fields numbered ([`rest_info`]); past this many the
/// rest go unnumbered.
const REST_IDS: usize = 1023;

/// Where the last result's fields after its value start (from the `,`
/// before `"method"` to the closing brace), and which common fields they
/// are.
///
/// Note \[The fields apart\]: `JSON.parse` of a result was a third of
/// `extract`'s time in V8, and about a tenth of that was the fields after
/// the value: the same few dozen bytes (`"method":"fenced","repairs":[]`
/// …) in nearly every result. The package parses the value alone and
/// the fields once per distinct text, reading where they
/// start from here; an escaped answer (Note \[Answers read in place\] in
/// `bindings`) changes only the value's length when the fields are ASCII.
///
/// Found by their text, the fields cost `JSON.parse` nothing but a hash
/// of that text per result, still 2.4% of `extract`'s profile; so the
/// module numbers the distinct fields of common results (no coercion,
/// error, warning or run: the same method, repairs, validity and exit
/// code) as it writes them, and the package keeps its parsed fields by
/// that number. The module keeps each one's text by what it is made of,
/// and writes it from there ([`write_common`]).
///
/// The answer: the fields' length in bytes times 1024 plus their number
/// (1 to [`REST_IDS`], 0 when unnumbered); 0 when the fields are not
/// ASCII or longer than 4 MiB.
pub fn rest_info() -> u32 {
    REST_INFO.with(Cell::get)
}

/// `out` (the result up to its value) with the rest of `extraction`'s
/// fields and the closing brace.
fn finish(out: &mut Vec<u8>, extraction: &Extraction) {
    let start = out.len();
    let id = if is_common(extraction) {
        write_common(out, extraction)
    } else {
        write_rest(out, extraction);
        0
    };
    let rest = out.get(start..).unwrap_or_default();
    let info = match u32::try_from(rest.len()) {
        Ok(len) if len < 1 << 22 && rest.is_ascii() => (len << 10) | id,
        _ => 0,
    };
    REST_INFO.with(|r| r.set(info));
}

/// Whether `extraction` is a common result: no coercion, error, warning
/// or run, so its fields after the value are its method's, validity's and
/// repairs' alone.
fn is_common(e: &Extraction) -> bool {
    e.coercions.is_empty() && e.errors.is_empty() && e.warnings.is_empty() && e.run.is_none()
}

/// A common result's fields, written from those met before when they are
/// made of the same method, validity and repairs (writing its repairs
/// with serde and finding the text among those met, byte by byte, were
/// 3% of `extract` of the bench replies); its number (see
/// [`rest_info`]), numbered now when new; 0 when there are [`REST_IDS`]
/// already.
fn write_common(out: &mut Vec<u8>, e: &Extraction) -> u32 {
    COMMON_RESTS.with(|rests| {
        let Ok(mut rests) = rests.try_borrow_mut() else {
            write_rest(out, e);
            return 0;
        };
        let found = rests
            .iter()
            .position(|r| r.method == e.method && r.valid == e.valid && r.repairs == e.repairs);
        if let Some(i) = found {
            out.extend_from_slice(&rests[i].text);
            return u32::try_from(i + 1).unwrap_or(0);
        }
        let start = out.len();
        write_rest(out, e);
        if rests.len() >= REST_IDS {
            return 0;
        }
        rests.push(CommonRest {
            method: e.method,
            valid: e.valid,
            repairs: e.repairs.clone(),
            text: out.get(start..).unwrap_or_default().to_vec(),
        });
        u32::try_from(rests.len()).unwrap_or(0)
    })
}

/// [`finish`]'s writing.
fn write_rest(out: &mut Vec<u8>, extraction: &Extraction) {
    let Extraction {
        value: _,
        method,
        repairs,
        coercions,
        valid,
        errors,
        warnings,
        run,
    } = extraction;
    let code = exit_code(extraction);
    if is_common(extraction) {
        // The common result (no schema, no transcript), written as serde
        // writes it (`the_result_is_what_serde_writes`): serde's `Rest`
        // was 5% of `extract`'s profile. Without a run the exit code is
        // 0, 1 or 2, and there is no `agent_error`.
        out.extend_from_slice(b",\"method\":\"");
        out.extend_from_slice(method.as_str().as_bytes());
        out.extend_from_slice(b"\",\"repairs\":");
        if serde_json::to_writer(&mut *out, repairs).is_err() {
            out.extend_from_slice(b"[]");
        }
        out.extend_from_slice(b",\"coercions\":[],\"valid\":");
        out.extend_from_slice(if *valid { b"true" } else { b"false" });
        out.extend_from_slice(b",\"errors\":[],\"exit_code\":");
        out.push(b'0' + code);
        out.push(b'}');
    } else {
        let agent_error = (code == 3).then(|| {
            run.as_ref()
                .and_then(|r| r.error.as_deref())
                .unwrap_or("the agent reported an error")
        });
        let rest = Rest {
            method: *method,
            repairs,
            coercions,
            valid: *valid,
            errors,
            warnings,
            run: run.as_deref(),
            exit_code: code,
            agent_error,
        };
        out.push(b',');
        // `Rest` is a struct with fields always present: serde writes `{"method":...}`.
        match serde_json::to_vec(&rest) {
            Ok(tail) => out.extend_from_slice(tail.get(1..).unwrap_or_default()),
            Err(_) => out.extend_from_slice(b"\"method\":\"none\"}"),
        }
    }
}

/// The CLI's exit code for an outcome: 0 valid, 1 found but invalid, 2
/// nothing found, 3 the agent reported an error.
pub fn exit_code(e: &Extraction) -> u8 {
    if let Some(run) = &e.run {
        if run.error_category.is_some_and(|c| !c.is_heuristic()) {
            return 3;
        }
    }
    if e.method == Method::None {
        2
    } else {
        u8::from(!e.valid)
    }
}

/// `extract(text)` with no options: nothing to compile.
pub fn extract_plain(text: &str) -> String {
    compact_result_json(text, &ExtractOptions::default())
}

/// [`extract_plain`] appended to `out`.
pub fn extract_plain_into(text: &str, out: &mut Vec<u8>) {
    compact_result_into(text, &ExtractOptions::default(), out);
}

/// `repair(text)`: the JSON text of the value found in `text` (compact, in
/// the text's key order), what `jsonrepair(text)` returns; `NoOutput` when
/// there is none (where `jsonrepair` throws).
pub fn repair(text: &str) -> Result<String> {
    let mut out = Vec::with_capacity(text.len());
    repair_into(text, &mut out)?;
    String::from_utf8(out).map_err(|e| Failure::usage(e.to_string()))
}

/// [`repair`] appended to `out` (UTF-8: core's compact writers').
pub fn repair_into(text: &str, out: &mut Vec<u8>) -> Result<()> {
    let found = extract_text_compact(text, &ExtractOptions::default(), out);
    match found.method {
        Method::None => Err(Failure::new(
            Kind::NoOutput,
            "no JSON value found in the text",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or(Value::Null)
    }

    #[test]
    fn extract_mirrors_the_cli_result_with_an_exit_code() {
        let out = parsed(&extract_plain("Sure:\n```json\n{\"a\": 1,}\n```"));
        assert_eq!(
            out,
            json!({"value": {"a": 1}, "method": "repaired", "repairs": ["trailing_comma"],
                   "coercions": [], "valid": true, "errors": [], "exit_code": 0})
        );
        assert_eq!(parsed(&extract_plain("no json"))["exit_code"], 2);
    }

    #[test]
    fn a_failed_run_is_exit_3_with_its_reason() {
        let text = "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Rate limit reached (429)\"}\n";
        let setup = Setup::new(None, r#"{"format": "auto"}"#);
        let out = parsed(&setup.unwrap().run_json(text));
        assert_eq!(out["exit_code"], 3);
        assert_eq!(out["agent_error"], "Rate limit reached (429)");
        assert_eq!(out["run"]["error_category"], "rate_limit");
    }

    #[test]
    fn profiles_and_bad_options() {
        let setup = Setup::new(None, r#"{"profile": "claude-ops"}"#);
        let text = "Checked.\n[EVENT:critical:jellyfin] HTTP 502";
        let out = parsed(&setup.unwrap().run_json(text));
        assert_eq!(out["method"], "markers");
        assert_eq!(out["value"]["events"][0]["service"], "jellyfin");
        let kind = |o: &str| Setup::new(None, o).err().map(|f| f.kind);
        assert_eq!(kind(r#"{"profile": "nope"}"#), Some(Kind::Profile));
        assert_eq!(kind(r#"{"format": "nope"}"#), Some(Kind::Usage));
        assert_eq!(kind(r#"{"colour": 1}"#), Some(Kind::Usage));
    }

    /// What `result_json` wrote before Note [Writing the result]: serde over
    /// the whole `Extraction`, flattened.
    fn by_serde(e: &Extraction) -> String {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            extraction: &'a Extraction,
            exit_code: u8,
            #[serde(skip_serializing_if = "Option::is_none")]
            agent_error: Option<&'a str>,
        }
        let code = exit_code(e);
        let agent_error = (code == 3).then(|| {
            e.run
                .as_ref()
                .and_then(|r| r.error.as_deref())
                .unwrap_or("the agent reported an error")
        });
        crate::errors::to_json(&Out {
            extraction: e,
            exit_code: code,
            agent_error,
        })
    }

    /// Note [The fields apart]: common results' fields are numbered by
    /// what they are made of, written again from the first one's text,
    /// and where they start is said in bytes.
    #[test]
    fn common_fields_are_numbered_by_what_they_are_made_of() {
        let info = |text: &str| {
            let mut out = Vec::new();
            extract_plain_into(text, &mut out);
            let info = rest_info();
            let len = (info >> 10) as usize;
            let rest = String::from_utf8(out[out.len() - len..].to_vec()).unwrap();
            (info & 1023, rest)
        };
        let (a, a_rest) = info("{'a': 1,}");
        let (b, b_rest) = info("x {'b': [2],} y");
        let (c, c_rest) = info("{\"a\": 1}");
        let (none, none_rest) = info("no json");
        assert!(a > 0 && c > 0 && none > 0);
        assert_eq!((a, &a_rest), (b, &b_rest));
        assert_ne!(a, c);
        assert_ne!(c, none);
        assert!(
            a_rest.starts_with(
                ",\"method\":\"repaired\",\"repairs\":[\"single_quotes\",\"trailing_comma\"]"
            ),
            "{a_rest}"
        );
        assert!(
            c_rest.starts_with(",\"method\":\"bare\",\"repairs\":[]"),
            "{c_rest}"
        );
        assert!(none_rest.contains("\"exit_code\":2"), "{none_rest}");
        assert_eq!(info("{'a': 1,}"), (a, a_rest));
    }

    #[test]
    fn the_result_is_what_serde_writes() {
        let run = "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Rate limit reached (429)\"}\n";
        let schema =
            r#"{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}"#;
        let validator = Rc::new(schema::compile(schema, "{}").unwrap_or_else(|f| panic!("{f:?}")));
        // Several top-level values, one valid: a warning says which was taken.
        let numbers = r#"{"type": "array", "items": {"type": "number"}}"#;
        let numbers = Rc::new(schema::compile(numbers, "{}").unwrap_or_else(|f| panic!("{f:?}")));
        let texts = [
            "Sure:\n```json\n{\"a\": \"caf\u{e9} \\\"q\\\" \\u0001\\n\", \"b\": [1, 2.5, -3e400, null, true],}\n```",
            "no json",
            "{\"a\": 1} and then {\"b\": 2}",
            "```json\n{\"n\": \"7\"}\n```",
            "[1, 2]\n[3]",
            "Here: {'a': True, b: None, // note\n \"c\": [1 2]",
            "```\n{\"x\": {\"y\": [1, {\"z\": \"\\ud83d\\ude00\"}]}}\n```\nand ```json\n[1,]\n```",
        ];
        let setups = [
            Setup::new(None, "{}"),
            Setup::new(Some(Rc::clone(&validator)), r#"{"coerce": true}"#),
            Setup::new(Some(validator), "{}"),
            Setup::new(Some(numbers), "{}"),
            Setup::new(None, r#"{"format": "auto"}"#),
        ];
        let (mut warned, mut runs) = (0, 0);
        for setup in setups {
            let setup = setup.unwrap_or_else(|f| panic!("{f:?}"));
            // Twice: common fields are written from those met before.
            for text in texts.iter().chain([&run]).chain(texts.iter()) {
                let e = setup.run(text);
                warned += usize::from(!e.warnings.is_empty());
                runs += usize::from(e.run.is_some());
                assert_eq!(result_json(&e), by_serde(&e), "{text}");
                // The value written as it is found: the same bytes.
                assert_eq!(setup.run_json(text), by_serde(&e), "{text}");
            }
        }
        assert!(
            warned > 0 && runs > 0,
            "the cases cover warnings ({warned}) and runs ({runs})"
        );
    }

    #[test]
    fn repair_is_compact_json_in_key_order_or_no_output() {
        assert_eq!(
            repair("{b: 1, 'a': [1,2,],}").ok().as_deref(),
            Some(r#"{"b":1,"a":[1,2]}"#)
        );
        assert_eq!(
            repair("just words").err().map(|f| f.kind),
            Some(Kind::NoOutput)
        );
        assert_eq!(repair("null").ok().as_deref(), Some("null"));
    }
}
