//! Run jobs and build one segment: its Parquet tables and its manifest.
//!
//! A failing run never stops a segment: an invalid description, a panic in
//! the core, a client of another tcplab version, each gives a record with
//! `status = "failed"` and the error (the text Python showed for it:
//! `_core.SpecError: ...`, `_core.SimulationError: ...`). A run whose
//! process dies is the pool's business (python/tcplab/sweep/execute.py).

use std::fs;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use tcplab_core::results::RunResults;
use tcplab_core::{RunSpec, SpecError, World};

#[cfg(any(test, feature = "test-hooks"))]
use crate::faults;
use crate::job::Job;
use crate::metrics::{metrics, Metrics};
use crate::tables::{self, row_counts, TABLES};

pub const FORMAT: &str = "tcplab-segment";
/// Version 2: the RunSpecs are in `specs.parquet` (row i: run record i), not
/// in the manifest (version 1, still read).
pub const FORMAT_VERSION: u32 = 2;
pub const SPECS: &str = "specs.parquet";
pub const MANIFEST: &str = "segment.json";
/// The SHA-256 of the manifest's bytes (64 hex digits and a newline),
/// written after it: with the manifest's checksums of the other files, every
/// stored byte of a segment is covered (a campaign of format 3 requires it;
/// python/tcplab/sweep/store.py checks it).
pub const MANIFEST_SUM: &str = "segment.sha256";

/// The text of [`MANIFEST_SUM`] for a manifest.
pub fn manifest_sum(manifest: &[u8]) -> String {
    hex(&Sha256::digest(manifest)) + "\n"
}

/// What `_core.run` puts in `meta` (and the manifest keeps per run).
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    pub events: u64,
    pub sim_time: f64,
    pub wall_s: f64,
    pub seed: u64,
    pub version: &'static str,
}

#[derive(Debug)]
pub struct Record {
    pub key: String,
    pub params: Box<RawValue>,
    pub seed: u64,
    pub version: String,
    pub spec: Box<RawValue>,
    pub ok: bool,
    pub error: Option<String>,
    pub metrics: Option<Metrics>,
    pub meta: Option<Meta>,
    pub sim_s: f64,
    pub cc_variables: Option<Vec<&'static str>>,
    /// The names of the run's qdisc_ts variable codes.
    pub qdisc_variables: Option<Vec<&'static str>>,
    pub finished: f64,
    pub task_s: f64,
    /// `[start, rows]` in each table, in [`TABLES`] order.
    pub rows: Option<[[usize; 2]; TABLES.len()]>,
}

/// A record as the manifest keeps it (`full`), or as the summary a worker
/// sends back (without the RunSpec, meta, row ranges and cc variable names;
/// parameters and metrics as JSON text, `params_json` and `metrics_json`,
/// the index's columns).
struct View<'a> {
    r: &'a Record,
    full: bool,
}

impl Serialize for View<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.r;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("key", &r.key)?;
        if self.full {
            m.serialize_entry("params", &r.params)?;
        } else {
            // the summary gives the index its columns as text (the client stores them as they are)
            m.serialize_entry("params_json", r.params.get())?;
        }
        m.serialize_entry("seed", &r.seed)?;
        m.serialize_entry("version", &r.version)?;
        m.serialize_entry("status", if r.ok { "ok" } else { "failed" })?;
        m.serialize_entry("error", &r.error)?;
        if self.full {
            m.serialize_entry("metrics", &r.metrics)?;
        } else {
            let text = r.metrics.as_ref().map(|x| serde_json::to_string(x).expect("JSON of plain values"));
            m.serialize_entry("metrics_json", &text)?;
        }
        if self.full {
            m.serialize_entry("meta", &r.meta)?;
        }
        m.serialize_entry("sim_s", &r.sim_s)?;
        if self.full {
            if let Some(v) = &r.cc_variables {
                m.serialize_entry("cc_variables", v)?;
            }
            if let Some(v) = &r.qdisc_variables {
                m.serialize_entry("qdisc_variables", v)?;
            }
            if let Some(rows) = &r.rows {
                let mut t = serde_json::Map::new();
                for (k, name) in TABLES.iter().enumerate() {
                    t.insert(name.to_string(), serde_json::json!(rows[k]));
                }
                m.serialize_entry("rows", &t)?;
            }
        }
        m.serialize_entry("finished", &r.finished)?;
        m.serialize_entry("task_s", &r.task_s)?;
        m.end()
    }
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// The text of a caught panic's payload.
pub fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Builds and runs one RunSpec; the error is the text the run's record keeps.
pub fn simulate(spec_json: &str) -> Result<RunResults, String> {
    simulate_or_stop(spec_json, &mut || true).expect("a run never asked to stop completes")
}

