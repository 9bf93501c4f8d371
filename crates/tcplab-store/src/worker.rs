//! The loop of a local pool worker (python/tcplab/sweep/execute.py starts
//! the workers, forked from the sweep's process, and drives them).
//!
//! A sweep runs in **rounds**. For a round the parent appends its jobs,
//! one JSON line each, to a jobs file and publishes how many lines are
//! complete in shared memory; it tells each worker `go` on the worker's
//! command pipe. The workers take jobs by ticket: an atomic fetch-and-add
//! on a shared counter gives each the index of its next job, so the work
//! is shared out run by run and the workers finish together. A worker
//! holding a ticket beyond the published count waits for the parent to
//! publish more (the parent keeps planning while the first runs execute)
//! or to declare the round's list final.
//!
//! A worker stores what it has run as a segment at least every `chunk_s`
//! seconds and when it runs out of tickets, and reports each segment (its
//! summary) as one JSON line on its report pipe, then `{"done": round}`.
//! While it runs job `i` its `started` word holds `i + 1`; while it stores
//! a segment, -1; otherwise 0. So if it dies the parent knows which run
//! killed it, and every job of the round not in a reported segment is
//! known to be lost once the round is over.
//!
//! Shared memory (64-bit words, allocated by the parent before forking):
//! `[0]` next ticket, `[1]` published jobs, `[2]` list final (1),
//! `[3]` cancel (1: take no more tickets), `[4..8]` reserved,
//! `[8 + slot]` started.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::io::FromRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::job::Job;
use crate::segment::{commit, Segment};

pub const HEADER_WORDS: usize = 8;
const NEXT: usize = 0;
const PUBLISHED: usize = 1;
const FINAL: usize = 2;
const CANCEL: usize = 3;

/// The shared words of a pool.
pub struct Shared {
    base: *const AtomicI64,
    len: usize,
}

// The words are only accessed atomically.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// # Safety
    /// `addr` must point to `len` 8-byte-aligned 64-bit words that stay
    /// mapped (shared between the pool's processes) while this is used.
    pub unsafe fn from_raw(addr: usize, len: usize) -> Shared {
        Shared { base: addr as *const AtomicI64, len }
    }

    fn word(&self, i: usize) -> &AtomicI64 {
        assert!(i < self.len, "shared word {i} out of {}", self.len);
        unsafe { &*self.base.add(i) }
    }

    fn set_started(&self, slot: usize, v: i64) {
        self.word(HEADER_WORDS + slot).store(v, Ordering::SeqCst);
    }

    /// The index of this worker's next job, or None when the round has no
    /// more (waiting while the parent is still publishing).
    fn claim(&self, parent: i32) -> Option<i64> {
        if self.word(CANCEL).load(Ordering::SeqCst) != 0 {
            return None;
        }
        let i = self.word(NEXT).fetch_add(1, Ordering::SeqCst);
        loop {
            if i < self.word(PUBLISHED).load(Ordering::SeqCst) {
                return Some(i);
            }
            if self.word(FINAL).load(Ordering::SeqCst) != 0 {
                // (published is final before the flag is set)
                return (i < self.word(PUBLISHED).load(Ordering::SeqCst)).then_some(i);
            }
            if self.word(CANCEL).load(Ordering::SeqCst) != 0 || !parent_alive(parent) {
                return None;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

fn parent_alive(parent: i32) -> bool {
    unsafe { libc::getppid() == parent }
}

/// A jobs file being appended to by the parent: lines are read as they
/// are needed.
struct Jobs {
    file: File,
    buf: Vec<u8>,
    /// Start of every complete line found so far, and the end of the last.
    starts: Vec<usize>,
    scanned: usize,
}

impl Jobs {
    fn open(path: &Path) -> io::Result<Jobs> {
        Ok(Jobs { file: File::open(path)?, buf: Vec::new(), starts: vec![0], scanned: 0 })
    }

    fn line(&mut self, i: usize) -> io::Result<&[u8]> {
        let mut tries = 0;
        while self.starts.len() < i + 2 {
            let before = self.buf.len();
            self.file.read_to_end(&mut self.buf)?;
            for (k, &c) in self.buf[self.scanned..].iter().enumerate() {
                if c == b'\n' {
                    self.starts.push(self.scanned + k + 1);
                }
            }
            self.scanned = self.buf.len();
            if self.buf.len() == before {
                tries += 1;
                if tries > 2000 {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("job {i} was published but is not in the jobs file")));
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        Ok(&self.buf[self.starts[i]..self.starts[i + 1] - 1])
    }
}

#[derive(Deserialize)]
struct Go {
    round: i64,
    jobs: String,
    root: String,
    fsync: bool,
    chunk_s: f64,
}

fn store(seg: Segment, go: &Go, shared: &Shared, slot: usize, report: &mut File) -> io::Result<()> {
    shared.set_started(slot, -1);
    let built = seg.finish();
    commit(Path::new(&go.root), &built, go.fsync)?;
    let mut line = String::with_capacity(built.summary.len() + 16);
    line.push_str("{\"segment\":");
    line.push_str(&built.summary);
    line.push_str("}\n");
    report.write_all(line.as_bytes())?;
    shared.set_started(slot, 0);
    Ok(())
}

fn round(go: &Go, shared: &Shared, slot: usize, parent: i32, report: &mut File) -> io::Result<()> {
    let mut jobs = Jobs::open(Path::new(&go.jobs))?;
    let mut seg = Segment::new();
    while let Some(i) = shared.claim(parent) {
        shared.set_started(slot, i + 1);
        let job = Job::parse(jobs.line(i as usize)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("job {i}: {e}")))?;
        seg.run(job);
        shared.set_started(slot, 0);
        if seg.elapsed() >= go.chunk_s {
            store(std::mem::take(&mut seg), go, shared, slot, report)?;
        }
    }
    if !seg.is_empty() {
        store(seg, go, shared, slot, report)?;
    }
    Ok(())
}

/// Serves rounds until the command pipe says `exit` or closes. Errors
/// (a segment that cannot be written, a malformed job) are reported as
/// `{"error": text}` before returning them: the parent treats the worker's
/// unreported runs as lost and runs them again.
///
/// # Safety
/// `cmd_fd` and `report_fd` must be open file descriptors this call may
/// own (they are closed when it returns); `shared` as in
/// [`Shared::from_raw`].
pub unsafe fn serve(cmd_fd: i32, report_fd: i32, shared: Shared, slot: usize, parent: i32) -> io::Result<()> {
    // Die with the parent (a sweep killed with SIGKILL leaves no worker finishing orphaned runs).
    #[cfg(target_os = "linux")]
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if !parent_alive(parent) {
        return Ok(());
    }
    let mut cmd = BufReader::new(File::from_raw_fd(cmd_fd));
    let mut report = File::from_raw_fd(report_fd);
    let mut line = String::new();
    loop {
        line.clear();
        if cmd.read_line(&mut line)? == 0 || line.trim() == "exit" {
            return Ok(());
        }
        let result = serde_json::from_str::<Go>(&line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("bad command {line:?}: {e}")))
            .and_then(|go| {
                round(&go, &shared, slot, parent, &mut report)?;
                writeln!(report, "{{\"done\":{}}}", go.round)
            });
        if let Err(e) = result {
            let _ = writeln!(report, "{}", serde_json::json!({"error": e.to_string()}));
            return Err(e);
        }
    }
}
