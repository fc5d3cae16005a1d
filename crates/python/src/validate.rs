//! `Validator`, `Violation` and `validate_many`: core's validate and check
//! stages over Python values.
//!
//! A `Validator` wraps core's compiled schema behind an `Arc`: compiled
//! once, shared by every thread (core's `Validator` is `Send + Sync`), and
//! by every `Extractor` built from it. Each call reads the instance while
//! holding the interpreter (it reads Python objects), in place when it can
//! (Note [Validating Python objects in place] in `instance`), then validates,
//! releasing the interpreter for large instances (Note [Releasing the
//! interpreter] in `lib`).

use std::borrow::Cow;
use std::sync::Arc;

use agentshape_core::validate::{Draft, ValidateOptions, Validator};
use agentshape_core::{Violation, json};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use serde_json::Value;

use crate::errors::{self, InputError};
pub use crate::schema::PyValidator;
use crate::{convert, instance, parallel, schema};

/// One reason an instance is invalid (the CLI's error shape).
///
/// `instance_path` and `schema_path` are JSON Pointers; `kind` is `None` for
/// a JSON Schema keyword, `"invariant"` for a failed `x-invariants` rule
/// (then `rule` holds its CEL source), `"number"` for a number JSON cannot
/// hold exactly. Also exported as `agentshape.Error`.
#[pyclass(name = "Violation", module = "agentshape", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyViolation {
    /// JSON Pointer to the offending part of the instance (`""` is the root).
    #[pyo3(get)]
    instance_path: String,
    /// JSON Pointer to the failing keyword in the schema.
    #[pyo3(get)]
    schema_path: String,
    /// One line for people.
    #[pyo3(get)]
    message: String,
    /// `None`, `"invariant"`, `"number"` or `"text"`.
    #[pyo3(get)]
    kind: Option<String>,
    /// The CEL source of a failed `x-invariants` rule.
    #[pyo3(get)]
    rule: Option<String>,
}

impl From<Violation> for PyViolation {
    fn from(v: Violation) -> Self {
        PyViolation {
            instance_path: v.instance_path,
            schema_path: v.schema_path,
            message: v.message,
            kind: v.kind.and_then(|k| {
                serde_json::to_value(k)
                    .ok()
                    .and_then(|x| x.as_str().map(str::to_owned))
            }),
            rule: v.rule,
        }
    }
}

#[pymethods]
impl PyViolation {
    /// The CLI's JSON shape: `{"instance_path", "schema_path", "message"}`,
    /// plus `kind` and `rule` when set.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut map = serde_json::Map::new();
        map.insert("instance_path".into(), self.instance_path.clone().into());
        map.insert("schema_path".into(), self.schema_path.clone().into());
        map.insert("message".into(), self.message.clone().into());
        if let Some(k) = &self.kind {
            map.insert("kind".into(), k.clone().into());
        }
        if let Some(r) = &self.rule {
            map.insert("rule".into(), r.clone().into());
        }
        convert::to_py(py, &Value::Object(map))
    }

    fn __repr__(&self) -> String {
        let kind = self
            .kind
            .as_ref()
            .map_or_else(String::new, |k| format!(", kind={k:?}"));
        format!(
            "Violation(instance_path={:?}, schema_path={:?}, message={:?}{kind})",
            self.instance_path, self.schema_path, self.message
        )
    }

    fn __str__(&self) -> String {
        let at = if self.instance_path.is_empty() {
            "(root)"
        } else {
            &self.instance_path
        };
        format!("{at}: {}", self.message)
    }
}

/// Python list of violations.
pub fn violations(py: Python<'_>, list: Vec<Violation>) -> PyResult<Vec<Py<PyViolation>>> {
    list.into_iter()
        .map(|v| Py::new(py, PyViolation::from(v)))
        .collect()
}

fn draft_of(name: &str) -> PyResult<Draft> {
    Ok(match name {
        "4" | "draft4" | "draft-04" => Draft::Draft4,
        "6" | "draft6" | "draft-06" => Draft::Draft6,
        "7" | "draft7" | "draft-07" => Draft::Draft7,
        "2019-09" | "draft2019-09" => Draft::Draft201909,
        "2020-12" | "draft2020-12" => Draft::Draft202012,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown draft `{other}` (known: draft-04, draft-06, draft-07, 2019-09, 2020-12)"
            )));
        }
    })
}

