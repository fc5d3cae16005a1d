//! `parse`, `Decoder` and `RunSummary`: core's decode stage.
//!
//! Note [Transcript forms]: `parse` reads `bytes` and `str` as the
//! transcript itself and an `os.PathLike` (`pathlib.Path`) as a file to
//! read; a `str` is never taken for a path, because a one-line transcript
//! could name a file by accident. Invalid UTF-8 in a transcript is data,
//! not an error: those lines are skipped and counted, as the CLI does.

use std::io::BufReader;
use std::path::PathBuf;

use agentshape_core::decode::{DecodeOptions, Decoder, Format, decode_bytes, summarize_reader};
use agentshape_core::summary::SummaryBuilder;
use agentshape_core::{ErrorCategory, RunSummary};
use pyo3::exceptions::{PyAttributeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use serde_json::Value;

use crate::convert;
use crate::errors::InputError;

/// The format names of the CLI's `--format` (plus the provider bodies and
/// the agents' own session files), `_` or `-` alike.
pub fn format_of(name: &str) -> PyResult<Format> {
    Ok(match name {
        "auto" => Format::Auto,
        "claude" => Format::Claude,
        "codex" => Format::Codex,
        "anthropic" => Format::Anthropic,
        "openai_chat" | "openai-chat" => Format::OpenaiChat,
        "openai_responses" | "openai-responses" => Format::OpenaiResponses,
        "ollama" => Format::Ollama,
        "gemini" => Format::Gemini,
        "text" => Format::Text,
        "claude_session" | "claude-session" => Format::ClaudeSession,
        "codex_rollout" | "codex-rollout" => Format::CodexRollout,
        "gemini_chat" | "gemini-chat" => Format::GeminiChat,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown format `{other}` (known: auto, claude, codex, anthropic, openai_chat, \
                 openai_responses, ollama, gemini, text, claude_session, codex_rollout, gemini_chat)"
            )));
        }
    })
}

/// What one agent run said and how it ended: the CLI's run summary.
///
/// Every field of `agentshape parse --json` is an attribute of the same
/// name (`format`, `session_id`, `model`, `output`, `structured_output`,
/// `result`, `saw_result`, `error`, `error_category`, `warnings`,
/// `skipped_lines`, `tool_uses`, ...); `to_dict()` gives them all.
#[pyclass(name = "RunSummary", module = "agentshape", frozen)]
pub struct PyRunSummary {
    pub summary: RunSummary,
    /// The serialized form, built once: attributes read from it.
    json: Value,
}

impl PyRunSummary {
    pub fn new(summary: RunSummary) -> Self {
        let json = serde_json::to_value(&summary).unwrap_or(Value::Null);
        PyRunSummary { summary, json }
    }
}

#[pymethods]
impl PyRunSummary {
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.json.get(name) {
            Some(v) => convert::to_py(py, v),
            None if KNOWN_OPTIONAL.contains(&name) => Ok(py.None().into_bound(py)),
            None => Err(PyAttributeError::new_err(format!(
                "`RunSummary` has no field `{name}`"
            ))),
        }
    }

    /// `True` when the agent reported an error (not a heuristic warning).
    #[getter]
    fn failed(&self) -> bool {
        self.summary
            .error_category
            .is_some_and(|c: ErrorCategory| !c.is_heuristic())
    }

    /// Every field, as `agentshape parse --json` prints it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.json)
    }

    fn __dir__(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .json
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        names.extend(["failed", "to_dict"].map(str::to_owned));
        names
    }

    fn __repr__(&self) -> String {
        format!(
            "RunSummary(format={}, session_id={}, saw_result={}, error_category={})",
            self.json.get("format").unwrap_or(&Value::Null),
            py_repr(self.summary.session_id.as_deref()),
            if self.summary.saw_result {
                "True"
            } else {
                "False"
            },
            py_repr(self.summary.error_category.map(ErrorCategory::as_str)),
        )
    }
}

/// A Python-looking repr of an optional string.
fn py_repr(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_owned(), |s| format!("{s:?}"))
}

/// Fields serde leaves out when empty, still readable as `None`.
const KNOWN_OPTIONAL: &[&str] = &[
    "file",
    "session_id",
    "model",
    "structured_output",
    "result",
    "api_key_source",
    "error",
    "error_category",
];

