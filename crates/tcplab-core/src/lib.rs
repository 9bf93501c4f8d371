//! tcplab-core: a packet-level simulator of TCP congestion control in high
//! bandwidth-delay networks. Pure Rust; the Python package is a thin layer on
//! top (crates/tcplab-py).
//!
//! Layers, bottom up:
//! - [`sim`]: integer picosecond time, the event queue, random streams;
//! - [`net`]: packets, links (drop-tail queue + transmitter + delay line), routing;
//! - [`tcp`]: sender (loss recovery, RTO), receiver (ACK, SACK, delayed ACK), applications;
//! - [`cc`]: the congestion-control trait and one file per algorithm;
//! - [`trace`], [`results`]: sampled time series and per-run results;
//! - [`spec`]: the serde description of a run, the boundary's contract;
//! - [`estimate`]: a run's memory and events from its description, checked against its memory limit;
//! - [`world`]: builds a run from a spec and drives the event loop.

pub mod cc;
pub mod error;
pub mod estimate;
pub mod mem;
pub mod net;
pub mod results;
pub mod scenarios;
pub mod sim;
pub mod source;
pub mod spec;
pub mod tcp;
pub mod trace;
pub mod world;

pub use error::SpecError;
pub use results::RunResults;
pub use spec::RunSpec;
pub use world::{run, World};

/// Version of the core, recorded with every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
