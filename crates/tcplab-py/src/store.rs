//! Bindings of tcplab-store: campaign segments built and stored in Rust
//! (python/tcplab/sweep/worker.py, execute.py).

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

#[cfg(feature = "test-hooks")]
use tcplab_store::faults;
use tcplab_store::{key, worker, Job};

/// A segment being built: `run(job_json)` runs one job (the GIL released)
/// and keeps its record, returning whether it succeeded (a failed run is
/// recorded with its error, never raised); `commit(root, fsync)` stores the
/// segment in the campaign at `root` and returns its summary as JSON text;
/// `finish()` returns `(manifest JSON text, {file name: bytes})` for the
/// caller to store. A job is the JSON object described in
/// crates/tcplab-store/src/job.rs; a malformed one raises ValueError.
#[pyclass(module = "tcplab._core")]
pub struct Segment {
    inner: Option<tcplab_store::Segment>,
}

impl Segment {
    fn get(&mut self) -> PyResult<&mut tcplab_store::Segment> {
        self.inner.as_mut().ok_or_else(|| PyRuntimeError::new_err("this segment is already finished"))
    }
    fn take(&mut self) -> PyResult<tcplab_store::Segment> {
        self.inner.take().ok_or_else(|| PyRuntimeError::new_err("this segment is already finished"))
    }
}

#[pymethods]
impl Segment {
    #[new]
    fn new() -> Self {
        Segment { inner: Some(tcplab_store::Segment::new()) }
    }

    fn __len__(&self) -> usize {
        self.inner.as_ref().map_or(0, |s| s.len())
    }

    /// Ctrl-C (a signal handler's exception) stops the run and is raised;
    /// the run leaves no record, the segment keeps the runs before it.
    fn run(&mut self, py: Python<'_>, job_json: &str) -> PyResult<bool> {
        let job = Job::parse(job_json.as_bytes()).map_err(PyValueError::new_err)?;
        let seg = self.get()?;
        py.allow_threads(|| {
            let mut interrupt = crate::interrupt::Interrupt::default();
            match seg.run_or_stop(job, &mut || interrupt.keep_going()) {
                Some(ok) => Ok(ok),
                None => Err(interrupt.raised().expect("a run stops only when a signal handler raised")),
            }
        })
    }

    fn commit(&mut self, py: Python<'_>, root: PathBuf, fsync: bool) -> PyResult<String> {
        let seg = self.take()?;
        py.allow_threads(|| {
            let built = seg.finish();
            tcplab_store::commit(&root, &built, fsync)
                .map_err(|e| PyOSError::new_err(format!("{}: cannot store a segment: {e}", root.display())))?;
            Ok(built.summary)
        })
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<(String, PyObject)> {
        let seg = self.take()?;
        let built = py.allow_threads(|| seg.finish());
        let files = PyDict::new_bound(py);
        for (name, data) in &built.files {
            files.set_item(name, PyBytes::new_bound(py, data))?;
        }
        Ok((built.manifest, files.into()))
    }
}

/// Forks a local pool worker running the core's worker loop
/// (tcplab_store::worker::serve) and returns its pid. No Python runs in the
/// child: it closes the file descriptors in `close` (the other workers'
/// pipes), ignores SIGINT (Ctrl-C is the sweep's to handle), serves, and
/// exits with `_exit`. So it starts at once, copies none of the parent's
/// Python objects, and needs none of Python's fork handling (the forking
/// thread holds the GIL, and the child never takes it).
#[pyfunction]
#[pyo3(signature = (cmd_fd, report_fd, shared_addr, shared_len, slot, close))]
fn fork_worker(
    cmd_fd: i32,
    report_fd: i32,
    shared_addr: usize,
    shared_len: usize,
    slot: usize,
    close: Vec<i32>,
) -> PyResult<i32> {
    if shared_len < worker::HEADER_WORDS + slot + 1 || !shared_addr.is_multiple_of(8) {
        return Err(PyValueError::new_err("fork_worker: shared memory too small or misaligned"));
    }
    let parent = unsafe { libc::getpid() };
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(PyOSError::new_err(format!("cannot fork a pool worker: {}", std::io::Error::last_os_error())));
    }
    if pid == 0 {
        unsafe {
            for fd in close {
                libc::close(fd);
            }
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            let code =
                match worker::serve(cmd_fd, report_fd, worker::Shared::from_raw(shared_addr, shared_len), slot, parent)
                {
                    Ok(()) => 0,
                    Err(_) => 1,
                };
            libc::_exit(code);
        }
    }
    Ok(pid)
}

#[cfg(feature = "test-hooks")]
/// Test hook: makes runs whose RunSpec JSON contains `pattern` (and not
/// `unless`) fail
/// (`error:<text>`), kill their process when they start (`exit:<code>`)
/// or right after their segment's file is written (`exit-storing:<file>`);
/// with `once`, only if that file does not exist yet (it is created).
#[pyfunction]
#[pyo3(signature = (pattern, action, once = None, unless = None))]
fn _inject_fault(pattern: &str, action: &str, once: Option<PathBuf>, unless: Option<&str>) -> PyResult<()> {
    faults::inject(pattern, unless, faults::parse_action(action).map_err(PyValueError::new_err)?, once);
    Ok(())
}

/// Test hook: removes every injected fault.
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _clear_faults() {
    faults::clear();
}

/// The run key of the RunSpec JSON text `spec_json` run by tcplab
/// `version` (crates/tcplab-store/src/key.rs); SpecError, naming the field,
/// if the core cannot read it.
#[pyfunction]
fn run_key(py: Python<'_>, spec_json: &str, version: &str) -> PyResult<String> {
    let (key, _) = py.allow_threads(|| key::run_key(spec_json, version)).map_err(crate::spec_err)?;
    Ok(key)
}

/// `(run key, the spec's JSON as stored, seed, job line)` of a run of the
/// RunSpec JSON text `spec_json` by tcplab `version`, with the JSON object
/// `params_json` of its parameters and its bottleneck links: the line is
/// the job as [`Segment`] and the pool's workers take it
/// (crates/tcplab-store/src/job.rs). SpecError, naming the field, if the
/// core cannot read the spec.
#[pyfunction]
fn plan_job(
    py: Python<'_>,
    spec_json: &str,
    version: &str,
    params_json: &str,
    bottleneck: Vec<String>,
) -> PyResult<(String, String, u64, String)> {
    let (job, line) = py
        .allow_threads(|| {
            let job = Job::plan(spec_json, version, params_json, bottleneck)?;
            let line = job.line();
            Ok((job, line))
        })
        .map_err(crate::spec_err)?;
    Ok((job.key, job.spec.get().to_string(), job.seed, line))
}

/// The result tables' columns as declared once (tcplab_store::result_columns!):
/// `(table, column, kind)` in table and column order; kind is `num`, `opt`
/// (float64, NaN for none), `text` or `series`.
#[pyfunction]
fn columns() -> Vec<(&'static str, &'static str, &'static str)> {
    tcplab_store::columns::all()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Segment>()?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(run_key, m)?)?;
    m.add_function(wrap_pyfunction!(plan_job, m)?)?;
    m.add_function(wrap_pyfunction!(fork_worker, m)?)?;
    #[cfg(feature = "test-hooks")]
    {
        m.add_function(wrap_pyfunction!(_inject_fault, m)?)?;
        m.add_function(wrap_pyfunction!(_clear_faults, m)?)?;
        m.add_function(wrap_pyfunction!(crate::_panic_for_test, m)?)?;
    }
    m.add("SHARED_HEADER_WORDS", worker::HEADER_WORDS)?;
    Ok(())
}
