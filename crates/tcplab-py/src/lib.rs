//! Python bindings of tcplab-core: convert in, run without the GIL, convert out.
//!
//! `run(spec_json)` takes the JSON of a `RunSpec` and returns the results as
//! a dict of tables, each a dict of column name -> numpy array (or list of
//! str), so no Python object is made per sample. Invalid descriptions raise
//! `SpecError` (a `ValueError`) whose message starts with the field path; a
//! panic inside the core raises `SimulationError` (a `RuntimeError`) and never
//! takes the interpreter down.

// pyo3 0.22's #[pyfunction] expansion converts each function's PyResult
// error with `From`, which clippy reports at the signature's return type as
// "useless conversion to the same type: PyErr" (a false positive in the
// macro's code, not ours); allowed once for the bindings crate.
#![allow(clippy::useless_conversion)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

#[cfg(feature = "bench")]
mod bench;
mod interrupt;
mod netem;
mod progress;
mod store;

use tcplab_core::cc::catalog;
use tcplab_core::results::RunResults;
use tcplab_core::{RunSpec, SpecError as CoreSpecError, World};
use tcplab_store::segment::panic_message;

create_exception!(_core, SpecError, PyValueError, "Invalid run description; the message starts with the field path.");
create_exception!(_core, SimulationError, PyRuntimeError, "Internal error of the simulation core.");

fn spec_err(e: CoreSpecError) -> PyErr {
    let err = SpecError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value_bound(py);
        let _ = v.setattr("field", e.field.clone());
        let _ = v.setattr("problem", e.message.clone());
    });
    err
}

enum Outcome<T> {
    Ok(Box<(RunResults, T, bool)>),
    Spec(CoreSpecError),
    Panic(String),
    /// Stopped by a signal handler's exception (Ctrl-C: KeyboardInterrupt).
    Interrupted(PyErr),
}

fn table<'py>(py: Python<'py>) -> Bound<'py, PyDict> {
    PyDict::new_bound(py)
}

/// The run's tables as a dict; the loss trace's tables only when the run
/// traced (`loss_trace`), so other runs have the same keys as before.
fn to_python(py: Python<'_>, mut r: RunResults, traced: bool) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);

    // Every column of the declaration (tcplab_store::result_columns!), table by table.
    macro_rules! col {
        ($t:ident, $n:literal, $f:ident, $k:ident) => {{
            let name = stringify!($t);
            let t = match out.get_item(name)? {
                Some(t) => t.downcast_into::<PyDict>()?,
                None => {
                    let t = table(py);
                    out.set_item(name, &t)?;
                    t
                }
            };
            t.set_item($n, col!(@$k $t $f))?;
        }};
        (@num $t:ident $f:ident) => {
            r.$t.iter().map(|x| x.$f).collect::<Vec<_>>().into_pyarray_bound(py).into_any()
        };
        // Option<f64> (a statistic a row may lack) as float64 with NaN for None.
        (@opt $t:ident $f:ident) => {
            r.$t.iter().map(|x| x.$f.unwrap_or(f64::NAN)).collect::<Vec<_>>().into_pyarray_bound(py).into_any()
        };
        (@text $t:ident $f:ident) => {
            PyList::new_bound(py, r.$t.iter().map(|x| x.$f.as_str())).into_any()
        };
        (@series $t:ident $f:ident) => {
            std::mem::take(&mut r.$t.$f).into_pyarray_bound(py).into_any()
        };
    }
    tcplab_store::result_columns!(col);

    let c = out.get_item("cc_ts")?.expect("declared").downcast_into::<PyDict>()?;
    // Variable names once (codes above), not one Python string per sample.
    c.set_item("variable_names", PyList::new_bound(py, r.cc_ts.names.iter().copied()))?;
    // The queue disciplines' series, per link, as cc_ts is per flow.
    let d = out.get_item("qdisc_ts")?.expect("declared").downcast_into::<PyDict>()?;
    d.set_item("variable_names", PyList::new_bound(py, r.qdisc_ts.names.iter().copied()))?;

    // The loss trace: causes as codes, their names once.
    if traced {
        loss_trace_tables(py, &out, r.drop_trace, r.retransmit_trace)?;
    }
    // The packet capture, only when the run captured links (`pcap`).
    if let Some(pt) = r.packet_trace {
        packet_trace_table(py, &out, pt)?;
    }

    let m = table(py);
    m.set_item("events", r.meta.events)?;
    m.set_item("sim_time", r.meta.sim_time)?;
    m.set_item("wall_s", r.meta.wall_s)?;
    m.set_item("seed", r.meta.seed)?;
    m.set_item("version", tcplab_core::VERSION)?;
    out.set_item("meta", m)?;
    Ok(out.into())
}

