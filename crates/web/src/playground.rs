//! The playground's API (issue 9, item 5): run `extract` on a pasted reply
//! or transcript and show every step.
//!
//! - `POST /api/extract` `{"text", "profile"?, "schema"?, "schema_name"?,
//!   "coerce"?, "format"?}` → what `agentshape extract --json` prints for
//!   that input (the same core functions: decode, then
//!   [`extract::trace_decoded`], which is `extract_decoded` traced), plus
//!   `"candidates"`: every candidate the chain met, in order, with its span
//!   and why it won or lost.
//! - `GET /api/profiles`: the built-in profiles, for the page's select.
//!
//! Note [Playground limits]: a body over [`MAX_BODY`] is 413 before it is
//! parsed. The rest of such a body (up to [`DRAIN_MAX`]) is still read and
//! dropped before answering: closing a socket with unread bytes in it
//! resets the connection, and the client (a browser too) then sees a
//! broken connection instead of the 413. A body declared bigger than that is
//! refused at once. A body that is not the request's JSON shape is 400; a schema that
//! does not compile (inline or from `--schemas`) is 422 with one line; an
//! unknown profile or format is 400; an unknown `schema_name` 404; a
//! `schema_name` that is not a `.json` name, a symlink, a FIFO, a folder or
//! a device 400, one over 1 MiB 413 (the builder's reader, see
//! [`schema_file`]). The work
//! (decode, extract, validate, CEL) runs on the blocking pool: it is CPU
//! work of up to a few hundred milliseconds on a 4 MiB paste. Being a POST,
//! the request passes the same-origin check of `auth` (a page of another
//! site cannot make a visitor's browser run it).

use std::sync::Arc;

use agentshape_core::decode::{DecodeOptions, Format, summarize_reader};
use agentshape_core::extract::{self, CandidateTrace, ExtractOptions, Methods, Piece, Traced};
use agentshape_core::profile::{BUILTIN, Profile};
use agentshape_core::validate::Validator;
use axum::body::Body;
use axum::extract::State as AxState;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_stream::StreamExt;

use crate::State;
use crate::builder::files;
use crate::error::ApiError;

/// The largest request body `POST /api/extract` reads (Note [Playground limits]).
pub(crate) const MAX_BODY: usize = 4 << 20;

/// Bytes of an oversized body read and dropped so its 413 arrives
/// (Note [Playground limits]).
const DRAIN_MAX: usize = 64 << 20;

/// At most this many characters of a candidate are quoted in its `excerpt`.
const EXCERPT_CHARS: usize = 160;

/// The routes under `/api/` this module answers.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/api/extract", post(extract_handler))
        .route("/api/profiles", get(profiles))
}

/// The body of `POST /api/extract`. Empty strings count as absent, as a
/// form's "none" option sends them.
#[derive(Debug, Deserialize)]
struct ExtractRequest {
    text: String,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    schema: Option<Value>,
    #[serde(default)]
    schema_name: Option<String>,
    #[serde(default)]
    coerce: bool,
    #[serde(default)]
    format: Option<String>,
}

/// `POST /api/extract` (Note [Playground limits]).
async fn extract_handler(
    AxState(state): AxState<Arc<State>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let body = read_capped(&headers, body).await?;
    let st = Arc::clone(&state);
    tokio::task::spawn_blocking(move || run(&st, &body))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map(Json)
}

/// The body, at most [`MAX_BODY`] bytes (Note [Playground limits]).
async fn read_capped(headers: &HeaderMap, body: Body) -> Result<Vec<u8>, ApiError> {
    let too_big = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over {} MiB", MAX_BODY >> 20),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > DRAIN_MAX as u64) {
        return Err(too_big());
    }
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        total = total.saturating_add(chunk.len());
        if total > DRAIN_MAX {
            break;
        }
        if total <= MAX_BODY {
            buf.extend_from_slice(&chunk);
        }
    }
    if total > MAX_BODY {
        return Err(too_big());
    }
    Ok(buf)
}

