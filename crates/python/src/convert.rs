//! Python objects ↔ JSON values, without a JSON string in between.
//!
//! Note [Direct conversion]: every value a caller hands in (an instance to
//! validate, a schema dict) and every value handed back (an extracted value,
//! a run summary) crosses here. Walking the Python objects into a
//! `serde_json::Value` directly skips `json.dumps` (a Python-level call that
//! builds a string) and serde's parse of it; `bench/python.py` measures both
//! routes on the 100,000 instances of the shared corpus.
//!
//! Note [What is not JSON]: a value JSON cannot hold is refused with
//! `NotJSONError`, never changed: NaN and infinities (JSON has no such
//! numbers; `json.dumps` would write the non-JSON `NaN`), integers beyond
//! 64 bits (core's Note [Big numbers]: they would become inexact floats),
//! dict keys that are not strings (`json.dumps` turns `1` into `"1"` and
//! `None` into `"null"`, which can merge two keys into one), nesting deeper
//! than [`MAX_DEPTH`] (a cycle is the usual cause, and serde's recursive
//! drop must stay far from the thread's stack limit), and any other type
//! (sets, bytes, dates). Objects with Pydantic's `model_dump` are dumped in
//! JSON mode first, so a model instance validates like its dict.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::NotJSONError;

/// The deepest nesting accepted from Python (Note [What is not JSON]): twice
/// `serde_json`'s own parse limit, far below what a thread's stack takes.
pub const MAX_DEPTH: usize = 256;

/// Convert a Python object to a JSON value.
///
/// # Errors
/// `NotJSONError` naming the JSON Pointer of the first part that JSON cannot
/// hold (Note [What is not JSON]); whatever `model_dump` raises.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let mut path = Vec::new();
    walk(obj, 0, &mut path)
}

fn walk(obj: &Bound<'_, PyAny>, depth: usize, path: &mut Vec<String>) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(not_json(
            path,
            &format!("nesting deeper than {MAX_DEPTH} levels (a container that contains itself?)"),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    // bool before int: `True` is an `int` in Python.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = i.extract::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        return Err(not_json(
            path,
            "an integer beyond 64 bits cannot be held exactly",
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let x = f.value();
        return Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| not_json(path, &format!("{x} is not a JSON number")));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                let shown = k.repr().map_or_else(|_| "?".into(), |r| r.to_string());
                return Err(not_json(
                    path,
                    &format!("dict key {shown} is not a str (JSON keys are strings)"),
                ));
            };
            let key = key.to_cow()?.into_owned();
            path.push(key.clone());
            let value = walk(&v, depth + 1, path)?;
            path.pop();
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return sequence(l.iter(), l.len(), depth, path);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return sequence(t.iter(), t.len(), depth, path);
    }
    if obj.hasattr("model_dump")? {
        let kwargs = PyDict::new(obj.py());
        kwargs.set_item("mode", "json")?;
        let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
        return walk(&dumped, depth + 1, path);
    }
    let kind = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string());
    Err(not_json(path, &format!("a `{kind}` is not a JSON value")))
}

fn sequence<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
    path: &mut Vec<String>,
) -> PyResult<Value> {
    let mut out = Vec::with_capacity(len);
    for (i, item) in items.enumerate() {
        path.push(i.to_string());
        out.push(walk(&item, depth + 1, path)?);
        path.pop();
    }
    Ok(Value::Array(out))
}

fn not_json(path: &[String], why: &str) -> PyErr {
    let mut pointer = String::new();
    for p in path {
        pointer.push('/');
        pointer.push_str(&p.replace('~', "~0").replace('/', "~1"));
    }
    let at = if pointer.is_empty() {
        "the root".to_owned()
    } else if let Some((cut, _)) = pointer.char_indices().nth(120) {
        // A cycle's pointer is hundreds of levels long: quote its start.
        format!("`{}…` ({} levels down)", &pointer[..cut], path.len())
    } else {
        format!("`{pointer}`")
    };
    NotJSONError::new_err(format!("not JSON at {at}: {why}"))
}

/// Convert a JSON value to Python objects (dict, list, str, int, float,
/// bool, None); object keys keep their order. Made through the C API,
/// keys shared (Note [Building values through the C API] and
/// Note [Key cache] in `build`).
///
/// # Errors
/// Only when Python cannot allocate.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    crate::build::to_py(py, value)
}

/// Serialize anything serde can (core's result types) into Python objects,
/// through a `Value` (their fields are few; the extracted values themselves
/// go through [`to_py`] directly).
///
/// # Errors
/// When serde refuses the value (it never does for core's types).
pub fn serde_to_py<'py, T: serde::Serialize>(
    py: Python<'py>,
    x: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(x)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    to_py(py, &value)
}