/// The drop and retransmission trace as two tables, causes as codes with
/// their names once (as `cc_ts` does with its variable names).
fn loss_trace_tables(
    py: Python<'_>,
    out: &Bound<'_, PyDict>,
    dt: tcplab_core::trace::DropTrace,
    rt: tcplab_core::trace::RetransmitTrace,
) -> PyResult<()> {
    let d = table(py);
    d.set_item("time", dt.time.into_pyarray_bound(py))?;
    d.set_item("link", dt.link.into_pyarray_bound(py))?;
    d.set_item("flow", dt.flow.into_pyarray_bound(py))?;
    d.set_item("seq", dt.seq.into_pyarray_bound(py))?;
    d.set_item("ack", dt.ack.into_pyarray_bound(py))?;
    d.set_item("retransmit", dt.retransmit.into_pyarray_bound(py))?;
    d.set_item("cause", dt.cause.into_pyarray_bound(py))?;
    d.set_item("queue_packets", dt.queue_packets.into_pyarray_bound(py))?;
    d.set_item("cause_names", PyList::new_bound(py, tcplab_core::trace::DropCause::NAMES))?;
    out.set_item("drop_trace", d)?;
    let x = table(py);
    x.set_item("time", rt.time.into_pyarray_bound(py))?;
    x.set_item("flow", rt.flow.into_pyarray_bound(py))?;
    x.set_item("seq", rt.seq.into_pyarray_bound(py))?;
    x.set_item("cause", rt.cause.into_pyarray_bound(py))?;
    x.set_item("outstanding", rt.outstanding.into_pyarray_bound(py))?;
    x.set_item("cause_names", PyList::new_bound(py, tcplab_core::trace::RetransmitCause::NAMES))?;
    out.set_item("retransmit_trace", x)?;
    Ok(())
}

/// The packet capture as one table (time in integer picoseconds), its SACK
/// blocks as two more columns of their own length, and what the limit left
/// out.
fn packet_trace_table(py: Python<'_>, out: &Bound<'_, PyDict>, t: tcplab_core::trace::PacketTrace) -> PyResult<()> {
    let p = table(py);
    p.set_item("time_ps", t.time.into_pyarray_bound(py))?;
    p.set_item("link", t.link.into_pyarray_bound(py))?;
    p.set_item("flow", t.flow.into_pyarray_bound(py))?;
    p.set_item("ack", t.ack.into_pyarray_bound(py))?;
    p.set_item("seq", t.seq.into_pyarray_bound(py))?;
    p.set_item("byte_seq", t.byte_seq.into_pyarray_bound(py))?;
    p.set_item("payload", t.payload.into_pyarray_bound(py))?;
    p.set_item("size", t.size.into_pyarray_bound(py))?;
    p.set_item("retransmit", t.retransmit.into_pyarray_bound(py))?;
    p.set_item("ecn", t.ecn.into_pyarray_bound(py))?;
    p.set_item("tcp_flags", t.tcp_flags.into_pyarray_bound(py))?;
    p.set_item("sack_count", t.sack_count.into_pyarray_bound(py))?;
    p.set_item("sack_left", t.sack_left.into_pyarray_bound(py))?;
    p.set_item("sack_right", t.sack_right.into_pyarray_bound(py))?;
    p.set_item("overflow", t.overflow)?;
    p.set_item("limit", t.limit)?;
    out.set_item("packet_trace", p)?;
    Ok(())
}

/// Runs one simulation described by `spec_json` (a RunSpec as JSON).
///
/// With `progress=True`, the simulated time done, the wall time and an
/// estimate of the time left are shown on stderr (`progress.rs`: one line
/// redrawn on a terminal, one line per tenth of the run elsewhere); the
/// caller decides whether to ask (`tcplab run` does on a terminal for runs
/// of more than a few seconds).
#[pyfunction]
#[pyo3(signature = (spec_json, progress = false))]
fn run(py: Python<'_>, spec_json: &str, progress: bool) -> PyResult<PyObject> {
    let (res, (), traced) = run_world(py, spec_json, progress, |_, _| Ok(()))?;
    to_python(py, res, traced)
}

