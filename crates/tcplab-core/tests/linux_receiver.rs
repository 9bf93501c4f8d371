//! The Linux receiver ACK policy (`ack_policy = "linux"`) and D-SACK, rule
//! by rule. Each test names the Linux 6.x function whose rule it checks
//! (net/ipv4/tcp_input.c unless said otherwise) and derives the expected
//! ACKs by hand from that rule. Times are in picoseconds (`MS` = 1 ms).

mod common;

use tcplab_core::net::packet::SackStore;
use tcplab_core::net::Packet;
use tcplab_core::sim::time::{from_secs, PS_PER_MS};
use tcplab_core::spec::{AckPolicy, DupAckGuard, FlowSpec, Recovery, RtoMode};
use tcplab_core::tcp::{CaState, LinuxAckConfig, Receiver, SegmentMap, Sender, SenderConfig, INFINITE_SSTHRESH};
use tcplab_core::World;

const MS: u64 = PS_PER_MS;

fn flow() -> FlowSpec {
    serde_json::from_value(serde_json::json!({
        "name": "f", "src": "a", "dst": "b", "cc": {"algorithm": "reno"}, "recovery": "sack"
    }))
    .unwrap()
}

fn map() -> SegmentMap {
    SegmentMap::new(&flow())
}

/// Linux's constants (TCP_ATO_MIN 40 ms, TCP_DELACK_MAX 200 ms,
/// TCP_MAX_QUICKACKS 16), an unlimited receive window, a receiver whose
/// handshake RTT is 20 ms and whose RTO is 20 + max(40, 200) = 220 ms.
fn cfg() -> LinuxAckConfig {
    LinuxAckConfig {
        ato_min: 40 * MS,
        delack_max: 200 * MS,
        max_quickacks: 16,
        window_quickacks: u32::MAX,
        srtt: 20 * MS,
        rto: 220 * MS,
    }
}

fn linux(cfg: LinuxAckConfig, sack: bool, dsack: bool, blocks: u8) -> Receiver {
    Receiver::new(0, sack, blocks, 40, false, 40 * MS, 0).with_dsack(dsack).with_linux_acks(cfg)
}

fn ato(r: &Receiver) -> u64 {
    r.linux().unwrap().ato()
}

fn quick(r: &Receiver) -> u32 {
    r.linux().unwrap().quick()
}

fn blocks(p: &Packet, st: &mut SackStore) -> Vec<(u64, u64)> {
    st.take(p.sack).ranges(p.seq).collect()
}

/// Delivers in-order segments `from..to`, one per millisecond starting at
/// `from` ms; returns the segments answered by an immediate ACK.
fn feed(r: &mut Receiver, m: &SegmentMap, st: &mut SackStore, from: u64, to: u64) -> Vec<u64> {
    let mut acked = vec![];
    for k in from..to {
        if let Some(a) = r.on_data(k * MS, k, m, st) {
            assert_eq!(a.seq, k + 1);
            st.release(a.sack);
            acked.push(k);
        }
    }
    acked
}