/// The whole request, off the async threads.
fn run(state: &State, body: &[u8]) -> Result<Value, ApiError> {
    let req: ExtractRequest = serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the body must be a JSON object with a string `text`: {e}"),
        )
    })?;
    let format = format_of(req.format.as_deref())?;
    let (validator, profile) = select(state, &req)?;
    let opts = ExtractOptions {
        validator: validator.as_ref(),
        markers: profile.as_ref().and_then(Profile::grammar),
        coerce: req.coerce || profile.as_ref().is_some_and(|p| p.coerce),
        methods: profile
            .as_ref()
            .map_or_else(Methods::default, |p| p.methods),
    };
    // Reading from memory cannot fail for I/O; a decode error is the input's.
    let summary = summarize_reader(req.text.as_bytes(), format, &DecodeOptions::default())
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, one_line(&e.to_string())))?;
    let texts = Texts {
        input: &req.text,
        output: summary.output.clone(),
        result: summary.result.as_ref().and_then(|r| r.text.clone()),
    };
    let detected = summary.format;
    let Traced {
        extraction,
        candidates,
    } = extract::trace_decoded(summary, &opts);
    let mut out = match serde_json::to_value(&extraction) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    out.insert("format".into(), json!(detected));
    out.insert(
        "candidates".into(),
        Value::Array(candidates.iter().map(|c| texts.describe(c)).collect()),
    );
    Ok(Value::Object(out))
}

/// `auto`, `text`, `claude`, … as the CLI's `--format` spells them
/// (`openai-chat` or `openai_chat`); absent or empty: `auto`.
fn format_of(name: Option<&str>) -> Result<Format, ApiError> {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Ok(Format::Auto);
    };
    serde_json::from_value(Value::String(name.replace('-', "_"))).map_err(|_| {
        let known: Vec<String> = Format::ALL
            .iter()
            .filter_map(|f| serde_json::to_value(f).ok())
            .filter_map(|v| v.as_str().map(|s| s.replace('_', "-")))
            .collect();
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("unknown format `{name}` (known: {})", known.join(", ")),
        )
    })
}

/// The validator and profile of the request: a built-in profile (never a
/// file: a request names no path), an inline schema, or a schema file of
/// `--schemas`, at most one of them.
fn select(
    state: &State,
    req: &ExtractRequest,
) -> Result<(Option<Validator>, Option<Profile>), ApiError> {
    let profile = req.profile.as_deref().filter(|p| !p.is_empty());
    let name = req.schema_name.as_deref().filter(|p| !p.is_empty());
    let inline = req.schema.as_ref().filter(|s| !s.is_null());
    let given = usize::from(profile.is_some())
        + usize::from(name.is_some())
        + usize::from(inline.is_some());
    if given > 1 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "give at most one of `profile`, `schema` and `schema_name`",
        ));
    }
    if let Some(p) = profile {
        let profile = Profile::builtin(p)
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        let v = compile(&profile.schema, &format!("profile `{p}`"))?;
        return Ok((Some(v), Some(profile)));
    }
    if let Some(schema) = inline {
        return Ok((Some(compile(schema, "schema")?), None));
    }
    if let Some(name) = name {
        let schema = schema_file(state, name)?;
        return Ok((Some(compile(&schema, &format!("schema `{name}`"))?), None));
    }
    Ok((None, None))
}

/// Compile a schema, or 422 with one line saying why.
fn compile(schema: &Value, what: &str) -> Result<Validator, ApiError> {
    Validator::new(schema).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            one_line(&format!("{what}: {e}")),
        )
    })
}

/// A schema file of `--schemas`, as JSON, read by the builder's reader
/// (Note [Schema names] and Note [No writing through symlinks] in
/// `builder::files`): a `.json` name in the folder, no symlink, a regular
/// file of at most 1 MiB. A symlink out of the folder, a FIFO or a device
/// is a 400 naming it, never followed, waited on or read forever.
fn schema_file(state: &State, name: &str) -> Result<Value, ApiError> {
    let Some(dir) = state.schemas.as_ref() else {
        files::check_name(name)?;
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no schemas folder: serve was started without --schemas",
        ));
    };
    let bytes = files::read(dir, name)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("schema `{name}` is not valid JSON: {e}"),
        )
    })
}

/// Messages of nested errors may span lines; an answer's error is one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The texts a candidate's span may point into.
struct Texts<'a> {
    /// What was pasted.
    input: &'a str,
    /// The decoded assistant output (for plain text: the text).
    output: String,
    /// A transcript's result text.
    result: Option<String>,
}

