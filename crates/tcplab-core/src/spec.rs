//! The description of one run: the contract between the Python front end
//! (or any other caller) and the Rust core.
//!
//! Everything is plain data in SI units (seconds, bits per second, bytes) so it
//! serializes to JSON unchanged. [`RunSpec::validate`] checks it and reports
//! the first problem with the path of the offending field
//! (`links[2].rate_bps: must be positive, got 0`).

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

use crate::error::SpecError;

/// One simulation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Master seed; every component derives its own random stream from it.
    #[serde(default)]
    pub seed: u64,
    /// Simulated duration in seconds.
    pub duration: f64,
    /// Start of the measurement window (seconds); goodput and utilization are
    /// computed over `[measure_start, duration]`.
    #[serde(default)]
    pub measure_start: f64,
    /// Interval of the sampled time series in seconds; 0 disables them.
    #[serde(default)]
    pub sample_interval: f64,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// Explicit static routes. Where a (node, destination) pair has none,
    /// the shortest path by propagation delay is used (ties broken by link
    /// order, so routing is deterministic).
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
    pub flows: Vec<FlowSpec>,
    /// Links whose queue length is sampled into the time series. `None`:
    /// every link with a finite queue limit (the ones that can drop).
    #[serde(default)]
    pub trace_links: Option<Vec<String>>,
    /// Record every drop, loss and retransmission (the `drop_trace` and
    /// `retransmit_trace` results). Off by default: a long lossy run makes
    /// millions of rows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loss_trace: bool,
    /// Links whose packets are captured (the `packet_trace` result, which
    /// the front end writes as pcap files): every packet as it starts onto
    /// the link's wire, after its queue (docs/pcap.md). Empty: none, and
    /// the run pays one predictable branch per packet-hop, shared with the
    /// queue disciplines'. Omitted from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Most packets the capture records over all its links
    /// (`None`: [`limits::DEFAULT_PCAP_LIMIT`]); the packets past it are
    /// counted, not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_limit: Option<u64>,
    /// Most bytes the run may allocate by the estimate of
    /// [`crate::estimate::estimate`] (`None`: [`limits::DEFAULT_MEMORY_LIMIT`]).
    /// A run estimated above it is refused before anything is allocated,
    /// naming the field that drives the cost. Omitted from the JSON when
    /// not given, so existing specs serialize (and hash) as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
}

/// The bounds of the inputs, derived from the representation of simulated
/// time (integer picoseconds in a u64, of which a sender keeps 61 bits) and
/// from the memory budget. docs/limits.md lists them with their reasons.
pub mod limits {
    pub use crate::net::packet::MAX_PACKET_SIZE;
    use crate::sim::time::PS_PER_SEC;

    /// Longest span of simulated time any input may name, in picoseconds:
    /// 2^61 - 1 ps (about 26.7 days), the send times a sender keeps
    /// ([`crate::sim::time::MAX_TIME`]). Every time a run computes is a time at
    /// most the end of the run (< 2^61 ps) plus a few such spans, so it
    /// stays far below 2^64 ps and never wraps.
    pub const MAX_SPAN_PS: u64 = crate::sim::time::MAX_TIME;
    /// [`MAX_SPAN_PS`] in seconds.
    pub const MAX_SPAN_S: f64 = MAX_SPAN_PS as f64 / PS_PER_SEC as f64;
    /// The time resolution: a positive time shorter than this rounds to 0.
    pub const MIN_TIME_S: f64 = 1.0 / PS_PER_SEC as f64;
    /// Slowest rate (bit/s) of a link or a source: the largest packet
    /// (65,535 B) still serializes within [`MAX_SPAN_PS`] (about 0.23 bit/s).
    pub const MIN_RATE_BPS: f64 = MAX_PACKET_SIZE as f64 * 8.0 * PS_PER_SEC as f64 / MAX_SPAN_PS as f64;
    /// Fastest rate (bit/s) of a link or a source: one byte per picosecond,
    /// 8 Tbit/s. Faster, a 1-byte packet would serialize in less than the
    /// smallest representable increment (1 ps) and be rounded up to it.
    pub const MAX_RATE_BPS: f64 = 8.0 * PS_PER_SEC as f64;
    /// Most links of a run: the event queue numbers links in 29 bits
    /// ([`crate::sim::event::LINK_MASK`]), so 2^29.
    pub const MAX_LINKS: u64 = crate::sim::event::LINK_MASK + 1;
    /// Default of `RunSpec::memory_limit`: 4 GiB, what a run may take on
    /// a machine that runs a few at once.
    pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;
    /// Default of `RunSpec::pcap_limit`: 5 million packets (some 250 MB of
    /// records with their copy in Python).
    pub const DEFAULT_PCAP_LIMIT: u64 = 5_000_000;
}

