//! The send path: which segment goes next (new data or a retransmission),
//! the window and pacing checks, and putting packets on the wire.

use super::{CaState, Sender, Timer, RETX, RETX_OUT};
use crate::cc::EcnMode;
use crate::net::Packet;
use crate::sim::time::{from_secs, to_secs, Time};
use crate::tcp::app::SegmentMap;
use crate::trace::RetransmitCause;

impl Sender {
    /// The pacing rate (bit/s of payload): the algorithm's, else Linux's
    /// internal one when the flow asks for pacing.
    #[inline]
    fn pacing_rate(&self) -> Option<f64> {
        self.cc.pacing_rate_bps().or(if self.cfg.pacing { self.linux_pacing_bps } else { None })
    }

    /// Linux `tcp_update_pacing_rate`: cwnd (or what is outstanding, if
    /// more) x MSS / SRTT, at `pacing_ss_ratio` % while cwnd is below half
    /// of ssthresh, else `pacing_ca_ratio` %.
    pub(super) fn update_linux_pacing(&mut self) {
        if !self.cfg.pacing || self.rtt.srtt <= 0.0 {
            return;
        }
        let ratio =
            if self.w.cwnd < self.w.ssthresh / 2.0 { self.cfg.pacing_ss_ratio } else { self.cfg.pacing_ca_ratio };
        let segs = self.w.cwnd.max((self.high_data - self.snd_una) as f64);
        self.linux_pacing_bps = Some(self.cfg.mss as f64 * 8.0 * segs * ratio / 100.0 / self.rtt.srtt);
    }

    /// Sends segment `seq`: new data, or a retransmission for `cause`.
    pub(super) fn emit(
        &mut self,
        now: Time,
        seq: u64,
        cause: Option<RetransmitCause>,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) {
        let rate = self.pacing_rate();
        self.emit_paced(now, seq, cause, rate, map, out)
    }