/// As [`simulate`], polling `keep_going` now and then while the run goes
/// (`World::run_or_stop`); None if it returned false (the run was stopped:
/// no outcome, nothing to record).
pub fn simulate_or_stop(spec_json: &str, keep_going: &mut dyn FnMut() -> bool) -> Option<Result<RunResults, String>> {
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<Option<RunResults>, SpecError> {
        let spec = RunSpec::from_json(spec_json)?;
        let mut w = World::new(spec)?;
        Ok(w.run_or_stop(|_| keep_going()).then(|| w.into_results()))
    }));
    match r {
        Ok(Ok(Some(res))) => Some(Ok(res)),
        Ok(Ok(None)) => None,
        Ok(Err(e)) => Some(Err(format!("_core.SpecError: {e}"))),
        Err(p) => {
            Some(Err(format!("_core.SimulationError: internal error in the simulation core: {}", panic_message(p))))
        }
    }
}

/// A segment being built: the records of the runs done so far (in order)
/// and the results of those that succeeded.
pub struct Segment {
    started: Instant,
    records: Vec<Record>,
    runs: Vec<(i32, RunResults)>,
    next_row: [usize; TABLES.len()],
}

impl Default for Segment {
    fn default() -> Self {
        Self::new()
    }
}

/// A finished segment: its id, manifest (JSON text), summary (the manifest
/// without what only the stored copy needs) and files.
pub struct Built {
    pub id: String,
    pub manifest: String,
    pub summary: String,
    pub files: Vec<(String, Vec<u8>)>,
    /// The RunSpecs of its runs (for injected storing faults).
    #[cfg(any(test, feature = "test-hooks"))]
    specs: Vec<Box<RawValue>>,
}

impl Segment {
    pub fn new() -> Self {
        Segment { started: Instant::now(), records: Vec::new(), runs: Vec::new(), next_row: [0; TABLES.len()] }
    }

    /// Runs done (failed ones included).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Seconds since the segment was started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Runs `job` and keeps its record (and results if it succeeded);
    /// returns whether it succeeded.
    pub fn run(&mut self, job: Job) -> bool {
        self.run_or_stop(job, &mut || true).expect("a run never asked to stop completes")
    }

    /// As [`Segment::run`], polling `keep_going` while the run goes; None if
    /// it returned false: the run was stopped (an interrupt), and nothing is
    /// recorded for it (it is neither stored nor a failure).
    pub fn run_or_stop(&mut self, job: Job, keep_going: &mut dyn FnMut() -> bool) -> Option<bool> {
        let t0 = Instant::now();
        let outcome = if job.version != tcplab_core::VERSION {
            Err(format!(
                "RuntimeError: this worker runs tcplab {}, the client {}; install the same version on every worker",
                tcplab_core::VERSION,
                job.version
            ))
        } else if let Some(e) = injected_error(job.spec_json()) {
            Err(e)
        } else {
            simulate_or_stop(job.spec_json(), keep_going)?
        };
        let sim_s = t0.elapsed().as_secs_f64();
        let mut rec = Record {
            key: job.key,
            params: job.params,
            seed: job.seed,
            version: job.version,
            spec: job.spec,
            ok: false,
            error: None,
            metrics: None,
            meta: None,
            sim_s: 0.0,
            cc_variables: None,
            qdisc_variables: None,
            finished: 0.0,
            task_s: 0.0,
            rows: None,
        };
        match outcome {
            Ok(r) => {
                rec.ok = true;
                rec.sim_s = sim_s;
                rec.metrics = Some(metrics(&r, &job.bottleneck));
                rec.meta = Some(Meta {
                    events: r.meta.events,
                    sim_time: r.meta.sim_time,
                    wall_s: r.meta.wall_s,
                    seed: r.meta.seed,
                    version: tcplab_core::VERSION,
                });
                rec.cc_variables = Some(r.cc_ts.names.clone());
                rec.qdisc_variables = Some(r.qdisc_ts.names.clone());
                let counts = row_counts(&r);
                let mut rows = [[0usize; 2]; TABLES.len()];
                for k in 0..TABLES.len() {
                    rows[k] = [self.next_row[k], counts[k]];
                    self.next_row[k] += counts[k];
                }
                rec.rows = Some(rows);
                self.runs.push((self.records.len() as i32, r));
            }
            Err(e) => rec.error = Some(e),
        }
        rec.finished = now();
        rec.task_s = t0.elapsed().as_secs_f64();
        let ok = rec.ok;
        self.records.push(rec);
        Some(ok)
    }

