//! The sender's single timer: RACK's reordering timer and loss detection,
//! the tail loss probe, and the retransmission timeout.

use super::{sent_before, CaState, Sender, Timer, INFINITE_SSTHRESH, RETX, RETX_OUT, TLP_DELACK_ALLOWANCE, TLP_SLACK};
use crate::cc::{EcnMode, LossEvent};
use crate::net::Packet;
use crate::sim::time::{from_secs, to_secs, Time};
use crate::tcp::app::SegmentMap;
use crate::trace::RetransmitCause;

impl Sender {
    /// RACK's per-segment update (RFC 8985 6.2 step 2, Linux
    /// `tcp_rack_advance`) for a segment newly acknowledged or SACKed, with
    /// its flags before this ACK. A retransmitted segment delivered sooner
    /// than min_rtt after its resend may be the original's delivery and
    /// is skipped.
    pub(super) fn rack_advance(&mut self, now: Time, q: u64, flags: u8) {
        let xmit = self.meta.sent(q);
        let rtt = now - xmit;
        if flags & RETX != 0 && to_secs(rtt) < self.rtt.min_rtt {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if !self.rack.valid || sent_before(self.rack.xmit, self.rack.seq, xmit, q) {
            self.rack.valid = true;
            self.rack.xmit = xmit;
            self.rack.seq = q;
        }
    }

    /// RACK's reordering window (Linux `tcp_rack_reo_wnd`). tcplab's paths
    /// are FIFO, so no reordering is ever seen (`reord_seen = 0`): zero in
    /// recovery or once DupThresh segments are SACKed, else min_rtt / 4
    /// (at most srtt).
    fn rack_reo_wnd(&self) -> Time {
        if self.state != CaState::Open || self.sacked_out >= self.cfg.dupthresh as u64 || !self.rtt.min_rtt.is_finite()
        {
            return 0;
        }
        from_secs((self.rtt.min_rtt / 4.0).min(self.rtt.srtt))
    }

    /// RACK loss detection (RFC 8985 6.2 step 5, Linux
    /// `tcp_rack_detect_loss`): a segment sent before the most recently
    /// sent delivered one is lost once RACK.rtt + reo_wnd has passed since
    /// its (last) transmission; this includes retransmissions, whose loss
    /// no other rule detects. Returns how long until the last segment
    /// still waiting becomes overdue (Linux arms its timer for the maximum).
    pub(super) fn rack_detect_loss(&mut self, now: Time) -> Option<Time> {
        if !self.rack.valid {
            return None;
        }
        let limit = self.rack.rtt + self.rack_reo_wnd();
        let (rx, rq) = (self.rack.xmit, self.rack.seq);
        let mut wait: Option<Time> = None;
        // Retransmissions in flight, oldest first.
        while let Some(&q) = self.rtx_order.front() {
            let f = if q >= self.snd_una { self.meta.flags(q) } else { 0 };
            if f & RETX_OUT == 0 {
                self.rtx_order.pop_front(); // delivered, or already judged lost
                continue;
            }
            let t = self.meta.sent(q);
            if !sent_before(t, q, rx, rq) {
                break;
            }
            let age = now - t;
            if age < limit {
                wait = Some(limit - age);
                break;
            }
            self.meta.set_flags(q, f & !RETX_OUT);
            self.retrans_out -= 1;
            self.packet_lost(now, q); // a lost retransmission (Linux `tcp_mark_skb_lost`)
            self.rtx_next = self.rtx_next.min(q);
            self.rtx_order.pop_front();
        }
        // First transmissions above the lost boundary: sent in sequence
        // order, so those overdue form a prefix.
        let mut q = self.lost_high.max(self.snd_una);
        while q < self.high_data {
            let i = self.sacked.partition_point(|r| r.1 <= q);
            if i < self.sacked.len() && self.sacked[i].0 <= q {
                q = self.sacked[i].1;
                continue;
            }
            let t = self.meta.sent(q);
            if !sent_before(t, q, rx, rq) {
                break;
            }
            let age = now - t;
            if age < limit {
                // The latest segment still waiting: the one just below the
                // SACKed range (or segment) RACK's record belongs to.
                let j = self.sacked.partition_point(|r| r.1 <= rq);
                let start = if j < self.sacked.len() && self.sacked[j].0 <= rq { self.sacked[j].0 } else { rq };
                let last = start.saturating_sub(1);
                let tl = self.meta.sent(last);
                let rem = if last > q && last < self.high_data && sent_before(tl, last, rx, rq) && now - tl < limit {
                    limit - (now - tl)
                } else {
                    limit - age
                };
                wait = Some(wait.map_or(rem, |w| w.max(rem)));
                break;
            }
            let f = self.meta.flags(q);
            if f & RETX_OUT != 0 {
                self.meta.set_flags(q, f & !RETX_OUT);
                self.retrans_out -= 1;
            }
            q += 1;
            self.lost_high = q;
        }
        wait
    }

    /// RACK's reordering timer fired (Linux `tcp_rack_reo_timeout`): mark
    /// what is now overdue; losses found in the Open state start fast
    /// recovery (PRR counts the timer as one delivery, as the kernel's
    /// `tcp_cwnd_reduction(sk, 1, 0, 0)`); then the RTO is re-armed.
    fn rack_reo_timeout(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        let prior = self.in_flight();
        let lost_before = self.lost_high.max(self.snd_una);
        self.rack_detect_loss(now);
        self.count_lost_since(now, lost_before);
        if self.in_flight() != prior && self.state == CaState::Open && self.lost_high > self.snd_una {
            self.enter_fast_recovery(now);
            if self.cc_controls_window() {
                // `cong_control` sets the window on the next ACK.
            } else if self.cfg.prr && self.hold.is_none() {
                self.prr_reduce(1, 0, false);
            } else {
                self.w.cwnd = self.recovery_target();
            }
        }
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
        self.transmit(now, map, out);
    }

    /// Arms the tail loss probe's timer (RFC 8985 7.2, Linux
    /// `tcp_schedule_loss_probe`) in the Open state with data outstanding:
    /// PTO = 2 SRTT plus 200 ms with one segment in flight (a delayed ACK)
    /// or 2 ms otherwise, 1 s without an RTT sample, and never later than
    /// the RTO would fire (a full RTO from now when `advancing_rto`, the
    /// ACK having just restarted it). Returns whether it was armed.
    pub(super) fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        let packets_out = self.high_data - self.snd_una;
        // Not in CWR either (Linux: `icsk_ca_state != TCP_CA_Open`).
        if packets_out == 0 || self.state != CaState::Open || self.cwr {
            return false;
        }
        let mut pto = if self.rtt.srtt > 0.0 {
            2.0 * self.rtt.srtt + if packets_out == 1 { TLP_DELACK_ALLOWANCE } else { TLP_SLACK }
        } else {
            1.0
        };
        let rto_left = if advancing_rto || self.timer != Timer::Rto {
            Some(self.rtt.rto())
        } else {
            self.rto_deadline.map(|d| to_secs(d.saturating_sub(now)))
        };
        if let Some(r) = rto_left.filter(|&r| r > 0.0) {
            pto = pto.min(r);
        }
        self.rto_deadline = Some(now + from_secs(pto));
        self.timer = Timer::Tlp;
        true
    }