/// `tcp_event_data_recv`: the first data segment grants
/// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)` = min(rcv_wnd / (2 rcv_mss),
/// 16) = 16 credits (unlimited window) and ato = TCP_ATO_MIN.
/// `__tcp_ack_snd_check`: in quick-ACK mode every segment is ACKed at once,
/// and each ACK spends a credit (`tcp_dec_quickack_mode`): segments 0..15.
/// Then an ACK goes out when `rcv_nxt - rcv_wup > rcv_mss`, i.e. at the
/// second full segment since the last ACK: 17, 19, ..., 39. Arrivals 1 ms
/// apart are `m <= TCP_ATO_MIN / 2`: ato = 40/2 + 20 = 40 ms, unchanged.
/// The odd segment 40 waits for `tcp_send_delayed_ack`'s timer:
/// ato = 40 ms is not above TCP_DELACK_MIN, so the timeout is
/// min(ato, TCP_DELACK_MAX) = 40 ms; when it fires
/// (`tcp_delack_timer_handler`) the ACK goes out and ato doubles to 80 ms.
#[test]
fn quick_acks_for_the_first_16_segments_then_an_ack_every_second_full_segment() {
    let (m, mut st) = (map(), SackStore::default());
    let mut r = linux(cfg(), true, false, 3);
    let mut acked = vec![];
    for k in 0..41u64 {
        let t = k * MS;
        match r.on_data(t, k, &m, &mut st) {
            Some(a) => {
                assert_eq!(a.seq, k + 1);
                acked.push(k);
                assert_eq!(r.delack_deadline, None, "an ACK clears the timer");
            }
            None => assert_eq!(r.delack_deadline, Some(t + 40 * MS), "segment {k}"),
        }
        assert_eq!(ato(&r), 40 * MS, "segment {k}");
    }
    let expect: Vec<u64> = (0..16).chain((17..40).step_by(2)).collect();
    assert_eq!(acked, expect);
    assert_eq!(quick(&r), 0);
    // Segment 40 (odd) is pending until 40 + 40 ms.
    assert!(r.on_delack_timer(79 * MS, &mut st).is_none());
    let a = r.on_delack_timer(80 * MS, &mut st).unwrap();
    assert_eq!(a.seq, 41);
    assert_eq!(ato(&r), 80 * MS, "Delayed ACK missed: inflate ATO");
    assert_eq!(r.stats.acks_sent, 16 + 12 + 1);
}

/// `tcp_incr_quickack`: the credit is rcv_wnd / (2 rcv_mss), 2 when that
/// is 0, at most TCP_MAX_QUICKACKS. A fixed window of 10 segments gives 5
/// quick ACKs, a window of 1 segment gives 2, a window of 200 gives 16.
#[test]
fn the_quick_ack_credit_is_half_the_receive_window_at_most_16() {
    let m = map();
    for (window_quickacks, n) in [(5u32, 5u64), (0, 2), (100, 16)] {
        let mut st = SackStore::default();
        let mut r = linux(LinuxAckConfig { window_quickacks, ..cfg() }, true, false, 3);
        let acked = feed(&mut r, &m, &mut st, 0, n + 1);
        assert_eq!(acked, (0..n).collect::<Vec<_>>(), "window_quickacks {window_quickacks}");
        assert!(r.delack_deadline.is_some(), "segment {n} waits");
    }
}

/// `tcp_event_data_recv`'s ato estimator, with no quick ACKs
/// (`quickacks = 0`) so that leaving quick-ACK mode does not reset ato.
/// Arrivals at 0, 30, 75, 100, 101 ms:
/// - 0: first data, ato = TCP_ATO_MIN = 40;
/// - 30: m = 30 > 20 and < ato: ato = 40/2 + 30 = 50;
/// - 75: m = 45 < 50: ato = 25 + 45 = 70;
/// - 100: m = 25 < 70: ato = 35 + 25 = 60;
/// - 101: m = 1 <= 20: ato = 30 + 20 = 50.
///
/// The delayed-ACK deadlines (`tcp_send_delayed_ack`): segment 0 at
/// 0 + 40; segment 2 (ato 70 > TCP_DELACK_MIN) is bounded by the RTT,
/// max(srtt 20, TCP_DELACK_MIN 40) = 40: 75 + 40 = 115; segment 4 (ato 50)
/// likewise 101 + 40 = 141. Segments 1 and 3 are the second full segment:
/// ACKed at once. With an RTO of 60 ms the middle case is capped:
/// min(25 + 45, rto) = 60 at 75 ms.
#[test]
fn ato_follows_the_inter_arrival_times() {
    let (m, mut st) = (map(), SackStore::default());
    let mut r = linux(LinuxAckConfig { max_quickacks: 0, ..cfg() }, true, false, 3);
    let arrivals =
        [(0u64, 40u64, Some(40u64)), (30, 50, None), (75, 70, Some(115)), (100, 60, None), (101, 50, Some(141))];
    for (k, &(t, want_ato, deadline)) in arrivals.iter().enumerate() {
        let a = r.on_data(t * MS, k as u64, &m, &mut st);
        assert_eq!(ato(&r), want_ato * MS, "arrival at {t} ms");
        assert_eq!(a.is_none(), deadline.is_some(), "arrival at {t} ms");
        if let Some(d) = deadline {
            assert_eq!(r.delack_deadline, Some(d * MS), "arrival at {t} ms");
        }
    }
    let mut r = linux(LinuxAckConfig { max_quickacks: 0, rto: 60 * MS, ..cfg() }, true, false, 3);
    for (k, t) in [0u64, 30, 75].into_iter().enumerate() {
        r.on_data(t * MS, k as u64, &m, &mut st);
    }
    assert_eq!(ato(&r), 60 * MS, "ato capped at the RTO");
}

