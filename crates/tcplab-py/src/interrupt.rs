//! Ctrl-C during a run. A run goes on without the GIL, so Python's SIGINT
//! handler only sets a flag that nothing looks at until the run returns. The
//! core's event loop calls back every 2^20 events (a few tens of
//! milliseconds: `World::run_or_stop`); the callback takes the GIL for a
//! moment and runs the pending signal handlers (`check_signals`). When one
//! raises (KeyboardInterrupt from the default SIGINT handler, or whatever a
//! handler of the caller's raises) the run stops and that exception is raised
//! to the caller instead of the results.
//!
//! Handlers only run in Python's main thread; a run in another thread (a
//! Dask worker's) is never stopped this way, as before.

use pyo3::prelude::*;

/// The poll of one run: the exception a signal handler raised, once one did.
#[derive(Default)]
pub struct Interrupt {
    raised: Option<PyErr>,
}

impl Interrupt {
    /// Runs Python's pending signal handlers; false (stop the run) once one
    /// has raised.
    pub fn keep_going(&mut self) -> bool {
        if self.raised.is_none() {
            self.raised = Python::with_gil(|py| py.check_signals()).err();
        }
        self.raised.is_none()
    }

    /// The exception to raise instead of the run's results, if any.
    pub fn raised(self) -> Option<PyErr> {
        self.raised
    }
}
