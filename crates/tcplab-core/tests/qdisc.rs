//! Links with a queue discipline, end to end: the seam (queue discipline,
//! transmitter, delay line) against the fast drop-tail link, conservation
//! with AQM drops and marks, determinism.

mod common;

use common::*;
use tcplab_core::spec::*;
use tcplab_core::world;

fn with_discipline(mut s: RunSpec, link: usize, discipline: &str, params: serde_json::Value) -> RunSpec {
    s.links[link].queue.discipline = Some(discipline.into());
    s.links[link].queue.params = params.as_object().cloned().unwrap_or_default();
    s
}

/// A drop-tail discipline makes exactly the decisions of the fast FIFO (the
/// same limit rule, the packet in service not counted), so the run is the
/// same packet for packet: the seam's transmitter and delay line time
/// packets as the fast link's arithmetic does.
#[test]
fn droptail_discipline_reproduces_the_fast_link() {
    for recovery in [Recovery::NewReno, Recovery::Sack] {
        let fast = line(10e6, 20, recovery, 30.0);
        let slow = with_discipline(fast.clone(), 1, "droptail", serde_json::json!({}));
        let (a, b) = (world::run(fast).unwrap(), world::run(slow).unwrap());
        assert_conservation(&b);
        let fa = &a.flows[0];
        let fb = &b.flows[0];
        assert!(fa.data_packets_dropped > 10, "the scenario must drop: {fa:?}");
        assert_eq!(
            (fa.bytes_delivered, fa.data_packets_sent, fa.retransmits, fa.data_packets_dropped),
            (fb.bytes_delivered, fb.data_packets_sent, fb.retransmits, fb.data_packets_dropped)
        );
        let (la, lb) = (&a.links[1], &b.links[1]);
        assert_eq!(
            (la.packets_in, la.packets_out, la.drops, la.queue_max_packets),
            (lb.packets_in, lb.packets_out, lb.drops, lb.queue_max_packets)
        );
        assert!((la.utilization - lb.utilization).abs() < 1e-12);
        assert!(
            (la.queue_mean_packets - lb.queue_mean_packets).abs() < 1e-9 * la.queue_mean_packets.max(1.0),
            "{la:?} {lb:?}"
        );
        // Sojourn statistics only on the discipline link; Little's law ties
        // them to the mean queue: mean waiting = (packets served / window) x mean sojourn.
        assert!(la.sojourn_mean.is_none());
        let served_rate = lb.packets_out as f64 / 30.0;
        let little = served_rate * lb.sojourn_mean.unwrap();
        assert!(
            (little - lb.queue_mean_packets).abs() / lb.queue_mean_packets < 0.02,
            "Little: {little} vs {}",
            lb.queue_mean_packets
        );
        assert!(lb.sojourn_p50 <= lb.sojourn_p95 && lb.sojourn_p95 <= lb.sojourn_p99);
        let p99 = lb.sojourn_p99.unwrap();
        // The largest sojourn is bounded by the buffer: 20 packets of 1500 B at 10 Mbit/s.
        assert!(p99 <= 20.0 * 1500.0 * 8.0 / 10e6 * 1.02);
    }
}

#[test]
fn unknown_discipline_and_parameter_name_the_field() {
    let s = with_discipline(line(10e6, 20, Recovery::Sack, 1.0), 1, "codle", serde_json::json!({}));
    let e = world::run(s).err().unwrap();
    assert_eq!(e.field, "links[1].queue.discipline");
    let s = with_discipline(line(10e6, 20, Recovery::Sack, 1.0), 1, "droptail", serde_json::json!({"target": 0.005}));
    let e = world::run(s).err().unwrap();
    assert_eq!(e.field, "links[1].queue.params.target");
}

/// An unresponsive CBR source at 1.2 C through a drop-tail discipline: the
/// link carries C (utilization 1 to within a packet), a sixth of what is
/// sent is dropped, packets are conserved, and nothing is ever ACKed.
#[test]
fn cbr_overload_fills_the_link_and_drops_the_excess() {
    let mut s = with_discipline(line(10e6, 50, Recovery::NewReno, 20.0), 1, "droptail", serde_json::json!({}));
    s.flows[0].app = AppSpec::Cbr { rate_bps: 12e6, ecn: SourceEcn::NotEct };
    let r = world::run(s).unwrap();
    assert_conservation(&r);
    let f = &r.flows[0];
    assert_eq!(f.algorithm, "cbr");
    assert_eq!((f.acks_sent, f.retransmits), (0, 0));
    // 12 Mbit/s of 1500-byte packets for 20 s.
    assert_eq!(f.data_packets_sent, 20_000);
    let l = &r.links[1];
    assert!(l.utilization > 0.99 && l.utilization <= 1.0, "{}", l.utilization);
    let drop_frac = f.data_packets_dropped as f64 / f.data_packets_sent as f64;
    assert!((drop_frac - 1.0 / 6.0).abs() < 0.01, "{drop_frac}");
    // The queue stays full: every sojourn near the full buffer's 50 x 1.2 ms.
    assert!(l.sojourn_p50.unwrap() > 0.9 * 0.06 && l.sojourn_p99.unwrap() < 1.02 * 0.06, "{l:?}");
}

/// A source faster than its first link, whose queue is unlimited, would
/// pile packets up without bound: refused, naming the field.
#[test]
fn a_source_that_would_flood_an_unlimited_queue_is_refused() {
    let mut s = line(10e6, 50, Recovery::NewReno, 1.0);
    s.flows[0].app = AppSpec::Cbr { rate_bps: 1e15, ecn: SourceEcn::NotEct };
    let e = world::run(s.clone()).err().unwrap();
    assert_eq!(e.field, "flows[0].app.rate_bps");
    // With a limit on the first link it runs (the excess is dropped there).
    s.links[0].queue.limit_packets = Some(100);
    s.flows[0].app = AppSpec::Cbr { rate_bps: 200e6, ecn: SourceEcn::NotEct };
    let r = world::run(s).unwrap();
    assert_conservation(&r);
    assert!(r.links[0].drops > 0);
}
