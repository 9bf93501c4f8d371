//! Loss recovery: entering and leaving fast recovery (Reno, NewReno,
//! SACK), PRR, and Linux's undo and F-RTO.

use super::{CaState, Prr, Sender, Timer, Undo, RETX, RETX_OUT};
use crate::cc::knn::LossVerdict;
use crate::cc::{EcnMode, LossEvent};
use crate::net::Packet;
use crate::sim::time::{from_secs, to_secs, Time};
use crate::spec::{DupAckGuard, Recovery};
use crate::tcp::app::SegmentMap;
use crate::trace::RetransmitCause;

impl Sender {
    /// Asks the loss classifier, if any, whether a loss event is congestion
    /// (true: reduce as usual).
    pub(super) fn is_congestion(&mut self, now: Time, timeout: bool) -> bool {
        let Some(c) = self.classifier.as_mut() else {
            return true;
        };
        self.stats.loss_events += 1;
        match c.on_loss(to_secs(now), self.w.cwnd, timeout) {
            LossVerdict::Congestion => true,
            LossVerdict::NotCongestion => {
                self.stats.loss_events_ignored += 1;
                false
            }
        }
    }

    /// The window fast recovery works towards: ssthresh, or the held window
    /// when the classifier judged the loss not congestion.
    #[inline]
    pub(super) fn recovery_target(&self) -> f64 {
        self.hold.unwrap_or(self.w.ssthresh)
    }

    pub(super) fn enter_fast_recovery(&mut self, now: Time) {
        // Linux `tcp_enter_recovery` from CWR (`tcp_in_cwnd_reduction`):
        // the window is already being reduced for this window of data: no
        // new ssthresh, PRR goes on; and nothing to undo to after an ECN
        // echo (prior_ssthresh = 0). (`recover` is set as usual; Linux
        // keeps CWR's high_seq.)
        let from_cwr = std::mem::take(&mut self.cwr);
        if self.cfg.undo {
            // Linux `tcp_enter_recovery`: prior_ssthresh, then `tcp_init_undo`.
            let prior = if from_cwr || self.ack_ece { 0.0 } else { self.current_ssthresh() };
            self.undo_init(prior);
        }
        if from_cwr {
            self.hold = None;
        } else if self.is_congestion(now, false) {
            let flight = self.flight_size();
            let ss = self.cc.ssthresh(&self.w, LossEvent::FastRecovery, flight, to_secs(now));
            self.w.ssthresh = ss;
            self.hold = None;
        } else {
            self.hold = Some(self.w.cwnd.max(2.0));
        }
        self.recover = self.high_data;
        self.last_cut_by_rto = false;
        self.set_state(now, CaState::Recovery);
        if !from_cwr {
            self.prr = Prr { prior_cwnd: self.w.cwnd, delivered: 0, out: 0 };
            if self.ecn.mode == EcnMode::Classic {
                self.cwr_pending = true; // `tcp_ecn_queue_cwr`
            }
        }
        self.tlp_high = None; // Linux `tcp_init_cwnd_reduction`
        self.partial_ack_seen = false;
        self.stats.fast_recoveries += 1;
        // The fast retransmit restarts the retransmission timer, as ns-2
        // (`reset_rtx_timer` in its dupack actions) and Linux (re-armed when
        // the head of the retransmission queue is resent) do: its ACK needs
        // a round trip through the full queue that caused the loss.
        self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
        self.timer = Timer::Rto;
    }

    fn exit_recovery(&mut self, now: Time) {
        if self.cc_controls_window() {
            // Linux `tcp_end_cwnd_reduction` leaves such a window alone.
            self.set_state(now, CaState::Open);
            return;
        }
        self.w.cwnd = self.recovery_target();
        self.inflation = 0.0;
        self.set_state(now, CaState::Open);
        if self.hold.take().is_none() {
            self.cc.on_recovery_exit(&mut self.w, to_secs(now));
        }
    }