mod flow;
mod network;

pub use flow::*;
use flow::{is_d_delack_max, is_d_delack_min, is_d_quickacks};
pub use network::*;

fn positive(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && v > 0.0) {
        return Err(SpecError::new(path, format!("must be a positive number, got {v}")));
    }
    Ok(())
}

fn non_negative(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(SpecError::new(path, format!("must be a non-negative number, got {v}")));
    }
    Ok(())
}

/// `v` for a message: in exponent form when very large or very small
/// (`1e300`, not 301 digits).
fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-5..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A time in seconds that may be 0 (a start time, a delay): 0 to
/// [`limits::MAX_SPAN_S`], the longest span simulated time can represent.
/// Longer than the run is fine (nothing happens in the run), longer than
/// that is not representable.
fn time_or_zero(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (0.0..=limits::MAX_SPAN_S).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a time from 0 to {:.6e} s (2^61 ps, simulated time's limit), got {}",
                limits::MAX_SPAN_S,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// A positive time in seconds (a timer, a period): 1 ps (the resolution;
/// less rounds to 0) to [`limits::MAX_SPAN_S`].
fn positive_time(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (limits::MIN_TIME_S..=limits::MAX_SPAN_S).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a time from 1e-12 s (1 ps, the resolution) to {:.6e} s (2^61 ps, simulated time's limit), got {}",
                limits::MAX_SPAN_S,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// A rate in bit/s of a link or a source, within
/// [`limits::MIN_RATE_BPS`, `limits::MAX_RATE_BPS`].
fn rate(path: String, v: f64) -> Result<(), SpecError> {
    if !(v.is_finite() && (limits::MIN_RATE_BPS..=limits::MAX_RATE_BPS).contains(&v)) {
        return Err(SpecError::new(
            path,
            format!(
                "must be a rate from {:.4} bit/s (a 65,535-byte packet serializes within 2^61 ps) to {:.0e} bit/s (a byte per ps, the resolution), got {}",
                limits::MIN_RATE_BPS,
                limits::MAX_RATE_BPS,
                show(v)
            ),
        ));
    }
    Ok(())
}

/// The field path of a deserialization error: where the parser was, plus
/// the field a "missing field" message names (serde reports it at the
/// enclosing object; an unknown field is in the path already). The whole
/// document is `spec`.
fn error_path(path: &serde_path_to_error::Path, message: &str) -> String {
    let mut p = path.to_string();
    if p == "." || p == "?" {
        p.clear();
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        if let Some(name) = rest.split('`').next() {
            p = if p.is_empty() { name.to_string() } else { format!("{p}.{name}") };
        }
    }
    if p.is_empty() {
        "spec".into()
    } else {
        p
    }
}

impl RunSpec {
    pub fn from_json(s: &str) -> Result<Self, SpecError> {
        let de = &mut serde_json::Deserializer::from_str(s);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let message = e.inner().to_string();
            SpecError::new(error_path(e.path(), &message), format!("invalid run description: {message}"))
        })
    }

    /// Checks the description; the error names the field and the problem.
    /// Routing and algorithm names are checked when the simulation is built.
    pub fn validate(&self) -> Result<(), SpecError> {
        positive("duration".into(), self.duration)?;
        non_negative("measure_start".into(), self.measure_start)?;
        if self.measure_start >= self.duration {
            return Err(SpecError::new(
                "measure_start".into(),
                format!("must be before the end of the run ({} s), got {}", self.duration, self.measure_start),
            ));
        }
        // Both are rounded to picoseconds: a window that rounds to nothing
        // would divide 0 by 0 in every rate.
        use crate::sim::time::from_secs;
        if from_secs(self.measure_start) >= from_secs(self.duration) {
            return Err(SpecError::new(
                "measure_start".into(),
                format!(
                    "must be at least 1 ps (the resolution) before the end of the run ({} s), got {}",
                    show(self.duration),
                    show(self.measure_start)
                ),
            ));
        }
        if self.sample_interval != 0.0 {
            positive_time("sample_interval".into(), self.sample_interval)?;
        }
        // Senders keep a segment's send time and flags in one word: times
        // up to 2^61 ps.
        let max = limits::MAX_SPAN_S;
        if self.duration >= max {
            return Err(SpecError::new(
                "duration".into(),
                format!(
                    "too long: simulated time is limited to 2^61 ps ({max:.4e} s, about 26 days), got {} s",
                    self.duration
                ),
            ));
        }
        let mut names = HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.name.is_empty() {
                return Err(SpecError::new(format!("nodes[{i}].name"), "must not be empty".into()));
            }
            if !names.insert(n.name.as_str()) {
                return Err(SpecError::new(format!("nodes[{i}].name"), format!("duplicate node name {:?}", n.name)));
            }
        }
        let mut link_names = HashSet::new();
        for (i, l) in self.links.iter().enumerate() {
            if !link_names.insert(l.name.as_str()) {
                return Err(SpecError::new(format!("links[{i}].name"), format!("duplicate link name {:?}", l.name)));
            }
            for (f, n) in [("src", &l.src), ("dst", &l.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("links[{i}].{f}"), format!("unknown node {n:?}")));
                }
            }
            if l.src == l.dst {
                return Err(SpecError::new(format!("links[{i}].dst"), "a link must join two different nodes".into()));
            }
            rate(format!("links[{i}].rate_bps"), l.rate_bps)?;
            time_or_zero(format!("links[{i}].delay"), l.delay)?;
            if l.queue.limit_packets == Some(0) {
                return Err(SpecError::new(
                    format!("links[{i}].queue.limit_packets"),
                    "must be at least 1 packet, got 0".into(),
                ));
            }
            if let Some(loss) = &l.loss {
                let prob = |name: &str, v: f64| -> Result<(), SpecError> {
                    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                        return Err(SpecError::new(
                            format!("links[{i}].loss.{name}"),
                            format!("must be a probability in [0, 1], got {v}"),
                        ));
                    }
                    Ok(())
                };
                match *loss {
                    LossSpec::Bernoulli { p } => prob("p", p)?,
                    LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                        prob("p_gb", p_gb)?;
                        prob("p_bg", p_bg)?;
                        prob("loss_good", loss_good)?;
                        prob("loss_bad", loss_bad)?;
                        if p_gb + p_bg == 0.0 {
                            return Err(SpecError::new(
                                format!("links[{i}].loss.p_bg"),
                                "p_gb and p_bg cannot both be 0".into(),
                            ));
                        }
                    }
                }
            }
            if l.queue.limit_bytes == Some(0) {
                return Err(SpecError::new(
                    format!("links[{i}].queue.limit_bytes"),
                    "must be at least 1 byte, got 0".into(),
                ));
            }
        }
        for (i, r) in self.routes.iter().enumerate() {
            for (f, n) in [("node", &r.node), ("dst", &r.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("routes[{i}].{f}"), format!("unknown node {n:?}")));
                }
            }
            if !link_names.contains(r.link.as_str()) {
                return Err(SpecError::new(format!("routes[{i}].link"), format!("unknown link {:?}", r.link)));
            }
        }
        if let Some(tl) = &self.trace_links {
            let mut traced = HashSet::new();
            for (i, n) in tl.iter().enumerate() {
                if !link_names.contains(n.as_str()) {
                    return Err(SpecError::new(format!("trace_links[{i}]"), format!("unknown link {n:?}")));
                }
                if !traced.insert(n.as_str()) {
                    // (its queue would be sampled twice, each sample a row)
                    return Err(SpecError::new(format!("trace_links[{i}]"), format!("link {n:?} is listed twice")));
                }
            }
        }
        let mut captured = HashSet::new();
        for (i, n) in self.pcap.iter().enumerate() {
            if !link_names.contains(n.as_str()) {
                return Err(SpecError::new(format!("pcap[{i}]"), format!("unknown link {n:?}")));
            }
            if !captured.insert(n.as_str()) {
                return Err(SpecError::new(format!("pcap[{i}]"), format!("link {n:?} is listed twice")));
            }
        }
        if self.flows.is_empty() {
            return Err(SpecError::new("flows".into(), "no flows: nothing to simulate".into()));
        }
        let hosts: HashSet<&str> =
            self.nodes.iter().filter(|n| n.kind == NodeKind::Host).map(|n| n.name.as_str()).collect();
        let mut flow_names = HashSet::new();
        for (i, f) in self.flows.iter().enumerate() {
            let p = |s: &str| format!("flows[{i}].{s}");
            if !flow_names.insert(f.name.as_str()) {
                return Err(SpecError::new(p("name"), format!("duplicate flow name {:?}", f.name)));
            }
            for (field, n) in [("src", &f.src), ("dst", &f.dst)] {
                if !names.contains(n.as_str()) {
                    return Err(SpecError::new(p(field), format!("unknown node {n:?}")));
                }
                if !hosts.contains(n.as_str()) {
                    return Err(SpecError::new(p(field), format!("{n:?} is a router; flows start and end at hosts")));
                }
            }
            if f.src == f.dst {
                return Err(SpecError::new(p("dst"), "must differ from src".into()));
            }
            time_or_zero(p("start"), f.start)?;
            if f.header_size >= f.packet_size {
                return Err(SpecError::new(
                    p("packet_size"),
                    format!("must exceed header_size ({} B), got {} B", f.header_size, f.packet_size),
                ));
            }
            if f.ack_size == 0 {
                return Err(SpecError::new(p("ack_size"), "must be at least 1 byte".into()));
            }
            for (name, v) in [("packet_size", f.packet_size), ("ack_size", f.ack_size)] {
                if v > limits::MAX_PACKET_SIZE {
                    return Err(SpecError::new(
                        p(name),
                        format!("must be at most {} B (IP's largest packet), got {v} B", limits::MAX_PACKET_SIZE),
                    ));
                }
            }
            if !(f.init_cwnd.is_finite() && f.init_cwnd >= 1.0) {
                return Err(SpecError::new(p("init_cwnd"), format!("must be at least 1 segment, got {}", f.init_cwnd)));
            }
            if let Some(s) = f.init_ssthresh {
                if !(s.is_finite() && s >= 2.0) {
                    return Err(SpecError::new(p("init_ssthresh"), format!("must be at least 2 segments, got {s}")));
                }
            }
            if f.rwnd_packets == Some(0) {
                return Err(SpecError::new(p("rwnd_packets"), "must be at least 1 segment".into()));
            }
            positive_time(p("min_rto"), f.min_rto)?;
            positive_time(p("init_rto"), f.init_rto)?;
            positive_time(p("max_rto"), f.max_rto)?;
            if f.max_rto < f.min_rto {
                return Err(SpecError::new(p("max_rto"), format!("must be at least min_rto ({} s)", f.min_rto)));
            }
            if f.dupthresh == 0 {
                return Err(SpecError::new(p("dupthresh"), "must be at least 1".into()));
            }
            positive_time(p("delack_timeout"), f.delack_timeout)?;
            if f.sack_blocks == 0 || f.sack_blocks > 4 {
                return Err(SpecError::new(
                    p("sack_blocks"),
                    format!("must be 1 to 4 (RFC 2018), got {}", f.sack_blocks),
                ));
            }
            for (name, on) in [("prr", f.prr), ("rack", f.rack), ("tlp", f.tlp), ("frto", f.frto), ("undo", f.undo)] {
                if on && f.recovery != Recovery::Sack {
                    return Err(SpecError::new(
                        p(name),
                        format!(
                            "needs recovery = \"sack\" (Linux runs it on the SACK scoreboard), got {}",
                            serde_json::to_string(&f.recovery).unwrap_or_default()
                        ),
                    ));
                }
            }
            if f.tlp && !f.rack {
                return Err(SpecError::new(
                    p("tlp"),
                    "needs rack = true (the probe's loss is detected by RACK, RFC 8985 7.4)".into(),
                ));
            }
            for (name, v) in [("pacing_ss_ratio", f.pacing_ss_ratio), ("pacing_ca_ratio", f.pacing_ca_ratio)] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(SpecError::new(p(name), format!("must be a positive percentage, got {v}")));
                }
            }
            // An algorithm that needs ECN refuses less (built here for its
            // needs only; an unknown name is reported when the run is built).
            if let Ok(cc) = crate::cc::build(&f.cc, &p("cc")) {
                cc.ecn().resolve(&f.cc.algorithm, f.ecn).map_err(|m| SpecError::new(p("ecn"), m))?;
            }
            if f.frto && !f.undo {
                return Err(SpecError::new(
                    p("frto"),
                    "needs undo = true (F-RTO's verdict \"spurious\" is acted on by undo)".into(),
                ));
            }
            positive_time(p("delack_min"), f.delack_min)?;
            positive_time(p("delack_max"), f.delack_max)?;
            if f.delack_max < f.delack_min {
                return Err(SpecError::new(
                    p("delack_max"),
                    format!("must be at least delack_min ({} s), got {} s", f.delack_min, f.delack_max),
                ));
            }
            if f.ack_policy == AckPolicy::Rfc {
                // Parameters of the linux policy given to an rfc receiver
                // would be silently ignored: say so instead.
                for (name, default) in [
                    ("delack_min", is_d_delack_min(&f.delack_min)),
                    ("delack_max", is_d_delack_max(&f.delack_max)),
                    ("quickacks", is_d_quickacks(&f.quickacks)),
                ] {
                    if !default {
                        return Err(SpecError::new(
                            p(name),
                            "applies only with ack_policy = \"linux\" (the rfc policy uses delayed_ack and delack_timeout)".into(),
                        ));
                    }
                }
            }
            if let AppSpec::Files { files } = &f.app {
                for (j, file) in files.iter().enumerate() {
                    if file.size == 0 {
                        return Err(SpecError::new(
                            format!("flows[{i}].app.files[{j}].size"),
                            "must be at least 1 byte".into(),
                        ));
                    }
                    time_or_zero(format!("flows[{i}].app.files[{j}].start"), file.start)?;
                }
            }
            match &f.app {
                AppSpec::Cbr { rate_bps, .. } => rate(format!("flows[{i}].app.rate_bps"), *rate_bps)?,
                AppSpec::OnOff { rate_bps, on, off, .. } => {
                    rate(format!("flows[{i}].app.rate_bps"), *rate_bps)?;
                    positive_time(format!("flows[{i}].app.on"), *on)?;
                    time_or_zero(format!("flows[{i}].app.off"), *off)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}