/// `tcp_send_delayed_ack` and `tcp_delack_timer_handler` with a receiver
/// RTT of 300 ms (so the RTT bound is 300 ms) and an RTO of 500 ms, no
/// quick ACKs. Each lone segment waits min(ato, RTT bound, TCP_DELACK_MAX)
/// and each expiry doubles ato, capped at the RTO:
/// - 0 ms: ato 40, timer at 40, fires: ato 80;
/// - 100 ms (m = 100 >= ato: no change): timer at 100 + 80 = 180: ato 160;
/// - 400 ms: timer at 400 + 160 = 560: ato 320;
/// - 1000 ms (m = 600 > rto: only a quick-ACK credit, none here): timer at
///   1000 + min(320, 300, 200) = 1200 (TCP_DELACK_MAX): ato min(640, 500) = 500.
///
/// Then arrivals at 1210, 1211, 1212, 1213 ms deflate it: 250 + 210 = 460,
/// then m = 1: 230 + 20 = 250, 125 + 20 = 145, 72.5 + 20 = 92.5.
#[test]
fn the_delayed_ack_timer_waits_min_of_ato_rtt_and_200ms_and_its_expiry_inflates_ato() {
    let (m, mut st) = (map(), SackStore::default());
    let c = LinuxAckConfig { max_quickacks: 0, srtt: 300 * MS, rto: 500 * MS, ..cfg() };
    let mut r = linux(c, true, false, 3);
    for (k, &(t, deadline, ato_after)) in
        [(0u64, 40u64, 80u64), (100, 180, 160), (400, 560, 320), (1000, 1200, 500)].iter().enumerate()
    {
        assert!(r.on_data(t * MS, k as u64, &m, &mut st).is_none());
        assert_eq!(r.delack_deadline, Some(deadline * MS), "segment {k}");
        assert!(r.on_delack_timer(deadline * MS - 1, &mut st).is_none());
        let a = r.on_delack_timer(deadline * MS, &mut st).unwrap();
        assert_eq!(a.seq, k as u64 + 1);
        assert_eq!(ato(&r), ato_after * MS, "segment {k}");
    }
    for (k, (t, want)) in
        [(1210u64, 460_000u64), (1211, 250_000), (1212, 145_000), (1213, 92_500)].into_iter().enumerate()
    {
        r.on_data(t * MS, 4 + k as u64, &m, &mut st);
        assert_eq!(ato(&r), want * MS / 1000, "arrival at {t} ms");
    }
}

/// `tcp_event_data_recv`: an inter-arrival gap above the RTO ("Too long
/// gap. Apparently sender failed to restart window") grants quick ACKs
/// again; a gap below it does not. After the 16 quick ACKs, segment 16
/// waits (timer at 56 ms, ato -> 80). Segment 17 after 200 ms (< rto 220):
/// no credit, it waits min(80, 40, 200) = 40 ms (ato -> 160). Segment 18
/// after 300 ms (> 220): 16 credits, ACKed at once, 15 left, ato unchanged.
#[test]
fn a_gap_longer_than_the_rto_restores_quick_acks() {
    let (m, mut st) = (map(), SackStore::default());
    let mut r = linux(cfg(), true, false, 3);
    assert_eq!(feed(&mut r, &m, &mut st, 0, 17).len(), 16);
    assert!(r.on_delack_timer(56 * MS, &mut st).is_some());
    assert!(r.on_data(216 * MS, 17, &m, &mut st).is_none());
    assert_eq!(r.delack_deadline, Some(256 * MS));
    assert!(r.on_delack_timer(256 * MS, &mut st).is_some());
    assert_eq!((quick(&r), ato(&r)), (0, 160 * MS));
    let a = r.on_data(556 * MS, 18, &m, &mut st).unwrap();
    assert_eq!(a.seq, 19);
    assert_eq!((quick(&r), ato(&r)), (15, 160 * MS));
}

