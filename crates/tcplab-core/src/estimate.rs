//! What a run will cost, from its description alone: the memory it will
//! allocate and the packets and events it will simulate. Cheap (one pass
//! over flows and their paths), so a front end can say the cost up front,
//! and [`crate::World::new`] refuses a run whose memory estimate is over
//! `RunSpec::memory_limit` before allocating anything (docs/limits.md).
//!
//! The memory estimate counts what the description fixes: the sampled time
//! series (the largest by far when `sample_interval` is small), the initial
//! windows every sender puts in flight at once, files, scripted losses,
//! flows and links. It does not count what the dynamics decide: a window
//! that keeps growing behind an unlimited queue, or the rows of a
//! `loss_trace`. A packet capture (`pcap`) is counted at two records per
//! data packet on each captured link (data and ACK), up to `pcap_limit`.

use crate::error::SpecError;
use crate::spec::{limits, AppSpec, RunSpec};

/// Bytes of one row of the flow time series (time f64, flow u32, cwnd,
/// ssthresh, srtt f64, in_flight, delivered_bytes u64).
const FLOW_ROW: u64 = 8 + 4 + 8 + 8 + 8 + 8 + 8;
/// Bytes of one row of the queue time series (time, link, packets, bytes).
const QUEUE_ROW: u64 = 8 + 4 + 8 + 8;
/// Bytes of one row of the algorithm or discipline variables' series
/// (time, flow or link, variable u16, value).
const VAR_ROW: u64 = 8 + 4 + 2 + 8;
/// The time series are counted twice: columns that grow by doubling hold
/// up to twice their rows (and copy on growth), and Python's DataFrames
/// copy the numpy columns the core's vectors become.
const SERIES_COPIES: u64 = 2;
/// A packet in flight: its link entry (32 B), the sender's per-segment
/// send time and flags (8 B), the receiver's and scoreboard's share, and
/// the pool's slack; rounded up (measured: 2,000,000 packets sent at once
/// raised the peak resident size by 82 MB, 41 B each).
const PACKET_BYTES: u64 = 64;
/// A flow's fixed state: sender, receiver, congestion control, segment
/// map, its results row and its events (about 1 KB in the world, as much
/// again on the heap).
const FLOW_BYTES: u64 = 4096;
/// A link's fixed state, its event-queue slot and its results row.
const LINK_BYTES: u64 = 1024;
/// A file: its spec, segment-map entry, send/ACK times and results row.
const FILE_BYTES: u64 = 160;
/// A packet capture's record (`trace::PacketTrace`: 45 B of columns, a
/// SACK block's 16 B now and then), rounded up.
const PCAP_RECORD_BYTES: u64 = 64;
/// A scripted loss: its spec entry and the sorted copy.
const DROP_SEGMENT_BYTES: u64 = 16;

/// The cost of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Bytes the run will allocate, about (see the module's comment).
    pub memory_bytes: u64,
    /// The limit it is checked against (`RunSpec::memory_limit` or the default).
    pub memory_limit: u64,
    /// Of which the sampled time series.
    pub series_bytes: u64,
    /// Of which the initial windows in flight.
    pub window_bytes: u64,
    /// Sampling instants (0 without time series).
    pub samples: u64,
    /// Data packets the flows can deliver in the run, at most: each flow at
    /// its path's slowest link, flows sharing a link sharing its rate.
    pub packets: f64,
    /// Events to simulate, about: a packet's hops both ways, its ACK and
    /// the sender's work, plus the samples.
    pub events: f64,
    /// The field whose cost is the largest part of `memory_bytes`, and
    /// that part: what the refusal names.
    pub driver: (String, u64),
}

/// Whole segments of `x` (ceiling, saturating at u64::MAX for huge or
/// infinite values).
fn ceil_u64(x: f64) -> u64 {
    if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.ceil().max(0.0) as u64
    }
}

