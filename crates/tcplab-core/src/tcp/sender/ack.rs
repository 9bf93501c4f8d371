//! ACK processing: the cumulative ACK, the SACK scoreboard, D-SACK, RTT
//! and rate samples, and the hand-off to the congestion control and to
//! loss recovery.

use super::{CaState, Sender, Timer, RACK_TIMER_SLACK, RETX, RETX_OUT, SACKED};
use crate::cc::{AckSample, EcnMode};
use crate::net::packet::SackBlocks;
use crate::net::Packet;
use crate::sim::time::{from_secs, to_secs, Time};
use crate::tcp::app::SegmentMap;

impl Sender {
    /// Marks `[s, e)` SACKed; returns (newly SACKed, newest newly SACKed
    /// never-retransmitted segment).
    fn sack_range(&mut self, now: Time, s: u64, e: u64) -> (u64, Option<u64>) {
        let s = s.max(self.snd_una);
        let e = e.min(self.high_data);
        if s >= e {
            return (0, None);
        }
        let mut i = self.sacked.partition_point(|r| r.1 < s);
        let mut cur = s;
        let (mut lo, mut hi) = (s, e);
        let mut newly = 0;
        let mut newest = None;
        let first = i;
        let mut mark = |this: &mut Self, a: u64, b: u64| {
            for q in a..b {
                if this.cfg.rack {
                    this.rack_advance(now, q, this.meta.flags(q));
                }
                if this.cfg.frto && this.meta.flags(q) & RETX == 0 && q < this.recover {
                    this.orig_acked = true;
                }
                if let Some(r) = this.rate.as_mut() {
                    r.on_delivered(q, this.meta.sent(q), this.meta.flags(q) & RETX != 0);
                }
                let mut f = this.meta.flags(q) | SACKED;
                if f & RETX_OUT != 0 {
                    f &= !RETX_OUT;
                    this.retrans_out -= 1;
                }
                this.meta.set_flags(q, f);
                if f & RETX == 0 {
                    newest = Some(q);
                }
            }
            newly += b - a;
        };
        while i < self.sacked.len() && self.sacked[i].0 <= e {
            let (rs, re) = self.sacked[i];
            if cur < rs {
                mark(self, cur, rs);
            }
            cur = cur.max(re);
            lo = lo.min(rs);
            hi = hi.max(re);
            i += 1;
        }
        if cur < e {
            mark(self, cur, e);
        }
        self.sacked.drain(first..i);
        self.sacked.insert(first, (lo, hi));
        self.sacked_out += newly;
        (newly, newest)
    }

