//! Delivery-rate estimation, as Linux net/ipv4/tcp_rate.c and
//! draft-cheng-iccrg-delivery-rate-estimation: the sender snapshots its
//! delivery state in every packet it sends, and each ACK turns the snapshot
//! of the most recently sent packet it delivered into a [`RateSample`]:
//! segments delivered since that packet left, over the longer of the send
//! and ACK phases. O(1) per packet delivered.
//!
//! Only senders whose congestion control asks for rate samples
//! ([`crate::cc::CongestionControl::controls_window`]) keep snapshots.
//! Linux's names are kept: `first_tx_mstamp`, `delivered_mstamp`,
//! `app_limited`. Deviations: no SACK reneging (tcplab's receivers never
//! renege); v3's `tx.in_flight` and `tx.lost` snapshots are kept for every
//! window-controlling algorithm (BBRv1 ignores them), and so is
//! `tx.delivered_ce` (0 on flows without ECN), for `rs->delivered_ce`.

use crate::cc::RateSample;
use crate::sim::time::{to_secs, Time};

/// What a packet carries when it is sent (Linux `TCP_SKB_CB(skb)->tx`).
#[derive(Debug, Clone, Copy, Default)]
struct Snapshot {
    /// False once the segment's delivery was counted (Linux zeroes
    /// `tx.delivered_mstamp` when it is SACKed), or before it was sent.
    valid: bool,
    is_app_limited: bool,
    first_tx: Time,
    delivered_time: Time,
    delivered: u64,
    lost: u64,
    in_flight: u64,
    /// `tp->delivered_ce` when it was sent (`tx.delivered_ce`).
    delivered_ce: u64,
}

/// A ring of per-segment values indexed by sequence number modulo a power
/// of two, holding `[una, high)`.
#[derive(Debug)]
struct Ring<T> {
    e: Vec<T>,
    mask: u64,
}

impl<T: Copy + Default> Ring<T> {
    fn new() -> Self {
        Ring { e: vec![T::default(); 64], mask: 63 }
    }

    fn get(&self, q: u64) -> &T {
        &self.e[(q & self.mask) as usize]
    }

    fn get_mut(&mut self, q: u64) -> &mut T {
        &mut self.e[(q & self.mask) as usize]
    }

    /// Room for `[una, high)`, keeping what is there.
    fn ensure(&mut self, una: u64, high: u64) {
        let need = (high - una) as usize;
        if need > self.e.len() {
            let cap = need.next_power_of_two().max(self.e.len() * 2);
            let mut e = vec![T::default(); cap];
            let mask = cap as u64 - 1;
            for q in una..high {
                e[(q & mask) as usize] = *self.get(q);
            }
            self.e = e;
            self.mask = mask;
        }
    }
}

/// The sender's side of tcp_rate.c.
#[derive(Debug)]
pub struct RateSampler {
    snaps: Ring<Snapshot>,
    /// Send time of the most recently sent packet delivered so far
    /// (`tp->first_tx_mstamp`: the start of the current send phase).
    first_tx: Time,
    /// When the last delivery was counted (`tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// Linux `tp->app_limited`: 0, or the delivered count at which the
    /// application-limited period ends.
    pub app_limited: u64,
    /// The sample being built for the current ACK (`struct rate_sample`),
    /// with the send time and segment of the packet it is taken from.
    rs: RateSample,
    prior_time: Option<Time>,
    /// `tp->lost` when the sampled packet was sent.
    prior_lost: u64,
    /// `tp->delivered_ce` when the sampled packet was sent (`rs->prior_delivered_ce`).
    prior_delivered_ce: u64,
    last_seq: u64,
}

impl Default for RateSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl RateSampler {
    pub fn new() -> Self {
        RateSampler {
            snaps: Ring::new(),
            first_tx: 0,
            delivered_time: 0,
            app_limited: 0,
            rs: RateSample::default(),
            prior_time: None,
            prior_lost: 0,
            prior_delivered_ce: 0,
            last_seq: 0,
        }
    }

    /// `tcp_rate_skb_sent`: segment `q` leaves at `now`. `packets_out`:
    /// segments outstanding before it (sent, not cumulatively acknowledged),
    /// `una`/`high`: the outstanding range including it; `delivered`,
    /// `lost`: the sender's totals; `in_flight`: segments in flight with it.
    #[allow(clippy::too_many_arguments)]
    pub fn on_send(
        &mut self,
        q: u64,
        now: Time,
        packets_out: u64,
        una: u64,
        high: u64,
        delivered: u64,
        lost: u64,
        in_flight: u64,
    ) {
        self.on_send_ce(q, now, packets_out, una, high, delivered, lost, in_flight, 0)
    }