#[pymethods]
impl PyValidator {
    /// Compile `schema` (a dict, JSON text, a path, a Pydantic model class).
    ///
    /// Raises `SchemaError` when it does not compile.
    ///
    /// `retriever`, a callable `uri -> dict`, supplies the documents behind
    /// `$ref`s to other URIs (nothing is fetched otherwise: a remote `$ref`
    /// is a `SchemaError`).
    #[new]
    #[pyo3(signature = (schema, *, draft=None, assert_formats=None, retriever=None))]
    fn new(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        draft: Option<&str>,
        assert_formats: Option<bool>,
        retriever: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        if draft.is_none() && assert_formats.is_none() && retriever.is_none() {
            return Ok(PyValidator {
                inner: schema::validator(schema)?,
            });
        }
        let value = schema::schema_value(schema)?;
        let mut opts = ValidateOptions::new();
        if let Some(d) = draft {
            opts = opts.draft(draft_of(d)?);
        }
        if let Some(yes) = assert_formats {
            opts = opts.assert_formats(yes);
        }
        if let Some(callback) = retriever {
            opts = opts.retriever(move |uri: &str| {
                Python::attach(|py| {
                    let got = callback.call1(py, (uri,)).map_err(|e| e.to_string())?;
                    convert::to_value(got.bind(py)).map_err(|e| e.to_string())
                })
            });
        }
        let inner = py
            .detach(|| opts.build(&value))
            .map_err(|e| errors::from_core(&e))?;
        Ok(PyValidator {
            inner: Arc::new(inner),
        })
    }