/// `tcp_data_queue_ofo` + `__tcp_ack_snd_check`: out-of-order data is ACKed
/// at once because the out-of-order queue is not empty (SACK compression,
/// `tcp_comp_sack_nr`, is not modelled), and a segment that empties the
/// queue sets ICSK_ACK_NOW. Linux 6.x does NOT enter quick-ACK mode for
/// out-of-order data (`tcp_data_queue` calls `tcp_enter_quickack_mode`
/// only for retransmitted and out-of-window segments; the call on the
/// out-of-order path was removed in Linux 4.18), nor does it run
/// `tcp_event_data_recv`: after the hole fills, the next segment is delayed
/// again. Same decisions with and without SACK.
#[test]
fn out_of_order_data_is_acked_at_once_without_re_entering_quick_ack_mode() {
    let m = map();
    for sack in [true, false] {
        let mut st = SackStore::default();
        let mut r = linux(cfg(), sack, false, 3);
        assert_eq!(feed(&mut r, &m, &mut st, 0, 17).len(), 16); // 16 pending
        assert!(r.delack_deadline.is_some());
        // 17 is lost; 18 and 19 arrive.
        let a = r.on_data(17 * MS, 18, &m, &mut st).unwrap();
        assert_eq!(a.seq, 17);
        assert_eq!(blocks(&a, &mut st), if sack { vec![(18, 19)] } else { vec![] });
        assert_eq!(r.delack_deadline, None);
        let a = r.on_data(18 * MS, 19, &m, &mut st).unwrap();
        assert_eq!(blocks(&a, &mut st), if sack { vec![(18, 20)] } else { vec![] });
        assert_eq!(quick(&r), 0, "no quick-ACK mode for out-of-order data");
        // The hole fills: the queue empties, ICSK_ACK_NOW.
        let a = r.on_data(19 * MS, 17, &m, &mut st).unwrap();
        assert_eq!((a.seq, a.sack), (20, 0));
        // Still not in quick-ACK mode: the next lone segment waits.
        assert!(r.on_data(20 * MS, 20, &m, &mut st).is_none());
        assert_eq!(r.delack_deadline, Some(60 * MS));
        assert_eq!((quick(&r), ato(&r)), (0, 40 * MS));
    }
}

/// Duplicates do enter quick-ACK mode. `tcp_data_queue` ("A retransmit,
/// 2nd most common case. Force an immediate ack."): segment 16 again while
/// its own ACK is pending (end_seq 17 >= rcv_wup 16): 16 credits, ACKed,
/// one spent (the ACK was scheduled): 15; segment 17 then spends another:
/// 14. `tcp_validate_incoming` -> `tcp_send_dupack` for segment 3 (end_seq
/// 4 < rcv_wup 18): credits back to 16 and an ACK at once, which spends
/// nothing because no ACK was scheduled (`tcp_dec_quickack_mode` counts
/// only ACKs of new data since Linux 6.6).
#[test]
fn duplicates_enter_quick_ack_mode() {
    let (m, mut st) = (map(), SackStore::default());
    let mut r = linux(cfg(), true, false, 3);
    feed(&mut r, &m, &mut st, 0, 17);
    assert_eq!(quick(&r), 0);
    let a = r.on_data(17 * MS, 16, &m, &mut st).unwrap();
    assert_eq!(a.seq, 17);
    assert_eq!(quick(&r), 15);
    assert!(r.on_data(18 * MS, 17, &m, &mut st).is_some());
    assert_eq!(quick(&r), 14);
    let a = r.on_data(19 * MS, 3, &m, &mut st).unwrap();
    assert_eq!(a.seq, 18);
    assert_eq!(quick(&r), 16);
    assert_eq!(r.stats.duplicates, 2);
}

