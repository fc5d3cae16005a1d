//! `extract`, `extract_many`, `Extractor` and `Extraction`: core's extract
//! stage (with validate and check when a schema is given).
//!
//! Note [Replies and transcripts]: by default the text is one reply, as in
//! `agentshape extract --jsonl` (core's `extract_text`). With `format=`
//! (`"auto"`, `"claude"`, ...) it is decoded first and extracted as the
//! CLI's `extract FILE` does (`extract_decoded`): the run summary is then in
//! `.run`, and an agent error shows in `.exit_code` and
//! `raise_for_outcome()`.

use std::sync::Arc;

use agentshape_core::decode::{Format, decode_bytes};
use agentshape_core::extract::{extract_decoded, extract_text};
use agentshape_core::{Extraction, Method};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{AgentError, InvalidOutputError, NoOutputError};
use crate::parse::{PyRunSummary, format_of, options};
use crate::schema::Setup;
use crate::validate::{PyViolation, text_of, violations};
use crate::{convert, parallel};

/// The outcome of extracting one reply or run: the CLI's extract result.
///
/// `value` (None when nothing was found), `method` (`structured`, `fenced`,
/// `bare`, `repaired`, `markers`, `none`), `valid`, `errors` (violations,
/// invariants included), `repairs` (names such as `trailing_comma`),
/// `coercions` (dicts), `warnings` (strings: several top-level values and
/// which was taken), `run` (the run summary when the input was a
/// transcript).
///
/// >>> e = extract("Sure:\n```json\n{\"a\": 1,}\n```")
/// >>> (e.value, e.method, e.repairs)
/// ({'a': 1}, 'repaired', ['trailing_comma'])
#[pyclass(name = "Extraction", module = "agentshape", frozen)]
pub struct PyExtraction {
    inner: Extraction,
}

impl PyExtraction {
    /// The extracted value, for `check`.
    pub fn value_json(&self) -> Option<&serde_json::Value> {
        self.inner.value.as_ref()
    }
}

#[pymethods]
impl PyExtraction {
    /// The extracted value (dict, list, str, number, bool), None when nothing was found.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner.value {
            Some(v) => convert::to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The value as serde's compact JSON (None when nothing was found): what
    /// the tests hold `value` to, through `json.loads` (Note [Building
    /// values through the C API] in `build`).
    fn _value_json(&self) -> Option<String> {
        self.inner
            .value
            .as_ref()
            .map(|v| serde_json::to_string(v).unwrap_or_default())
    }

    /// Which step produced the value.
    #[getter]
    fn method(&self) -> &'static str {
        self.inner.method.as_str()
    }

    /// A value was found and (given a schema) it validates.
    #[getter]
    fn valid(&self) -> bool {
        self.inner.valid
    }

    /// Why the value is invalid.
    #[getter]
    fn errors(&self, py: Python<'_>) -> PyResult<Vec<Py<PyViolation>>> {
        violations(py, self.inner.errors.clone())
    }

    /// Every repair applied, in order of first use.
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serde_to_py(py, &self.inner.repairs)
    }

    /// What to know about the choice, neither repair nor error: the reply
    /// held several top-level values, and which was taken and why
    /// (`["2 top-level values; took the first"]`); empty mostly.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }

    /// Every coercion applied: `{"kind", "instance_path", "from", "to"}`.
    #[getter]
    fn coercions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serde_to_py(py, &self.inner.coercions)
    }

    /// The run summary, when the input was a transcript.
    #[getter]
    fn run(&self) -> Option<PyRunSummary> {
        self.inner
            .run
            .as_ref()
            .map(|r| PyRunSummary::new(r.as_ref().clone()))
    }

    /// The CLI's exit code for this outcome: 0 valid, 1 found but invalid,
    /// 2 nothing found, 3 the agent reported an error.
    #[getter]
    fn exit_code(&self) -> u8 {
        exit_code(&self.inner)
    }

    /// Raise the exception of the outcome (`AgentError`, `NoOutputError`,
    /// `InvalidOutputError`), or return `self` when it is valid.
    fn raise_for_outcome(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let e = &slf.get().inner;
        let first = e
            .errors
            .first()
            .map(|v| format!(": {} {}", v.instance_path, v.message))
            .unwrap_or_default();
        match exit_code(e) {
            3 => {
                let why = e
                    .run
                    .as_ref()
                    .and_then(|r| r.error.clone())
                    .unwrap_or_else(|| "the agent reported an error".into());
                Err(AgentError::new_err(why))
            }
            2 => Err(NoOutputError::new_err("no structured output found")),
            1 => Err(InvalidOutputError::new_err(format!(
                "{} output is invalid ({} errors){first}",
                e.method.as_str(),
                e.errors.len()
            ))),
            _ => Ok(slf),
        }
    }

    /// The value as an instance of `model` (a Pydantic v2 model: its
    /// `model_validate`; any other class is called with the value, or with
    /// its keys as keyword arguments for a dict). Raises `NoOutputError`
    /// when nothing was found; the model's own error when it refuses.
    fn parse_as<'py>(
        &self,
        py: Python<'py>,
        model: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(value) = &self.inner.value else {
            return Err(NoOutputError::new_err(
                "no structured output found: nothing to parse",
            ));
        };
        let value = convert::to_py(py, value)?;
        if model.hasattr("model_validate")? {
            return model.call_method1("model_validate", (value,));
        }
        if let Ok(d) = value.cast::<PyDict>() {
            return model.call((), Some(d));
        }
        model.call1((value,))
    }

    /// Every field, as `agentshape extract --json` prints it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serde_to_py(py, &self.inner)
    }

    fn __bool__(&self) -> bool {
        self.inner.valid
    }

    fn __repr__(&self) -> String {
        format!(
            "Extraction(method={:?}, valid={}, errors={}, repairs={})",
            self.inner.method.as_str(),
            if self.inner.valid { "True" } else { "False" },
            self.inner.errors.len(),
            serde_json::to_string(&self.inner.repairs).unwrap_or_default()
        )
    }
}

