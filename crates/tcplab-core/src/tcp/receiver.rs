//! TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), optional delayed
//! ACKs (RFC 5681 section 4.2 / RFC 1122 4.2.3.2) and in-order delivery to the
//! application.
//!
//! - "An ACK SHOULD be generated for at least every second full-sized segment,
//!   and MUST be generated within 500 ms of the arrival of the first
//!   unacknowledged packet" (RFC 5681 4.2); the delay here is a parameter
//!   (default 40 ms, Linux's TCP_ATO_MIN).
//! - "A TCP receiver SHOULD send an immediate duplicate ACK when an
//!   out-of-order segment arrives" and "an immediate ACK when the incoming
//!   segment fills in all or part of a gap" (RFC 5681 4.2).
//! - RFC 2018 section 4: "The first SACK block MUST specify the contiguous block
//!   of data containing the segment which triggered this ACK", then the most
//!   recently reported blocks.
//!
//! Deviations: no D-SACK (RFC 2883); the receive window is not advertised in
//! ACKs (the sender enforces a fixed receiver window); quick-ACK mode is not
//! modelled.

use std::collections::VecDeque;

use crate::net::packet::{SackBlocks, SackStore};
use crate::net::{Packet, SackBlock, MAX_SACK_BLOCKS};
use crate::sim::Time;
use crate::tcp::app::SegmentMap;

#[derive(Debug, Clone, Default)]
pub struct ReceiverStats {
    /// Data packets that reached the receiver (duplicates included).
    pub data_received: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
}

#[derive(Debug)]
pub struct Receiver {
    pub flow: u32,
    /// Where its ACKs enter the network (set by the world).
    pub first_hop: crate::net::FirstHop,
    /// Next segment expected in order.
    pub rcv_nxt: u64,
    /// Out-of-order segments held, as sorted disjoint `[start, end)` ranges
    /// (a deque: ranges leave from the front as holes fill, and usually
    /// arrive at the back).
    ooo: VecDeque<(u64, u64)>,
    /// One segment of each of the most recently changed out-of-order blocks,
    /// most recent first, at most one per block (RFC 2018: repeat the most
    /// recently reported blocks). Kept only with SACK.
    recent: [u64; MAX_SACK_BLOCKS],
    n_recent: usize,
    sack: bool,
    max_blocks: usize,
    ack_size: u32,
    delayed_ack: bool,
    delack_timeout: Time,
    unacked: u32,
    /// Pending delayed-ACK deadline, and the time of the queued timer event.
    pub delack_deadline: Option<Time>,
    pub delack_event: Option<Time>,
    /// Application bytes delivered in order.
    pub delivered_bytes: u64,
    /// Completion time of each file, by position in the flow's sorted file list.
    pub file_finish: Vec<Option<Time>>,
    next_file: usize,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(flow: u32, sack: bool, max_blocks: u8, ack_size: u32, delayed_ack: bool, delack_timeout: Time, n_files: usize) -> Self {
        Receiver {
            first_hop: Default::default(),
            flow,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            recent: [0; MAX_SACK_BLOCKS],
            n_recent: 0,
            sack,
            max_blocks: max_blocks as usize,
            ack_size,
            delayed_ack,
            delack_timeout,
            unacked: 0,
            delack_deadline: None,
            delack_event: None,
            delivered_bytes: 0,
            file_finish: vec![None; n_files],
            next_file: 0,
            stats: ReceiverStats::default(),
        }
    }

    /// Segments held out of order.
    pub fn out_of_order(&self) -> impl Iterator<Item = &(u64, u64)> {
        self.ooo.iter()
    }