/// Estimates the cost of `spec`, whose flows take `paths` (forward, reverse
/// link indices, as `routing::resolve_paths` gives them). `spec` must be
/// valid ([`RunSpec::validate`]).
pub fn estimate_with_paths(spec: &RunSpec, paths: &[[Vec<u32>; 2]]) -> Estimate {
    let mut parts: Vec<(String, u64)> = Vec::new();
    let add = |a: u64, b: u64| a.saturating_add(b);

    // Time series: rows per sampling instant.
    let end_ps = crate::sim::time::from_secs(spec.duration);
    let interval = crate::sim::time::from_secs(spec.sample_interval);
    // A sample at 0 and at every multiple of the interval up to the end.
    let samples = end_ps.checked_div(interval).map_or(0, |n| n + 1);
    let mut row_bytes: u64 = 0;
    // Variables each algorithm traces, by (algorithm, parameters): a run
    // has few distinct ones, and building one per flow of a million would
    // not be cheap.
    let mut traced_vars: Vec<(&crate::spec::CcSpec, u64)> = Vec::new();
    for f in &spec.flows {
        let vars = match traced_vars.iter().find(|(cc, _)| **cc == f.cc) {
            Some(&(_, n)) => n,
            None => {
                let n = crate::cc::build(&f.cc, "").map_or(0, |cc| {
                    let mut v = Vec::new();
                    cc.trace_vars(&mut v);
                    v.len() as u64
                });
                traced_vars.push((&f.cc, n));
                n
            }
        };
        row_bytes = add(row_bytes, FLOW_ROW + vars * VAR_ROW);
    }
    let traced = match &spec.trace_links {
        Some(t) => t.len() as u64,
        None => spec
            .links
            .iter()
            .filter(|l| {
                l.queue.limit_packets.is_some() || l.queue.limit_bytes.is_some() || l.queue.discipline.is_some()
            })
            .count() as u64,
    };
    // A discipline link adds its variables (a handful) and its sojourn.
    let disciplines = spec.links.iter().filter(|l| l.queue.discipline.is_some()).count() as u64;
    row_bytes = add(row_bytes, traced * QUEUE_ROW + disciplines * 8 * VAR_ROW);
    let series_bytes = samples.saturating_mul(row_bytes).saturating_mul(SERIES_COPIES);
    parts.push(("sample_interval".into(), series_bytes));

    // Initial windows: a sender puts min(init_cwnd, rwnd) segments in
    // flight at once (no more than its files hold).
    let mut window_bytes: u64 = 0;
    let mut biggest_window = (String::new(), 0u64);
    for (i, f) in spec.flows.iter().enumerate() {
        let mut w = ceil_u64(f.init_cwnd);
        if let Some(r) = f.rwnd_packets {
            w = w.min(r);
        }
        match &f.app {
            AppSpec::Files { files } => {
                let bytes: u64 = files.iter().fold(0u64, |a, x| a.saturating_add(x.size));
                w = w.min(bytes / f.app_bytes_per_segment() as u64 + files.len() as u64);
            }
            AppSpec::Cbr { .. } | AppSpec::OnOff { .. } => w = 0,
            AppSpec::Bulk => {}
        }
        let b = w.saturating_mul(PACKET_BYTES);
        window_bytes = add(window_bytes, b);
        if b > biggest_window.1 {
            biggest_window = (format!("flows[{i}].init_cwnd"), b);
        }
    }
    if window_bytes > 0 {
        // Name the flow with the largest window when it is most of the
        // total, else the flows together.
        let name = if biggest_window.1 >= window_bytes / 2 { biggest_window.0 } else { "flows".into() };
        parts.push((name, window_bytes));
    }

    // Files and scripted losses.
    for (i, f) in spec.flows.iter().enumerate() {
        if let AppSpec::Files { files } = &f.app {
            parts.push((format!("flows[{i}].app.files"), (files.len() as u64).saturating_mul(FILE_BYTES)));
        }
        if !f.drop_segments.is_empty() {
            parts.push((
                format!("flows[{i}].drop_segments"),
                (f.drop_segments.len() as u64).saturating_mul(DROP_SEGMENT_BYTES),
            ));
        }
    }
    parts.push(("flows".into(), (spec.flows.len() as u64).saturating_mul(FLOW_BYTES)));
    parts.push(("links".into(), (spec.links.len() as u64).saturating_mul(LINK_BYTES)));

    let (packets, events) = traffic(spec, paths, samples);
    if !spec.pcap.is_empty() {
        let limit = spec.pcap_limit.unwrap_or(limits::DEFAULT_PCAP_LIMIT);
        let records = ceil_u64(2.0 * packets * spec.pcap.len() as f64).min(limit);
        parts.push(("pcap_limit".into(), records.saturating_mul(PCAP_RECORD_BYTES).saturating_mul(SERIES_COPIES)));
    }
    let memory_bytes = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    let driver = parts.iter().max_by_key(|p| p.1).cloned().unwrap_or_default();
    Estimate {
        memory_bytes,
        memory_limit: spec.memory_limit.unwrap_or(limits::DEFAULT_MEMORY_LIMIT),
        series_bytes,
        window_bytes,
        samples,
        packets,
        events,
        driver,
    }
}

