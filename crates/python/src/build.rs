//! JSON values to Python objects, through the stable C API of Python.
//!
//! Note [Building values through the C API]: an extracted value becomes
//! dicts, lists and strings every time `.value` is read, and on replies of
//! long strings in indented objects that building was two thirds of
//! `agentshape.extract(text).value` (bench/python.py's second corpus). Going
//! through pyo3's safe types cost a reference count call per temporary
//! handle (abi3 has no inline `Py_INCREF`) and a `Vec` per list; here each
//! object is made by the one C call that makes it (`PyList_New` at its final
//! size then `PyList_SetItem`, which takes the reference; `PyDict_SetItem`),
//! strings by `PyUnicode_FromStringAndSize` (the interpreter's UTF-8 decoder: its
//! ASCII path copies a word at a time). Only calls of the limited API
//! (`abi3-py39`) are used: `PyUnicode_New` and writing into a string's
//! buffer are not in it. With the key cache below, building the values
//! took 17% fewer instructions on the second corpus and 24% fewer on the
//! shared one (callgrind, 3,000 replies each). Decoding non-ASCII strings
//! in Rust and handing them over as UTF-32 (`PyUnicode_FromWideChar`) was
//! tried and took 50% more instructions than the interpreter's decoder.
//! `tests/test_values.py` holds the result to `json.loads` of serde's
//! compact JSON of the same value.
//!
//! Note [Key cache]: the keys of agent objects repeat within a reply
//! (every finding has `file`, `line`, `severity`) and across replies (every
//! reply of one prompt has the same keys). One `str` per distinct short key
//! is kept in a small direct-mapped cache and shared, as `json.loads` shares
//! the keys of one document; across calls this also saves hashing the key
//! again when it is stored in a dict, since a `str` keeps its hash. Strings
//! are immutable, so sharing one is invisible but to `is`. The cache is
//! bounded ([`KEY_SLOTS`] keys of up to [`CACHED_BYTES`] bytes: a new key
//! takes the slot of an old one), is touched only with the interpreter
//! held, and is skipped, not waited for, when it is already in use (a
//! finaliser run by the garbage collector in the middle of a conversion can
//! convert another value). Values are not shared: short strings are cheap
//! for the interpreter to make, and a cache of the short values (on the shared
//! corpus, 200,000 of the 320,000 strings repeat one of 512) cost as many
//! instructions as it saved (callgrind).

// The C API is the point of this module (Note [Building values through the
// C API]); every pointer comes from it and is checked for NULL.
#![allow(unsafe_code)]

use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;
use serde_json::Value;

/// Convert a JSON value to Python objects (dict, list, str, int, float,
/// bool, None); object keys keep their order.
///
/// # Errors
/// Only when Python cannot allocate.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    let mut cache = KEYS.try_lock().ok();
    let mut b = Builder {
        keys: cache.as_deref_mut(),
    };
    // SAFETY: `py` proves the interpreter is held; `value` returns a new
    // reference or NULL with the error set.
    unsafe {
        let ptr = b.value(value);
        if ptr.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, ptr))
    }
}

/// One conversion: the key cache, when it was free.
struct Builder<'c> {
    keys: Option<&'c mut KeyCache>,
}

impl Builder<'_> {
    /// A new reference to the Python form of `v`, or NULL with the error set.
    ///
    /// # Safety
    /// The interpreter must be held.
    unsafe fn value(&mut self, v: &Value) -> *mut ffi::PyObject {
        // SAFETY: the caller holds the interpreter; every call below is of the
        // limited API and its result is checked before use.
        unsafe {
            match v {
                Value::Null => new_ref(ffi::Py_None()),
                Value::Bool(true) => new_ref(ffi::Py_True()),
                Value::Bool(false) => new_ref(ffi::Py_False()),
                Value::Number(n) => {
                    if let Some(i) = n.as_i64() {
                        ffi::PyLong_FromLongLong(i)
                    } else if let Some(u) = n.as_u64() {
                        ffi::PyLong_FromUnsignedLongLong(u)
                    } else {
                        ffi::PyFloat_FromDouble(n.as_f64().unwrap_or(f64::NAN))
                    }
                }
                Value::String(s) => string(s),
                Value::Array(items) => {
                    let Ok(len) = ffi::Py_ssize_t::try_from(items.len()) else {
                        return ffi::PyErr_NoMemory();
                    };
                    let list = ffi::PyList_New(len);
                    if list.is_null() {
                        return list;
                    }
                    for (i, item) in (0..len).zip(items) {
                        let o = self.value(item);
                        // Either way the list owns what it holds: the items set
                        // so far, NULL for the rest (its deallocator skips those).
                        if o.is_null() || ffi::PyList_SetItem(list, i, o) != 0 {
                            ffi::Py_DecRef(list);
                            return std::ptr::null_mut();
                        }
                    }
                    list
                }
                Value::Object(map) => {
                    let dict = ffi::PyDict_New();
                    if dict.is_null() {
                        return dict;
                    }
                    for (k, x) in map {
                        let key = self.key(k);
                        if key.is_null() {
                            ffi::Py_DecRef(dict);
                            return key;
                        }
                        let item = self.value(x);
                        let failed = item.is_null() || ffi::PyDict_SetItem(dict, key, item) != 0;
                        ffi::Py_DecRef(key);
                        if !item.is_null() {
                            ffi::Py_DecRef(item);
                        }
                        if failed {
                            ffi::Py_DecRef(dict);
                            return std::ptr::null_mut();
                        }
                    }
                    dict
                }
            }
        }
    }

    /// A new reference to a `str` holding key `k`, shared through the
    /// cache when it is short (Note [Key cache]).
    ///
    /// # Safety
    /// The interpreter must be held.
    unsafe fn key(&mut self, k: &str) -> *mut ffi::PyObject {
        // SAFETY: the caller holds the interpreter.
        unsafe {
            match self.keys.as_deref_mut() {
                Some(c) if k.len() <= CACHED_BYTES => c.get(k),
                _ => string(k),
            }
        }
    }
}