    fn emit_paced(
        &mut self,
        now: Time,
        seq: u64,
        cause: Option<RetransmitCause>,
        mut pacing: Option<f64>,
        map: &SegmentMap,
        out: &mut Vec<Packet>,
    ) {
        let packets_out = self.high_data - self.snd_una;
        // New data was already counted in flight (snd_nxt moved past it).
        let counted = (cause.is_none() && seq < self.snd_nxt) as u64;
        if self.cc_controls_window() && self.in_flight() == counted {
            // Linux `tcp_event_data_sent`: CA_EVENT_TX_START, before this
            // packet's departure is paced.
            let c = self.conn(now);
            self.cc.on_tx_start(&mut self.w, &c);
            pacing = self.pacing_rate();
        }
        if seq >= self.high_data {
            // The segment just past high_data is new: room for it, no flags.
            self.meta.ensure(self.snd_una, seq + 1);
            self.high_data = seq + 1;
            self.meta.set_new(seq, now);
        } else {
            self.meta.set_sent(seq, now);
        }
        let sack = self.sack();
        let retransmit = cause.is_some();
        if let Some(cause) = cause {
            if let Some(t) = self.rtx_trace.as_mut() {
                t.push((now, seq, cause, self.high_data - self.snd_una));
            }
            self.rto_resend_pending = false;
            if self.undo.marker.is_some() {
                // Linux `tcp_retransmit_skb`: one more resend to be D-SACKed back.
                self.undo.retrans = self.undo.retrans.max(0) + 1;
            }
            let mut f = self.meta.flags(seq) | RETX;
            if sack && f & RETX_OUT == 0 {
                f |= RETX_OUT;
                self.retrans_out += 1;
                if self.cfg.rack {
                    self.rtx_order.push_back(seq);
                }
            }
            self.meta.set_flags(seq, f);
            self.stats.retransmits += 1;
        }
        let size = self.wire_size(seq, map);
        if self.cfg.prr && (self.state == CaState::Recovery || self.cwr) {
            self.prr.out += 1;
        }
        self.stats.data_sent += 1;
        self.last_send = now;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + from_secs(self.rtt.rto()));
            self.timer = Timer::Rto;
        }
        let inf = self.in_flight();
        self.cc.on_send(to_secs(now), size, inf);
        if let Some(r) = self.rate.as_mut() {
            r.on_send_ce(
                seq,
                now,
                packets_out,
                self.snd_una,
                self.high_data,
                self.delivered,
                self.lost_total,
                inf,
                self.stats.ce_delivered,
            );
        }
        if let Some(rate) = pacing {
            // Linux `tcp_update_skb_after_send`: the next departure is this
            // one's payload at the pacing rate later, less up to half of it
            // for the time this one left late (the kernel's allowance for
            // OS jitter); the first 10 packets are not paced (as sch_fq).
            let stamp = self.pace_next.max(now);
            let late = stamp - self.pace_next;
            let mut len = from_secs(map.app_bytes(seq) as f64 * 8.0 / rate);
            if self.stats.data_sent >= 10 {
                len -= late.min(len / 2);
            } else {
                len = 0;
            }
            // A pacing rate near 0 makes `len` saturate at u64::MAX: the
            // next departure is after the end of the run, which saturating
            // keeps (a wrapping add would send at once).
            self.pace_next = stamp.saturating_add(len);
        }
        let mut p = Packet::data(seq, size, retransmit);
        if self.ecn.mode != EcnMode::Off {
            self.mark_ecn(&mut p);
        }
        out.push(p);
    }

    /// The next segment `NextSeg()` would send, and whether it is a retransmission.
    pub(super) fn next_segment(&mut self) -> Option<(u64, bool)> {
        if self.sack() {
            if self.rtx_next < self.snd_una {
                self.rtx_next = self.snd_una;
            }
            // Skip SACKed ranges and segments whose retransmission is in flight.
            while self.rtx_next < self.lost_high {
                let i = self.sacked.partition_point(|r| r.1 <= self.rtx_next);
                if i < self.sacked.len() && self.sacked[i].0 <= self.rtx_next {
                    self.rtx_next = self.sacked[i].1;
                } else if self.meta.flags(self.rtx_next) & RETX_OUT != 0 {
                    self.rtx_next += 1;
                } else {
                    break;
                }
            }
            let new_ok = self.may_send_new();
            // F-RTO's step 2.b sends new data before the marked segments.
            if self.rtx_next < self.lost_high && !(self.frto_new_data && new_ok) {
                return Some((self.rtx_next, true));
            }
            new_ok.then_some((self.snd_nxt, false))
        } else if self.snd_nxt < self.high_data {
            Some((self.snd_nxt, true)) // going back N after a timeout
        } else if self.may_send_new() {
            Some((self.snd_nxt, false))
        } else {
            None
        }
    }

    /// Whether new data may go out as far as the application and the
    /// receiver window are concerned (the congestion window aside).
    #[inline]
    pub(super) fn may_send_new(&self) -> bool {
        self.snd_nxt < self.app_limit && self.snd_nxt - self.snd_una < self.cfg.rwnd
    }

    /// Sends whatever the window, the receiver window, pacing and the
    /// application allow.
    pub fn transmit(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if !self.started {
            return;
        }
        if !self.cc_initialized {
            self.cc_initialized = true;
            if self.cc_controls_window() {
                let c = self.conn(now);
                self.cc.init(&mut self.w, &c);
            }
        }
        if self.frto_new_data {
            // F-RTO's new data goes out on this opportunity only (Linux
            // `tcp_xmit_recovery` with REXMIT_NEW); if none could, the
            // timeout's losses are repaired as usual.
            let before = self.snd_nxt;
            self.send_loop(now, map, out);
            self.frto_new_data = false;
            if self.snd_nxt > before {
                return;
            }
            self.frto = false;
        }
        self.send_loop(now, map, out);
    }

    fn send_loop(&mut self, now: Time, map: &SegmentMap, out: &mut Vec<Packet>) {
        if self.cfg.restart_after_idle
            && !self.cc_controls_window()
            && self.snd_una == self.high_data
            && self.stats.data_sent > 0
            && now.saturating_sub(self.last_send) > from_secs(self.rtt.rto())
            && self.snd_nxt < self.app_limit
        {
            // RFC 5681 4.1: restart window after an idle period longer than the RTO.
            self.w.cwnd = self.w.cwnd.min(self.cfg.init_cwnd);
        }
        // The pacing rate is read once per sending opportunity, not per packet.
        let pacing = self.pacing_rate();
        // So is the window: sending changes neither it nor the recovery state.
        // RFC 3042 for FlightSize senders; a SACK sender's pipe already drops
        // by one per duplicate ACK (RFC 6675 step 3).
        let extra = if self.cfg.limited_transmit && !self.sack() && self.state == CaState::Open {
            self.dupacks.min(2) as f64
        } else {
            0.0
        };
        let window = self.w.cwnd + self.inflation + extra;
        loop {
            if (self.in_flight() + 1) as f64 > window {
                self.cwnd_limited = true;
                return;
            }
            let Some((seq, retx)) = self.next_segment() else {
                self.cwnd_limited = false;
                if self.rate.is_some() && self.snd_nxt >= self.app_limit {
                    // Linux `tcp_rate_check_app_limited`: the application
                    // has nothing to send, the window is open and every
                    // lost segment has been resent.
                    let (d, f) = (self.delivered, self.in_flight());
                    if let Some(r) = self.rate.as_mut() {
                        r.mark_app_limited(d, f);
                    }
                }
                return;
            };
            if pacing.is_some() && now < self.pace_next {
                self.pace_wanted = Some(self.pace_next);
                // Linux `tcp_write_xmit`: is_cwnd_limited |= in_flight >= cwnd.
                self.cwnd_limited = self.in_flight() as f64 >= window;
                return;
            }
            if seq == self.snd_nxt {
                self.snd_nxt += 1;
                if self.cfg.tlp {
                    // Linux `tcp_write_xmit`: new data (re)schedules the probe.
                    self.schedule_loss_probe(now, false);
                }
            } else {
                self.rtx_next = seq + 1;
            }
            let cause = retx.then(|| self.resend_cause());
            self.emit_paced(now, seq, cause, pacing, map, out);
        }
    }

    /// Why the sending loop resends a segment: the timer's own resend, the
    /// window after a timeout, or SACK recovery's NextSeg().
    fn resend_cause(&mut self) -> RetransmitCause {
        if std::mem::take(&mut self.rto_resend_pending) {
            RetransmitCause::Rto
        } else if self.state == CaState::Loss || !self.sack() {
            RetransmitCause::AfterRto
        } else {
            RetransmitCause::Sack
        }
    }
}