    /// The segment's tables and manifest.
    pub fn finish(self) -> Built {
        let keys: Vec<&str> = self.records.iter().map(|r| r.key.as_str()).collect();
        let mut files = if self.runs.is_empty() { Vec::new() } else { tables::encode(&self.runs, &keys) };
        if !self.records.is_empty() {
            let specs: Vec<&str> = self.records.iter().map(|r| r.spec.get()).collect();
            files.push((SPECS.to_string(), tables::specs(&keys, &specs)));
        }
        drop(self.runs);
        let id = new_id();
        let host = hostname();
        let pid = std::process::id();
        let created = now();
        let task_s = self.started.elapsed().as_secs_f64();
        let mut file_info = serde_json::Map::new();
        for (name, data) in &files {
            let digest = Sha256::digest(data);
            file_info.insert(name.clone(), serde_json::json!({"size": data.len(), "sha256": hex(&digest)}));
        }
        let text = |full: bool| -> String {
            let runs: Vec<View> = self.records.iter().map(|r| View { r, full }).collect();
            let mut s = serde_json::to_string(&serde_json::json!({
                "format": FORMAT, "format_version": FORMAT_VERSION, "id": id, "host": host, "pid": pid,
                "created": created, "files": file_info, "task_s": task_s,
            }))
            .expect("JSON of plain values");
            // the runs go in as serialized text (the map above has no room for borrowed views)
            s.pop();
            s.push_str(",\"runs\":");
            s.push_str(&serde_json::to_string(&runs).expect("JSON of plain values"));
            s.push('}');
            s
        };
        let manifest = text(true) + "\n";
        let summary = text(false);
        Built {
            id,
            manifest,
            summary,
            files,
            #[cfg(any(test, feature = "test-hooks"))]
            specs: self.records.into_iter().map(|r| r.spec).collect(),
        }
    }
}

/// Lower-case hexadecimal text of bytes.
pub fn hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