/// Data packets the flows can deliver and the events that takes. Each flow
/// offers its path's slowest rate (a source its own rate, files their
/// size) over its active time; where the flows crossing a link offer more
/// than it carries, each is scaled down to its share.
fn traffic(spec: &RunSpec, paths: &[[Vec<u32>; 2]], samples: u64) -> (f64, f64) {
    let n_links = spec.links.len();
    let mut offered: Vec<f64> = Vec::with_capacity(spec.flows.len());
    for (f, p) in spec.flows.iter().zip(paths) {
        let active = (spec.duration - f.start).max(0.0);
        let slowest = p[0].iter().map(|&l| spec.links[l as usize].rate_bps).fold(f64::INFINITY, f64::min);
        let bits_per_packet = 8.0 * f.packet_size as f64;
        let mut pk = slowest * active / bits_per_packet;
        match &f.app {
            AppSpec::Files { files } => {
                let bytes: f64 = files.iter().map(|x| x.size as f64).sum();
                pk = pk.min(bytes / f.app_bytes_per_segment() as f64 + files.len() as f64);
            }
            // A source delivers what it sends, up to its path's rate.
            AppSpec::Cbr { rate_bps, .. } => pk = pk.min(rate_bps * active / bits_per_packet),
            AppSpec::OnOff { rate_bps, on, off, .. } => {
                pk = pk.min(rate_bps * active * on / (on + off) / bits_per_packet)
            }
            AppSpec::Bulk => {}
        }
        offered.push(pk);
    }
    // Load on each link in bits, and the scale that fits it in the link.
    let mut load = vec![0.0f64; n_links];
    for ((f, p), &pk) in spec.flows.iter().zip(paths).zip(&offered) {
        for &l in &p[0] {
            load[l as usize] += pk * 8.0 * f.packet_size as f64;
        }
    }
    let scale: Vec<f64> = (0..n_links)
        .map(|l| {
            let capacity = spec.links[l].rate_bps * spec.duration;
            if load[l] > capacity {
                capacity / load[l]
            } else {
                1.0
            }
        })
        .collect();
    let (mut packets, mut events) = (0.0, samples as f64);
    for (p, &pk) in paths.iter().zip(&offered) {
        let s = p[0].iter().map(|&l| scale[l as usize]).fold(1.0, f64::min);
        let delivered = pk * s;
        packets += delivered;
        // An event per hop each way, the send and the ACK's handling.
        events += delivered * (p[0].len() + p[1].len() + 2) as f64;
    }
    (packets, events)
}