    /// [`Self::on_send`] with the sender's `tp->delivered_ce` (ECN flows).
    #[allow(clippy::too_many_arguments)]
    pub fn on_send_ce(
        &mut self,
        q: u64,
        now: Time,
        packets_out: u64,
        una: u64,
        high: u64,
        delivered: u64,
        lost: u64,
        in_flight: u64,
        delivered_ce: u64,
    ) {
        if packets_out == 0 {
            // Nothing in flight: ACKs from now on measure only what is sent from now on.
            self.first_tx = now;
            self.delivered_time = now;
        }
        self.snaps.ensure(una, high);
        *self.snaps.get_mut(q) = Snapshot {
            valid: true,
            is_app_limited: self.app_limited != 0,
            first_tx: self.first_tx,
            delivered_time: self.delivered_time,
            delivered,
            lost,
            in_flight,
            delivered_ce,
        };
    }

    /// Segment `q`'s send-time snapshot: segments in flight with it,
    /// `tp->lost` then, and whether the sender was application-limited.
    pub fn snapshot(&self, q: u64) -> (u64, u64, bool) {
        let s = self.snaps.get(q);
        (s.in_flight, s.lost, s.is_app_limited)
    }

    /// A new ACK: an empty sample.
    pub fn begin_ack(&mut self) {
        self.rs = RateSample { delivered: -1, interval: -1.0, ..RateSample::default() };
        self.prior_time = None;
    }

    /// `tcp_rate_skb_delivered`: segment `q`, (last) sent at `sent`, is
    /// newly cumulatively acknowledged or SACKed. The sample follows the
    /// most recently sent packet delivered (ties broken by sequence).
    pub fn on_delivered(&mut self, q: u64, sent: Time, is_retrans: bool) {
        let s = self.snaps.get_mut(q);
        if !s.valid {
            return;
        }
        s.valid = false; // counted once, whether SACKed first or not
        let s = *s;
        let later = sent > self.first_tx || (sent == self.first_tx && q > self.last_seq);
        if self.rs.prior_delivered == 0 || later {
            self.rs.prior_delivered = s.delivered;
            self.prior_time = Some(s.delivered_time);
            self.rs.is_app_limited = s.is_app_limited;
            self.rs.is_retrans = is_retrans;
            self.rs.tx_in_flight = s.in_flight;
            self.prior_lost = s.lost;
            self.prior_delivered_ce = s.delivered_ce;
            self.last_seq = q;
            self.first_tx = sent;
            // The send phase: from the first to the last transmission of the window.
            self.rs.interval = to_secs(sent.saturating_sub(s.first_tx));
        }
    }

    /// `tcp_rate_gen`: the sample of this ACK. `delivered` and `lost` are
    /// the sender's totals after it, `acked_sacked` and `losses` what it
    /// newly delivered and marked lost; `min_rtt` in seconds.
    #[allow(clippy::too_many_arguments)]
    pub fn generate(
        &mut self,
        now: Time,
        delivered: u64,
        lost: u64,
        acked_sacked: u64,
        losses: u64,
        min_rtt: f64,
        rtt: Option<f64>,
        prior_in_flight: u64,
    ) -> RateSample {
        self.generate_ce(now, delivered, lost, acked_sacked, losses, min_rtt, rtt, prior_in_flight, 0)
    }

    /// [`Self::generate`] with the sender's `tp->delivered_ce`: the sample's
    /// `delivered_ce` is the CE-marked deliveries since the sampled packet
    /// was sent (`rs->delivered_ce = tp->delivered_ce - rs->prior_delivered_ce`).
    #[allow(clippy::too_many_arguments)]
    pub fn generate_ce(
        &mut self,
        now: Time,
        delivered: u64,
        lost: u64,
        acked_sacked: u64,
        losses: u64,
        min_rtt: f64,
        rtt: Option<f64>,
        prior_in_flight: u64,
        delivered_ce: u64,
    ) -> RateSample {
        if self.app_limited != 0 && delivered > self.app_limited {
            self.app_limited = 0; // the bubble is acknowledged and gone
        }
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let mut rs = self.rs;
        rs.acked_sacked = acked_sacked;
        rs.losses = losses;
        rs.rtt = rtt;
        rs.prior_in_flight = prior_in_flight;
        let Some(prior_time) = self.prior_time else {
            rs.delivered = -1;
            rs.interval = -1.0;
            return rs;
        };
        rs.lost = lost - self.prior_lost;
        rs.delivered_ce = delivered_ce - self.prior_delivered_ce;
        rs.delivered = (delivered - rs.prior_delivered) as i64;
        // Sending and ACKing are separate pipeline phases of a window; with
        // ACK compression the send phase can be the longer one.
        let ack_phase = to_secs(now - prior_time);
        rs.interval = rs.interval.max(ack_phase);
        if rs.interval < min_rtt {
            rs.interval = -1.0; // shorter than a round trip: no rate from it
        }
        rs
    }