/// `o` with one more reference (for the singletons).
unsafe fn new_ref(o: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `o` is a live object and the interpreter is held.
    unsafe { ffi::Py_IncRef(o) };
    o
}

/// A new `str` holding `s` (valid UTF-8: a Rust `str`).
unsafe fn string(s: &str) -> *mut ffi::PyObject {
    let Ok(len) = ffi::Py_ssize_t::try_from(s.len()) else {
        // SAFETY: the interpreter is held.
        return unsafe { ffi::PyErr_NoMemory() };
    };
    // SAFETY: `s` is `len` readable bytes; the interpreter is held.
    unsafe { ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), len) }
}

/// Slots of the key cache (Note [Key cache]): a power of two. Agent objects
/// repeat a few dozen keys.
const KEY_SLOTS: usize = 512;

/// The longest key kept (Note [Key cache]); longer ones are made each time
/// (they rarely repeat, and comparing them would cost what making them
/// does).
const CACHED_BYTES: usize = 32;

/// One string: its bytes and its `str` (a reference the cache owns), or NULL.
struct Slot {
    len: usize,
    bytes: [u8; CACHED_BYTES],
    obj: *mut ffi::PyObject,
}

/// The key cache (Note [Key cache]): a direct-mapped table of strings; its
/// slots are made on first use.
struct KeyCache {
    slots: Vec<Slot>,
}

// SAFETY: the `str` objects are only read or released with the interpreter
// held (the lock is taken in `to_py`, which takes `Python`), so moving the
// cache between threads moves no unguarded access.
unsafe impl Send for KeyCache {}

static KEYS: Mutex<KeyCache> = Mutex::new(KeyCache { slots: Vec::new() });

impl KeyCache {
    /// The `str` for `s` (at most [`CACHED_BYTES`] long), from the table or
    /// made and put in it in place of the slot's string.
    ///
    /// # Safety
    /// The interpreter must be held.
    unsafe fn get(&mut self, s: &str) -> *mut ffi::PyObject {
        let bytes = s.as_bytes();
        if self.slots.is_empty() {
            self.slots = (0..KEY_SLOTS)
                .map(|_| Slot {
                    len: 0,
                    bytes: [0; CACHED_BYTES],
                    obj: std::ptr::null_mut(),
                })
                .collect();
        }
        let slot = &mut self.slots[slot_of(bytes)];
        // SAFETY: the interpreter is held; `slot.obj` is a live `str` the
        // cache owns a reference to, or NULL.
        unsafe {
            if !slot.obj.is_null() && slot.len == bytes.len() && slot.bytes[..slot.len] == *bytes {
                return new_ref(slot.obj);
            }
            let o = string(s);
            if o.is_null() {
                return o;
            }
            if !slot.obj.is_null() {
                // A `str` has no finaliser: releasing it runs no Python code.
                ffi::Py_DecRef(slot.obj);
            }
            slot.obj = new_ref(o);
            slot.len = bytes.len();
            slot.bytes[..bytes.len()].copy_from_slice(bytes);
            o
        }
    }
}

/// The slot of a key: a multiplicative hash of its bytes (`FxHash`'s step),
/// its top bits.
fn slot_of(bytes: &[u8]) -> usize {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    usize::try_from(h >> (64 - KEY_SLOTS.trailing_zeros())).unwrap_or(0)
}