/// 128 random bits as 32 hex digits (from the OS; time, pid and a counter
/// hashed if that fails).
fn new_id() -> String {
    let mut b = [0u8; 16];
    let ok = fs::File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut b)).is_ok();
    if !ok {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let d = Sha256::digest(format!(
            "{:?} {} {}",
            SystemTime::now(),
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        b.copy_from_slice(&d[..16]);
    }
    hex(&b)
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    let r = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let n = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn write_file(path: &Path, data: &[u8], fsync: bool) -> io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(data)?;
    if fsync {
        f.sync_all()?;
    }
    Ok(())
}

fn fsync_dir(path: &Path) {
    if let Ok(d) = fs::File::open(path) {
        let _ = d.sync_all();
    }
}

/// A test's injected failure of this run (crate feature `test-hooks`; never without it).
fn injected_error(_spec_json: &str) -> Option<String> {
    #[cfg(any(test, feature = "test-hooks"))]
    return faults::on_run(_spec_json);
    #[cfg(not(any(test, feature = "test-hooks")))]
    None
}

/// Atomically places a built segment in the campaign at `root`: its files
/// go into `tmp/<id>.<host>.<pid>.<random>/` (the manifest last, listing
/// every other file with its checksum), which is renamed to
/// `segments/<id>`. With `fsync`, files and directories are flushed before
/// and after the rename. Returns the segment's directory; on an error
/// nothing is left but what `tmp/` cleaning removes.
pub fn commit(root: &Path, b: &Built, fsync: bool) -> io::Result<PathBuf> {
    let final_dir = root.join("segments").join(&b.id);
    let tmp = root.join("tmp").join(format!("{}.{}.{}.{}", b.id, hostname(), std::process::id(), &new_id()[..8]));
    fs::create_dir_all(&tmp)?;
    let result = (|| -> io::Result<()> {
        for (name, data) in &b.files {
            write_file(&tmp.join(name), data, fsync)?;
            #[cfg(any(test, feature = "test-hooks"))]
            faults::on_store(b.specs.iter().map(|s| s.get()), name);
        }
        write_file(&tmp.join(MANIFEST), b.manifest.as_bytes(), fsync)?;
        write_file(&tmp.join(MANIFEST_SUM), manifest_sum(b.manifest.as_bytes()).as_bytes(), fsync)?;
        if fsync {
            fsync_dir(&tmp);
        }
        fs::create_dir_all(root.join("segments"))?;
        fs::rename(&tmp, &final_dir)?;
        if fsync {
            fsync_dir(&root.join("segments"));
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    Ok(final_dir)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 1-flow dumbbell as `tcplab.Dumbbell(...).to_spec()` writes it (canonical JSON).
    pub(crate) fn spec(buffer: u32, duration: f64) -> String {
        const SPEC: &str = r#"{"duration":DUR,"flows":[{"accounting":"ns2","ack_size":40,"app":{"kind":"bulk"},"cc":{"algorithm":"newreno","params":{}},"delack_timeout":0.04,"delayed_ack":false,"drop_segments":[],"dst":"d1","dupthresh":3,"header_size":40,"init_cwnd":10.0,"init_rto":1.0,"init_ssthresh":null,"limited_transmit":false,"loss_classifier":null,"max_rto":60.0,"min_rto":0.2,"name":"flow1","packet_size":1500,"recovery":"newreno","restart_after_idle":true,"rto_mode":"linux","rwnd_packets":null,"sack_blocks":3,"src":"s1","start":0.0}],"links":[{"delay":0.01,"dst":"r2","loss":null,"name":"r1-r2","queue":{"limit_bytes":null,"limit_packets":BUF},"rate_bps":10000000.0,"src":"r1"},{"delay":0.01,"dst":"r1","loss":null,"name":"r2-r1","queue":{"limit_bytes":null,"limit_packets":null},"rate_bps":10000000.0,"src":"r2"},{"delay":0.0025,"dst":"r1","loss":null,"name":"s1-r1","queue":{"limit_bytes":null,"limit_packets":null},"rate_bps":100000000.0,"src":"s1"},{"delay":0.0025,"dst":"s1","loss":null,"name":"r1-s1","queue":{"limit_bytes":null,"limit_packets":null},"rate_bps":100000000.0,"src":"r1"},{"delay":0.0025,"dst":"d1","loss":null,"name":"r2-d1","queue":{"limit_bytes":null,"limit_packets":null},"rate_bps":100000000.0,"src":"r2"},{"delay":0.0025,"dst":"r2","loss":null,"name":"d1-r2","queue":{"limit_bytes":null,"limit_packets":null},"rate_bps":100000000.0,"src":"d1"}],"measure_start":0.0,"nodes":[{"kind":"router","name":"r1"},{"kind":"router","name":"r2"},{"kind":"host","name":"s1"},{"kind":"host","name":"d1"}],"routes":[],"sample_interval":0.1,"seed":3,"trace_links":null}"#;
        SPEC.replace("DUR", &format!("{duration:?}")).replace("BUF", &buffer.to_string())
    }

    fn job(key: &str, spec: &str, version: &str) -> Job {
        Job::parse(
            format!(r#"{{"key":"{key}","params":{{"buffer":1}},"seed":3,"version":"{version}","bottleneck":["r1-r2"],"spec":{spec}}}"#)
                .as_bytes(),
        )
        .unwrap()
    }

    /// A run stopped by its poll (an interrupt) leaves no record: it is
    /// neither stored nor a failure; the runs before it are kept.
    #[test]
    fn a_stopped_run_leaves_no_record() {
        let v = tcplab_core::VERSION;
        let mut seg = Segment::new();
        assert!(seg.run(job("a", &spec(5, 2.0), v)));
        let mut polls = 0;
        let stopped = seg.run_or_stop(job("b", &spec(5, 1000.0), v), &mut || {
            polls += 1;
            false
        });
        assert_eq!((stopped, polls), (None, 1));
        assert_eq!(seg.len(), 1);
        let m: serde_json::Value = serde_json::from_str(&seg.finish().manifest).unwrap();
        assert_eq!(m["runs"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_segment_keeps_every_record_and_the_rows_of_the_runs_that_succeeded() {
        let v = tcplab_core::VERSION;
        let mut seg = Segment::new();
        assert!(seg.run(job("a", &spec(5, 2.0), v)));
        assert!(!seg.run(job("b", r#"{"nonsense":1}"#, v)));
        assert!(!seg.run(job("c", &spec(5, 2.0), "0.0.0-other")));
        assert!(seg.run(job("d", &spec(20, 3.0), v)));
        let b = seg.finish();
        let m: serde_json::Value = serde_json::from_str(&b.manifest).unwrap();
        assert_eq!((m["format"].as_str(), m["format_version"].as_u64()), (Some(FORMAT), Some(2)));
        let runs = m["runs"].as_array().unwrap();
        assert_eq!(
            runs.iter().map(|r| r["status"].as_str().unwrap()).collect::<Vec<_>>(),
            ["ok", "failed", "failed", "ok"]
        );
        assert!(runs[1]["error"].as_str().unwrap().starts_with("_core.SpecError: nonsense: invalid run description"));
        assert!(runs[2]["error"].as_str().unwrap().contains("the client 0.0.0-other"));
        assert!(runs[1].get("rows").is_none() && runs[1]["metrics"].is_null());
        // row ranges follow one another; the flow_ts table has one row per flow and sample
        let (r0, r3) = (&runs[0]["rows"], &runs[3]["rows"]);
        assert_eq!(r0["links"], serde_json::json!([0, 6]));
        assert_eq!(r3["links"], serde_json::json!([6, 6]));
        assert_eq!(r0["flow_ts"][1].as_u64(), Some(21)); // 0, 0.1, ..., 2.0 s
        assert_eq!(r3["flow_ts"], serde_json::json!([21, 31]));
        assert_eq!(runs[0]["metrics"]["bottleneck"], "r1-r2");
        assert!(runs[0].get("spec_json").is_none()); // (in specs.parquet)
        assert_eq!(runs[0]["params"], serde_json::json!({"buffer": 1}));
        // every file is listed with its size and checksum; the RunSpecs are compressed
        assert_eq!(b.files.len(), 8);
        let specs_len = b.files.iter().find(|(n, _)| n == SPECS).unwrap().1.len();
        assert!(specs_len < 4 * spec(5, 2.0).len(), "{specs_len}");
        for (name, data) in &b.files {
            assert_eq!(m["files"][name]["size"].as_u64(), Some(data.len() as u64));
            assert_eq!(m["files"][name]["sha256"].as_str().map(str::len), Some(64));
            assert_eq!(&data[..4], b"PAR1");
        }
        // the summary leaves out what only the stored copy needs
        let s: serde_json::Value = serde_json::from_str(&b.summary).unwrap();
        assert!(s["runs"][0].get("spec_json").is_none() && s["runs"][0].get("rows").is_none());
        let m3: serde_json::Value = serde_json::from_str(s["runs"][3]["metrics_json"].as_str().unwrap()).unwrap();
        assert_eq!(m3, runs[3]["metrics"]);
        assert_eq!(s["runs"][0]["params_json"], r#"{"buffer":1}"#);
        assert!(s["runs"][1]["metrics_json"].is_null());
    }

    #[test]
    fn commit_renames_a_complete_directory_into_segments() {
        let root = std::env::temp_dir().join(format!("tcplab-store-test-{}", new_id()));
        fs::create_dir_all(root.join("tmp")).unwrap();
        let mut seg = Segment::new();
        seg.run(job("a", &spec(5, 1.0), tcplab_core::VERSION));
        let b = seg.finish();
        let dir = commit(&root, &b, true).unwrap();
        assert_eq!(dir, root.join("segments").join(&b.id));
        let mut names: Vec<String> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names.len(), 10);
        assert!(names.contains(&MANIFEST.to_string()));
        // the manifest's own checksum covers its bytes
        let sum = fs::read_to_string(dir.join(MANIFEST_SUM)).unwrap();
        assert_eq!(sum, hex(&Sha256::digest(b.manifest.as_bytes())) + "\n");
        assert_eq!(fs::read_dir(root.join("tmp")).unwrap().count(), 0);
        assert_eq!(fs::read_to_string(dir.join(MANIFEST)).unwrap(), b.manifest);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_injected_error_fails_only_the_matching_run() {
        faults::inject("\"limit_packets\":77}", None, faults::Action::Error("RuntimeError: disk on fire".into()), None);
        let mut seg = Segment::new();
        assert!(!seg.run(job("a", &spec(77, 1.0), tcplab_core::VERSION)));
        assert!(seg.run(job("b", &spec(78, 1.0), tcplab_core::VERSION)));
        let m: serde_json::Value = serde_json::from_str(&seg.finish().manifest).unwrap();
        assert_eq!(m["runs"][0]["error"], "RuntimeError: disk on fire");
    }
}