    /// Every violation of `instance` (schema errors, then failed
    /// invariants), sorted; empty when valid.
    fn validate(
        &self,
        py: Python<'_>,
        instance: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<PyViolation>>> {
        let inner = &self.inner;
        let answered = instance::with_instance(instance, |inst| {
            release_for(py, inst, || inner.check_instance(inst))
        })
        .flatten();
        if let Some(found) = answered {
            return violations(py, found);
        }
        let value = convert::to_value(instance)?;
        let found = py.detach(|| verdict(inner, &value));
        violations(py, found)
    }

    /// `True` when `validate(instance)` would be empty; cheaper.
    fn is_valid(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<bool> {
        let inner = &self.inner;
        let answered = instance::with_instance(instance, |inst| {
            release_for(py, inst, || {
                if inner.invariants().is_empty() {
                    inner.is_valid_instance(inst)
                } else {
                    inner.check_instance(inst).map(|found| found.is_empty())
                }
            })
        })
        .flatten();
        if let Some(valid) = answered {
            return Ok(valid);
        }
        let value = convert::to_value(instance)?;
        Ok(py.detach(|| is_valid(inner, &value)))
    }

    /// Validate the JSON text `text` (str or UTF-8 bytes) without building
    /// Python objects: the fastest form for JSON Lines.
    ///
    /// Raises `InputError` when `text` is not JSON.
    fn validate_json(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<PyViolation>>> {
        let text = text_of(text)?;
        let found = py.detach(|| verdict_of_text(&self.inner, &text))?;
        violations(py, found)
    }

    /// Validate many instances on every core (or `threads`); one list of
    /// violations per instance, in order. Instances are converted first
    /// (holding the interpreter), then validated with it released.
    #[pyo3(signature = (instances, *, threads=None))]
    fn validate_many(
        &self,
        py: Python<'_>,
        instances: &Bound<'_, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Vec<Vec<Py<PyViolation>>>> {
        let objs = instances
            .try_iter()?
            .collect::<PyResult<Vec<Bound<'_, PyAny>>>>()?;
        let inner = &self.inner;
        // See Note [Validating Python objects in place]: built instances first,
        // validated on every core; the rest (declined by the walk, or
        // invalid: their errors need the `Value`) converted afterwards.
        let answered: Vec<Option<Vec<Violation>>> = instance::with_instances(&objs, |built| {
            py.detach(|| {
                parallel::map(built, threads, |inst| {
                    inst.as_ref().and_then(|i| inner.check_instance(i))
                })
            })
        });
        let mut rest = Vec::new();
        for (i, a) in answered.iter().enumerate() {
            if a.is_none() {
                rest.push((i, convert::to_value(&objs[i])?));
            }
        }
        let mut late = py
            .detach(|| parallel::map(&rest, threads, |(_, v)| verdict(inner, v)))
            .into_iter();
        answered
            .into_iter()
            .map(|a| {
                let found = match a {
                    Some(found) => found,
                    None => late.next().unwrap_or_default(),
                };
                violations(py, found)
            })
            .collect()
    }

    /// Apply schema-aligned coercions (`"90%"` → 90, `"Critical"` →
    /// `"critical"`, `x` → `[x]`, ...): returns `(value, coercions)`, each
    /// coercion a dict `{"kind", "instance_path", "from", "to"}`.
    fn coerce<'py>(
        &self,
        py: Python<'py>,
        instance: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let value = convert::to_value(instance)?;
        let (value, coercions) = py.detach(|| self.inner.coerce(value));
        Ok((
            convert::to_py(py, &value)?,
            convert::serde_to_py(py, &coercions)?,
        ))
    }

    /// The schema as given (a dict).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, self.inner.schema())
    }

    fn __repr__(&self) -> String {
        format!("Validator(draft={:?})", self.inner.draft())
    }
}

/// Run `f` on a built instance, releasing the interpreter only when the
/// instance is large.
///
/// Note [Small instances keep the interpreter]: releasing and taking back
/// the interpreter costs little alone, but when another Python thread is
/// running, taking it back waits for that thread's switch interval (5 ms by
/// default), a thousand times what validating an agent's answer of a few
/// dozen nodes costs. Such a call keeps it; an instance of more than
/// [`RELEASE_NODES`] nodes (a tenth of a millisecond of validation and up)
/// releases it. The objects read are held meanwhile (Note [Borrowed text]
/// in `instance`), so other threads may run and even mutate them.
fn release_for<T: Send>(
    py: Python<'_>,
    inst: &agentshape_core::validate::Instance<'_>,
    f: impl FnOnce() -> T + Send,
) -> T {
    if inst.len() > RELEASE_NODES {
        py.detach(f)
    } else {
        f()
    }
}

/// Nodes above which a single validation releases the interpreter.
const RELEASE_NODES: usize = 4096;

/// Schema errors then invariants: the CLI's `validate` verdict.
pub fn verdict(v: &Validator, value: &Value) -> Vec<Violation> {
    v.errors_and_invariants(value)
}

/// The fast path: no error list unless the instance has invariants to run.
pub fn is_valid(v: &Validator, value: &Value) -> bool {
    if v.invariants().is_empty() {
        v.is_valid(value)
    } else {
        v.errors_and_invariants(value).is_empty()
    }
}

/// The verdict on JSON text: core's borrowed reader when it answers, else
/// a parse (numbers JSON cannot hold exactly are violations of kind
/// `number`, as in `agentshape validate`).
pub fn verdict_of_text(v: &Validator, text: &str) -> PyResult<Vec<Violation>> {
    if let Some(found) = v.check_text(text) {
        return Ok(found);
    }
    let parsed = json::parse(text).map_err(|e| InputError::new_err(format!("not JSON: {e}")))?;
    let mut found: Vec<Violation> = parsed
        .inexact
        .iter()
        .map(agentshape_core::Violation::of_inexact)
        .collect();
    found.extend(v.errors_and_invariants(&parsed.value));
    Ok(found)
}

/// A `str` or UTF-8 `bytes` argument as Rust text, borrowed from the
/// object when it is a `str` (Note [Borrowed text] in `instance`).
pub fn text_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match instance::text(s) {
            Some(t) => Ok(Cow::Borrowed(t)),
            // A lone surrogate: PyO3's copy raises the `UnicodeEncodeError`.
            None => Ok(Cow::Owned(s.to_cow()?.into_owned())),
        };
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes())
            .map(Cow::Borrowed)
            .map_err(|e| {
                InputError::new_err(format!(
                    "bytes are not UTF-8 text (invalid at byte {})",
                    e.valid_up_to()
                ))
            });
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "expected str or bytes",
    ))
}

/// `validate_many(instances, *, schema, threads=None)`: compile `schema`
/// once and validate every instance on every core.
#[pyfunction]
#[pyo3(signature = (instances, *, schema, threads=None))]
pub fn validate_many(
    py: Python<'_>,
    instances: &Bound<'_, PyAny>,
    schema: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<Vec<Vec<Py<PyViolation>>>> {
    let v = PyValidator {
        inner: schema::validator(schema)?,
    };
    v.validate_many(py, instances, threads)
}
