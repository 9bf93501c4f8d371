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
//! strings, NaN, other types, ints beyond 64 bits) is left to Python's
//! encoder, so the text is Python's in every case (tests/test_sweep.py
//! compares them on random values).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyLong, PyString, PyTuple};
use sha2::{Digest, Sha256};
use tcplab_store::canon::{float_repr, json_str};

/// Writes `obj` as canonical JSON; false if it holds something left to Python.
fn write(obj: &Bound<'_, PyAny>, out: &mut String) -> bool {
    if obj.is_none() {
        out.push_str("null");
    } else if let Ok(b) = obj.downcast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if let Ok(s) = obj.downcast::<PyString>() {
        match s.to_str() {
            Ok(s) => json_str(s, out),
            Err(_) => return false, // (lone surrogates)
        }
    } else if let Ok(i) = obj.downcast::<PyLong>() {
        use std::fmt::Write;
        if let Ok(v) = i.extract::<i64>() {
            let _ = write!(out, "{v}");
        } else if let Ok(v) = i.extract::<u64>() {
            let _ = write!(out, "{v}");
        } else {
            return false;
        }
    } else if let Ok(f) = obj.downcast::<PyFloat>() {
        let v = f.value();
        if !v.is_finite() {
            return false; // (Python raises: NaN and infinities are not JSON)
        }
        float_repr(v, out);
    } else if let Ok(l) = obj.downcast::<PyList>() {
        out.push('[');
        for (k, x) in l.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            if !write(&x, out) {
                return false;
            }
        }
        out.push(']');
    } else if let Ok(t) = obj.downcast::<PyTuple>() {
        out.push('[');
        for (k, x) in t.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            if !write(&x, out) {
                return false;
            }
        }
        out.push(']');
    } else if let Ok(d) = obj.downcast::<PyDict>() {
        let mut items = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(k) = k.downcast_into::<PyString>() else { return false };
            items.push((k, v));
        }
        let mut keyed = Vec::with_capacity(items.len());
        for (k, v) in &items {
            let Ok(s) = k.to_str() else { return false };
            keyed.push((s, v));
        }
        keyed.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out.push('{');
        for (n, (k, v)) in keyed.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            json_str(k, out);
            out.push(':');
            if !write(v, out) {
                return false;
            }
        }
        out.push('}');
    } else {
        return false;
    }
    true
}

/// Canonical JSON of `obj`, or None where Python's encoder must decide.
#[pyfunction]
pub fn canonical_json(obj: &Bound<'_, PyAny>) -> Option<String> {
    let mut out = String::with_capacity(2048);
    write(obj, &mut out).then_some(out)
}

/// `(run key, canonical JSON of spec)` with `version_json` the canonical
/// JSON of the version: the first 32 hex digits of the SHA-256 of
/// `{"spec":SPEC,"version":VERSION}`. None where Python must decide.
#[pyfunction]
pub fn run_key(spec: &Bound<'_, PyAny>, version_json: &str, key_len: usize) -> Option<(String, String)> {
    let spec_json = canonical_json(spec)?;
    let mut h = Sha256::new();
    h.update(b"{\"spec\":");
    h.update(spec_json.as_bytes());
    h.update(b",\"version\":");
    h.update(version_json.as_bytes());
    h.update(b"}");
    let digest = h.finalize();
    let mut key = String::with_capacity(64);
    for b in digest {
        key.push_str(&format!("{b:02x}"));
    }
    key.truncate(key_len);
    Some((key, spec_json))
}

