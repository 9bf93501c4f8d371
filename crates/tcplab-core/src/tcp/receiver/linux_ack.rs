//! Linux's delayed-ACK engine (`ack_policy = "linux"`): the `ato`
//! estimate, quick-ACK mode and the delayed-ACK deadline, as
//! `tcp_event_data_recv`, `tcp_incr_quickack` and `tcp_send_delayed_ack`.

use crate::sim::Time;

/// The fixed inputs of Linux's delayed-ACK engine (`ack_policy = "linux"`).
#[derive(Debug, Clone)]
pub struct LinuxAckConfig {
    /// TCP_ATO_MIN, which equals TCP_DELACK_MIN (include/net/tcp.h: HZ/25 =
    /// 40 ms): the initial and smallest `ato`, and the floor of the
    /// RTT bound in `tcp_send_delayed_ack`. Spec field `delack_min`.
    pub ato_min: Time,
    /// TCP_DELACK_MAX (HZ/5 = 200 ms), the default `icsk_delack_max` that
    /// caps every delayed-ACK timeout. Spec field `delack_max`.
    pub delack_max: Time,
    /// TCP_MAX_QUICKACKS (16). Spec field `quickacks`.
    pub max_quickacks: u32,
    /// `tcp_incr_quickack`'s `rcv_wnd / (2 * rcv_mss)`: half the fixed
    /// receive window in segments (`u32::MAX` when unlimited).
    pub window_quickacks: u32,
    /// The receiving socket's `tp->srtt_us`. A pure receiver sends no data,
    /// so its only RTT sample is the handshake's (`tcp_synack_rtt_meas` /
    /// the SYN-ACK's ACK): the world gives the idle path's round trip.
    pub srtt: Time,
    /// The receiving socket's `icsk_rto` after that one sample
    /// (`tcp_rtt_estimator` + `__tcp_set_rto`: srtt + max(2 srtt, min_rto)).
    pub rto: Time,
}

/// HZ/2: `tcp_send_delayed_ack`'s `max_ato` for a socket neither in
/// pingpong mode nor with ICSK_ACK_PUSHED (a bulk receiver).
const HALF_SECOND: Time = crate::sim::time::PS_PER_SEC / 2;

/// Linux 6.x's receiver ACK state (`icsk->icsk_ack` and `tp->rcv_wup`).
///
/// A tcplab receiver never sends data, so it is never in pingpong
/// (interactive) mode: `inet_csk_in_pingpong_mode` is always false here, as
/// it is for the receiver of a Linux bulk transfer.
#[derive(Debug, Clone)]
pub struct LinuxAck {
    pub(super) cfg: LinuxAckConfig,
    /// `icsk_ack.ato`; 0 until the first data segment.
    pub(super) ato: Time,
    /// `icsk_ack.quick`: quick-ACK credits left.
    quick: u32,
    /// `icsk_ack.lrcvtime`: arrival of the last in-order data segment.
    lrcvtime: Time,
    /// `tp->rcv_wup`: `rcv_nxt` when the last ACK was sent.
    pub(super) rcv_wup: u64,
}

impl LinuxAck {
    pub fn new(cfg: LinuxAckConfig) -> Self {
        LinuxAck { cfg, ato: 0, quick: 0, lrcvtime: 0, rcv_wup: 0 }
    }

    /// Current `ato` (0 before any data).
    pub fn ato(&self) -> Time {
        self.ato
    }

    /// Quick-ACK credits left.
    pub fn quick(&self) -> u32 {
        self.quick
    }

    /// `tcp_incr_quickack`: raise the credit to min(rcv_wnd / (2 rcv_mss)
    /// (2 if that is 0), max_quickacks); never lower it.
    fn incr_quickack(&mut self, max_quickacks: u32) {
        let mut q = self.cfg.window_quickacks;
        if q == 0 {
            q = 2;
        }
        q = q.min(max_quickacks);
        if q > self.quick {
            self.quick = q;
        }
    }

    /// `tcp_enter_quickack_mode`: credit, leave pingpong (never in it here),
    /// `ato = TCP_ATO_MIN`.
    pub(super) fn enter_quickack_mode(&mut self, max_quickacks: u32) {
        self.incr_quickack(max_quickacks);
        self.ato = self.cfg.ato_min;
    }

    /// `tcp_in_quickack_mode`: credit left and not pingpong (the RTAX_QUICKACK
    /// route metric is not modelled).
    pub(super) fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_event_data_recv`, its `ato` part: called for in-order data only
    /// (`tcp_data_queue`'s queue_and_out; out-of-order data goes through
    /// `tcp_data_queue_ofo`, which does not call it).
    pub(super) fn event_data_recv(&mut self, now: Time) {
        let ato_min = self.cfg.ato_min;
        if self.ato == 0 {
            // "The _first_ data packet received, initialize delayed ACK engine."
            self.incr_quickack(self.cfg.max_quickacks);
            self.ato = ato_min;
        } else {
            let m = now - self.lrcvtime;
            if m <= ato_min / 2 {
                // "The fastest case is the first."
                self.ato = self.ato / 2 + ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.cfg.rto);
            } else if m > self.cfg.rto {
                // "Too long gap. Apparently sender failed to restart window,
                // so that we send ACKs quickly."
                self.incr_quickack(self.cfg.max_quickacks);
            }
        }
        self.lrcvtime = now;
    }

    /// `tcp_dec_quickack_mode` (Linux 6.6+, via `tcp_event_ack_sent`): an ACK
    /// sent while one was scheduled (`inet_csk_ack_scheduled`: it answers
    /// new data) uses one credit; using the last deflates `ato`.
    pub(super) fn dec_quickack_mode(&mut self, scheduled: bool) {
        let pkts = scheduled as u32;
        if self.quick > 0 {
            if pkts >= self.quick {
                self.quick = 0;
                // "Leaving quickack mode we deflate ATO."
                self.ato = self.cfg.ato_min;
            } else {
                self.quick -= pkts;
            }
        }
    }

    /// `tcp_send_delayed_ack`: the delayed-ACK deadline, given the pending
    /// one (ICSK_ACK_TIMER), or `None` for "send the ACK now" (a pending
    /// timer about to expire).
    pub(super) fn delayed_ack_deadline(&self, now: Time, pending: Option<Time>) -> Option<Time> {
        let mut ato = self.ato;
        if ato > self.cfg.ato_min {
            // "Slow path, intersegment interval is high": HZ/2 (TCP_DELACK_MAX
            // with pingpong or ICSK_ACK_PUSHED), bounded by the RTT estimate.
            let mut max_ato = HALF_SECOND;
            if self.cfg.srtt > 0 {
                let rtt = self.cfg.srtt.max(self.cfg.ato_min);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        // min(ato, icsk_delack_max)
        ato = ato.min(self.cfg.delack_max);
        let mut timeout = now + ato;
        if let Some(old) = pending {
            // "If delack timer is about to expire, send ACK now."
            if old <= now + ato / 4 {
                return None;
            }
            // "Use new timeout only if there wasn't a older one earlier."
            if timeout >= old {
                timeout = old;
            }
        }
        Some(timeout)
    }
}