impl Texts<'_> {
    /// One candidate as JSON: the core trace plus `excerpt` (the start of its
    /// span) and `span_utf16`, the span in the pasted text in UTF-16 units as
    /// a textarea counts them, or `null` when the span is not in the pasted
    /// text (it is in a transcript's decoded text).
    fn describe(&self, c: &CandidateTrace) -> Value {
        let mut v = match serde_json::to_value(c) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let piece = match c.piece {
            Some(Piece::Result) => self.result.as_deref(),
            Some(Piece::Text | Piece::Output) => Some(self.output.as_str()),
            _ => None,
        };
        let span = c.span.and_then(|(a, b)| Some((a, b, piece?.get(a..b)?)));
        let excerpt = span.map(|(_, _, s)| excerpt(s));
        // The span is in the pasted text when the same bytes sit there at
        // the same place (plain text decodes to itself).
        let utf16 = span.and_then(|(a, b, s)| {
            (self.input.get(a..b) == Some(s)).then(|| {
                let start = self.input.get(..a).map_or(0, |p| p.encode_utf16().count());
                [start, start + s.encode_utf16().count()]
            })
        });
        v.insert("excerpt".into(), json!(excerpt));
        v.insert("span_utf16".into(), json!(utf16));
        Value::Object(v)
    }
}

/// The first [`EXCERPT_CHARS`] characters, `…` when cut.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// `GET /api/profiles`: name, description (the schema's own), whether it
/// has a schema and legacy markers.
async fn profiles() -> Json<Value> {
    Json(json!({ "profiles": profile_list() }))
}

/// The built-in profiles, in `BUILTIN`'s order.
pub(crate) fn profile_list() -> Vec<Value> {
    BUILTIN
        .iter()
        .filter_map(|name| Profile::builtin(name).ok())
        .map(|p| {
            let description = p.schema["description"]
                .as_str()
                .or_else(|| p.schema["title"].as_str())
                .unwrap_or_default()
                .to_owned();
            json!({
                "name": p.name,
                "description": description,
                "has_schema": p.schema.is_object(),
                "markers": p.markers.is_some(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_the_cli_spells_them() {
        for (name, want) in [
            (None, Format::Auto),
            (Some(""), Format::Auto),
            (Some("text"), Format::Text),
            (Some("claude"), Format::Claude),
            (Some("openai-chat"), Format::OpenaiChat),
            (Some("openai_responses"), Format::OpenaiResponses),
        ] {
            assert_eq!(format_of(name).unwrap(), want, "{name:?}");
        }
        assert!(format_of(Some("yaml")).is_err());
    }

    #[test]
    fn spans_map_to_utf16_only_inside_the_pasted_text() {
        let input = "é {\"a\": 1}";
        let texts = Texts {
            input,
            output: input.to_owned(),
            result: Some("{\"a\": 1}".into()),
        };
        let traced = extract::trace_text(input, &ExtractOptions::default());
        let got = texts.describe(&traced.candidates[0]);
        // `é` is two bytes but one UTF-16 unit.
        assert_eq!(got["span"], json!([3, 11]));
        assert_eq!(got["span_utf16"], json!([2, 10]));
        assert_eq!(got["excerpt"], "{\"a\": 1}");
        let mut in_result = traced.candidates[0].clone();
        in_result.piece = Some(Piece::Result);
        in_result.span = Some((0, 8));
        let got = texts.describe(&in_result);
        assert_eq!(got["span_utf16"], Value::Null);
        assert_eq!(got["excerpt"], "{\"a\": 1}");
    }

    #[test]
    fn excerpts_are_cut_on_characters() {
        assert_eq!(excerpt("abc"), "abc");
        let long = "é".repeat(EXCERPT_CHARS + 5);
        let got = excerpt(&long);
        assert_eq!(got.chars().count(), EXCERPT_CHARS + 1);
        assert!(got.ends_with('…'));
    }

    #[test]
    fn every_builtin_profile_is_listed_with_a_description() {
        let got = profile_list();
        assert_eq!(got.len(), BUILTIN.len());
        for p in got {
            assert!(!p["description"].as_str().unwrap().is_empty(), "{p}");
            assert_eq!(p["has_schema"], true);
        }
    }
}