    /// Whether the `dupthresh`-th duplicate ACK may start a fast retransmit
    /// (Reno, NewReno). RFC 6582 3.2 step 1: only if "the Cumulative
    /// Acknowledgment field covers more than recover", the highest segment
    /// sent when the last recovery or timeout began: `snd_una > recover` in
    /// our one-past counting. An ACK of exactly `recover` is what a receiver
    /// that already holds everything up to it answers to the needless
    /// resends of go-back-N after a timeout (section 4); taking those for a
    /// new loss was the retransmission storm of issue 25. Linux holds its
    /// Loss/Recovery state "until something *above* high_seq is ACKed"
    /// (`tcp_is_non_sack_preventing_reopen`), ns-2 tests `highest_ack_ >
    /// recover_`. Before any recovery (`recover == 0`, the RFC's ISS) the
    /// first segment's loss may be fast-retransmitted (ns-2's `bugfix_ss_`).
    /// Reno, as ns-2's `RenoTcpAgent`, checks `recover` only after a
    /// timeout: after a fast retransmit a second one in the same window is
    /// plain Reno.
    pub(crate) fn may_fast_retransmit(&self) -> bool {
        if self.snd_una > self.recover || self.recover == 0 {
            return true;
        }
        if self.cfg.recovery == Recovery::Reno && !self.last_cut_by_rto {
            return true;
        }
        match self.cfg.dupack_guard {
            DupAckGuard::Careful => false,
            DupAckGuard::LessCareful => self.snd_una == self.recover,
            // RFC 6582 4.1: "the congestion window is greater than SMSS
            // bytes and the difference between highest_ack and
            // prev_highest_ack is at most 4*SMSS bytes".
            DupAckGuard::AckHeuristic => self.w.cwnd > 1.0 && self.snd_una - self.prev_una <= 4,
        }
    }

    /// Reno / NewReno recovery driven by duplicate ACKs. Returns whether the
    /// congestion control may grow the window on this ACK.
    pub(super) fn dupack_recovery(
        &mut self,
        now: Time,
        new_data: bool,
        cum_acked: u64,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) -> bool {
        let newreno = self.cfg.recovery == Recovery::NewReno;
        if new_data {
            match self.state {
                CaState::Recovery => {
                    if !newreno || self.snd_una >= self.recover {
                        self.exit_recovery(now);
                    } else {
                        // NewReno partial ACK: retransmit the next hole, deflate.
                        let una = self.snd_una;
                        self.emit(now, una, Some(RetransmitCause::PartialAck), map, out);
                        // RFC 6582 3.2 step 5: deflate the window by the
                        // amount acknowledged, then add one segment back.
                        // The inflation goes first (ns-2's partialnewack).
                        let deflate = cum_acked as f64 - 1.0;
                        if self.inflation >= deflate {
                            self.inflation -= deflate;
                        } else {
                            self.w.cwnd = (self.w.cwnd - (deflate - self.inflation)).max(1.0);
                            self.inflation = 0.0;
                        }
                        // Impatient variant: only the first partial ACK restarts the timer.
                        self.hold_timer = self.partial_ack_seen;
                        self.partial_ack_seen = true;
                    }
                    false
                }
                CaState::Loss => {
                    if self.snd_una >= self.recover {
                        self.set_state(now, CaState::Open);
                    }
                    true
                }
                // (Disorder and Cwr are never the sender's own state: see `Sender::state`)
                CaState::Open | CaState::Disorder | CaState::Cwr => true,
            }
        } else {
            if self.state == CaState::Recovery {
                self.inflation += 1.0;
            } else if self.dupacks == self.cfg.dupthresh && self.may_fast_retransmit() {
                self.enter_fast_recovery(now);
                let una = self.snd_una;
                self.emit(now, una, Some(RetransmitCause::FastRetransmit), map, out);
                self.w.cwnd = self.recovery_target();
                self.inflation = self.cfg.dupthresh as f64;
            }
            false
        }
    }

