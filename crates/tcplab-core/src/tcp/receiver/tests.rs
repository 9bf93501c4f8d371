use super::*;
use crate::spec::FlowSpec;

fn map() -> SegmentMap {
    let f: FlowSpec = serde_json::from_value(serde_json::json!({
        "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": "reno"}, "recovery": "sack"
    }))
    .unwrap();
    SegmentMap::new(&f)
}

fn blocks(p: &Packet, s: &mut SackStore) -> Vec<(u64, u64)> {
    s.take(p.sack).ranges(p.seq).collect()
}

#[test]
fn out_of_order_data_is_acked_at_once_with_the_triggering_block_first() {
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, true, 3, 40, true, 40_000_000_000, 0);
    assert!(r.on_data(0, 0, &m, &mut st).is_none()); // delayed
    let a = r.on_data(1, 1, &m, &mut st).unwrap(); // second segment: ACK
    assert_eq!((a.seq, a.sack), (2, 0));
    // 2 lost; 3, 4 arrive, then 6.
    let a = r.on_data(2, 3, &m, &mut st).unwrap();
    assert_eq!(blocks(&a, &mut st), vec![(3, 4)]);
    let a = r.on_data(3, 4, &m, &mut st).unwrap();
    assert_eq!(blocks(&a, &mut st), vec![(3, 5)]);
    let a = r.on_data(4, 6, &m, &mut st).unwrap();
    assert_eq!(a.seq, 2);
    assert_eq!(blocks(&a, &mut st), vec![(6, 7), (3, 5)]);
    // The hole is filled: cumulative ACK jumps to 5, block (6,7) remains.
    let a = r.on_data(5, 2, &m, &mut st).unwrap();
    assert_eq!(a.seq, 5);
    assert_eq!(blocks(&a, &mut st), vec![(6, 7)]);
    assert_eq!(r.delivered_bytes, 5 * 1460);
}

#[test]
fn delayed_ack_timer_acks_a_single_segment() {
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, false, 3, 40, true, 40, 0);
    assert!(r.on_data(0, 0, &m, &mut st).is_none());
    assert_eq!(r.delack_deadline, Some(40));
    assert!(r.on_delack_timer(39, &mut st).is_none());
    let a = r.on_delack_timer(40, &mut st).unwrap();
    assert_eq!(a.seq, 1);
    assert_eq!(r.delack_deadline, None);
}

#[test]
fn duplicates_are_counted_and_acked_immediately() {
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, false, 3, 40, false, 40, 0);
    r.on_data(0, 0, &m, &mut st);
    let a = r.on_data(1, 0, &m, &mut st).unwrap();
    assert_eq!(a.seq, 1);
    assert_eq!(r.stats.duplicates, 1);
}

/// The held ranges against a set of held segments: sorted, disjoint,
/// not touching, exactly the segments above `rcv_nxt` received; and the
/// cumulative ACK is the first hole.
#[test]
fn held_ranges_match_a_set_of_segments() {
    use std::collections::BTreeSet;
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, false, 3, 40, false, 40, 0);
    let mut got: BTreeSet<u64> = BTreeSet::new();
    let mut x = 7u64;
    let (mut base, mut next) = (0u64, 0u64);
    for step in 0..10_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Mostly in order with a window of gaps; now and then the hole.
        let seq = match x >> 61 {
            0 => r.rcv_nxt,
            1..=5 => base + (x >> 20) % 8,
            _ => r.rcv_nxt + (x >> 20) % 64,
        };
        base = base.max(seq) + (step % 3 == 0) as u64;
        let a = r.on_data(step, seq, &m, &mut st).unwrap();
        if seq >= next {
            got.insert(seq);
        }
        while got.remove(&next) {
            next += 1;
        }
        assert_eq!((r.rcv_nxt, a.seq), (next, next));
        let held: Vec<u64> = got.iter().copied().collect();
        let ranges: Vec<(u64, u64)> = r.out_of_order().copied().collect();
        let expanded: Vec<u64> = ranges.iter().flat_map(|&(s, e)| s..e).collect();
        assert_eq!(expanded, held);
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
    }
    assert!(r.stats.duplicates > 200, "{} duplicates", r.stats.duplicates);
}

fn seg(seq: u64, ecn: Ecn, flags: u8) -> Packet {
    let mut p = Packet::data(seq, 1500, false);
    p.set_ecn(ecn);
    p.set_tcp_flags(flags);
    p
}

fn cfg(mode: EcnMode, precise_echo: bool) -> EcnConfig {
    EcnConfig {
        mode,
        ect: if mode == EcnMode::AccEcn { Ecn::Ect1 } else { Ecn::Ect0 },
        precise_echo,
        needs_ecn: precise_echo,
    }
}

/// Feeds one segment; returns the ACKs sent at once.
fn feed(r: &mut Receiver, t: Time, p: Packet, c: EcnConfig, m: &SegmentMap, st: &mut SackStore) -> Vec<Packet> {
    let mut out = vec![];
    r.on_segment(t, &p, &c, m, st, &mut out);
    out
}

fn ece(a: &Packet) -> bool {
    a.tcp_flags() & tcp_flags::ECE != 0
}