/// `parse(transcript, *, format="auto", max_line_bytes=None) -> RunSummary`.
///
/// Decode an agent transcript (Claude Code stream-json, Codex JSONL, a
/// provider response body, plain text) into its run summary (Note
/// [Transcript forms]).
#[pyfunction]
#[pyo3(signature = (transcript, *, format="auto", max_line_bytes=None))]
pub fn parse(
    py: Python<'_>,
    transcript: &Bound<'_, PyAny>,
    format: &str,
    max_line_bytes: Option<usize>,
) -> PyResult<PyRunSummary> {
    let format = format_of(format)?;
    let opts = options(max_line_bytes);
    let summary = if let Ok(s) = transcript.cast::<PyString>() {
        let text = s.to_cow()?.into_owned();
        py.detach(|| decode_bytes(text.as_bytes(), format, &opts))
    } else if let Ok(b) = transcript.cast::<PyBytes>() {
        let bytes = b.as_bytes().to_vec();
        py.detach(|| decode_bytes(&bytes, format, &opts))
    } else if let Ok(path) = transcript.extract::<PathBuf>() {
        let mut summary = py.detach(|| read_path(&path, format, &opts))?;
        summary.file = Some(path.display().to_string());
        summary
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "transcript is str or bytes (the text) or os.PathLike (a file)",
        ));
    };
    Ok(PyRunSummary::new(summary))
}

fn read_path(path: &std::path::Path, format: Format, opts: &DecodeOptions) -> PyResult<RunSummary> {
    // A regular file or a FIFO (streamed); nothing blocks on opening (`infile`).
    let file = crate::infile::open(path, true)
        .map_err(|e| InputError::new_err(format!("cannot read `{}`: {e}", path.display())))?;
    summarize_reader(BufReader::with_capacity(256 << 10, file), format, opts)
        .map_err(|e| InputError::new_err(format!("cannot read `{}`: {e}", path.display())))
}

pub fn options(max_line_bytes: Option<usize>) -> DecodeOptions {
    let mut opts = DecodeOptions::default();
    if let Some(n) = max_line_bytes {
        opts.max_line_bytes = n;
    }
    opts
}

/// An incremental decoder for people reading an agent's stdout themselves.
///
/// Feed it chunks of any size (`bytes` or `str`); each `feed` returns the
/// events its complete lines produced, as dicts with a `type` (`init`,
/// `text`, `tool_use`, `result`, `skipped`, ...). `finish()` flushes the
/// last line and returns the run summary.
///
/// >>> d = Decoder()
/// >>> d.feed(b'{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}\n')[-1]["type"]
/// 'text'
/// >>> d.finish().output
/// 'hi'
#[pyclass(name = "Decoder", module = "agentshape")]
pub struct PyDecoder {
    state: Option<(Decoder, SummaryBuilder)>,
}

#[pymethods]
impl PyDecoder {
    #[new]
    #[pyo3(signature = (format="auto", *, max_line_bytes=None))]
    fn new(format: &str, max_line_bytes: Option<usize>) -> PyResult<Self> {
        let decoder = Decoder::new(format_of(format)?, options(max_line_bytes));
        Ok(PyDecoder {
            state: Some((decoder, SummaryBuilder::new())),
        })
    }

    /// Decode `chunk`; the events of the lines it completed.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let bytes: Vec<u8> = if let Ok(s) = chunk.cast::<PyString>() {
            s.to_cow()?.into_owned().into_bytes()
        } else if let Ok(b) = chunk.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "chunk is bytes or str",
            ));
        };
        let (decoder, builder) = self.state.as_mut().ok_or_else(finished)?;
        let events = py.detach(|| {
            let mut out = Vec::new();
            decoder.feed(&bytes, &mut |e| {
                out.push(serde_json::to_value(&e).unwrap_or(Value::Null));
                builder.push(e);
            });
            out
        });
        events.iter().map(|e| convert::to_py(py, e)).collect()
    }

    /// Flush the last (unterminated) line and return the run summary; the
    /// decoder cannot be fed after this.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyRunSummary> {
        let (mut decoder, mut builder) = self.state.take().ok_or_else(finished)?;
        let summary = py.detach(move || {
            decoder.finish(&mut |e| builder.push(e));
            builder.finish(decoder.format())
        });
        Ok(PyRunSummary::new(summary))
    }
}

fn finished() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the decoder has finished; make a new one")
}
