//! `tcplab bench`'s side of the extension (cargo feature `bench`, on in the
//! default build so the installed `tcplab bench` works): the benchmark
//! suite's rows from the core's one definition
//! (`tcplab_core::scenarios::bench`, shared with `cargo bench`) and a run
//! measured after a warm-up. Developer tooling: nothing of the modelling API
//! uses it (python/tcplab/devtools/ does).

use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tcplab_core::scenarios::bench::{scaling, suite, warm_up, Length, Scenario, AXES};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bench_suite, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scaling, m)?)?;
    m.add_function(wrap_pyfunction!(bench_run, m)?)?;
    Ok(())
}

fn bench_rows(py: Python<'_>, list: Vec<Scenario>) -> PyResult<PyObject> {
    let out = PyList::empty_bound(py);
    for sc in list {
        let d = PyDict::new_bound(py);
        d.set_item("name", &sc.name)?;
        d.set_item("description", &sc.description)?;
        let spec = match &sc.spec {
            Some(s) => Some(serde_json::to_string(s).map_err(|e| PyRuntimeError::new_err(e.to_string()))?),
            None => None,
        };
        d.set_item("spec_json", spec)?;
        d.set_item("skip", sc.skip.clone())?;
        d.set_item("bottleneck", &sc.bottleneck)?;
        d.set_item("axis_value", sc.axis_value)?;
        d.set_item("warmup", sc.warmup)?;
        out.append(d)?;
    }
    Ok(out.into())
}

/// The standard benchmark scenarios (tcplab_core::scenarios::bench), the
/// same definitions `cargo bench` uses: a list of dicts with `name`,
/// `description`, `spec_json` (None for a placeholder), `skip` (why a
/// placeholder is skipped), `bottleneck` (link name), `axis_value` and
/// `warmup` (simulated seconds left out of the cost figures, 0 for none).
/// `seconds` overrides the simulated duration; `quick` shortens every run.
#[pyfunction]
#[pyo3(signature = (quick = false, seconds = None))]
fn bench_suite(py: Python<'_>, quick: bool, seconds: Option<f64>) -> PyResult<PyObject> {
    let len = match (quick, seconds) {
        (_, Some(s)) => Length::Seconds(s),
        (true, None) => Length::Quick,
        (false, None) => Length::Full,
    };
    bench_rows(py, suite(len))
}

/// The points of one scaling curve (`axis`: flows, rate, window or algorithm), as
/// `bench_suite` rows with `axis_value` set.
#[pyfunction]
#[pyo3(signature = (axis, quick = false))]
fn bench_scaling(py: Python<'_>, axis: &str, quick: bool) -> PyResult<PyObject> {
    match scaling(axis, quick) {
        Some(list) => bench_rows(py, list),
        None => Err(PyValueError::new_err(format!("unknown scaling axis {axis:?}; known: {}", AXES.join(", ")))),
    }
}

/// Runs `spec_json` as `run` does, the first `warmup` simulated seconds
/// untimed (`scenarios::bench::warm_up`): `meta.wall_s` is the event loop's
/// time after the warm-up only, and with a warm-up the results get a
/// `warmup` table: the seconds, and the events and per-link `packets_out`
/// and `data_packets_out` then. A warm-up that is negative, not finite, or
/// not shorter than the run raises SpecError (field `warmup`).
#[pyfunction]
#[pyo3(signature = (spec_json, warmup = 0.0))]
fn bench_run(py: Python<'_>, spec_json: &str, warmup: f64) -> PyResult<PyObject> {
    let (res, warm, traced) = crate::run_world(py, spec_json, false, move |w, d| warm_up(w, warmup, d))?;
    let out = crate::to_python(py, res, traced)?;
    if let Some(w) = warm {
        let t = PyDict::new_bound(py);
        t.set_item("seconds", w.seconds)?;
        t.set_item("events", w.events)?;
        t.set_item("packets_out", w.packets_out.into_pyarray_bound(py))?;
        t.set_item("data_packets_out", w.data_packets_out.into_pyarray_bound(py))?;
        out.bind(py).set_item("warmup", t)?;
    }
    Ok(out)
}
