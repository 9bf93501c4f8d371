//! The run key of a RunSpec, computed without Python's JSON encoder.
//!
//! A campaign keys a run by the SHA-256 of the canonical JSON of
//! `{"spec": RunSpec, "version": version}`: Python's
//! `json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False,
//! ensure_ascii=True)` (python/tcplab/sweep/grid.py, `canonical_json`). This
//! writes the same text from the Python objects directly (a sweep hashes
//! every run before it knows what to run, and Python's encoder takes most
//! of that time): dicts with string keys sorted by code point, lists and
//! tuples, strings escaped as Python escapes them (every character outside
//! space..tilde as `\uXXXX`, surrogate pairs beyond the BMP), ints, floats
//! as `repr` writes them, True/False/None. Anything else (keys that are not
//! strings, NaN, subclasses, other types, ints beyond 64 bits) is left to
//! Python's encoder, so the text is Python's in every case
//! (tests/test_sweep.py compares them on random values).

use std::ptr::addr_of_mut;

use pyo3::ffi;
use pyo3::prelude::*;
use sha2::{Digest, Sha256};
use tcplab_store::canon::{float_repr, int_text, json_str};

/// Writes `obj` as canonical JSON; false if it holds something left to
/// Python (then `out` is garbage). Objects of the exact built-in types only
/// (subclasses, whose JSON Python's encoder decides, are left to it), read
/// through the C API with borrowed references: a RunSpec is a few hundred
/// objects, and pyo3's safe wrappers cost more than the writing.
///
/// # Safety
/// The GIL is held and `obj` is a live object; nothing here runs Python code
/// (so no container changes under the walk).
unsafe fn write(obj: *mut ffi::PyObject, out: &mut String) -> bool {
    write_json(obj, out, true)
}

/// [`write`], with dict keys sorted (`sort`) or in the dict's order (as
/// Python's encoder writes them without `sort_keys`; nested dicts too).
///
/// # Safety
/// As [`write`].
unsafe fn write_json(obj: *mut ffi::PyObject, out: &mut String, sort: bool) -> bool {
    let t = ffi::Py_TYPE(obj);
    if obj == ffi::Py_None() {
        out.push_str("null");
    } else if obj == ffi::Py_True() {
        out.push_str("true");
    } else if obj == ffi::Py_False() {
        out.push_str("false");
    } else if t == addr_of_mut!(ffi::PyUnicode_Type) {
        let Some(s) = utf8(obj) else { return false };
        json_str(s, out);
    } else if t == addr_of_mut!(ffi::PyLong_Type) {
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
        if overflow != 0 || (v == -1 && !ffi::PyErr_Occurred().is_null()) {
            ffi::PyErr_Clear();
            return false; // (beyond 64 bits: Python writes it)
        }
        int_text(v, out);
    } else if t == addr_of_mut!(ffi::PyFloat_Type) {
        let v = ffi::PyFloat_AsDouble(obj);
        if !v.is_finite() {
            return false; // (Python raises: NaN and infinities are not JSON)
        }
        float_repr(v, out);
    } else if t == addr_of_mut!(ffi::PyList_Type) || t == addr_of_mut!(ffi::PyTuple_Type) {
        let list = t == addr_of_mut!(ffi::PyList_Type);
        let n = if list { ffi::PyList_Size(obj) } else { ffi::PyTuple_Size(obj) };
        out.push('[');
        for i in 0..n {
            if i > 0 {
                out.push(',');
            }
            let x = if list { ffi::PyList_GetItem(obj, i) } else { ffi::PyTuple_GetItem(obj, i) };
            if x.is_null() || !write_json(x, out, sort) {
                ffi::PyErr_Clear();
                return false;
            }
        }
        out.push(']');
    } else if t == addr_of_mut!(ffi::PyDict_Type) {
        let mut items: Vec<(&str, *mut ffi::PyObject)> = Vec::with_capacity(ffi::PyDict_Size(obj).max(0) as usize);
        let (mut pos, mut k, mut v) = (0 as ffi::Py_ssize_t, std::ptr::null_mut(), std::ptr::null_mut());
        while ffi::PyDict_Next(obj, &mut pos, &mut k, &mut v) != 0 {
            if ffi::Py_TYPE(k) != addr_of_mut!(ffi::PyUnicode_Type) {
                return false; // (Python converts and sorts other keys its own way)
            }
            let Some(key) = utf8(k) else { return false };
            items.push((key, v));
        }
        if sort {
            items.sort_unstable_by(|a, b| a.0.cmp(b.0));
        }
        out.push('{');
        for (n, (k, v)) in items.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            json_str(k, out);
            out.push(':');
            if !write_json(*v, out, sort) {
                return false;
            }
        }
        out.push('}');
    } else {
        return false;
    }
    true
}