    /// The held range containing `seq`, if any.
    fn block_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|r| r.1 <= seq);
        self.ooo.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// Puts the block holding `seq` first among the recent blocks, dropping
    /// older entries of the same block and entries no longer held.
    fn note_recent(&mut self, seq: u64) {
        let block = self.block_of(seq);
        let mut kept = [0u64; MAX_SACK_BLOCKS];
        let mut n = 0;
        kept[n] = seq;
        n += 1;
        for k in 0..self.n_recent {
            let s = self.recent[k];
            let b = self.block_of(s);
            if b.is_some() && b != block && n < MAX_SACK_BLOCKS {
                kept[n] = s;
                n += 1;
            }
        }
        self.recent = kept;
        self.n_recent = n;
    }

    /// Inserts `seq` into the out-of-order set; false if already held.
    fn insert_ooo(&mut self, seq: u64) -> bool {
        // Usually the segment extends the highest range or starts a new one
        // above it (the rest of a window after a loss): no search.
        match self.ooo.back_mut() {
            Some(last) if seq == last.1 => {
                last.1 += 1;
                return true;
            }
            Some(last) if seq < last.1 => {}
            _ => {
                self.ooo.push_back((seq, seq + 1));
                return true;
            }
        }
        // First range ending after seq.
        let i = self.ooo.partition_point(|r| r.1 <= seq);
        if i < self.ooo.len() && self.ooo[i].0 <= seq {
            return false;
        }
        let joins_prev = i > 0 && self.ooo[i - 1].1 == seq;
        let joins_next = i < self.ooo.len() && self.ooo[i].0 == seq + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ooo[i - 1].1 = self.ooo[i].1;
                self.ooo.remove(i);
            }
            (true, false) => self.ooo[i - 1].1 = seq + 1,
            (false, true) => self.ooo[i].0 = seq,
            (false, false) => self.ooo.insert(i, (seq, seq + 1)),
        }
        true
    }

    /// A data segment arrives at `now`. Returns the ACK to send at once, if
    /// any; its SACK blocks go to `sacks`.
    #[inline]
    pub fn on_data(&mut self, now: Time, seq: u64, map: &SegmentMap, sacks: &mut SackStore) -> Option<Packet> {
        self.stats.data_received += 1;
        let immediate;
        if seq < self.rcv_nxt {
            self.stats.duplicates += 1;
            immediate = true;
        } else if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            let mut filled_gap = false;
            if let Some(&(s, e)) = self.ooo.front() {
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo.pop_front();
                    filled_gap = true;
                }
            }
            self.deliver(now, map);
            immediate = filled_gap || !self.ooo.is_empty() || !self.delayed_ack;
        } else {
            if !self.insert_ooo(seq) {
                self.stats.duplicates += 1;
            }
            // The recent blocks feed SACK blocks only: without SACK the two
            // to five binary searches of the held ranges are not needed.
            if self.sack {
                self.note_recent(seq);
            }
            immediate = true;
        }
        if immediate {
            return Some(self.make_ack(sacks));
        }
        self.unacked += 1;
        if self.unacked >= 2 {
            return Some(self.make_ack(sacks));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delack_timeout);
        }
        None
    }

    /// The delayed-ACK timer fires; returns the ACK if one is owed.
    pub fn on_delack_timer(&mut self, now: Time, sacks: &mut SackStore) -> Option<Packet> {
        match self.delack_deadline {
            Some(d) if d <= now => Some(self.make_ack(sacks)),
            _ => None,
        }
    }

    fn deliver(&mut self, now: Time, map: &SegmentMap) {
        self.delivered_bytes = map.bytes_before(self.rcv_nxt);
        if let Some(files) = &map.files {
            while self.next_file < files.len() && files[self.next_file].end <= self.rcv_nxt {
                self.file_finish[self.next_file] = Some(now);
                self.next_file += 1;
            }
        }
    }

    fn make_ack(&mut self, sacks: &mut SackStore) -> Packet {
        self.unacked = 0;
        self.delack_deadline = None;
        self.stats.acks_sent += 1;
        let mut ack = Packet::ack(self.rcv_nxt, self.ack_size);
        if self.sack && !self.ooo.is_empty() {
            let mut b = SackBlocks::NONE;
            let rcv_nxt = self.rcv_nxt;
            let push = |r: (u64, u64), b: &mut SackBlocks| {
                let blk = SackBlock { start: (r.0 - rcv_nxt).min(u32::MAX as u64) as u32, len: (r.1 - r.0).min(u32::MAX as u64) as u32 };
                if !b.blocks[..b.n as usize].contains(&blk) {
                    b.blocks[b.n as usize] = blk;
                    b.n += 1;
                }
            };
            for k in 0..self.n_recent {
                if b.n as usize >= self.max_blocks {
                    break;
                }
                if let Some(r) = self.block_of(self.recent[k]) {
                    push(r, &mut b);
                }
            }
            // Fewer recent blocks than slots (e.g. after blocks merged): fill
            // with the highest ranges not yet reported.
            for r in self.ooo.iter().rev() {
                if b.n as usize >= self.max_blocks {
                    break;
                }
                push(*r, &mut b);
            }
            if b.n > 0 {
                ack.sack = sacks.put(b);
            }
        }
        ack
    }
}

#[cfg(test)]
mod tests {
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
}