    /// An ACK arrives at `now`, with its SACK blocks (if any).
    pub fn on_ack(&mut self, now: Time, ack: &Packet, sack: &SackBlocks, map: &SegmentMap, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        let a = ack.seq;
        if a > self.high_data {
            return; // acknowledges data never sent: ignore (RFC 9293)
        }
        let old_una = self.snd_una;
        let after_timeout = self.state == CaState::Loss;
        self.orig_acked = false;
        let prior_packets = self.high_data - old_una;
        let (lost_total_before, prior_in_flight) = match self.rate.as_mut() {
            Some(r) => {
                r.begin_ack();
                (self.lost_total, self.in_flight())
            }
            None => (0, 0),
        };
        let mut acked = 0u64;
        let mut cum_acked = 0u64;
        let mut sample_seq: Option<u64> = None;
        if a > old_una {
            let mut karn = false;
            let mut newest_unsacked = None;
            let mut sacked_below = 0;
            for q in old_una..a {
                let f = self.meta.flags(q);
                if f & SACKED != 0 {
                    sacked_below += 1;
                } else {
                    if self.cfg.rack {
                        self.rack_advance(now, q, f);
                    }
                    if self.cfg.frto && f & RETX == 0 && q < self.recover {
                        self.orig_acked = true;
                    }
                    if let Some(r) = self.rate.as_mut() {
                        r.on_delivered(q, self.meta.sent(q), f & RETX != 0);
                    }
                    acked += 1;
                    newest_unsacked = Some(q);
                }
                if f & RETX != 0 {
                    karn = true;
                }
                if f & RETX_OUT != 0 {
                    self.retrans_out -= 1;
                }
                self.meta.set_flags(q, 0);
            }
            cum_acked = a - old_una;
            if !karn {
                sample_seq = newest_unsacked;
            }
            self.sacked_out -= sacked_below;
            if !self.sacked.is_empty() {
                let k = self.sacked.partition_point(|r| r.1 <= a);
                self.sacked.drain(..k);
                if let Some(r) = self.sacked.front_mut() {
                    if r.0 < a {
                        r.0 = a;
                    }
                }
            }
            self.prev_una = old_una;
            self.snd_una = a;
            self.rto_retransmits = 0;
            if self.snd_nxt < a {
                self.snd_nxt = a;
            }
            self.dupacks = 0;
        } else if a == old_una && self.high_data > old_una && !self.sack() {
            self.dupacks += 1;
        }
        let duplicate = a <= old_una;
        let lost_before = self.lost_high.max(self.snd_una);
        let mut sacked_new = 0;
        if self.sack() && sack.n > 0 {
            let mut newly_sacked = 0;
            // A D-SACK block reports a duplicate, not new data: count it and
            // keep it off the scoreboard.
            let dsack = is_dsack(sack, a);
            if dsack {
                self.stats.dsacks += sack.blocks[0].len as u64;
                if self.undo.marker.is_some() {
                    let (s0, e0) = sack.ranges(a).next().unwrap_or((0, 0));
                    self.undo_dsack(s0, e0, old_una);
                }
            }
            for (s, e) in sack.ranges(a).skip(dsack as usize) {
                let (n, newest) = self.sack_range(now, s, e);
                newly_sacked += n;
                acked += n;
                if let Some(q) = newest {
                    if sample_seq.is_none_or(|p| q > p) {
                        sample_seq = Some(q);
                    }
                }
            }
            if !self.cfg.rack {
                // RFC 6675 IsLost; a RACK sender marks losses by time alone
                // (Linux 6.x runs `tcp_update_scoreboard` only without RACK).
                self.update_lost_high();
            }
            // RFC 6675 section 2: with SACK, a duplicate ACK is one that
            // SACKs data not SACKed before (an ACK answering a duplicate
            // segment is none).
            if a == old_una && newly_sacked > 0 {
                self.dupacks += 1;
            }
            sacked_new = newly_sacked;
        }
        // Linux counts deliveries (sacktag, clean_rtx_queue) before it marks losses.
        self.delivered += acked;
        if self.ecn.mode != EcnMode::Off {
            self.ack_ece = self.ecn_feedback(ack, a, old_una, acked, sacked_new);
            self.cc.on_ecn(self.stats.ce_delivered, self.ack_ece);
        }
        if self.lost_high < self.snd_una {
            self.lost_high = self.snd_una;
        }
        // RACK (Linux `tcp_rack_mark_lost`): runs when this ACK delivered
        // something; a segment not yet overdue arms the reordering timer in
        // place of the RTO.
        let mut reo_armed = false;
        if self.cfg.rack && std::mem::take(&mut self.rack.advanced) {
            if let Some(wait) = self.rack_detect_loss(now) {
                self.rto_deadline = Some(now + wait + from_secs(RACK_TIMER_SLACK));
                self.timer = Timer::Reo;
                reo_armed = true;
            }
        }
        if self.tlp_high.is_some() {
            self.process_tlp_ack(now, a, a > old_una || sacked_new > 0);
        }
        // Segments this ACK marked lost by moving the lost boundary, for
        // PRR (lost retransmissions are counted in `lost_total` only).
        let newly_lost = self.count_lost_since(now, lost_before);
        if a > old_una {
            if let Some(c) = self.classifier.as_mut() {
                c.on_ack(to_secs(now), self.w.cwnd);
            }
        }
        let rtt = sample_seq.map(|q| {
            let r = to_secs(now - self.meta.sent(q));
            self.rtt.on_sample(r);
            r
        });
        let mut sample = AckSample {
            now: to_secs(now),
            acked: acked as u32,
            cum_acked: cum_acked as u32,
            rtt,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min_rtt,
            in_flight: self.in_flight(),
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            delivered: self.delivered,
            cwnd_limited: self.cwnd_limited,
            duplicate,
        };
        self.cc.on_ack_sample(&self.w, &sample);
        self.note_duplicate(now, duplicate);

        // Linux `tcp_fastretrans_alert` step D: "CWR is to be held
        // something *above* high_seq is ACKed for CWR bit to reach receiver".
        if self.cwr && self.snd_una > self.cwr_high {
            self.end_cwr(now);
        }
        let mut grow = if self.sack() {
            self.sack_recovery(now, a > old_una, acked, newly_lost, map, out)
        } else {
            self.dupack_recovery(now, a > old_una, cum_acked, map, out)
        };
        if self.ecn.mode != EcnMode::Off {
            grow = self.ecn_response(now, grow, acked, newly_lost, a > old_una);
        }
        // Linux `tcp_rate_gen` then `cong_control` (BBR's `bbr_main`); an
        // ACK below snd_una (`old_ack`) or with nothing outstanding before
        // it (`no_queue`) reaches neither.
        let rate_ack = a >= old_una && prior_packets > 0;
        if let (true, Some(r)) = (rate_ack, self.rate.as_mut()) {
            let losses = self.lost_total - lost_total_before;
            let rs = r.generate_ce(
                now,
                self.delivered,
                self.lost_total,
                acked,
                losses,
                self.rtt.min_rtt,
                rtt,
                prior_in_flight,
                self.stats.ce_delivered,
            );
            let mut c = self.conn(now);
            self.cc.cong_control(&mut self.w, &rs, &mut c);
            if let Some(r) = self.rate.as_mut() {
                r.app_limited = c.app_limited;
            }
        } else if grow && a > old_una && !self.cc_controls_window() {
            sample.in_flight = self.in_flight();
            if after_timeout && !self.sack() {
                // RFC 3465 2.3: after a timeout, at most one segment of
                // growth per ACK ("L=1*SMSS"). Go-back-N's ACKs jump over
                // data the receiver held before the timeout; "these big ACKs
                // are not an indication that the network has handled a large
                // amount of data". A SACK sender counted that data when it
                // was SACKed, so its `acked` already leaves it out.
                sample.acked = sample.acked.min(1);
                sample.cum_acked = sample.cum_acked.min(1);
            }
            self.cc.on_ack(&mut self.w, &sample);
        }

        // RFC 6298 5.2/5.3: stop the timer when all is acknowledged, restart it on new data.
        if self.snd_una >= self.high_data {
            self.rto_deadline = None;
        } else if a > old_una && !self.hold_timer && !reo_armed {
            // Linux `tcp_set_xmit_timer`: the probe timer if one may be
            // scheduled, else the RTO.
            if !(self.cfg.tlp && self.schedule_loss_probe(now, true)) {
                self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
                self.timer = Timer::Rto;
            }
        }
        self.hold_timer = false;
        self.ack_ece = false;
        self.update_linux_pacing();
        self.transmit(now, map, out);
    }
}

/// RFC 2883 section 4 (Linux `tcp_check_dsack`): the first SACK block of an
/// ACK is a D-SACK block when it lies below the ACK's cumulative
/// acknowledgement `ack`, or within the second block.
fn is_dsack(sack: &SackBlocks, ack: u64) -> bool {
    let mut r = sack.ranges(ack);
    match r.next() {
        Some((s0, e0)) => s0 < ack || r.next().is_some_and(|(s1, e1)| s1 <= s0 && e0 <= e1),
        None => false,
    }
}