    /// The probe timer fired (Linux `tcp_send_loss_probe`): with no probe
    /// outstanding, send one new segment whatever cwnd says, or else resend
    /// the highest segment sent; remember `snd_nxt` to judge the probe by.
    /// Then the RTO is armed from now.
    fn send_loss_probe(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.tlp_high.is_none() {
            self.tlp_retrans = false;
            let new_data = self.snd_nxt == self.high_data && self.may_send_new();
            let probe = if new_data {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                Some((seq, None))
            } else if self.high_data > self.snd_una {
                self.tlp_retrans = true;
                Some((self.high_data - 1, Some(RetransmitCause::Tlp)))
            } else {
                None
            };
            if let Some((seq, cause)) = probe {
                self.emit(now, seq, cause, map, out);
                self.tlp_high = Some(self.snd_nxt);
                self.stats.tlp_probes += 1;
            }
        }
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
    }

    /// An ACK at or above the probe's `tlp_high` (Linux
    /// `tcp_process_tlp_ack`): a probe of new data, or a resend answered by
    /// a pure duplicate ACK (both copies arrived), found no loss; a resend
    /// followed by an ACK beyond `tlp_high` repaired one: the window is
    /// reduced at once (CWR entered and completed: cwnd = ssthresh).
    /// `progress`: the ACK advanced `snd_una` or SACKed new data.
    pub(super) fn process_tlp_ack(&mut self, now: Time, ack: u64, progress: bool) {
        let Some(high) = self.tlp_high else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high = None;
        } else if ack > high {
            self.tlp_high = None;
            if self.state == CaState::Open {
                let flight = self.flight_size();
                self.w.ssthresh = self.cc.ssthresh(&self.w, LossEvent::FastRecovery, flight, to_secs(now));
                if self.ecn.mode == EcnMode::Classic {
                    self.cwr_pending = true; // `tcp_init_cwnd_reduction`
                }
                // `tcp_set_ca_state(CWR)`, `tcp_end_cwnd_reduction` (which leaves
                // a `cong_control` window alone), `tcp_try_keep_open`: Open.
                if !self.cc_controls_window() {
                    self.report_passing_state(now, CaState::Cwr);
                    if self.w.ssthresh < INFINITE_SSTHRESH {
                        self.w.cwnd = self.w.ssthresh;
                    }
                    self.cc.on_recovery_exit(&mut self.w, to_secs(now));
                    self.disorder = false;
                    self.report_state(now, false);
                }
                self.stats.tlp_recoveries += 1;
            }
        } else if !progress {
            self.tlp_high = None;
        }
    }

    /// Linux `tcp_timeout_mark_lost` for a SACK sender: every segment not
    /// SACKed is lost, retransmissions still in flight included (lost
    /// again: counted, as `tcp_mark_skb_lost` does).
    fn timeout_mark_lost(&mut self, now: Time) {
        let before = self.lost_high.max(self.snd_una);
        for q in self.snd_una..self.high_data {
            let f = self.meta.flags(q);
            if f & RETX_OUT != 0 {
                self.meta.set_flags(q, f & !RETX_OUT);
                if q < before {
                    self.packet_lost(now, q);
                }
            }
        }
        self.retrans_out = 0;
        self.rtx_order.clear();
        self.lost_high = self.high_data;
        self.count_lost_since(now, before);
        self.rtx_next = self.snd_una;
    }

    /// The retransmission timer fired and its deadline has passed.
    pub fn on_timeout(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.snd_una >= self.high_data {
            self.rto_deadline = None;
            return;
        }
        match std::mem::take(&mut self.timer) {
            Timer::Reo => return self.rack_reo_timeout(now, map, out),
            Timer::Tlp => return self.send_loss_probe(now, map, out),
            Timer::Rto => {}
        }
        self.stats.timeouts += 1;
        // Linux `tcp_enter_loss` marks the losses first, so a window-
        // controlling algorithm hears of each before `ssthresh` and
        // `set_state`; the other senders keep the RFC order (marks last).
        let mark_first = self.sack() && self.cc_controls_window();
        if mark_first {
            self.timeout_mark_lost(now);
        }
        // RFC 5681: "when ... the given segment has already been retransmitted
        // by way of the retransmission timer at least once, the value of
        // ssthresh is held constant"; inside fast recovery it is already reduced.
        // F-RTO judges a timeout from Open or a repeated one (Linux `tcp_enter_loss`).
        self.frto = self.cfg.frto && (self.state == CaState::Open || self.rto_retransmits > 0);
        // Linux `tcp_enter_loss` from a CWR whose window is not yet
        // acknowledged (`after(high_seq, snd_una)`): no new ssthresh, no undo.
        let in_cwr = std::mem::take(&mut self.cwr) && self.cwr_high > self.snd_una;
        if self.cfg.undo
            && ((self.state == CaState::Open && !in_cwr) || (self.state == CaState::Loss && self.rto_retransmits == 0))
        {
            self.undo_init(self.current_ssthresh());
        }
        if self.ecn.mode == EcnMode::Classic {
            self.cwr_pending = true; // `tcp_enter_loss`: `tcp_ecn_queue_cwr`
        }
        if self.is_congestion(now, true) {
            if self.rto_retransmits == 0 && self.state != CaState::Recovery && !in_cwr {
                let flight = self.flight_size();
                self.w.ssthresh = self.cc.ssthresh(&self.w, LossEvent::Timeout, flight, to_secs(now));
            }
            self.w.cwnd = 1.0;
            self.cc.on_rto(&mut self.w, to_secs(now));
        } else if let Some(h) = self.hold {
            // Judged not congestion: keep the window (the held one if this
            // timeout interrupts an ignored recovery) and tell cc nothing.
            self.w.cwnd = h;
        }
        self.hold = None;
        self.inflation = 0.0;
        self.rto_retransmits += 1;
        self.tlp_high = None; // Linux `tcp_retransmit_timer`
        self.state = CaState::Loss;
        self.disorder = false;
        // Linux `tcp_enter_loss` calls `set_state` on every timeout.
        self.report_state(now, true);
        self.recover = self.high_data;
        self.last_cut_by_rto = true;
        self.dupacks = 0;
        if !self.sack() {
            self.snd_nxt = self.snd_una;
        } else if !mark_first {
            self.timeout_mark_lost(now);
        }
        self.rtt.on_timeout();
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.rto_resend_pending = true;
        self.transmit(now, map, out);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        }
    }
}