fn exit_code(e: &Extraction) -> u8 {
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

/// Extract with `setup` from one text (Note [Replies and transcripts]).
fn run_one(setup: &Setup, format: Option<Format>, text: &str) -> Extraction {
    let opts = setup.options();
    match format {
        None => extract_text(text, &opts),
        Some(f) => extract_decoded(decode_bytes(text.as_bytes(), f, &options(None)), &opts),
    }
}

/// Compiled extraction settings, reused over many texts.
///
/// Building one compiles the schema (or the profile) once; `extract` and
/// `extract_many` then cost only the extraction. Thread-safe.
///
/// >>> ex = Extractor(schema={"type": "object", "required": ["a"]})
/// >>> ex.extract('{"a": 1}').valid
/// True
#[pyclass(name = "Extractor", module = "agentshape", frozen)]
pub struct PyExtractor {
    setup: Arc<Setup>,
    format: Option<Format>,
}

impl PyExtractor {
    pub fn build(
        schema: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
        coerce: bool,
        format: Option<&str>,
    ) -> PyResult<Self> {
        let format = format.map(format_of).transpose()?;
        Ok(PyExtractor {
            setup: Arc::new(Setup::new(schema, profile, coerce)?),
            format,
        })
    }
}

#[pymethods]
impl PyExtractor {
    #[new]
    #[pyo3(signature = (*, schema=None, profile=None, coerce=false, format=None))]
    fn new(
        schema: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
        coerce: bool,
        format: Option<&str>,
    ) -> PyResult<Self> {
        Self::build(schema, profile, coerce, format)
    }

    /// Extract from one reply (or transcript, with `format=`).
    fn extract(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<PyExtraction> {
        let text = text_of(text)?;
        let setup = &self.setup;
        let format = self.format;
        let inner = py.detach(|| run_one(setup, format, &text));
        Ok(PyExtraction { inner })
    }

    /// Extract from every text, on every core (or `threads`), in order.
    #[pyo3(signature = (texts, *, threads=None))]
    fn extract_many(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Vec<PyExtraction>> {
        // The items are held while their text is borrowed (Note [Borrowed
        // text] in `instance`).
        let items = texts.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let texts = items.iter().map(text_of).collect::<PyResult<Vec<_>>>()?;
        let setup = &self.setup;
        let format = self.format;
        let done = py.detach(|| parallel::map(&texts, threads, |t| run_one(setup, format, t)));
        Ok(done
            .into_iter()
            .map(|inner| PyExtraction { inner })
            .collect())
    }
}

/// `extract(text, *, schema=None, profile=None, coerce=False, format=None)`.
///
/// The structured value out of one LLM reply: native structured output,
/// fenced JSON (last first), bare JSON in prose, repaired JSON, the
/// profile's legacy markers, in that order; with a schema the first
/// candidate that validates wins. `text` is `str` or UTF-8 `bytes`.
///
/// >>> extract("Here: {'ok': True,}").value
/// {'ok': True}
#[pyfunction]
#[pyo3(signature = (text, *, schema=None, profile=None, coerce=false, format=None))]
pub fn extract(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    schema: Option<&Bound<'_, PyAny>>,
    profile: Option<&Bound<'_, PyAny>>,
    coerce: bool,
    format: Option<&str>,
) -> PyResult<PyExtraction> {
    if schema.is_none() && profile.is_none() && !coerce && format.is_none() {
        // The common call: no settings to compile.
        let text = text_of(text)?;
        let inner =
            py.detach(|| extract_text(&text, &agentshape_core::extract::ExtractOptions::default()));
        return Ok(PyExtraction { inner });
    }
    PyExtractor::build(schema, profile, coerce, format)?.extract(py, text)
}

/// `extract_many(texts, *, schema=None, profile=None, coerce=False,
/// format=None, threads=None)`: `extract` over a list, the schema compiled
/// once, on every core with the interpreter released.
#[pyfunction]
#[pyo3(signature = (texts, *, schema=None, profile=None, coerce=false, format=None, threads=None))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of `extract`, plus `threads`
pub fn extract_many(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    schema: Option<&Bound<'_, PyAny>>,
    profile: Option<&Bound<'_, PyAny>>,
    coerce: bool,
    format: Option<&str>,
    threads: Option<usize>,
) -> PyResult<Vec<PyExtraction>> {
    PyExtractor::build(schema, profile, coerce, format)?.extract_many(py, texts, threads)
}
