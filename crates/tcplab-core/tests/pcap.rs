//! The packet capture (`RunSpec::pcap`): it records every packet that
//! starts onto a captured link's wire, in time order, with byte sequence
//! numbers and SACK blocks, and it changes nothing else in the run.

use tcplab_core::results::RunResults;
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::*;
use tcplab_core::trace::PacketTrace;

/// Three SACK flows, each sending files that finish well before the end
/// (so nothing is left in the network), through a 20-packet bottleneck
/// that drops.
fn spec() -> RunSpec {
    let mut d = Dumbbell::new(3, 10e6, 0.04, 20);
    d.recovery = Recovery::Sack;
    (d.duration, d.measure_start) = (6.0, 1.0);
    d.accounting = Accounting::Payload;
    let mut s = d.spec();
    for (i, f) in s.flows.iter_mut().enumerate() {
        f.app = AppSpec::Files { files: vec![FileSpec { size: 600_000 + 1000 * i as u64, start: 0.1 * i as f64 }] };
    }
    s
}

fn captured(mut s: RunSpec, links: &[&str]) -> RunResults {
    s.pcap = links.iter().map(|l| l.to_string()).collect();
    tcplab_core::run(s).unwrap()
}

/// Rows of link `l`.
fn rows(t: &PacketTrace, l: u32) -> Vec<usize> {
    (0..t.len()).filter(|&i| t.link[i] == l).collect()
}

#[test]
fn capture_changes_nothing_else() {
    let plain = tcplab_core::run(spec()).unwrap();
    assert!(plain.packet_trace.is_none());
    let mut r = captured(spec(), &["r1->r2", "r2->r1"]);
    assert!(r.packet_trace.take().is_some());
    r.meta.wall_s = plain.meta.wall_s;
    assert_eq!(format!("{plain:?}"), format!("{r:?}"));
}

#[test]
fn every_packet_accepted_is_recorded_once_in_time_order() {
    let r = captured(spec(), &["r1->r2", "r2->r1"]);
    let t = r.packet_trace.as_ref().unwrap();
    assert!(r.links[0].drops > 0, "the bottleneck must drop for this test");
    for (l, link) in r.links.iter().enumerate().take(2) {
        let idx = rows(t, l as u32);
        // The files finished: everything the link accepted left it.
        assert_eq!(link.packets_in_link, 0);
        assert_eq!(idx.len() as u64, link.packets_in - link.drops, "{}", link.name);
        assert!(idx.windows(2).all(|w| t.time[w[0]] <= t.time[w[1]]));
        assert!(idx.iter().all(|&i| t.time[i] < 6_000_000_000_000));
    }
    for (f, fr) in r.flows.iter().enumerate() {
        let data: Vec<usize> = rows(t, 0).into_iter().filter(|&i| t.flow[i] == f as u32).collect();
        assert!(data.iter().all(|&i| !t.ack[i]));
        // Access links do not drop: the bottleneck saw what the flow sent, less its drops.
        assert_eq!(data.len() as u64, fr.data_packets_sent - fr.data_packets_dropped);
        let rtx = data.iter().filter(|&&i| t.retransmit[i]).count() as u64;
        assert!(rtx > 0 && rtx <= fr.retransmits);
        // The highest byte sent is the file's size.
        let top = data.iter().map(|&i| t.byte_seq[i] + t.payload[i] as u64).max().unwrap();
        assert_eq!(top, fr.bytes_delivered);
        assert_eq!(top, 600_000 + 1000 * f as u64);
        // ACKs on the way back: the last acknowledges every byte.
        let acks: Vec<usize> = rows(t, 1).into_iter().filter(|&i| t.flow[i] == f as u32).collect();
        assert!(acks.iter().all(|&i| t.ack[i] && t.payload[i] == 0));
        assert_eq!(t.byte_seq[*acks.last().unwrap()], fr.bytes_delivered);
    }
    // SACK blocks after the losses: byte ranges above the cumulative ACK.
    let (mut s, mut with_sack) = (0usize, 0);
    for i in 0..t.len() {
        for k in s..s + t.sack_count[i] as usize {
            assert!(t.ack[i] && t.sack_left[k] > t.byte_seq[i] && t.sack_right[k] > t.sack_left[k]);
        }
        with_sack += (t.sack_count[i] > 0) as usize;
        s += t.sack_count[i] as usize;
    }
    assert_eq!(s, t.sack_left.len());
    assert!(with_sack > 0);
}

#[test]
fn a_discipline_link_is_captured_at_service_start() {
    let mut s = spec();
    s.links[0].queue.discipline = Some("red".into());
    let r = captured(s, &["r1->r2"]);
    let t = r.packet_trace.as_ref().unwrap();
    let l = &r.links[0];
    assert_eq!(l.packets_in_link, 0);
    assert_eq!(t.len() as u64, l.packets_in - l.drops);
    assert!(t.time.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn the_limit_counts_what_it_leaves_out() {
    let mut s = spec();
    s.pcap_limit = Some(100);
    let r = captured(s, &["r1->r2"]);
    let t = r.packet_trace.unwrap();
    assert_eq!(t.len(), 100);
    assert_eq!(t.overflow + 100, r.links[0].packets_in - r.links[0].drops);
}

#[test]
fn an_unknown_or_repeated_link_names_the_field() {
    let mut s = spec();
    s.pcap = vec!["r1->r2".into(), "bottleneck".into()];
    let e = tcplab_core::World::new(s).err().unwrap();
    assert_eq!(e.field, "pcap[1]");
    assert!(e.to_string().contains("unknown link \"bottleneck\""), "{e}");
    let mut s = spec();
    s.pcap = vec!["r1->r2".into(), "r1->r2".into()];
    assert_eq!(tcplab_core::World::new(s).err().unwrap().field, "pcap[1]");
}

#[test]
fn a_run_that_ends_mid_transfer_keeps_what_started_before_its_end() {
    let mut d = Dumbbell::new(2, 10e6, 0.04, 20);
    (d.duration, d.measure_start) = (3.0, 1.0);
    let r = captured(d.spec(), &["r1->r2"]);
    let t = r.packet_trace.as_ref().unwrap();
    let l = &r.links[0];
    assert!(l.packets_in_link > 1, "the queue must hold packets at the end for this test");
    assert!(t.time.iter().all(|&x| x < 3_000_000_000_000));
    // Every packet that left the wire was recorded, and those on it; not the ones still queued.
    assert!(t.len() as u64 > l.packets_out + l.losses);
    assert!((t.len() as u64) < l.packets_in - l.drops);
}
