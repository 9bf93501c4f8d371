//! Injected faults: how the tests of the campaign layer make a run fail, a
//! worker die inside a run, or die halfway through storing a segment,
//! wherever the run executes (this process, a forked pool worker, a Dask
//! worker in this process). Nothing is injected unless a test asks
//! (`tcplab._core._inject_fault`); the check is then one relaxed atomic
//! load per run.
//!
//! A fault matches a run whose RunSpec JSON contains `pattern` (and not
//! `unless`, when given). With a
//! `once` file, the fault fires only if that file does not exist yet, and
//! creates it (so "dies once" survives the death of the process it fired in).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The run fails with this error text (recorded as its error).
    Error(String),
    /// The process exits at once with this code, when the run starts.
    Exit(i32),
    /// The process exits at once (code 3) right after writing this file
    /// (e.g. `links.parquet`) of a segment holding the run.
    ExitStoring(String),
}

#[derive(Debug, Clone)]
struct Fault {
    pattern: String,
    unless: Option<String>,
    action: Action,
    once: Option<PathBuf>,
}

impl Fault {
    fn matches(&self, spec_json: &str) -> bool {
        spec_json.contains(&self.pattern) && !self.unless.as_ref().is_some_and(|u| spec_json.contains(u.as_str()))
    }
}

static ANY: AtomicBool = AtomicBool::new(false);
static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

/// Parses an action: `error:<text>`, `exit:<code>`, `exit-storing:<file name>`.
pub fn parse_action(s: &str) -> Result<Action, String> {
    let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
    match kind {
        "error" => Ok(Action::Error(arg.to_string())),
        "exit" => arg.parse().map(Action::Exit).map_err(|_| format!("exit:<code>: not a code: {arg:?}")),
        "exit-storing" if !arg.is_empty() => Ok(Action::ExitStoring(arg.to_string())),
        _ => Err(format!("unknown fault action {s:?} (error:<text>, exit:<code>, exit-storing:<file>)")),
    }
}

pub fn inject(pattern: &str, unless: Option<&str>, action: Action, once: Option<PathBuf>) {
    FAULTS.lock().unwrap().push(Fault {
        pattern: pattern.to_string(),
        unless: unless.map(str::to_string),
        action,
        once,
    });
    ANY.store(true, Ordering::Relaxed);
}

pub fn clear() {
    FAULTS.lock().unwrap().clear();
    ANY.store(false, Ordering::Relaxed);
}

fn fires(f: &Fault) -> bool {
    match &f.once {
        None => true,
        Some(p) => std::fs::OpenOptions::new().write(true).create_new(true).open(p).is_ok(),
    }
}

fn exit_now(code: i32) -> ! {
    // like os._exit: no unwinding, no atexit handlers, nothing flushed
    unsafe { libc::_exit(code) }
}

/// At the start of a run: exits for an `Exit` fault, returns the error text
/// of an `Error` fault.
pub fn on_run(spec_json: &str) -> Option<String> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let faults = FAULTS.lock().unwrap().clone();
    for f in &faults {
        if !f.matches(spec_json) {
            continue;
        }
        match &f.action {
            Action::Exit(code) if fires(f) => exit_now(*code),
            Action::Error(text) if fires(f) => return Some(text.clone()),
            _ => {}
        }
    }
    None
}

/// After a segment's file `file` is written: exits for an `ExitStoring`
/// fault on that file matching one of the segment's runs.
pub fn on_store<'a>(mut specs: impl Iterator<Item = &'a str>, file: &str) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let faults = FAULTS.lock().unwrap().clone();
    let specs: Vec<&str> = specs.by_ref().collect();
    for f in &faults {
        if let Action::ExitStoring(name) = &f.action {
            if name == file && specs.iter().any(|s| f.matches(s)) && fires(f) {
                exit_now(3);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_parse_and_bad_ones_are_named() {
        assert_eq!(parse_action("error:disk on fire"), Ok(Action::Error("disk on fire".into())));
        assert_eq!(parse_action("exit:3"), Ok(Action::Exit(3)));
        assert_eq!(parse_action("exit-storing:links.parquet"), Ok(Action::ExitStoring("links.parquet".into())));
        assert!(parse_action("exit:x").unwrap_err().contains("not a code"));
        assert!(parse_action("boom").unwrap_err().contains("unknown fault action"));
    }
}