/// RFC 3168 6.1.3: after a CE data packet the receiver sets ECE on
/// every ACK until a data packet with CWR arrives; a CE duplicate
/// (below rcv_nxt) sets nothing (Linux checks CE on new data only).
#[test]
fn classic_ece_latches_from_ce_until_cwr() {
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, true, 3, 40, false, 40, 0);
    let c = cfg(EcnMode::Classic, false);
    let acks: Vec<bool> = [
        seg(0, Ecn::Ect0, 0),
        seg(1, Ecn::Ce, 0),
        seg(2, Ecn::Ect0, 0),
        seg(3, Ecn::Ect0, 0),
        seg(4, Ecn::Ect0, tcp_flags::CWR),
        seg(5, Ecn::Ect0, 0),
        seg(2, Ecn::Ce, 0), // a duplicate
    ]
    .into_iter()
    .enumerate()
    .map(|(t, p)| ece(&feed(&mut r, t as Time, p, c, &m, &mut st)[0]))
    .collect();
    assert_eq!(acks, [false, true, true, true, false, false, false]);
    assert_eq!(r.stats.ce_received, 2);
    // A CE segment carrying CWR: the CWR clears the old latch, the CE sets a new one.
    let a = feed(&mut r, 10, seg(6, Ecn::Ce, tcp_flags::CWR), c, &m, &mut st);
    assert!(ece(&a[0]));
}

/// Linux `tcp_ecn_check_ce`: the CE segment that sets the latch is not
/// delayed (RFC policy: an immediate ACK; Linux policy: two quick ACKs,
/// `tcp_enter_quickack_mode(sk, 2)`), and neither is a CWR segment.
#[test]
fn classic_ce_and_cwr_are_acked_at_once_with_delayed_acks() {
    let m = map();
    let mut st = SackStore::default();
    let c = cfg(EcnMode::Classic, false);
    let mut r = Receiver::new(0, true, 3, 40, true, 40, 0);
    assert!(feed(&mut r, 0, seg(0, Ecn::Ect0, 0), c, &m, &mut st).is_empty());
    assert_eq!(r.on_delack_timer(40, &mut st).map(|a| a.seq), Some(1));
    let a = feed(&mut r, 50, seg(1, Ecn::Ce, 0), c, &m, &mut st);
    assert_eq!((a.len(), a[0].seq, ece(&a[0])), (1, 2, true));
    assert!(feed(&mut r, 60, seg(2, Ecn::Ce, 0), c, &m, &mut st).is_empty(), "latch already set: delayed");
    assert_eq!(r.on_delack_timer(100, &mut st).map(|a| ece(&a)), Some(true));
    let a = feed(&mut r, 110, seg(3, Ecn::Ect0, tcp_flags::CWR), c, &m, &mut st);
    assert_eq!((a.len(), ece(&a[0])), (1, false));
}

/// Under Linux's ACK policy the CE segment that sets the latch enters
/// quick-ACK mode with two credits (`tcp_enter_quickack_mode(sk, 2)`):
/// it and the next segment are ACKed at once, the one after is delayed
/// again; without the mark the first would have been delayed.
#[test]
fn classic_ce_gives_two_quick_acks_under_the_linux_policy() {
    let m = map();
    let ms = crate::sim::time::from_secs(0.001);
    let linux = || {
        let cfg = LinuxAckConfig {
            ato_min: 40 * ms,
            delack_max: 200 * ms,
            max_quickacks: 16,
            window_quickacks: u32::MAX,
            srtt: 10 * ms,
            rto: 210 * ms,
        };
        Receiver::new(0, true, 3, 40, true, 40 * ms, 0).with_linux_acks(cfg)
    };
    let c = cfg(EcnMode::Classic, false);
    let immediate = |marks: [Ecn; 3]| {
        let mut st = SackStore::default();
        let mut r = linux();
        let mut k = 0u64;
        // Use up the initial quick-ACK credits, ending on an ACK.
        loop {
            let n = feed(&mut r, k * ms, seg(k, Ecn::Ect0, 0), c, &m, &mut st).len();
            k += 1;
            if r.linux().unwrap().quick() == 0 && n == 1 {
                break;
            }
        }
        marks.map(|e| {
            let a = feed(&mut r, k * ms, seg(k, e, 0), c, &m, &mut st);
            k += 1;
            a.first().map(ece)
        })
    };
    assert_eq!(immediate([Ecn::Ce, Ecn::Ect0, Ecn::Ect0]), [Some(true), Some(true), None]);
    assert_eq!(immediate([Ecn::Ect0, Ecn::Ect0, Ecn::Ect0]), [None, Some(false), None]);
}

