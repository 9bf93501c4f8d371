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
//! With `ack_policy = "linux"` the ACK decisions follow Linux 6.x instead
//! (see [`LinuxAck`]): quick-ACK mode, an ACK once more than one full segment
//! is unacknowledged, the adaptive delayed-ACK timeout `ato`.
//!
//! D-SACK (RFC 2883, Linux `tcp_dsack_set`), with `dsack = true` on a SACK
//! flow: the ACK answering a duplicate segment (below `rcv_nxt`, or already
//! held out of order) carries that segment as its first SACK block, then the
//! usual blocks, within `sack_blocks`.
//!
//! ECN ([`Receiver::on_segment`], with the flow's [`EcnConfig`]):
//! - classic (RFC 3168 section 6.1.3, Linux `tcp_ecn_check_ce`,
//!   `tcp_ecn_accept_cwr`, `tcp_ecn_send`): a CE-marked data segment sets
//!   the ECE latch (`TCP_ECN_DEMAND_CWR`); every ACK carries ECE until a
//!   data segment with CWR arrives, which is ACKed at once. The segment
//!   that sets the latch is ACKed at once: under the Linux ACK policy by
//!   `tcp_enter_quickack_mode(sk, 2)` (two quick ACKs), under the RFC
//!   policy by an immediate ACK. Linux's "funny extension" (a Not-ECT
//!   segment after ECT ones is probably a retransmission: two quick ACKs)
//!   is applied under the Linux policy only. Duplicates (below `rcv_nxt`)
//!   are not checked for CE, as `tcp_data_queue`'s retransmit branch.
//! - classic with an algorithm that asks for a precise echo (DCTCP, BBRv3:
//!   Linux `dctcp_ece_ack_update`, RFC 8257 section 3.2): ECE reflects the
//!   CE state of the last ECN-capable data segment; when that state changes
//!   an ACK goes out at once, preceded, if an ACK was being delayed, by an
//!   ACK of the data before this segment (`prior_rcv_nxt`) with the old
//!   state (no SACK blocks: with an ACK delayed there was no hole).
//! - Accurate ECN (draft-ietf-tcpm-accurate-ecn section 3.2, Linux 6.18
//!   `tcp_ecn_received_counters`, `tcp_accecn_set_ace`): the receiver
//!   counts CE-marked segments (`r.cep`, duplicates included: the ACE
//!   counter counts every segment) and every ACK carries
//!   (r.cep + 5) mod 8 (TCP_ACCECN_CEP_INIT_OFFSET) in its ACE field; a
//!   change of the IP-ECN field from one segment to the next is ACKed at
//!   once (Linux's change-triggered `ICSK_ACK_NOW`), and so is the 6th CE
//!   mark since the last ACK (TCP_ACCECN_ACE_MAX_DELTA, the draft's
//!   increment-triggered ACK that keeps the 3-bit counter from wrapping
//!   unseen; Linux checks this when it processes an ACK). ACKs are sent
//!   with the flow's ECT codepoint, as Linux's AccECN ("ECN++") does; no
//!   AccECN TCP option (the byte counters) is modelled.
//!
//! Both ends are taken to run the flow's algorithm; the sender resolves
//! the mode (there is no handshake) and hands it over with each segment.
//!
//! Deviations: the receive window is not advertised in ACKs (the sender
//! enforces a fixed receiver window).

use std::collections::VecDeque;

use crate::cc::EcnMode;
use crate::net::packet::{tcp_flags, SackBlocks, SackStore};
use crate::net::{Ecn, Packet, SackBlock, MAX_SACK_BLOCKS};
use crate::sim::Time;
use crate::tcp::app::SegmentMap;

#[derive(Debug, Clone, Default)]
pub struct ReceiverStats {
    /// Data packets that reached the receiver (duplicates included).
    pub data_received: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
    /// ACKs that carried a D-SACK block.
    pub dsacks_sent: u64,
    /// CE-marked data packets received (duplicates included).
    pub ce_received: u64,
}

/// A flow's ECN configuration as both ends use it, resolved by the sender
/// from the spec and its algorithm's needs ([`crate::cc::EcnUse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EcnConfig {
    pub mode: EcnMode,
    /// The codepoint of ECN-capable packets: data, and ACKs under AccECN.
    pub ect: Ecn,
    /// Classic feedback echoes each segment's CE state (DCTCP's receiver).
    pub precise_echo: bool,
    /// The algorithm needs ECN: classic retransmissions keep ECT.
    pub needs_ecn: bool,
}