    /// `tcp_rate_check_app_limited`, called where the application has less
    /// than a segment to send, the window is open and every lost segment
    /// has been resent: mark the sender application-limited until what is
    /// in flight now has been delivered.
    pub fn mark_app_limited(&mut self, delivered: u64, in_flight: u64) {
        self.app_limited = (delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::from_secs;

    fn ms(x: f64) -> Time {
        from_secs(x / 1000.0)
    }

    /// Ten segments sent back to back at t = 0; their ACKs come one per ms
    /// from 100 ms: the sample of the 10th ACK is 9 segments over 9 ms
    /// (the ACK phase), not over the 0-ms send phase.
    #[test]
    fn a_window_paced_by_its_acks_gives_the_ack_rate() {
        let mut r = RateSampler::new();
        for q in 0..10 {
            r.on_send(q, 0, q, 0, q + 1, 0, 0, q + 1);
        }
        let mut last = RateSample::default();
        for q in 0..10u64 {
            r.begin_ack();
            let now = ms(100.0 + q as f64);
            r.on_delivered(q, 0, false);
            last = r.generate(now, q + 1, 0, 1, 0, 0.05, Some(0.1), 10 - q);
        }
        // prior_delivered is 0 for the first window: Linux's `!rs->prior_delivered`
        // lets the latest packet win; delivered_time was set at the first send.
        assert_eq!(last.delivered, 10);
        assert!((last.interval - 0.109).abs() < 1e-9, "{}", last.interval);
        assert!(last.has_rate());
    }

    /// Second window: each segment was sent when the sender had delivered
    /// `k` segments, at the time of that delivery; its ACK's sample is the
    /// deliveries since, over the time since.
    #[test]
    fn the_sample_counts_deliveries_since_the_packet_left() {
        let mut r = RateSampler::new();
        r.on_send(0, 0, 0, 0, 1, 0, 0, 1);
        r.begin_ack();
        r.on_delivered(0, 0, false);
        let rs = r.generate(ms(100.0), 1, 0, 1, 0, 0.1, Some(0.1), 1);
        assert_eq!(rs.delivered, 1);
        // Sent at 100 ms with 1 delivered; delivered at 200 ms when 5 are.
        r.on_send(1, ms(100.0), 0, 1, 2, 1, 0, 1);
        r.begin_ack();
        r.on_delivered(1, ms(100.0), false);
        let rs = r.generate(ms(200.0), 5, 2, 4, 1, 0.1, Some(0.1), 1);
        assert_eq!((rs.delivered, rs.prior_delivered), (4, 1));
        assert!((rs.interval - 0.1).abs() < 1e-12);
        assert_eq!((rs.lost, rs.losses, rs.acked_sacked), (2, 1, 4));
    }

    #[test]
    fn no_sample_without_a_delivered_snapshot_or_below_min_rtt() {
        let mut r = RateSampler::new();
        r.begin_ack();
        let rs = r.generate(ms(10.0), 0, 0, 0, 0, 0.1, None, 0);
        assert!(rs.delivered < 0 && rs.interval < 0.0 && !rs.has_rate());
        r.on_send(0, ms(10.0), 0, 0, 1, 0, 0, 1);
        r.begin_ack();
        r.on_delivered(0, ms(10.0), false);
        let rs = r.generate(ms(30.0), 1, 0, 1, 0, 0.05, Some(0.02), 1);
        assert_eq!(rs.delivered, 1);
        assert!(rs.interval < 0.0, "20 ms is shorter than the 50 ms min RTT");
        // A segment is counted once: its cumulative ACK after a SACK adds nothing.
        r.begin_ack();
        r.on_delivered(0, ms(10.0), false);
        assert!(r.generate(ms(40.0), 1, 0, 0, 0, 0.01, None, 0).delivered < 0);
    }

    #[test]
    fn app_limited_marks_packets_until_the_bubble_is_delivered() {
        let mut r = RateSampler::new();
        r.mark_app_limited(10, 3);
        assert_eq!(r.app_limited, 13);
        r.on_send(0, 0, 0, 0, 1, 10, 0, 1);
        r.begin_ack();
        r.on_delivered(0, 0, false);
        let rs = r.generate(ms(100.0), 13, 0, 3, 0, 0.05, None, 4);
        assert!(rs.is_app_limited);
        assert_eq!(r.app_limited, 13, "not past the bubble yet");
        r.begin_ack();
        r.generate(ms(101.0), 14, 0, 1, 0, 0.05, None, 1);
        assert_eq!(r.app_limited, 0);
    }
}
