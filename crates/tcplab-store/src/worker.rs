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
//! With `flush`, a reporter thread flushes the filesystem (once for
//! whatever has been stored since its last flush) before reporting a
//! segment, and says so (`"flushed": true`): the flush overlaps the
//! worker's next runs, and the client indexes the segment at once. When
//! about `ENDING_S` of its share of the round is left, a worker stores what
//! it has run so far, so that little is left to store and flush after the
//! last run.
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
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
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

    /// Jobs published and not taken yet (0 or less once all are taken).
    fn left(&self) -> i64 {
        self.word(PUBLISHED).load(Ordering::SeqCst) - self.word(NEXT).load(Ordering::SeqCst)
    }

    fn set_started(&self, slot: usize, v: i64) {
        self.word(HEADER_WORDS + slot).store(v, Ordering::SeqCst);
    }

    /// The index of this worker's next job, or None when the round has no
    /// more (waiting while the parent is still publishing).
    fn claim(&self, parent: i32) -> Option<i64> {
        // (where the kernel does not kill orphans for us, they stop here)
        if self.word(CANCEL).load(Ordering::SeqCst) != 0 || !parent_alive(parent) {
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

/// A jobs file being appended to by the parent: found line by line as it
/// grows, each line read when its job is taken. Only the line ends are
/// kept, not the text (a generated scenario's RunSpec can be megabytes, and
/// a study hundreds of them).
struct Jobs {
    file: File,
    /// Offset just past the newline of every complete line found so far.
    ends: Vec<u64>,
    scanned: u64,
    chunk: Vec<u8>,
    line: Vec<u8>,
}

impl Jobs {
    fn open(path: &Path) -> io::Result<Jobs> {
        Ok(Jobs { file: File::open(path)?, ends: Vec::new(), scanned: 0, chunk: vec![0; 1 << 16], line: Vec::new() })
    }

    fn line(&mut self, i: usize) -> io::Result<&[u8]> {
        let mut tries = 0;
        while self.ends.len() <= i {
            let n = self.file.read_at(&mut self.chunk, self.scanned)?;
            for (k, &c) in self.chunk[..n].iter().enumerate() {
                if c == b'\n' {
                    self.ends.push(self.scanned + k as u64 + 1);
                }
            }
            self.scanned += n as u64;
            if n == 0 {
                tries += 1;
                if tries > 2000 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("job {i} was published but is not in the jobs file"),
                    ));
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let len = (self.ends[i] - 1 - start) as usize;
        self.line.resize(len, 0);
        self.file.read_exact_at(&mut self.line, start)?;
        Ok(&self.line)
    }
}

#[derive(Deserialize)]
struct Go {
    round: i64,
    jobs: String,
    root: String,
    fsync: bool,
    chunk_s: f64,
    /// Flush the filesystem (syncfs) after storing each segment, before
    /// reporting it (`"flushed": true`), in the worker's reporter thread while
    /// the worker goes on with its runs: the client indexes it at once.
    #[serde(default)]
    flush: bool,
    /// Exit once the round is done (its tear-down then overlaps the client's
    /// last indexing instead of following it).
    #[serde(default)]
    then_exit: bool,
}

/// Flushes the filesystem holding `path` to stable storage (Linux `syncfs`;
/// elsewhere `sync`).
fn syncfs(path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        let d = File::open(path)?;
        if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    unsafe {
        let _ = path;
        libc::sync();
    }
    Ok(())
}

/// What the reporter thread writes on the report pipe, in order.
enum Report {
    /// A stored segment's summary; with a root, flushed first.
    Segment(String, Option<String>),
    Done(i64),
    Error(String),
}

/// The reporter thread: writes the reports in the order they come, flushing
/// the filesystem once for every batch of segments waiting to be flushed
/// (a flush covers every segment stored before it started). A report pipe
/// or flush that fails ends the worker: the client sees it die and runs its
/// unreported runs again.
fn reporter(rx: std::sync::mpsc::Receiver<Report>, mut out: File) {
    let fail = |out: &mut File, e: String| -> ! {
        let _ = writeln!(out, "{}", serde_json::json!({"error": e}));
        unsafe { libc::_exit(1) }
    };
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        // flush once for every segment of the batch that wants it (stored before this point)
        if let Some(root) =
            batch.iter().find_map(|r| if let Report::Segment(_, Some(root)) = r { Some(root.clone()) } else { None })
        {
            if let Err(e) = syncfs(Path::new(&root)) {
                fail(&mut out, format!("cannot flush the campaign's filesystem: {e}"));
            }
        }
        for r in batch {
            let line = match r {
                Report::Segment(summary, flushed) => {
                    let mut line = String::with_capacity(summary.len() + 32);
                    line.push_str("{\"segment\":");
                    line.push_str(&summary);
                    line.push_str(if flushed.is_some() { ",\"flushed\":true}\n" } else { "}\n" });
                    line
                }
                Report::Done(round) => format!("{{\"done\":{round}}}\n"),
                Report::Error(e) => format!("{}\n", serde_json::json!({"error": e})),
            };
            if let Err(e) = out.write_all(line.as_bytes()) {
                fail(&mut out, format!("cannot report: {e}"));
            }
        }
    }
}

fn store(
    seg: Segment,
    go: &Go,
    shared: &Shared,
    slot: usize,
    report: &std::sync::mpsc::Sender<Report>,
) -> io::Result<()> {
    shared.set_started(slot, -1);
    let built = seg.finish();
    commit(Path::new(&go.root), &built, go.fsync)?;
    shared.set_started(slot, 0);
    let _ = report.send(Report::Segment(built.summary, go.flush.then(|| go.root.clone())));
    Ok(())
}

/// Once this much of a worker's share of the round is left (measured run
/// times), it stores what it has run so far, so that the flush of that
/// segment overlaps the last runs and little is left to store after them
/// (seconds).
const ENDING_S: f64 = 0.02;

fn round(
    go: &Go,
    shared: &Shared,
    slot: usize,
    parent: i32,
    report: &std::sync::mpsc::Sender<Report>,
) -> io::Result<()> {
    let mut jobs = Jobs::open(Path::new(&go.jobs))?;
    let mut seg = Segment::new();
    let workers = (shared.len - HEADER_WORDS) as f64;
    let (mut ran, mut ran_s, mut ending) = (0usize, 0.0f64, false);
    while let Some(i) = shared.claim(parent) {
        shared.set_started(slot, i + 1);
        let job = Job::parse(jobs.line(i as usize)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("job {i}: {e}")))?;
        let t = std::time::Instant::now();
        seg.run(job);
        ran += 1;
        ran_s += t.elapsed().as_secs_f64();
        shared.set_started(slot, 0);
        let end_now = !ending && seg.len() >= 8 && shared.left() as f64 / workers * ran_s / ran as f64 <= ENDING_S;
        ending |= end_now;
        if seg.elapsed() >= go.chunk_s || end_now {
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
    let (tx, rx) = std::sync::mpsc::channel();
    let out = File::from_raw_fd(report_fd);
    let reporting = std::thread::spawn(move || reporter(rx, out));
    let mut line = String::new();
    let result = loop {
        line.clear();
        match cmd.read_line(&mut line) {
            Err(e) => break Err(e),
            Ok(0) => break Ok(()),
            Ok(_) if line.trim() == "exit" => break Ok(()),
            Ok(_) => {}
        }
        let r = serde_json::from_str::<Go>(&line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("bad command {line:?}: {e}")))
            .and_then(|go| {
                round(&go, &shared, slot, parent, &tx)?;
                let _ = tx.send(Report::Done(go.round));
                Ok(go.then_exit)
            });
        match r {
            Ok(true) => break Ok(()),
            Ok(false) => {}
            Err(e) => {
                let _ = tx.send(Report::Error(e.to_string()));
                break Err(e);
            }
        }
    };
    drop(tx);
    let _ = reporting.join(); // (every report written before returning)
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn pipe() -> (i32, i32) {
        let mut fds = [0i32; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    #[test]
    fn two_workers_take_every_published_job_once_while_the_list_grows() {
        let root = std::env::temp_dir().join(format!("tcplab-worker-test-{}", std::process::id()));
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let jobs_path = root.join("tmp").join("jobs");
        let mut jobs_file = File::create(&jobs_path).unwrap();
        let words: Vec<AtomicI64> = (0..HEADER_WORDS + 2).map(|_| AtomicI64::new(0)).collect();
        let addr = words.as_ptr() as usize;
        let parent = unsafe { libc::getppid() };
        let go = serde_json::json!({"round": 1, "jobs": jobs_path, "root": root, "fsync": false, "chunk_s": 0.0});
        let mut handles = Vec::new();
        let mut cmds = Vec::new();
        let mut reports = Vec::new();
        for slot in 0..2 {
            let (cmd_r, cmd_w) = pipe();
            let (rep_r, rep_w) = pipe();
            handles.push(std::thread::spawn(move || unsafe {
                serve(cmd_r, rep_w, Shared::from_raw(addr, HEADER_WORDS + 2), slot, parent).unwrap()
            }));
            let mut c = unsafe { File::from_raw_fd(cmd_w) };
            writeln!(c, "{go}").unwrap();
            cmds.push(c);
            reports.push(BufReader::new(unsafe { File::from_raw_fd(rep_r) }));
        }
        // the list grows while the workers wait on their tickets
        let n = 7;
        for i in 0..n {
            let spec = crate::segment::tests::spec(3 + i, 0.5);
            writeln!(
                jobs_file,
                r#"{{"key":"k{i}","params":{{"i":{i}}},"seed":3,"version":"{}","spec":{spec}}}"#,
                tcplab_core::VERSION
            )
            .unwrap();
            jobs_file.flush().unwrap();
            words[PUBLISHED].store(i as i64 + 1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
        }
        words[FINAL].store(1, Ordering::SeqCst);
        let mut stored = BTreeMap::new();
        for (slot, r) in reports.iter_mut().enumerate() {
            loop {
                let mut line = String::new();
                assert!(r.read_line(&mut line).unwrap() > 0, "worker {slot} closed its report pipe");
                let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
                if msg.get("done").is_some() {
                    assert_eq!(msg["done"], 1);
                    break;
                }
                for run in msg["segment"]["runs"].as_array().unwrap() {
                    assert_eq!(run["status"], "ok");
                    *stored.entry(run["key"].as_str().unwrap().to_string()).or_insert(0) += 1;
                }
            }
        }
        for c in &mut cmds {
            writeln!(c, "exit").unwrap();
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(stored.len(), n as usize);
        assert!(stored.values().all(|&k| k == 1), "{stored:?}");
        assert_eq!(std::fs::read_dir(root.join("segments")).unwrap().count(), n as usize); // chunk_s 0: a segment per run
        assert!(words[HEADER_WORDS..].iter().all(|w| w.load(Ordering::SeqCst) == 0));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
