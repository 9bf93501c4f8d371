//! ECN at the sender: marking outgoing segments, reading the feedback of
//! ACKs (classic ECE or AccECN counters) and the CWR response (see the
//! ECN section of the notes in `mod.rs`).

use super::{CaState, Prr, Sender, INFINITE_SSTHRESH};
use crate::cc::EcnMode;
use crate::net::packet::tcp_flags;
use crate::net::Packet;
use crate::sim::time::{to_secs, Time};
use crate::tcp::receiver::ACE_INIT;

impl Sender {
    /// Linux `tcp_ecn_send` for a data segment: under AccECN every segment
    /// is ECN-capable; under classic ECN (RFC 3168 6.1.5) only new data,
    /// unless the algorithm needs ECN (`tcp_ca_needs_ecn`: DCTCP's
    /// retransmissions keep ECT), and the first new segment after a
    /// reduction carries CWR (`TCP_ECN_QUEUE_CWR`).
    pub(super) fn mark_ecn(&mut self, p: &mut Packet) {
        match self.ecn.mode {
            EcnMode::Off => {}
            EcnMode::AccEcn => p.set_ecn(self.ecn.ect),
            EcnMode::Classic => {
                if !p.retransmit() {
                    p.set_ecn(self.ecn.ect);
                    if std::mem::take(&mut self.cwr_pending) {
                        p.set_tcp_flags(p.tcp_flags() | tcp_flags::CWR);
                    }
                } else if self.ecn.needs_ecn {
                    p.set_ecn(self.ecn.ect);
                }
            }
        }
    }

    /// The ECN feedback of an ACK (`a`, after `old_una`; `acked` segments
    /// newly delivered, `sacked_new` of them SACKed): counts
    /// `tp->delivered_ce` and returns whether it echoes congestion (Linux
    /// FLAG_ECE).
    pub(super) fn ecn_feedback(&mut self, ack: &Packet, a: u64, old_una: u64, acked: u64, sacked_new: u64) -> bool {
        match self.ecn.mode {
            EcnMode::Off => false,
            EcnMode::Classic => {
                // tcp_ecn_rcv_ecn_echo on any ACK but an old one; the
                // segments it delivers count as CE (tcp_count_delivered).
                let ece = ack.tcp_flags() & tcp_flags::ECE != 0 && a >= old_una;
                if ece {
                    self.stats.ce_delivered += acked;
                }
                ece
            }
            EcnMode::AccEcn => {
                // __tcp_accecn_process: only an ACK of forward progress
                // (FLAG_ACKED or FLAG_DATA_SACKED) is read; the delta is
                // the ACE field (less its initial 5) minus delivered_ce,
                // modulo 8. An ACK of more than 7 segments may hide whole
                // laps of the counter: Linux's safe delta takes the most
                // CE marks consistent with the field, `delivered -
                // ((delivered - delta) mod 8)`.
                if a <= old_una && sacked_new == 0 {
                    return false;
                }
                let ace = ((ack.tcp_flags() & tcp_flags::ACE_MASK) >> tcp_flags::ACE_SHIFT) as u64;
                let delta = ace.wrapping_sub(ACE_INIT).wrapping_sub(self.stats.ce_delivered) & 7;
                let delta = if acked <= 7 { delta } else { acked - ((acked - delta) & 7) };
                self.stats.ce_delivered += delta;
                delta > 0
            }
        }
    }

    /// The ECN response after the recovery state machine has seen the ACK
    /// (Linux `tcp_try_to_open` and `tcp_cong_control`): an echo in Open
    /// starts CWR; in CWR, PRR reduces the window toward ssthresh and the
    /// window does not grow. Returns whether it may grow (`grow` before).
    pub(super) fn ecn_response(
        &mut self,
        now: Time,
        grow: bool,
        delivered: u64,
        newly_lost: u64,
        una_advanced: bool,
    ) -> bool {
        if self.ack_ece && self.state == CaState::Open && !self.cwr {
            self.enter_cwr(now);
        }
        if !self.cwr {
            return grow;
        }
        if self.cfg.prr && !self.cc_controls_window() {
            self.prr_reduce(delivered, newly_lost, una_advanced);
        }
        false
    }

    /// Linux `tcp_enter_cwr` (RFC 3168 6.1.2, reacting at most once per
    /// window): no undo of it, `tcp_init_cwnd_reduction` (high_seq, PRR's
    /// counters, ssthresh from the algorithm, CWR queued for the next new
    /// segment under classic ECN), the CWR state. With PRR the window then
    /// follows `tcp_cwnd_reduction` on each ACK, as in a recovery without
    /// retransmissions; without PRR (the RFC senders) cwnd = ssthresh at
    /// once (RFC 3168: "halves the congestion window") and holds until CWR
    /// ends. A window-controlling algorithm keeps its window and hears
    /// `on_cwr` (Linux calls no PRR for `cong_control` algorithms).
    fn enter_cwr(&mut self, now: Time) {
        self.undo.marker = None;
        self.cwr = true;
        self.cwr_high = self.high_data;
        self.tlp_high = None;
        self.prr = Prr { prior_cwnd: self.w.cwnd, delivered: 0, out: 0 };
        let flight = self.flight_size();
        self.w.ssthresh = self.cc.ecn_ssthresh(&self.w, flight, to_secs(now));
        if self.ecn.mode == EcnMode::Classic {
            self.cwr_pending = true;
        }
        self.stats.ecn_reductions += 1;
        if !self.cc_controls_window() && !self.cfg.prr && self.w.ssthresh < INFINITE_SSTHRESH {
            self.w.cwnd = self.w.ssthresh;
        }
        let c = self.conn(now);
        self.cc.on_cwr(&mut self.w, true, &c);
        self.report_state(now, false);
    }

    /// CWR ends (Linux `tcp_fastretrans_alert`: once something above
    /// high_seq is ACKed; `tcp_end_cwnd_reduction`: cwnd = ssthresh and
    /// CA_EVENT_COMPLETE_CWR, for algorithms that do not set the window).
    pub(super) fn end_cwr(&mut self, now: Time) {
        self.cwr = false;
        self.disorder = false; // (Disorder is not tracked within CWR: back to Open)
        if !self.cc_controls_window() {
            if self.w.ssthresh < INFINITE_SSTHRESH {
                self.w.cwnd = self.w.ssthresh;
            }
            self.report_state(now, false);
            self.cc.on_recovery_exit(&mut self.w, to_secs(now));
        }
        let c = self.conn(now);
        self.cc.on_cwr(&mut self.w, false, &c);
    }
}