/// Builds and runs `spec_json` with the GIL released, the path of every run
/// of the extension: `prepare` gets the built world and the run's duration
/// before the run (the benchmark's warm-up; nothing for `run`); Ctrl-C stops
/// the run (interrupt.rs); an invalid description raises SpecError; a panic
/// in the core raises SimulationError and the interpreter lives on. Returns
/// the results, what `prepare` returned and whether the run traced losses.
fn run_world<T: Send>(
    py: Python<'_>,
    spec_json: &str,
    progress: bool,
    prepare: impl FnOnce(&mut World, f64) -> Result<T, CoreSpecError> + Send,
) -> PyResult<(RunResults, T, bool)> {
    let json = spec_json.to_owned();
    let outcome = py.allow_threads(move || {
        let mut interrupt = interrupt::Interrupt::default();
        let r = catch_unwind(AssertUnwindSafe(|| -> Result<(RunResults, T, bool), CoreSpecError> {
            let spec = RunSpec::from_json(&json)?;
            let duration = spec.duration;
            let traced = spec.loss_trace;
            let mut w = World::new(spec)?;
            let mut shown = progress.then(|| progress::RunProgress::new(duration));
            let prepared = prepare(&mut w, duration)?;
            // (stopped by Ctrl-C, the unfinished results are dropped below)
            w.run_or_stop(|f| {
                if let Some(p) = shown.as_mut() {
                    p.update(f);
                }
                f >= 1.0 || interrupt.keep_going()
            });
            Ok((w.into_results(), prepared, traced))
        }));
        match (r, interrupt.raised()) {
            (_, Some(e)) => Outcome::Interrupted(e),
            (Ok(Ok(res)), None) => Outcome::Ok(Box::new(res)),
            (Ok(Err(e)), None) => Outcome::Spec(e),
            (Err(p), None) => Outcome::Panic(panic_message(p)),
        }
    });
    match outcome {
        Outcome::Ok(r) => Ok(*r),
        Outcome::Spec(e) => Err(spec_err(e)),
        Outcome::Panic(m) => Err(SimulationError::new_err(format!("internal error in the simulation core: {m}"))),
        Outcome::Interrupted(e) => Err(e),
    }
}

/// Checks a run description without building or running it (`World::check`:
/// every rule `run` applies, and with `memory` its memory estimate against
/// `memory_limit`); raises SpecError naming the field if invalid.
#[pyfunction]
#[pyo3(signature = (spec_json, memory = true))]
fn validate(spec_json: &str, memory: bool) -> PyResult<()> {
    let spec = RunSpec::from_json(spec_json).map_err(spec_err)?;
    let paths = World::check(&spec).map_err(spec_err)?;
    if memory {
        let estimate = tcplab_core::estimate::estimate_with_paths(&spec, &paths);
        tcplab_core::estimate::check_memory(&estimate).map_err(spec_err)?;
    }
    Ok(())
}

/// The links every flow traverses, as the core routes it: a list with one
/// `(forward, reverse)` pair of link-name lists per flow (data direction,
/// ACK direction). Raises SpecError if the description is invalid.
#[pyfunction]
fn paths(spec_json: &str) -> PyResult<Vec<(Vec<String>, Vec<String>)>> {
    let spec = RunSpec::from_json(spec_json).map_err(spec_err)?;
    spec.validate().map_err(spec_err)?;
    let resolved = tcplab_core::net::routing::resolve_paths(&spec).map_err(spec_err)?;
    let name = |v: &Vec<u32>| v.iter().map(|&i| spec.links[i as usize].name.clone()).collect::<Vec<_>>();
    Ok(resolved.iter().map(|[f, r]| (name(f), name(r))).collect())
}

/// What a run will cost, from its description alone (validated and routed,
/// not built): see `tcplab_core::estimate`. Raises SpecError if the
/// description is invalid; an estimate over `memory_limit` is returned, not
/// raised (`run` and `validate` refuse it).
#[pyfunction]
fn estimate(py: Python<'_>, spec_json: &str) -> PyResult<PyObject> {
    let spec = RunSpec::from_json(spec_json).map_err(spec_err)?;
    let e = tcplab_core::estimate::estimate(&spec).map_err(spec_err)?;
    let d = PyDict::new_bound(py);
    d.set_item("memory_bytes", e.memory_bytes)?;
    d.set_item("memory_limit", e.memory_limit)?;
    d.set_item("series_bytes", e.series_bytes)?;
    d.set_item("window_bytes", e.window_bytes)?;
    d.set_item("samples", e.samples)?;
    d.set_item("packets", e.packets)?;
    d.set_item("events", e.events)?;
    d.set_item("memory_driver", e.driver.0)?;
    d.set_item("over_limit", e.memory_bytes > e.memory_limit)?;
    Ok(d.into())
}

/// The congestion-control algorithms of the core, with their parameters.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<PyObject> {
    let out = PyList::empty_bound(py);
    for a in catalog() {
        let d = PyDict::new_bound(py);
        d.set_item("name", a.name)?;
        d.set_item("aliases", a.aliases.to_vec())?;
        d.set_item("description", a.description)?;
        let params = a.params.iter().map(|p| (p.name, p.default.as_str(), p.description, p.source));
        d.set_item("params", param_list(py, params)?)?;
        out.append(d)?;
    }
    Ok(out.into())
}

