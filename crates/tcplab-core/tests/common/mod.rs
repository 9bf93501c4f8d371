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
        queue: QueueSpec { limit_packets: lim, ..Default::default() },
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
        loss_trace: false,
        pcap: Vec::new(),
        pcap_limit: None,
        memory_limit: None,
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
        assert_eq!(
            l.packets_in,
            l.drops + l.losses + l.packets_out + l.packets_in_link,
            "link {} not conserved: {l:?}",
            l.name
        );
        assert!(l.utilization <= 1.0 + 1e-9, "link {} utilization {} > 1", l.name, l.utilization);
    }
    let dropped: u64 = r.flows.iter().map(|f| f.data_packets_dropped + f.acks_dropped).sum();
    let link_drops: u64 = r.links.iter().map(|l| l.drops).sum();
    assert_eq!(dropped, link_drops, "per-flow drops and per-link drops disagree");
}

/// What one flow's loss trace says about its retransmissions (the run must
/// have `loss_trace` on). tcplab's paths are FIFO and static, so nothing is
/// reordered or duplicated: a copy of a segment either arrives or is in the
/// drop trace, and a retransmission either repairs (every earlier copy of
/// the segment was dropped or lost) or is needless.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RecoveryAccount {
    /// Data copies dropped or lost (queue, wire, scripted).
    pub lost_copies: u64,
    /// Retransmissions whose every earlier copy was lost.
    pub repairs: u64,
    /// Needless retransmissions started by duplicate ACKs or SACK: fast
    /// retransmit, NewReno partial ACK, SACK NextSeg. Without reordering
    /// there must be none.
    pub needless_dupack: u64,
    /// Needless resends by the timer itself (at most one per timeout).
    pub needless_rto: u64,
    /// Needless resends after a timeout (go-back-N, or SACK's resends of
    /// what the timeout marked lost).
    pub needless_after_rto: u64,
    /// Tail loss probes that resent a segment still in flight (a probe is
    /// sent without knowing; Linux profile).
    pub needless_tlp: u64,
    /// Sum over the timer's resends of the segments outstanding then: the
    /// most go-back-N can resend.
    pub go_back_n_window: u64,
    /// Fast recoveries seen in the trace (its fast_retransmit rows).
    pub fast_retransmits: u64,
    /// Loss events: the flow's lost copies grouped in windows of
    /// `event_window` seconds from the first loss of each.
    pub loss_events: u64,
}

pub fn recovery_account(r: &RunResults, flow: u32, event_window: f64) -> RecoveryAccount {
    use std::collections::HashMap;
    use tcplab_core::trace::RetransmitCause as C;
    let (d, x) = (&r.drop_trace, &r.retransmit_trace);
    // (time, is_drop, seq, cause, outstanding); at equal times a send comes
    // before a loss (a copy is lost after it is sent).
    let mut ev: Vec<(f64, bool, u64, u8, u64)> = vec![];
    for i in 0..d.len() {
        if d.flow[i] == flow && !d.ack[i] {
            ev.push((d.time[i], true, d.seq[i], 0, 0));
        }
    }
    for i in 0..x.len() {
        if x.flow[i] == flow {
            ev.push((x.time[i], false, x.seq[i], x.cause[i], x.outstanding[i]));
        }
    }
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut a = RecoveryAccount::default();
    // Per segment: copies sent, copies lost.
    let mut copies: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut event_end = f64::NEG_INFINITY;
    for (t, is_drop, seq, cause, outstanding) in ev {
        let c = copies.entry(seq).or_insert((1, 0));
        if is_drop {
            c.1 += 1;
            a.lost_copies += 1;
            if t >= event_end {
                a.loss_events += 1;
                event_end = t + event_window;
            }
            continue;
        }
        let repair = c.1 >= c.0;
        c.0 += 1;
        if cause == C::FastRetransmit as u8 {
            a.fast_retransmits += 1;
        }
        if cause == C::Rto as u8 {
            a.go_back_n_window += outstanding;
        }
        if repair {
            a.repairs += 1;
        } else if cause == C::Rto as u8 {
            a.needless_rto += 1;
        } else if cause == C::AfterRto as u8 {
            a.needless_after_rto += 1;
        } else if cause == C::Tlp as u8 {
            a.needless_tlp += 1;
        } else {
            a.needless_dupack += 1;
        }
    }
    a
}