/// Accurate ECN's initial value of the CE packet counter (draft section
/// 3.2.1; Linux TCP_ACCECN_CEP_INIT_OFFSET).
pub const ACE_INIT: u64 = 5;
/// CE marks since the last ACK that force an ACK (Linux TCP_ACCECN_ACE_MAX_DELTA).
const ACE_MAX_DELTA: u32 = 6;

/// The receiver's ECN state (Linux `tp->ecn_flags`, `received_ce`,
/// `received_ce_pending`, `prev_ecnfield`; DCTCP's `ce_state`, `prior_rcv_nxt`).
#[derive(Debug, Clone, Copy, Default)]
struct RxEcn {
    cfg: EcnConfig,
    /// TCP_ECN_DEMAND_CWR: ACKs carry ECE.
    demand_cwr: bool,
    /// Precise echo: the last ECN-capable segment was CE.
    ce_state: bool,
    prior_rcv_nxt: u64,
    /// TCP_ECN_SEEN: an ECN-capable segment has arrived.
    seen: bool,
    /// CE-marked segments received (AccECN r.cep less its initial 5).
    received_ce: u64,
    /// ... since the last ACK.
    ce_pending: u32,
    prev_field: Ecn,
}

/// What a segment's ECN processing asks of the ACK decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Force {
    No,
    /// `ICSK_ACK_NOW`: this segment is ACKed at once.
    Now,
    /// `tcp_enter_quickack_mode(sk, 2)` (an immediate ACK under the RFC policy).
    Quick,
}

