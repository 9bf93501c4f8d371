//! Fixtures shared by the integration tests.
#![allow(dead_code)]

use tcplab_core::results::RunResults;
use tcplab_core::spec::*;

/// A line h1 -> r -> h2: a fast access link (100 Mbit/s, 1 ms) and a
/// bottleneck of `rate` with one-way delay 24 ms and `buffer` packets, the same
/// in reverse for ACKs. Round-trip propagation 50 ms.
pub fn line(rate: f64, buffer: u64, recovery: Recovery, duration: f64) -> RunSpec {
    let node = |n: &str, k| NodeSpec { name: n.into(), kind: k };
    let link = |name: &str, s: &str, d: &str, r: f64, delay: f64, lim: Option<u64>| LinkSpec {
        name: name.into(),
        src: s.into(),
        dst: d.into(),
        rate_bps: r,
        delay,
        queue: QueueSpec { limit_packets: lim, limit_bytes: None },
        loss: None,
    };
    let flow: FlowSpec = serde_json::from_value(serde_json::json!({
        "name": "f", "src": "h1", "dst": "h2", "cc": {"algorithm": "newreno"}, "recovery": recovery,
    }))
    .unwrap();
    RunSpec {
        seed: 1,
        duration,
        measure_start: 0.0,
        sample_interval: 0.0,
        nodes: vec![node("h1", NodeKind::Host), node("r", NodeKind::Router), node("h2", NodeKind::Host)],
        links: vec![
            link("h1->r", "h1", "r", 100e6, 0.001, None),
            link("r->h2", "r", "h2", rate, 0.024, Some(buffer)),
            link("h2->r", "h2", "r", 100e6, 0.001, None),
            link("r->h1", "r", "h1", rate, 0.024, None),
        ],
        routes: vec![],
        flows: vec![flow],
        trace_links: None,
    }
}

/// Packets are conserved per flow and per link at the end of a run.
pub fn assert_conservation(r: &RunResults) {
    for f in &r.flows {
        assert_eq!(
            f.data_packets_sent,
            f.data_packets_received + f.data_packets_dropped + f.data_packets_lost + f.data_packets_in_network,
            "data packets of flow {} not conserved: {f:?}",
            f.name
        );
        assert_eq!(
            f.acks_sent,
            f.acks_received + f.acks_dropped + f.acks_lost + f.acks_in_network,
            "ACKs of flow {} not conserved: {f:?}",
            f.name
        );
    }
    for l in &r.links {
        assert_eq!(l.packets_in, l.drops + l.losses + l.packets_out + l.packets_in_link, "link {} not conserved: {l:?}", l.name);
        assert!(l.utilization <= 1.0 + 1e-9, "link {} utilization {} > 1", l.name, l.utilization);
    }
    let dropped: u64 = r.flows.iter().map(|f| f.data_packets_dropped + f.acks_dropped).sum();
    let link_drops: u64 = r.links.iter().map(|l| l.drops).sum();
    assert_eq!(dropped, link_drops, "per-flow drops and per-link drops disagree");
}