    /// RFC 6675 recovery. Returns whether the window may grow on this ACK.
    /// `delivered`: segments this ACK newly acknowledged or SACKed;
    /// `newly_lost`: segments it marked lost (both for PRR).
    pub(super) fn sack_recovery(
        &mut self,
        now: Time,
        new_data: bool,
        delivered: u64,
        newly_lost: u64,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) -> bool {
        match self.state {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                let lost = self.lost_high > self.snd_una;
                // With RACK only a segment marked lost starts recovery
                // (Linux `tcp_time_to_recover`: "the loss is proven").
                let dupthresh = !self.cfg.rack && self.dupacks >= self.cfg.dupthresh;
                if (dupthresh || lost) && self.snd_una >= self.recover && self.high_data > self.snd_una {
                    self.enter_fast_recovery(now);
                    // The first unacknowledged segment is presumed lost (RFC 6675 4.2).
                    if self.lost_high <= self.snd_una {
                        let before = self.snd_una;
                        self.lost_high = self.snd_una + 1;
                        self.count_lost_since(now, before);
                    }
                    if self.cc_controls_window() {
                        // The algorithm sets the window (Linux `cong_control`
                        // replaces PRR); NextSeg() resends the lost segment.
                        return false;
                    }
                    if self.cfg.prr && self.hold.is_none() {
                        // PRR lets at least one segment out on the ACK that
                        // starts recovery: the sending loop's NextSeg() is
                        // the fast retransmit of the first lost segment.
                        self.prr_reduce(delivered, newly_lost, new_data);
                        return false;
                    }
                    self.w.cwnd = self.recovery_target();
                    // RFC 6675 (4.3): "Retransmit the first data segment presumed
                    // dropped", before and regardless of cwnd - pipe (4.4-4.5).
                    let una = self.snd_una;
                    let pending = self.meta.flags(una) & RETX_OUT != 0;
                    if !pending {
                        self.emit(now, una, Some(RetransmitCause::FastRetransmit), map, out);
                    }
                    self.rtx_next = una + 1;
                    false
                } else {
                    new_data
                }
            }
            CaState::Recovery => {
                if self.may_undo() {
                    // Every resend came back D-SACKed: at the end of recovery
                    // Linux `tcp_try_undo_recovery`, before it
                    // `tcp_try_undo_dsack` then `tcp_try_to_open` (which
                    // moves high_seq to snd_nxt). Either way Open again.
                    let ended = self.snd_una >= self.recover;
                    self.undo_reduction(false);
                    self.set_state(now, CaState::Open);
                    if !ended {
                        self.recover = self.high_data;
                    }
                    return ended && new_data;
                }
                if self.snd_una >= self.recover {
                    self.exit_recovery(now);
                    // Linux leaves Recovery in `tcp_fastretrans_alert` before
                    // `tcp_cong_control` runs, so the ACK that ends it already
                    // grows the window (`tcp_may_raise_cwnd`).
                    return self.cfg.prr && new_data;
                }
                if self.cfg.prr && self.hold.is_none() && !self.cc_controls_window() {
                    self.prr_reduce(delivered, newly_lost, new_data);
                }
                false
            }
            CaState::Loss => {
                if self.cfg.undo && self.loss_undo_or_frto(now, new_data, delivered > 0 && !new_data) {
                    return new_data;
                }
                if self.snd_una >= self.recover {
                    self.set_state(now, CaState::Open);
                }
                new_data
            }
        }
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh an undo would go back to.
    pub(super) fn current_ssthresh(&self) -> f64 {
        if self.state == CaState::Recovery {
            self.w.ssthresh
        } else {
            let c = self.w.cwnd.floor() as u64;
            self.w.ssthresh.max(((c >> 1) + (c >> 2)) as f64)
        }
    }

    /// Linux `tcp_init_undo` (with the window it may go back to).
    pub(super) fn undo_init(&mut self, prior_ssthresh: f64) {
        let mut retrans = self.retrans_out as i64;
        if self.tlp_high.is_some() && self.tlp_retrans {
            retrans += 1;
        }
        self.undo = Undo {
            marker: Some(self.snd_una),
            retrans: if retrans == 0 { -1 } else { retrans },
            prior_ssthresh,
            prior_cwnd: self.w.cwnd,
        };
    }

    /// A D-SACK block `[s, e)` arrived (Linux `tcp_sacktag_write_queue`,
    /// `tcp_sacktag_one`): a resend since the reduction began was needless.
    pub(super) fn undo_dsack(&mut self, s: u64, e: u64, prior_una: u64) {
        let Some(marker) = self.undo.marker else { return };
        if self.undo.retrans <= 0 || e <= marker {
            return;
        }
        if e <= prior_una {
            self.undo.retrans -= 1;
        } else {
            let resent =
                (s.max(self.snd_una)..e.min(self.high_data)).filter(|&q| self.meta.flags(q) & RETX != 0).count() as i64;
            self.undo.retrans = (self.undo.retrans - resent).max(0);
        }
    }