/// Accurate ECN (draft section 3.2.2, Linux `tcp_accecn_set_ace`):
/// every ACK carries the count of CE-marked segments received plus 5,
/// modulo 8, in its ACE field; and is sent with the flow's ECT.
#[test]
fn ace_counts_ce_segments_modulo_8_from_5() {
    let m = map();
    let mut st = SackStore::default();
    let c = cfg(EcnMode::AccEcn, false);
    let mut r = Receiver::new(0, true, 3, 40, false, 40, 0);
    let mut ce = 0u64;
    for k in 0..40u64 {
        let marked = k % 3 != 1;
        ce += marked as u64;
        let a = feed(&mut r, k, seg(k, if marked { Ecn::Ce } else { Ecn::Ect1 }, 0), c, &m, &mut st);
        let ace = (a[0].tcp_flags() & tcp_flags::ACE_MASK) >> tcp_flags::ACE_SHIFT;
        assert_eq!(ace as u64, (5 + ce) % 8, "after {ce} CE segments");
        assert_eq!((a[0].ecn(), ece(&a[0])), (Ecn::Ect1, false));
    }
    assert!(ce > 16, "wrapped twice");
    assert_eq!(r.stats.ce_received, ce);
}

/// AccECN's change-triggered ACK (Linux `tcp_ecn_received_counters`:
/// ICSK_ACK_NOW when the IP-ECN field differs from the last segment's):
/// with delayed ACKs, the segment after which the field changes is
/// ACKed at once, an unchanged field is delayed as usual.
#[test]
fn accecn_acks_at_once_when_the_ecn_field_changes() {
    let m = map();
    let mut st = SackStore::default();
    let c = cfg(EcnMode::AccEcn, false);
    let mut r = Receiver::new(0, true, 3, 40, true, 40, 0);
    let at_once: Vec<usize> = [Ecn::Ect1, Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ect1, Ecn::Ect1]
        .into_iter()
        .enumerate()
        .map(|(k, e)| {
            let n = feed(&mut r, k as Time, seg(k as u64, e, 0), c, &m, &mut st).len();
            if n == 0 {
                r.on_delack_timer(Time::MAX, &mut st); // flush the delayed ACK
            }
            n
        })
        .collect();
    assert_eq!(at_once, [0, 1, 0, 0, 1, 0]);
}

/// DCTCP's receiver (RFC 8257 3.2, Linux `dctcp_ece_ack_update`): ECE
/// reflects each segment's CE state; when it changes while an ACK is
/// delayed, that ACK (of the data before this segment) goes first with
/// the old state, then this segment's ACK at once with the new one.
#[test]
fn precise_echo_acks_the_delayed_data_with_the_old_state() {
    let m = map();
    let mut st = SackStore::default();
    let c = cfg(EcnMode::Classic, true);
    let mut r = Receiver::new(0, true, 3, 40, true, 40, 0);
    assert!(feed(&mut r, 0, seg(0, Ecn::Ect0, 0), c, &m, &mut st).is_empty());
    let a = feed(&mut r, 1, seg(1, Ecn::Ce, 0), c, &m, &mut st);
    assert_eq!(a.iter().map(|a| (a.seq, ece(a))).collect::<Vec<_>>(), [(1, false), (2, true)]);
    assert!(feed(&mut r, 2, seg(2, Ecn::Ce, 0), c, &m, &mut st).is_empty());
    let a = feed(&mut r, 3, seg(3, Ecn::Ect0, 0), c, &m, &mut st);
    assert_eq!(a.iter().map(|a| (a.seq, ece(a))).collect::<Vec<_>>(), [(3, true), (4, false)]);
    // No ACK delayed: only the immediate one. No latch: CWR is not needed.
    let a = feed(&mut r, 4, seg(4, Ecn::Ce, 0), c, &m, &mut st);
    assert_eq!(a.iter().map(|a| (a.seq, ece(a))).collect::<Vec<_>>(), [(5, true)]);
    assert_eq!(r.stats.acks_sent, 5);
}

/// ECN off: the same ACKs as `on_data`, no flags.
#[test]
fn ecn_off_leaves_acks_unchanged() {
    let m = map();
    let mut st = SackStore::default();
    let mut a = Receiver::new(0, true, 3, 40, true, 40, 0);
    let mut b = Receiver::new(0, true, 3, 40, true, 40, 0);
    for (t, q) in [0u64, 1, 3, 2, 4, 5, 7].into_iter().enumerate() {
        let x = a.on_data(t as Time, q, &m, &mut st).map(|p| (p.seq, p.tcp_flags(), p.ecn()));
        let y = feed(&mut b, t as Time, seg(q, Ecn::NotEct, 0), EcnConfig::default(), &m, &mut st);
        assert_eq!(x, y.first().map(|p| (p.seq, p.tcp_flags(), p.ecn())));
    }
}

#[test]
fn sack_blocks_repeat_the_most_recently_reported_blocks() {
    // RFC 2018: first the block of the triggering segment, then the most
    // recently reported ones. Arrivals 40, 50, 10, then 30..33 (same block).
    let m = map();
    let mut st = SackStore::default();
    let mut r = Receiver::new(0, true, 3, 40, false, 40, 0);
    for (t, s) in [40u64, 50, 10, 30, 31, 32, 33].iter().enumerate() {
        r.on_data(t as u64, *s, &m, &mut st);
    }
    let a = r.on_data(10, 33, &m, &mut st).unwrap(); // duplicate: same blocks again
    assert_eq!(blocks(&a, &mut st)[..], [(30, 34), (10, 11), (50, 51)]);
}