/// The UTF-8 text of a str (cached in the object by CPython), or None for
/// one that has none (lone surrogates).
///
/// # Safety
/// As [`write`]; `s` is a str. The text lives as long as the object.
unsafe fn utf8<'a>(s: *mut ffi::PyObject) -> Option<&'a str> {
    let mut n: ffi::Py_ssize_t = 0;
    let p = ffi::PyUnicode_AsUTF8AndSize(s, &mut n);
    if p.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(p as *const u8, n as usize)))
}

/// Canonical JSON of `obj`, or None where Python's encoder must decide.
#[pyfunction]
pub fn canonical_json(obj: &Bound<'_, PyAny>) -> Option<String> {
    let mut out = String::with_capacity(2048);
    // SAFETY: the GIL is held (`obj` is bound to it) and the walk runs no Python code
    unsafe { write(obj.as_ptr(), &mut out) }.then_some(out)
}

/// The run key: the first `key_len` hex digits of the SHA-256 of
/// `{"spec":SPEC,"version":VERSION}`.
fn key_of(spec_json: &str, version_json: &str, key_len: usize) -> String {
    let mut h = Sha256::new();
    h.update(b"{\"spec\":");
    h.update(spec_json.as_bytes());
    h.update(b",\"version\":");
    h.update(version_json.as_bytes());
    h.update(b"}");
    let mut key = tcplab_store::segment::hex(&h.finalize());
    key.truncate(key_len);
    key
}

/// `(run key, canonical JSON of spec, job line)`: [`run_key`] and the line
/// the pool's workers take the job as (python/tcplab/sweep/worker.py,
/// `job_line`; crates/tcplab-store/src/job.rs): `{"key":..,"params":..,
/// "seed":..,"version":..,"bottleneck":..,"spec":..}` with the parameters
/// as JSON in their own order and the spec as its canonical text. None
/// where Python must decide (the spec, the parameters or the seed hold
/// something only Python's encoder writes, or is not JSON at all).
#[pyfunction]
pub fn plan_job(
    spec: &Bound<'_, PyAny>,
    params: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
    version_json: &str,
    bottleneck_json: &str,
    key_len: usize,
) -> Option<(String, String, String)> {
    let spec_json = canonical_json(spec)?;
    let key = key_of(&spec_json, version_json, key_len);
    let mut line = String::with_capacity(spec_json.len() + 256);
    line.push_str("{\"key\":\"");
    line.push_str(&key);
    line.push_str("\",\"params\":");
    // SAFETY: the GIL is held (the arguments are bound to it) and the walks run no Python code
    if !unsafe { write_json(params.as_ptr(), &mut line, false) } {
        return None;
    }
    line.push_str(",\"seed\":");
    if !unsafe { write_json(seed.as_ptr(), &mut line, false) } {
        return None;
    }
    line.push_str(",\"version\":");
    line.push_str(version_json);
    line.push_str(",\"bottleneck\":");
    line.push_str(bottleneck_json);
    line.push_str(",\"spec\":");
    line.push_str(&spec_json);
    line.push('}');
    Some((key, spec_json, line))
}

/// `(run key, canonical JSON of spec)` with `version_json` the canonical
/// JSON of the version: the first 32 hex digits of the SHA-256 of
/// `{"spec":SPEC,"version":VERSION}`. None where Python must decide.
#[pyfunction]
pub fn run_key(spec: &Bound<'_, PyAny>, version_json: &str, key_len: usize) -> Option<(String, String)> {
    let spec_json = canonical_json(spec)?;
    let key = key_of(&spec_json, version_json, key_len);
    Some((key, spec_json))
}