    /// Linux `tcp_may_undo` without timestamps: every resend since the
    /// reduction began was D-SACKed.
    fn may_undo(&self) -> bool {
        self.cfg.undo && self.undo.marker.is_some() && self.undo.retrans == 0
    }

    /// Linux `tcp_undo_cwnd_reduction`: cwnd back to at least what it was
    /// (`tcp_reno_undo_cwnd`, which CUBIC uses too), ssthresh back to the
    /// prior one; `unmark_loss` forgets the timeout's loss marks.
    fn undo_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.lost_high = self.snd_una;
            self.rtx_next = self.snd_una;
        }
        if self.undo.prior_ssthresh > 0.0 {
            self.w.cwnd = self.cc.undo_cwnd(&self.w, self.undo.prior_cwnd);
            if self.undo.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.undo.prior_ssthresh;
                self.cwr_pending = false; // `tcp_ecn_withdraw_cwr`
            }
        }
        self.undo.marker = None;
        self.rack.advanced = true; // RACK re-examines losses
        self.stats.undos += 1;
    }

    /// The Loss state's undo and F-RTO (Linux `tcp_process_loss`, RFC 5682
    /// section 3 with SACK). Returns true when the ACK is fully handled.
    /// `dupack`: the ACK delivered SACKed data without advancing `snd_una`.
    fn loss_undo_or_frto(&mut self, now: Time, una_advanced: bool, dupack: bool) -> bool {
        let recovered = self.snd_una >= self.recover;
        if una_advanced && self.may_undo() {
            self.undo_loss(now, false);
            return true;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was delivered: the timeout was spurious.
            if self.orig_acked {
                self.undo_loss(now, true);
                return true;
            }
            if self.snd_nxt > self.recover {
                if dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if una_advanced && !recovered {
                // Step 2.b: send new data next, if there is any.
                self.recover = self.snd_nxt;
                if self.may_send_new() {
                    self.frto_new_data = true;
                    return false;
                }
                self.frto = false;
            }
        }
        false
    }

    /// Linux `tcp_try_undo_loss`: back to Open with the prior window.
    fn undo_loss(&mut self, now: Time, frto: bool) {
        self.undo_reduction(true);
        if frto {
            self.stats.spurious_rtos += 1;
        }
        self.rto_retransmits = 0;
        self.frto = false;
        self.set_state(now, CaState::Open);
        self.last_cut_by_rto = false;
    }

    /// Proportional Rate Reduction (RFC 6937's PRR-SSRB) as Linux 6.x's
    /// `tcp_cwnd_reduction`: sets cwnd to the segments in flight after this
    /// ACK plus what may be sent now. While more than ssthresh is in flight,
    /// sending follows delivery in the proportion ssthresh / prior_cwnd;
    /// below it, up to one more than was delivered (slow start back to
    /// ssthresh) when `snd_una` advanced and nothing new was lost, else
    /// packet conservation. The first ACK of a recovery always lets one
    /// segment out (the fast retransmit).
    pub(super) fn prr_reduce(&mut self, newly_acked_sacked: u64, newly_lost: u64, una_advanced: bool) {
        if newly_acked_sacked == 0 {
            return;
        }
        self.prr.delivered += newly_acked_sacked;
        let ssthresh = self.w.ssthresh;
        let in_flight = self.in_flight() as f64;
        let delta = ssthresh - in_flight;
        let mut sndcnt = if delta < 0.0 {
            // ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out
            (ssthresh * self.prr.delivered as f64 / self.prr.prior_cwnd).ceil() - self.prr.out as f64
        } else {
            let mut n = (self.prr.delivered as f64 - self.prr.out as f64).max(newly_acked_sacked as f64);
            if una_advanced && newly_lost == 0 {
                n += 1.0;
            }
            n.min(delta)
        };
        // "Force a fast retransmit upon entering fast recovery"; never negative.
        sndcnt = sndcnt.max(if self.prr.out == 0 { 1.0 } else { 0.0 });
        // in_flight + sndcnt >= 1 always (in_flight = 0 makes delta = ssthresh >= 2).
        self.w.cwnd = (in_flight + sndcnt).max(1.0);
    }
}
