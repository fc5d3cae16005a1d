//! Python objects validated in place: walked into core's built instances.
//!
//! Note [Validating Python objects in place]: `Validator.validate(dict)`
//! converted every instance into a `serde_json::Value` first, and on the
//! shared corpus that conversion alone cost as much as fastjsonschema's
//! whole validation (`bench/python.py`: "conversion alone"). Core can
//! validate an instance built by a walk (Note [Instances from host objects]
//! in core's `validate::instance`): here the walk reads the Python objects,
//! borrowing each `str`'s UTF-8 text from the object itself, and builds no
//! map and hashes no key. The walk takes only exact `dict`, `list`, `tuple`,
//! `str`, `int` (within 64 bits), finite `float`, `bool` and `None`, with
//! `str` keys, at most core's text-reader depth: anything else (a subclass, a
//! Pydantic model, NaN, a big integer, a deeper instance) returns `None` and
//! the caller takes the `convert::to_value` path, which stays the reference
//! (and raises `NotJSONError` where it must). The verdicts agree
//! (`crates/python/tests/test_validate.py` runs both paths on the same
//! instances).
//!
//! Note [Borrowed text]: the wheel targets the stable ABI of `CPython` 3.9,
//! where `PyO3` offers a `str`'s text only as a copy made through a new
//! `bytes` object. `PyUnicode_AsUTF8AndSize` (public since `CPython` 3.3, in
//! the stable ABI from 3.10, exported by every `CPython` this wheel loads in)
//! returns the object's own UTF-8 buffer: the text of an ASCII string, a
//! cached UTF-8 copy for others, kept until the object is freed. The text is
//! therefore valid while the object lives, and every object whose text is
//! borrowed is held (a strong reference) until the borrow ends, so another
//! thread may even mutate the containers while the interpreter is released.

use std::borrow::Cow;

use agentshape_core::validate::{Instance, InstanceBuilder};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Number;

#[allow(unsafe_code)]
mod ffi {
    // See Note [Borrowed text]: declared here because pyo3-ffi declares it only
    // for a stable ABI of 3.10 and later.
    unsafe extern "C" {
        pub fn PyUnicode_AsUTF8AndSize(
            unicode: *mut pyo3::ffi::PyObject,
            size: *mut pyo3::ffi::Py_ssize_t,
        ) -> *const std::ffi::c_char;
    }

    /// The UTF-8 text of `s` (Note [Borrowed text]) with the lifetime the
    /// caller names; `None` when the string holds a lone surrogate (not
    /// UTF-8), with the Python error cleared.
    ///
    /// # Safety
    /// The object `s` must stay alive (a strong reference held) for all of
    /// `'t`.
    pub unsafe fn utf8<'t>(s: &pyo3::Bound<'_, pyo3::types::PyString>) -> Option<&'t str> {
        use pyo3::prelude::*;
        let mut len: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (the type was checked by the caller's
        // cast) and we hold the interpreter (a `Bound` proves it).
        let p = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &raw mut len) };
        if p.is_null() {
            // A lone surrogate: the encode error is set; clear it.
            drop(PyErr::take(s.py()));
            return None;
        }
        let len = usize::try_from(len).ok()?;
        // SAFETY: CPython returns a buffer of `len` bytes owned by the
        // object, unchanged until the object is freed, which the caller
        // guarantees is after `'t`.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        std::str::from_utf8(bytes).ok()
    }
}

/// Objects kept alive while their text is borrowed (Note [Borrowed text]).
pub type Held<'py> = Vec<Bound<'py, PyAny>>;

/// The text of a `str` argument, borrowed for as long as the caller holds
/// `s` (Note [Borrowed text]); `None` when it is not UTF-8.
pub fn text<'a>(s: &'a Bound<'_, PyString>) -> Option<&'a str> {
    // SAFETY: `s` is borrowed for 'a, so the object lives at least that long.
    #[allow(unsafe_code)]
    unsafe {
        ffi::utf8(s)
    }
}