mod linux_ack;
pub use linux_ack::{LinuxAck, LinuxAckConfig};

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
    /// D-SACK (RFC 2883) on: `dsack = true` on a SACK flow.
    dsack: bool,
    /// The duplicate range the next ACK reports first (`tp->duplicate_sack`,
    /// set by `tcp_dsack_set`).
    dsack_pending: Option<(u64, u64)>,
    /// `ack_policy = "linux"`: its state (boxed: off the default path).
    linux: Option<Box<LinuxAck>>,
    /// The flow's ECN configuration has been read (at the first segment).
    ecn_known: bool,
    /// ECN state, when the flow uses ECN (boxed: off the default path).
    ecn: Option<Box<RxEcn>>,
    /// Application bytes delivered in order.
    pub delivered_bytes: u64,
    /// Completion time of each file, by position in the flow's sorted file list.
    pub file_finish: Vec<Option<Time>>,
    next_file: usize,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(
        flow: u32,
        sack: bool,
        max_blocks: u8,
        ack_size: u32,
        delayed_ack: bool,
        delack_timeout: Time,
        n_files: usize,
    ) -> Self {
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
            dsack: false,
            dsack_pending: None,
            linux: None,
            ecn_known: false,
            ecn: None,
            delivered_bytes: 0,
            file_finish: vec![None; n_files],
            next_file: 0,
            stats: ReceiverStats::default(),
        }
    }

    /// Turns D-SACK on (RFC 2883); only SACK receivers send SACK blocks.
    pub fn with_dsack(mut self, on: bool) -> Self {
        self.dsack = on && self.sack;
        self
    }

    /// Uses Linux's ACK policy instead of the RFC one.
    pub fn with_linux_acks(mut self, cfg: LinuxAckConfig) -> Self {
        self.linux = Some(Box::new(LinuxAck::new(cfg)));
        self
    }

    /// The Linux ACK state, if that policy is on.
    pub fn linux(&self) -> Option<&LinuxAck> {
        self.linux.as_deref()
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

    /// A segment the receiver already has: counted, and reported in the
    /// next ACK's first SACK block when D-SACK is on (RFC 2883).
    fn note_duplicate(&mut self, seq: u64) {
        self.stats.duplicates += 1;
        if self.dsack {
            self.dsack_pending = Some((seq, seq + 1));
        }
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

    /// A data segment arrives at `now` (without ECN). Returns the ACK to
    /// send at once, if any; its SACK blocks go to `sacks`.
    #[inline]
    pub fn on_data(&mut self, now: Time, seq: u64, map: &SegmentMap, sacks: &mut SackStore) -> Option<Packet> {
        self.data(now, seq, Force::No, map, sacks)
    }

    /// Data packet `p` arrives at `now` on a flow with ECN configuration
    /// `ecn` (read at the first segment only, as a handshake would settle
    /// it; a reference, so that a flow without ECN never reads it): the
    /// ACKs to send at once go to `out` (with a precise echo, two when the
    /// CE state changes while an ACK is delayed).
    #[inline]
    pub fn on_segment(
        &mut self,
        now: Time,
        p: &Packet,
        ecn: &EcnConfig,
        map: &SegmentMap,
        sacks: &mut SackStore,
        out: &mut Vec<Packet>,
    ) {
        // A flow without ECN, after its first segment: the data path alone.
        if self.ecn_known && self.ecn.is_none() {
            if let Some(a) = self.data(now, p.seq, Force::No, map, sacks) {
                out.push(a);
            }
            return;
        }
        self.on_segment_ecn(now, p, ecn, map, sacks, out)
    }

    /// [`Receiver::on_segment`] for the first segment and for flows with ECN.
    #[inline(never)]
    fn on_segment_ecn(
        &mut self,
        now: Time,
        p: &Packet,
        ecn: &EcnConfig,
        map: &SegmentMap,
        sacks: &mut SackStore,
        out: &mut Vec<Packet>,
    ) {
        if !self.ecn_known {
            self.ecn_known = true;
            if ecn.mode != EcnMode::Off {
                // prev_field: the SYN's codepoint (Linux `prev_ecnfield = syn_ect_rcv`).
                self.ecn = Some(Box::new(RxEcn { cfg: *ecn, prev_field: ecn.ect, ..RxEcn::default() }));
            }
        }
        let Some(mut e) = self.ecn.take() else {
            if let Some(a) = self.data(now, p.seq, Force::No, map, sacks) {
                out.push(a);
            }
            return;
        };
        let dup = p.seq < self.rcv_nxt;
        let force = self.ecn_data(&mut e, p, out);
        self.ecn = Some(e);
        if let Some(a) = self.data(now, p.seq, force, map, sacks) {
            out.push(a);
        }
        let rcv_nxt = self.rcv_nxt;
        if let Some(e) = self.ecn.as_deref_mut() {
            if e.cfg.mode == EcnMode::Classic && e.cfg.precise_echo && p.ecn().capable() && !dup {
                // dctcp_ece_ack_update: `*prior_rcv_nxt = tp->rcv_nxt` after the segment.
                e.prior_rcv_nxt = rcv_nxt;
            }
        }
    }

    /// The ECN processing of a data segment, before its ACK decision;
    /// may emit the precise echo's ACK of the data before it.
    fn ecn_data(&mut self, e: &mut RxEcn, p: &Packet, out: &mut Vec<Packet>) -> Force {
        let cfg = e.cfg;
        let is_ce = p.ecn() == Ecn::Ce;
        if is_ce {
            self.stats.ce_received += 1;
        }
        let mut force = Force::No;
        match cfg.mode {
            EcnMode::Off => {}
            EcnMode::AccEcn => {
                if is_ce {
                    e.received_ce += 1;
                    e.ce_pending = (e.ce_pending + 1).min(15);
                }
                let edge = e.prev_field != p.ecn();
                if edge || is_ce {
                    e.prev_field = p.ecn();
                }
                if edge || e.ce_pending >= ACE_MAX_DELTA {
                    force = Force::Now;
                }
            }
            EcnMode::Classic => {
                // tcp_ecn_accept_cwr, at the start of tcp_data_queue.
                if p.tcp_flags() & tcp_flags::CWR != 0 {
                    e.demand_cwr = false;
                    force = Force::Now;
                }
                if p.seq < self.rcv_nxt {
                    return force; // the retransmit branch: no tcp_ecn_check_ce
                }
                if !p.ecn().capable() {
                    // "Funny extension": probably a retransmission (Linux policy only).
                    if e.seen && self.linux.is_some() && force == Force::No {
                        force = Force::Quick;
                    }
                    return force;
                }
                e.seen = true;
                if cfg.precise_echo {
                    if is_ce != e.ce_state {
                        if self.delack_deadline.is_some() {
                            // "If an ACK was delayed, send that first to reflect the prior CE state."
                            let mut a = Packet::ack(e.prior_rcv_nxt, self.ack_size);
                            if e.ce_state {
                                a.set_tcp_flags(a.tcp_flags() | tcp_flags::ECE);
                            }
                            self.stats.acks_sent += 1;
                            out.push(a);
                        }
                        force = Force::Now;
                    }
                    e.ce_state = is_ce;
                    e.demand_cwr = is_ce;
                } else if is_ce && !e.demand_cwr {
                    // "Better not delay acks, sender can have a very low cwnd".
                    e.demand_cwr = true;
                    if force == Force::No {
                        force = Force::Quick;
                    }
                }
            }
        }
        force
    }

    /// A data segment's reliability and ACK decision.
    #[inline]
    fn data(&mut self, now: Time, seq: u64, force: Force, map: &SegmentMap, sacks: &mut SackStore) -> Option<Packet> {
        if self.linux.is_some() {
            return self.on_data_linux(now, seq, force, map, sacks);
        }
        self.stats.data_received += 1;
        let immediate;
        if seq < self.rcv_nxt {
            self.note_duplicate(seq);
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
                self.note_duplicate(seq);
            }
            // The recent blocks feed SACK blocks only: without SACK the two
            // to five binary searches of the held ranges are not needed.
            if self.sack {
                self.note_recent(seq);
            }
            immediate = true;
        }
        if immediate || force != Force::No {
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

    /// A data segment arrives under Linux's ACK policy: `tcp_data_queue`
    /// (or `tcp_validate_incoming`'s `tcp_send_dupack` for a segment wholly
    /// below `rcv_wup`), then `__tcp_ack_snd_check`.
    #[inline(never)]
    fn on_data_linux(
        &mut self,
        now: Time,
        seq: u64,
        force: Force,
        map: &SegmentMap,
        sacks: &mut SackStore,
    ) -> Option<Packet> {
        let mut l = self.linux.take().expect("linux ACK policy");
        let ack = self.linux_data(&mut l, now, seq, force, map, sacks);
        self.linux = Some(l);
        ack
    }

    fn linux_data(
        &mut self,
        l: &mut LinuxAck,
        now: Time,
        seq: u64,
        force: Force,
        map: &SegmentMap,
        sacks: &mut SackStore,
    ) -> Option<Packet> {
        self.stats.data_received += 1;
        if seq + 1 < l.rcv_wup {
            // tcp_sequence: end_seq before rcv_wup -> tcp_send_dupack: quick-ACK
            // mode, D-SACK, an ACK at once. No ACK was scheduled for this
            // segment, so the ACK spends a credit only if one was owed before.
            self.stats.duplicates += 1;
            self.dsack_pending = None;
            l.enter_quickack_mode(l.cfg.max_quickacks);
            if self.dsack {
                self.dsack_pending = Some((seq, seq + 1));
            }
            let scheduled = self.delack_deadline.is_some();
            return Some(self.linux_ack(l, sacks, scheduled));
        }
        // tcp_data_queue: "tp->rx_opt.dsack = 0".
        self.dsack_pending = None;
        let mut ack_now = false; // ICSK_ACK_NOW
        if seq == self.rcv_nxt {
            // In sequence: tcp_queue_rcv, tcp_event_data_recv, tcp_ofo_queue.
            self.rcv_nxt += 1;
            l.event_data_recv(now);
            if let Some(&(s, e)) = self.ooo.front() {
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo.pop_front();
                }
                // "RFC5681. 4.2. SHOULD send immediate ACK, when gap in queue
                // is filled": Linux forces it when the queue empties; a
                // partial fill is ACKed at once below (queue not empty).
                ack_now = self.ooo.is_empty();
            }
            self.deliver(now, map);
        } else if seq < self.rcv_nxt {
            // "A retransmit, 2nd most common case. Force an immediate ack."
            self.note_duplicate(seq);
            l.enter_quickack_mode(l.cfg.max_quickacks);
        } else {
            // tcp_data_queue_ofo: no tcp_event_data_recv and, since Linux
            // 4.18, no quick-ACK mode; a segment already held is D-SACKed.
            if !self.insert_ooo(seq) {
                self.note_duplicate(seq);
            }
            if self.sack {
                self.note_recent(seq);
            }
        }
        // ECN: ICSK_ACK_NOW, or tcp_ecn_check_ce's quick-ACK mode (at the
        // end of tcp_event_data_recv, after its `ato` update).
        match force {
            Force::No => {}
            Force::Now => ack_now = true,
            Force::Quick => l.enter_quickack_mode(2),
        }
        // __tcp_ack_snd_check(sk, ofo_possible = 1). "More than one full
        // frame received": rcv_nxt - rcv_wup > rcv_mss, in bytes (a short
        // last segment of a file counts as what it carries). The window-update
        // half of that test is left out: the receive window is fixed.
        let unacked_bytes = map.bytes_before(self.rcv_nxt) - map.bytes_before(l.rcv_wup);
        if unacked_bytes > map.full as u64 || l.in_quickack_mode() || ack_now || !self.ooo.is_empty() {
            // The last term: out-of-order data is ACKed at once (without SACK
            // always; with SACK Linux may compress these ACKs, which is not
            // modelled: net.ipv4.tcp_comp_sack_nr = 0).
            return Some(self.linux_ack(l, sacks, true));
        }
        match l.delayed_ack_deadline(now, self.delack_deadline) {
            Some(t) => {
                self.delack_deadline = Some(t);
                None
            }
            None => Some(self.linux_ack(l, sacks, true)),
        }
    }

    /// `tcp_send_ack` under Linux's policy: the ACK, then
    /// `tcp_event_ack_sent` (a quick-ACK credit, the delayed-ACK timer
    /// cleared) and `tcp_select_window`'s `rcv_wup = rcv_nxt`.
    fn linux_ack(&mut self, l: &mut LinuxAck, sacks: &mut SackStore, scheduled: bool) -> Packet {
        let ack = self.make_ack(sacks);
        l.dec_quickack_mode(scheduled);
        l.rcv_wup = self.rcv_nxt;
        ack
    }

    /// The delayed-ACK timer fires; returns the ACK if one is owed.
    pub fn on_delack_timer(&mut self, now: Time, sacks: &mut SackStore) -> Option<Packet> {
        match self.delack_deadline {
            Some(d) if d <= now => {
                if let Some(mut l) = self.linux.take() {
                    // tcp_delack_timer_handler: "Delayed ACK missed: inflate
                    // ATO" (never pingpong here), then send the ACK.
                    l.ato = (l.ato << 1).min(l.cfg.rto);
                    let ack = self.linux_ack(&mut l, sacks, true);
                    self.linux = Some(l);
                    return Some(ack);
                }
                Some(self.make_ack(sacks))
            }
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
        if let Some(e) = self.ecn.as_deref_mut() {
            match e.cfg.mode {
                EcnMode::Off => {}
                EcnMode::Classic => {
                    if e.demand_cwr {
                        ack.set_tcp_flags(ack.tcp_flags() | tcp_flags::ECE);
                    }
                }
                EcnMode::AccEcn => {
                    // tcp_accecn_set_ace; pure ACKs are ECN-capable under AccECN.
                    ack.set_tcp_flags(
                        ack.tcp_flags() | (((e.received_ce + ACE_INIT) & 7) as u8) << tcp_flags::ACE_SHIFT,
                    );
                    ack.set_ecn(e.cfg.ect);
                    e.ce_pending = 0;
                }
            }
        }
        if self.sack && (!self.ooo.is_empty() || self.dsack_pending.is_some()) {
            let mut b = SackBlocks::NONE;
            let rcv_nxt = self.rcv_nxt;
            // RFC 2883 section 4 / tcp_dsack_set: the D-SACK block first. It
            // may equal the SACK block that holds it, so the duplicate check
            // below starts after it. A block below the ACK has a negative
            // offset (SackBlock: modulo 2^32, as TCP sequence numbers).
            let mut first = 0;
            if let Some((s, e)) = self.dsack_pending.take() {
                b.blocks[0] = SackBlock { start: s.wrapping_sub(rcv_nxt) as u32, len: (e - s) as u32 };
                b.n = 1;
                first = 1;
                self.stats.dsacks_sent += 1;
            }
            let push = |r: (u64, u64), b: &mut SackBlocks| {
                let blk = SackBlock {
                    start: (r.0 - rcv_nxt).min(i32::MAX as u64) as u32,
                    len: (r.1 - r.0).min(u32::MAX as u64) as u32,
                };
                if !b.blocks[first..b.n as usize].contains(&blk) {
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
mod tests;
