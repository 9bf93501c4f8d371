//! Python bindings of tcplab-core: convert in, run without the GIL, convert out.
//!
//! `run(spec_json)` takes the JSON of a `RunSpec` and returns the results as
//! a dict of tables, each a dict of column name -> numpy array (or list of
//! str), so no Python object is made per sample. Invalid descriptions raise
//! `SpecError` (a `ValueError`) whose message starts with the field path; a
//! panic inside the core raises `SimulationError` (a `RuntimeError`) and never
//! takes the interpreter down.

use std::panic::{catch_unwind, AssertUnwindSafe};

use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

mod canon;
mod interrupt;
mod netem;
mod progress;
mod store;

use tcplab_core::cc::catalog;
use tcplab_core::results::RunResults;
use tcplab_core::scenarios::bench::WarmUp;
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

enum Outcome {
    Ok(Box<(RunResults, Option<WarmUp>, bool)>),
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
fn to_python(py: Python<'_>, r: RunResults, traced: bool) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);

    let f = table(py);
    let fl = &r.flows;
    macro_rules! col {
        ($t:expr, $rows:expr, $name:literal, $field:ident) => {
            $t.set_item($name, $rows.iter().map(|x| x.$field).collect::<Vec<_>>().into_pyarray_bound(py))?
        };
    }
    // Option<f64> (a statistic a row may lack) as float64 with NaN for None.
    macro_rules! ocol {
        ($t:expr, $rows:expr, $name:literal, $field:ident) => {
            $t.set_item(
                $name,
                $rows.iter().map(|x| x.$field.unwrap_or(f64::NAN)).collect::<Vec<_>>().into_pyarray_bound(py),
            )?
        };
    }
    macro_rules! scol {
        ($t:expr, $rows:expr, $name:literal, $field:ident) => {
            $t.set_item($name, PyList::new_bound(py, $rows.iter().map(|x| x.$field.clone())))?
        };
    }
    col!(f, fl, "flow", id);
    scol!(f, fl, "name", name);
    scol!(f, fl, "src", src);
    scol!(f, fl, "dst", dst);
    scol!(f, fl, "algorithm", algorithm);
    scol!(f, fl, "recovery", recovery);
    col!(f, fl, "goodput_bps", goodput_bps);
    col!(f, fl, "bytes_delivered", bytes_delivered);
    col!(f, fl, "data_packets_sent", data_packets_sent);
    col!(f, fl, "retransmits", retransmits);
    col!(f, fl, "timeouts", timeouts);
    col!(f, fl, "fast_recoveries", fast_recoveries);
    col!(f, fl, "loss_events", loss_events);
    col!(f, fl, "loss_events_ignored", loss_events_ignored);
    col!(f, fl, "data_packets_received", data_packets_received);
    col!(f, fl, "data_packets_dropped", data_packets_dropped);
    col!(f, fl, "data_packets_lost", data_packets_lost);
    col!(f, fl, "data_packets_in_network", data_packets_in_network);
    col!(f, fl, "acks_sent", acks_sent);
    col!(f, fl, "acks_received", acks_received);
    col!(f, fl, "acks_dropped", acks_dropped);
    col!(f, fl, "acks_lost", acks_lost);
    col!(f, fl, "acks_in_network", acks_in_network);
    col!(f, fl, "rtt_samples", rtt_samples);
    col!(f, fl, "rtt_min", rtt_min);
    col!(f, fl, "rtt_mean", rtt_mean);
    col!(f, fl, "rtt_max", rtt_max);
    col!(f, fl, "srtt", srtt);
    col!(f, fl, "cwnd", cwnd);
    col!(f, fl, "ssthresh", ssthresh);
    scol!(f, fl, "ecn", ecn);
    col!(f, fl, "ce_received", ce_received);
    col!(f, fl, "ce_delivered", ce_delivered);
    col!(f, fl, "ecn_reductions", ecn_reductions);
    out.set_item("flows", f)?;

    let l = table(py);
    let ls = &r.links;
    col!(l, ls, "link", id);
    scol!(l, ls, "name", name);
    scol!(l, ls, "src", src);
    scol!(l, ls, "dst", dst);
    col!(l, ls, "rate_bps", rate_bps);
    col!(l, ls, "delay", delay);
    col!(l, ls, "utilization", utilization);
    col!(l, ls, "packets_in", packets_in);
    col!(l, ls, "packets_out", packets_out);
    col!(l, ls, "drops", drops);
    col!(l, ls, "losses", losses);
    col!(l, ls, "packets_in_link", packets_in_link);
    col!(l, ls, "bytes_out", bytes_out);
    col!(l, ls, "data_packets_out", data_packets_out);
    col!(l, ls, "queue_mean_packets", queue_mean_packets);
    col!(l, ls, "queue_max_packets", queue_max_packets);
    col!(l, ls, "queue_mean_bytes", queue_mean_bytes);
    scol!(l, ls, "discipline", discipline);
    col!(l, ls, "marks", marks);
    col!(l, ls, "aqm_drops", aqm_drops);
    ocol!(l, ls, "sojourn_mean", sojourn_mean);
    ocol!(l, ls, "sojourn_p50", sojourn_p50);
    ocol!(l, ls, "sojourn_p95", sojourn_p95);
    ocol!(l, ls, "sojourn_p99", sojourn_p99);
    out.set_item("links", l)?;

    let fi = table(py);
    let fs = &r.files;
    col!(fi, fs, "flow", flow);
    col!(fi, fs, "index", index);
    col!(fi, fs, "size", size);
    col!(fi, fs, "start", start);
    col!(fi, fs, "finish", finish);
    col!(fi, fs, "fct", fct);
    col!(fi, fs, "first_sent", first_sent);
    col!(fi, fs, "acked", acked);
    col!(fi, fs, "transfer_time", transfer_time);
    out.set_item("files", fi)?;

    let ts = r.flow_ts;
    let t = table(py);
    t.set_item("time", ts.time.into_pyarray_bound(py))?;
    t.set_item("flow", ts.flow.into_pyarray_bound(py))?;
    t.set_item("cwnd", ts.cwnd.into_pyarray_bound(py))?;
    t.set_item("ssthresh", ts.ssthresh.into_pyarray_bound(py))?;
    t.set_item("srtt", ts.srtt.into_pyarray_bound(py))?;
    t.set_item("in_flight", ts.in_flight.into_pyarray_bound(py))?;
    t.set_item("delivered_bytes", ts.delivered_bytes.into_pyarray_bound(py))?;
    out.set_item("flow_ts", t)?;

    let qs = r.queue_ts;
    let q = table(py);
    q.set_item("time", qs.time.into_pyarray_bound(py))?;
    q.set_item("link", qs.link.into_pyarray_bound(py))?;
    q.set_item("packets", qs.packets.into_pyarray_bound(py))?;
    q.set_item("bytes", qs.bytes.into_pyarray_bound(py))?;
    out.set_item("queue_ts", q)?;

    let cs = r.cc_ts;
    let c = table(py);
    c.set_item("time", cs.time.into_pyarray_bound(py))?;
    c.set_item("flow", cs.flow.into_pyarray_bound(py))?;
    c.set_item("variable", cs.variable.into_pyarray_bound(py))?;
    c.set_item("value", cs.value.into_pyarray_bound(py))?;
    // Variable names once (codes above), not one Python string per sample.
    c.set_item("variable_names", PyList::new_bound(py, cs.names.iter().copied()))?;
    out.set_item("cc_ts", c)?;

    // The queue disciplines' series, per link, as cc_ts is per flow.
    let qd = r.qdisc_ts;
    let d = table(py);
    d.set_item("time", qd.time.into_pyarray_bound(py))?;
    d.set_item("link", qd.link.into_pyarray_bound(py))?;
    d.set_item("variable", qd.variable.into_pyarray_bound(py))?;
    d.set_item("value", qd.value.into_pyarray_bound(py))?;
    d.set_item("variable_names", PyList::new_bound(py, qd.names.iter().copied()))?;
    out.set_item("qdisc_ts", d)?;

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
/// of more than a few seconds). With `warmup` (simulated seconds, for the
/// benchmark), the run first goes that far untimed and the results get a
/// `warmup` table: the seconds, and the events and per-link `packets_out`
/// and `data_packets_out` then; `meta.wall_s` is the event loop's time
/// after the warm-up only. A warm-up that is negative, not finite, or not
/// shorter than the run raises SpecError (field `warmup`).
#[pyfunction]
#[pyo3(signature = (spec_json, progress = false, warmup = None))]
fn run(py: Python<'_>, spec_json: &str, progress: bool, warmup: Option<f64>) -> PyResult<PyObject> {
    let json = spec_json.to_owned();
    let outcome = py.allow_threads(move || {
        let mut interrupt = interrupt::Interrupt::default();
        let r = catch_unwind(AssertUnwindSafe(|| -> Result<(RunResults, Option<WarmUp>, bool), CoreSpecError> {
            let spec = RunSpec::from_json(&json)?;
            let duration = spec.duration;
            let traced = spec.loss_trace;
            let mut w = World::new(spec)?;
            let mut shown = progress.then(|| progress::RunProgress::new(duration));
            let warm = tcplab_core::scenarios::bench::warm_up(&mut w, warmup.unwrap_or(0.0), duration)?;
            // (stopped by Ctrl-C, the unfinished results are dropped below)
            w.run_or_stop(|f| {
                if let Some(p) = shown.as_mut() {
                    p.update(f);
                }
                f >= 1.0 || interrupt.keep_going()
            });
            Ok((w.into_results(), warm, traced))
        }));
        match (r, interrupt.raised()) {
            (_, Some(e)) => Outcome::Interrupted(e),
            (Ok(Ok(res)), None) => Outcome::Ok(Box::new(res)),
            (Ok(Err(e)), None) => Outcome::Spec(e),
            (Err(p), None) => Outcome::Panic(panic_message(p)),
        }
    });
    match outcome {
        Outcome::Ok(r) => {
            let (res, warm, traced) = *r;
            let out = to_python(py, res, traced)?;
            if let Some(w) = warm {
                let t = table(py);
                t.set_item("seconds", w.seconds)?;
                t.set_item("events", w.events)?;
                t.set_item("packets_out", w.packets_out.into_pyarray_bound(py))?;
                t.set_item("data_packets_out", w.data_packets_out.into_pyarray_bound(py))?;
                out.bind(py).set_item("warmup", t)?;
            }
            Ok(out)
        }
        Outcome::Spec(e) => Err(spec_err(e)),
        Outcome::Panic(m) => Err(SimulationError::new_err(format!("internal error in the simulation core: {m}"))),
        Outcome::Interrupted(e) => Err(e),
    }
}

/// Checks a run description without running it; raises SpecError if invalid.
#[pyfunction]
fn validate(spec_json: &str) -> PyResult<()> {
    let spec = RunSpec::from_json(spec_json).map_err(spec_err)?;
    World::new(spec).map_err(spec_err)?;
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

fn bench_rows(py: Python<'_>, list: Vec<tcplab_core::scenarios::bench::Scenario>) -> PyResult<PyObject> {
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
    use tcplab_core::scenarios::bench::{suite, Length};
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
    use tcplab_core::scenarios::bench::{scaling, AXES};
    match scaling(axis, quick) {
        Some(list) => bench_rows(py, list),
        None => Err(PyValueError::new_err(format!("unknown scaling axis {axis:?}; known: {}", AXES.join(", ")))),
    }
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

/// Panics inside the core on purpose (used by the tests that check a panic
/// surfaces as SimulationError).
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    let r = py.allow_threads(|| catch_unwind(|| panic!("deliberate test panic")));
    match r {
        Ok(()) => Ok(()),
        Err(p) => Err(SimulationError::new_err(format!("internal error in the simulation core: {}", panic_message(p)))),
    }
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
    m.add_function(wrap_pyfunction!(bench_suite, m)?)?;
    m.add_function(wrap_pyfunction!(bench_scaling, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(netem_run, m)?)?;
    store::register(m)?;
    m.add_function(wrap_pyfunction!(canon::canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(canon::run_key, m)?)?;
    m.add_function(wrap_pyfunction!(canon::plan_job, m)?)?;
    m.add("SpecError", m.py().get_type_bound::<SpecError>())?;
    m.add("SimulationError", m.py().get_type_bound::<SimulationError>())?;
    Ok(())
}