/// Documented parameters (of an algorithm or a discipline), given as (name,
/// default, description, source), as a list of dicts.
fn param_list<'py, 'a>(
    py: Python<'py>,
    params: impl Iterator<Item = (&'a str, &'a str, &'a str, &'a str)>,
) -> PyResult<Bound<'py, PyList>> {
    let ps = PyList::empty_bound(py);
    for (name, default, description, source) in params {
        let pd = PyDict::new_bound(py);
        pd.set_item("name", name)?;
        pd.set_item("default", default)?;
        pd.set_item("description", description)?;
        pd.set_item("source", source)?;
        ps.append(pd)?;
    }
    Ok(ps)
}

/// The queue disciplines of the core (`queue.discipline`), with their
/// parameters (times in seconds), as `algorithms` lists the algorithms.
#[pyfunction]
fn disciplines(py: Python<'_>) -> PyResult<PyObject> {
    let out = PyList::empty_bound(py);
    for a in tcplab_core::net::qdisc::catalog() {
        let d = PyDict::new_bound(py);
        d.set_item("name", a.name)?;
        d.set_item("aliases", a.aliases.to_vec())?;
        d.set_item("description", a.description)?;
        d.set_item("source", a.source)?;
        let params = a.params.iter().map(|p| (p.name, p.default, p.description, p.source));
        d.set_item("params", param_list(py, params)?)?;
        out.append(d)?;
    }
    Ok(out.into())
}

#[pyfunction]
fn version() -> &'static str {
    tcplab_core::VERSION
}

/// How this core was compiled: "release" or "debug", then the
/// profile-guided optimization step that built it, if any, as
/// scripts/pgo.sh marks it (TCPLAB_BUILD_PGO at build time: "instrumented"
/// while it collects profiles, "optimized" for the build that uses them).
/// Benchmark reports carry it: figures of different builds do not compare.
#[pyfunction]
fn build() -> String {
    let opt = if cfg!(debug_assertions) { "debug" } else { "release" };
    match option_env!("TCPLAB_BUILD_PGO") {
        Some(step) if !step.is_empty() => format!("{opt}, pgo {step}"),
        _ => opt.to_string(),
    }
}

/// Test hook (cargo feature `test-hooks`, never in a normal build): runs
/// `spec_json` through the path of every run (`run_world`) with a panic
/// where the run would start, so a test can check that a panic in the core
/// raises SimulationError and the interpreter lives on.
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _panic_for_test(py: Python<'_>, spec_json: &str) -> PyResult<()> {
    run_world(py, spec_json, false, |_, _| -> Result<(), CoreSpecError> { panic!("deliberate test panic") })?;
    Ok(())
}

/// The emulated bottleneck of `tcplab validate`'s kernel runs (netem.rs):
/// forwards between two TUN devices until SIGTERM/SIGINT, the stop file or
/// the duration, with the GIL released; returns the summary JSON it also
/// writes to the configured `out_dir`. A bad description raises ValueError
/// naming the field; a system error (TUN, files) raises RuntimeError.
#[pyfunction]
fn netem_run(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let cfg = netem::Config::from_json(config_json).map_err(PyValueError::new_err)?;
    py.allow_threads(move || netem::run(&cfg)).map_err(PyRuntimeError::new_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Load NumPy's C API now: loaded on the first results, it runs Python
    // code, and a Ctrl-C pending then made it panic (PanicException).
    numpy::PyArray1::<f64>::zeros_bound(m.py(), 0, false);
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(paths, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(disciplines, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    #[cfg(feature = "bench")]
    bench::register(m)?;
    #[cfg(feature = "test-hooks")]
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(netem_run, m)?)?;
    store::register(m)?;
    // The core's input limits (spec::limits, docs/limits.md): the scenario
    // front end checks against these instead of copying the numbers.
    use tcplab_core::spec::limits;
    m.add("MAX_PACKET_SIZE", limits::MAX_PACKET_SIZE)?;
    m.add("MAX_SPAN_S", limits::MAX_SPAN_S)?;
    m.add("MAX_RATE_BPS", limits::MAX_RATE_BPS)?;
    m.add("MAX_LINKS", limits::MAX_LINKS)?;
    m.add("DEFAULT_PCAP_LIMIT", limits::DEFAULT_PCAP_LIMIT)?;
    m.add("SpecError", m.py().get_type_bound::<SpecError>())?;
    m.add("SimulationError", m.py().get_type_bound::<SimulationError>())?;
    Ok(())
}