/// Walk `obj` into a built instance and run `f` on it; `None` when the walk
/// declines (Note [Validating Python objects in place]): the caller converts
/// instead.
pub fn with_instance<'py, R>(
    obj: &Bound<'py, PyAny>,
    f: impl FnOnce(&Instance<'_>) -> R,
) -> Option<R> {
    let mut held: Held<'py> = Vec::new();
    let instance = build(obj, &mut held)?;
    let r = f(&instance);
    // The instance borrows from `held`'s objects: it goes first.
    drop(instance);
    drop(held);
    Some(r)
}

/// [`with_instance`] over many objects: `f` gets one entry per object,
/// `None` where the walk declined.
pub fn with_instances<'py, R>(
    objs: &[Bound<'py, PyAny>],
    f: impl FnOnce(&[Option<Instance<'_>>]) -> R,
) -> R {
    let mut held: Held<'py> = Vec::new();
    let instances: Vec<Option<Instance<'_>>> = objs.iter().map(|o| build(o, &mut held)).collect();
    let r = f(&instances);
    drop(instances);
    drop(held);
    r
}

/// The walk. The instance's lifetime is chosen by the caller, who keeps
/// `held` alive longer than the instance.
fn build<'py, 't>(obj: &Bound<'py, PyAny>, held: &mut Held<'py>) -> Option<Instance<'t>> {
    let mut b = InstanceBuilder::new();
    walk(obj, &mut b, held, 0).then_some(())?;
    b.finish()
}

/// Core's text reader refuses deeper nesting; the `Value` path takes it.
const MAX_DEPTH: usize = 100;

fn walk<'py>(
    obj: &Bound<'py, PyAny>,
    b: &mut InstanceBuilder<'_>,
    held: &mut Held<'py>,
    depth: usize,
) -> bool {
    if obj.is_none() {
        b.null();
        return true;
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        let Some(t) = borrow(s, held) else {
            return false;
        };
        b.string(t);
        return true;
    }
    if let Ok(v) = obj.cast_exact::<PyBool>() {
        b.bool(v.is_true());
        return true;
    }
    if let Ok(i) = obj.cast_exact::<PyInt>() {
        return match i.extract::<i64>() {
            Ok(n) => {
                b.number(n.into());
                true
            }
            Err(_) => match i.extract::<u64>() {
                Ok(n) => {
                    b.number(n.into());
                    true
                }
                Err(_) => false,
            },
        };
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return match Number::from_f64(f.value()) {
            Some(n) => {
                b.number(n);
                true
            }
            None => false,
        };
    }
    if depth >= MAX_DEPTH {
        return false;
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        b.begin_object();
        for (k, v) in d.iter() {
            let Ok(ks) = k.cast_exact::<PyString>() else {
                return false;
            };
            let Some(key) = borrow(ks, held) else {
                return false;
            };
            b.key(Cow::Borrowed(key));
            if !walk(&v, b, held, depth + 1) {
                return false;
            }
        }
        b.end_object();
        return true;
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return array(l.iter(), b, held, depth);
    }
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        return array(t.iter(), b, held, depth);
    }
    false
}

/// A list's or tuple's items as an array.
fn array<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    b: &mut InstanceBuilder<'_>,
    held: &mut Held<'py>,
    depth: usize,
) -> bool {
    b.begin_array();
    for item in items {
        if !walk(&item, b, held, depth + 1) {
            return false;
        }
    }
    b.end_array();
    true
}

/// The text of `s`, holding the object for the instance's life.
fn borrow<'py, 't>(s: &Bound<'py, PyString>, held: &mut Held<'py>) -> Option<&'t str> {
    // SAFETY: the object is pushed onto `held`, which the callers of
    // `build` drop only after the instance borrowing this text.
    #[allow(unsafe_code)]
    let t: &'t str = unsafe { ffi::utf8(s) }?;
    held.push(s.clone().into_any());
    Some(t)
}
