//! `check`: invariants per output, contradictions across sibling outputs
//! (core's check stage, the CLI's `agentshape check`).

use agentshape_core::Violation;
use agentshape_core::check::{ContradictionOptions, ContradictionReport, find_contradictions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::errors::UsageError;
use crate::extract::PyExtraction;
use crate::schema::Setup;
use crate::validate::violations;
use crate::{convert, parallel};

/// What `check` found: per source its violations (schema and invariants),
/// and the contradictions across sources.
#[pyclass(name = "CheckReport", module = "agentshape", frozen)]
pub struct PyCheckReport {
    sources: Vec<String>,
    errors: Vec<Vec<Violation>>,
    report: Option<ContradictionReport>,
}

#[pymethods]
impl PyCheckReport {
    /// `True` when no source has a violation and nothing contradicts.
    #[getter]
    fn ok(&self) -> bool {
        self.errors.iter().all(Vec::is_empty)
            && self
                .report
                .as_ref()
                .is_none_or(|r| r.contradictions.is_empty())
    }

    /// The source names, in order (list positions as `"0"`, `"1"`, ... when
    /// `values` was a list).
    #[getter]
    fn sources(&self) -> Vec<String> {
        self.sources.clone()
    }

    /// `{source: [Violation, ...]}` for every source.
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, errs) in self.sources.iter().zip(&self.errors) {
            out.set_item(name, violations(py, errs.clone())?)?;
        }
        Ok(out)
    }

    /// The contradictions, each a dict in the CLI's shape (`instance_path`,
    /// `schema_path`, `message`, `kind`, `key`, `values`, `lines`,
    /// `similarity`) plus the contradicting `items`.
    #[getter]
    fn contradictions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list: &[_] = self.report.as_ref().map_or(&[], |r| &r.contradictions);
        convert::serde_to_py(py, &list)
    }

    /// The whole contradiction report (`sources`, `options`, `items_seen`,
    /// `items_without_key`, `skipped`, `contradictions`), as `check --out`
    /// writes it; None when contradictions were not looked for.
    fn contradiction_report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.report {
            Some(r) => convert::serde_to_py(py, r),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn __bool__(&self) -> bool {
        self.ok()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckReport(sources={}, with_errors={}, contradictions={})",
            self.sources.len(),
            self.errors.iter().filter(|e| !e.is_empty()).count(),
            self.report.as_ref().map_or(0, |r| r.contradictions.len())
        )
    }
}

/// `check(values, *, schema=None, profile=None, contradictions=True,
/// items=None, key=None, compare=None, near_lines=None)`.
///
/// `values` is a list of sibling outputs (named `"0"`, `"1"`, ...) or a
/// dict `{name: output}`; an output may be a value or an `Extraction`.
/// Each is validated against the schema with its `x-invariants`; then items
/// at `items` (default: the profile's `[contradictions]`, else
/// `/findings`) with the same `key` (`file`, `line`) but different
/// `compare` fields (`severity`) are reported as contradictions.
#[pyfunction]
#[pyo3(signature = (values, *, schema=None, profile=None, contradictions=true, items=None, key=None, compare=None, near_lines=None))]
#[allow(clippy::too_many_arguments)] // keyword arguments mirroring `agentshape check`'s flags
pub fn check(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    schema: Option<&Bound<'_, PyAny>>,
    profile: Option<&Bound<'_, PyAny>>,
    contradictions: bool,
    items: Option<String>,
    key: Option<Vec<String>>,
    compare: Option<Vec<String>>,
    near_lines: Option<u64>,
) -> PyResult<PyCheckReport> {
    let setup = Setup::new(schema, profile, false)?;
    if setup.validator.is_none() && !contradictions {
        return Err(UsageError::new_err(
            "nothing to check: give schema= or profile= (invariants) and/or contradictions=True",
        ));
    }
    let mut sources = Vec::new();
    let mut outputs: Vec<Value> = Vec::new();
    let mut add = |name: String, obj: &Bound<'_, PyAny>| -> PyResult<()> {
        let value = if let Ok(e) = obj.cast::<PyExtraction>() {
            e.get().value_json().cloned().unwrap_or(Value::Null)
        } else {
            convert::to_value(obj)?
        };
        sources.push(name);
        outputs.push(value);
        Ok(())
    };
    if let Ok(d) = values.cast::<PyDict>() {
        for (k, v) in d.iter() {
            add(k.str()?.to_cow()?.into_owned(), &v)?;
        }
    } else {
        for (i, v) in values.try_iter()?.enumerate() {
            add(i.to_string(), &v?)?;
        }
    }
    let opts = if contradictions {
        let mut o = setup
            .profile
            .as_ref()
            .and_then(|p| p.contradictions.clone())
            .unwrap_or_else(ContradictionOptions::default);
        if let Some(items) = items {
            if !(items.is_empty() || items.starts_with('/')) {
                return Err(UsageError::new_err(format!(
                    "items `{items}` is not a JSON Pointer (like `/findings`, or `` for the whole output)"
                )));
            }
            o.items = items;
        }
        if let Some(k) = key {
            o.key = k;
        }
        if let Some(c) = compare {
            o.compare = c;
        }
        if near_lines.is_some() {
            o.near_lines = near_lines;
        }
        Some(o)
    } else {
        None
    };
    let (errors, report) = py.detach(|| {
        let errors = match &setup.validator {
            Some(v) => parallel::map(&outputs, None, |o| v.errors_and_invariants(o)),
            None => vec![Vec::new(); outputs.len()],
        };
        let report = opts.map(|o| {
            let named: Vec<(&str, &Value)> = sources
                .iter()
                .map(String::as_str)
                .zip(outputs.iter())
                .collect();
            find_contradictions(&named, &o)
        });
        (errors, report)
    });
    Ok(PyCheckReport {
        sources,
        errors,
        report,
    })
}
