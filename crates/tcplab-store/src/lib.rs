//! Campaign segments: run RunSpecs, store their results.
//!
//! A campaign (python/tcplab/sweep/store.py) keeps every finished run in
//! **segments**: a directory `segments/<id>/` holding one Parquet file per
//! table (`flows`, `links`, `files`, `flow_ts`, `queue_ts`, `cc_ts`,
//! `qdisc_ts`; every run's rows, with a leading `run` column,
//! dictionary-encoded, naming the run key) and `segment.json`, the manifest,
//! written last: per run its key, parameters, seed, version, status, error,
//! metrics, meta, RunSpec, the row range of each table and the names of its
//! cc_ts and qdisc_ts variables; per file its size and SHA-256. Last comes
//! `segment.sha256`, the SHA-256 of the manifest's bytes, so every stored
//! byte is covered by a checksum.
//!
//! New tables and columns are added, never changed (the segment format
//! version stays 2): a reader takes a table a segment lacks (`cc_ts`,
//! `qdisc_ts` of an earlier tcplab) as absent and a missing links column
//! (`discipline`, `marks`, ... before queue disciplines) at its value for
//! the fast drop-tail FIFO every link then was (python/tcplab/results.py). [`segment::commit`] writes everything into a fresh
//! directory under `tmp/` and renames it into `segments/` in one `rename`, so
//! a reader sees a whole segment or none of it.
//!
//! This crate does the per-run and per-segment work in Rust, so a run of a
//! millisecond costs microseconds to store: [`segment::Segment`] runs jobs
//! and builds a segment, [`worker::serve`] is the loop of a local pool
//! worker (jobs claimed from shared memory, segments stored every quarter
//! second). The Python bindings (crates/tcplab-py) expose both; the format
//! is read by Python (pyarrow), and is the one the earlier Python writer
//! produced (segment format version 1).

pub mod columns;
#[cfg(any(test, feature = "test-hooks"))]
pub mod faults;
pub mod job;
pub mod key;
pub mod metrics;
pub mod segment;
pub mod tables;
pub mod worker;

pub use job::Job;
pub use segment::{commit, Segment};