/// `tcp_dsack_set` from `tcp_data_queue` / `tcp_send_dupack` (RFC 2883
/// section 4, "the first SACK block ... MUST specify the contiguous block
/// of data that triggered this ACK" for a duplicate): a segment below
/// rcv_nxt is reported first, then the usual blocks; only in the ACK it
/// triggered; alone when nothing is held out of order. The same under the
/// rfc policy; nothing without `dsack` or without SACK.
#[test]
fn a_duplicate_below_rcv_nxt_is_the_first_sack_block() {
    let m = map();
    let make = |policy: AckPolicy, sack: bool, dsack: bool| match policy {
        AckPolicy::Linux => linux(cfg(), sack, dsack, 3),
        AckPolicy::Rfc => Receiver::new(0, sack, 3, 40, false, 40 * MS, 0).with_dsack(dsack),
    };
    for policy in [AckPolicy::Linux, AckPolicy::Rfc] {
        let mut st = SackStore::default();
        let mut r = make(policy, true, true);
        feed(&mut r, &m, &mut st, 0, 5); // quick ACKs (linux) / every segment (rfc)
        let a = r.on_data(5 * MS, 7, &m, &mut st).unwrap(); // 5, 6 lost
        assert_eq!(blocks(&a, &mut st), vec![(7, 8)]);
        let a = r.on_data(6 * MS, 2, &m, &mut st).unwrap();
        assert_eq!(a.seq, 5);
        assert_eq!(blocks(&a, &mut st), vec![(2, 3), (7, 8)], "{policy:?}");
        let a = r.on_data(7 * MS, 5, &m, &mut st).unwrap();
        assert_eq!(blocks(&a, &mut st), vec![(7, 8)], "{policy:?}: reported once");
        let a = r.on_data(8 * MS, 6, &m, &mut st).unwrap();
        assert_eq!((a.seq, a.sack), (8, 0));
        let a = r.on_data(9 * MS, 6, &m, &mut st).unwrap();
        assert_eq!(blocks(&a, &mut st), vec![(6, 7)], "{policy:?}: D-SACK alone");
        assert_eq!(r.stats.dsacks_sent, 2);
        for (sack, dsack) in [(true, false), (false, true)] {
            let mut st = SackStore::default();
            let mut r = make(policy, sack, dsack);
            feed(&mut r, &m, &mut st, 0, 5);
            let a = r.on_data(6 * MS, 2, &m, &mut st).unwrap();
            assert_eq!((a.seq, a.sack), (5, 0), "{policy:?} sack {sack} dsack {dsack}");
        }
    }
}

/// `tcp_data_queue_ofo` ("All the bits are present. Drop.") calls
/// `tcp_dsack_set` for a segment already held, then `tcp_sack_new_ofo_skb`
/// moves its block first: the ACK reports the duplicate, then the block
/// containing it (RFC 2883 section 4's second case), then the others,
/// within the block limit.
#[test]
fn a_duplicate_of_a_held_segment_is_the_first_sack_block() {
    let m = map();
    for (limit, want) in [(3u8, vec![(8, 9), (7, 10), (12, 13)]), (2, vec![(8, 9), (7, 10)]), (1, vec![(8, 9)])] {
        let mut st = SackStore::default();
        let mut r = linux(cfg(), true, true, limit);
        feed(&mut r, &m, &mut st, 0, 6);
        for (k, s) in [7u64, 8, 9, 12].into_iter().enumerate() {
            r.on_data((10 + k as u64) * MS, s, &m, &mut st).unwrap();
        }
        let a = r.on_data(20 * MS, 8, &m, &mut st).unwrap();
        assert_eq!(a.seq, 6);
        assert_eq!(blocks(&a, &mut st), want, "sack_blocks {limit}");
    }
}