/// The estimate of a description: validated, routed, estimated.
pub fn estimate(spec: &RunSpec) -> Result<Estimate, SpecError> {
    spec.validate()?;
    let paths = crate::net::routing::resolve_paths(spec)?;
    Ok(estimate_with_paths(spec, &paths))
}

/// Refuses a run whose memory estimate is over its limit, naming the field
/// that drives the cost.
pub fn check_memory(e: &Estimate) -> Result<(), SpecError> {
    if e.memory_bytes <= e.memory_limit {
        return Ok(());
    }
    let (field, part) = &e.driver;
    let hint = match field.as_str() {
        "sample_interval" => format!(
            "{} samples of the time series take {}; use a longer sample_interval (or 0 for none)",
            e.samples,
            human(*part)
        ),
        f if f.ends_with("init_cwnd") || (f == "flows" && e.window_bytes == *part) => {
            format!("the initial windows put {} of packets in flight at once; lower init_cwnd or set rwnd_packets (a scenario's rwnd)", human(*part))
        }
        "pcap_limit" => format!(
            "the packet capture may record {} of packets; lower pcap_limit or capture fewer links",
            human(*part)
        ),
        _ => format!("{} of it for this field", human(*part)),
    };
    Err(SpecError::new(
        field.clone(),
        format!(
            "the run would need about {} of memory, over memory_limit ({}, default {}): {hint}; or raise memory_limit",
            human(e.memory_bytes),
            human(e.memory_limit),
            human(limits::DEFAULT_MEMORY_LIMIT)
        ),
    ))
}

/// Bytes as a short human figure: "4.0 GiB".
fn human(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", units[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::Dumbbell;

    #[test]
    fn a_fine_sample_interval_is_the_driver_and_is_refused() {
        let mut d = Dumbbell::new(2, 10e6, 0.04, 50);
        (d.duration, d.measure_start) = (0.1, 0.0);
        let mut s = d.spec();
        s.sample_interval = 1e-12;
        let e = estimate(&s).unwrap();
        assert_eq!(e.samples, 100_000_000_001);
        assert_eq!(e.driver.0, "sample_interval");
        let err = check_memory(&e).unwrap_err();
        assert_eq!(err.field, "sample_interval");
    }

    #[test]
    fn a_packet_capture_is_counted_up_to_its_limit_and_named() {
        let mut d = Dumbbell::new(1, 1e9, 0.1, 1000);
        d.duration = 100.0;
        let mut s = d.spec();
        let plain = estimate(&s).unwrap().memory_bytes;
        s.pcap = vec!["r1->r2".into()];
        // Two records per data packet (8.3 million), over the default limit: the limit.
        let e = estimate(&s).unwrap();
        assert_eq!(e.memory_bytes - plain, limits::DEFAULT_PCAP_LIMIT * PCAP_RECORD_BYTES * SERIES_COPIES);
        s.pcap_limit = Some(1000);
        assert_eq!(estimate(&s).unwrap().memory_bytes - plain, 1000 * PCAP_RECORD_BYTES * SERIES_COPIES);
        s.pcap_limit = Some(u64::MAX);
        s.memory_limit = Some(1 << 30);
        let err = check_memory(&estimate(&s).unwrap()).unwrap_err();
        assert_eq!(err.field, "pcap_limit");
        assert!(err.to_string().contains("lower pcap_limit or capture fewer links"), "{err}");
    }

    #[test]
    fn an_ordinary_run_is_well_under_the_default() {
        let mut d = Dumbbell::new(10, 1e9, 0.1, 1000);
        d.duration = 100.0;
        d.sample_interval = 0.01;
        let e = estimate(&d.spec()).unwrap();
        assert!(e.memory_bytes < limits::DEFAULT_MEMORY_LIMIT / 10, "{e:?}");
        // 1 Gbit/s for 100 s of 1500-byte packets, shared by the flows.
        assert!((e.packets - 1e9 * 100.0 / 12_000.0).abs() < 1.0, "{}", e.packets);
    }
}