fn sack_sender() -> (Sender, SegmentMap) {
    let f = flow();
    let cfg = SenderConfig {
        flow: 0,
        recovery: Recovery::Sack,
        dupthresh: 3,
        dupack_guard: DupAckGuard::Careful,
        init_cwnd: 10.0,
        init_ssthresh: INFINITE_SSTHRESH,
        rwnd: u64::MAX,
        limited_transmit: false,
        restart_after_idle: true,
        header_size: f.header_size,
        ns2_accounting: false,
        init_rto: 1.0,
        min_rto: 0.2,
        max_rto: 60.0,
        rto_mode: RtoMode::Linux,
        prr: false,
        rack: false,
        tlp: false,
        frto: false,
        undo: false,
        ..SenderConfig::from_flow(0, &f)
    };
    let mut s = Sender::new(cfg, tcplab_core::cc::build(&f.cc, "f").unwrap());
    s.started = true;
    s.app_limit = u64::MAX;
    (s, SegmentMap::new(&f))
}

/// The sender side of RFC 2883 section 4 (Linux `tcp_check_dsack`): a first
/// block below the cumulative ACK, or inside the second block, is a D-SACK:
/// counted in `SenderStats::dsacks` (Linux `tp->dsack_dups`) and not taken
/// as SACK information. The ACKs come from a Linux receiver with D-SACK:
/// segments 0-2 and 4-5 of a 10-segment window arrive (3 lost), then 1 and
/// 4 again. Afterwards: 2 D-SACKed segments; the scoreboard holds 4 and 5
/// only (in flight = snd_nxt - 3 - 2); the two D-SACK ACKs SACK nothing
/// new, so no fast retransmit. (The scoreboard part would also hold without the
/// check, since SACK processing ignores ranges below snd_una and ranges
/// already SACKed; the count is what the check adds.)
#[test]
fn the_sender_counts_dsack_blocks_and_keeps_them_off_the_scoreboard() {
    let (mut s, sm) = sack_sender();
    let mut out = vec![];
    s.transmit(0, &sm, &mut out);
    assert_eq!(out.len(), 10);
    let (m, mut st) = (map(), SackStore::default());
    let mut r = linux(cfg(), true, true, 3);
    let mut last = None;
    for (k, seq) in [0u64, 1, 2, 4, 5, 1, 4].into_iter().enumerate() {
        let t = (30 + k as u64) * MS;
        let a = r.on_data(t, seq, &m, &mut st).unwrap();
        let sack = st.take(a.sack);
        last = Some(sack.ranges(a.seq).collect::<Vec<_>>());
        out.clear();
        s.on_ack(t + 30 * MS, &a, &sack, &sm, &mut out);
    }
    assert_eq!(last.unwrap(), vec![(4, 5), (4, 6)]);
    assert_eq!(r.stats.dsacks_sent, 2);
    assert_eq!(s.stats.dsacks, 2);
    assert_eq!(s.snd_una, 3);
    assert_eq!(s.in_flight(), s.snd_nxt - 3 - 2, "only 4 and 5 SACKed");
    assert_eq!((s.state, s.stats.fast_recoveries, s.stats.retransmits), (CaState::Open, 0, 0));
}

/// End to end: with a 10 ms RTO on a 52 ms path, the first window is
/// retransmitted spuriously, so the receiver sees duplicates. Every
/// duplicate is answered by an ACK whose first block D-SACKs it, and the
/// sender counts each: sender D-SACKed segments = receiver duplicates
/// (the ACK path is lossless).
#[test]
fn spurious_retransmissions_come_back_as_dsacks() {
    let mut spec = common::line(10e6, 1000, Recovery::Sack, 2.0);
    let f = &mut spec.flows[0];
    (f.ack_policy, f.dsack, f.init_rto, f.min_rto) = (AckPolicy::Linux, true, 0.01, 0.01);
    let mut w = World::new(spec).unwrap();
    w.run_until(from_secs(2.0));
    let dups = w.receiver(0).stats.duplicates;
    assert!(dups > 0, "the early RTOs produce duplicates");
    assert_eq!(w.receiver(0).stats.dsacks_sent, dups);
    assert_eq!(w.sender(0).stats.dsacks, dups);
}
