//! The measurement frame shared by the delay-based algorithms (Vegas,
//! Compound, FAST): a propagation-delay estimate, per-RTT rounds keyed on
//! `snd_nxt`, and Linux's rule that the delay-based part runs only in the
//! Open state and starts afresh after every state change and idle restart.
//!
//! Source: Linux `net/ipv4/tcp_vegas.c` (the frame every Linux delay-based
//! module copies; the out-of-tree `tcp_compound.c` of Castellani, Hemminger
//! and Andrew uses the same one):
//! - `pkts_acked`: for a valid sample, `vrtt = rtt_us + 1` ("never allow zero
//!   rtt or baseRTT"); `baseRTT = min(baseRTT, vrtt)` over the connection;
//!   `minRTT = min(minRTT, vrtt)` and `cntRTT++` within the round;
//! - `vegas_enable` (on `set_state(Open)`): `doing_vegas_now = 1`,
//!   `beg_snd_nxt = snd_nxt`, `cntRTT = 0`, `minRTT = inf`;
//!   `vegas_disable` (any other state): `doing_vegas_now = 0`;
//! - a round ends on the ACK that passes `beg_snd_nxt` (`after(ack,
//!   beg_snd_nxt)`), which then moves to the current `snd_nxt`;
//! - `cwnd_event(CWND_RESTART | TX_START)` re-initialises (baseRTT = inf,
//!   then enable). `TX_START` is raised whenever a data segment is sent with
//!   nothing in flight (`tcp_event_data_sent`), retransmissions included.
//!
//! How the hooks map (the trait has no idle hook, see
//! docs/algorithms/README.md):
//! - the CA state is the sender's, told through `on_state` ([`DelayFrame::set_state`]);
//! - `TX_START` is `on_send` with `in_flight <= 1` (the sender counts the
//!   segment being sent; Linux counts before it);
//! - `snd_nxt` at a re-initialisation from `on_send` is the highest `snd_nxt`
//!   seen in ACK samples (Linux never lowers `snd_nxt`; a non-SACK sender here
//!   rewinds it after a timeout, and segments sent since the last ACK are
//!   not seen).

use super::{AckSample, CaState};

/// Fixed-point shift of the 2.6.1x-2.6.2x Vegas module and of the
/// out-of-tree Compound port (`V_PARAM_SHIFT`): diff, target and the
/// thresholds are held in half-segments.
pub const V_PARAM_SHIFT: u32 = 1;

/// A time in seconds as those modules' `u32` microseconds (the frame
/// already holds Linux's `vrtt = rtt_us + 1`).
pub fn to_us(t: f64) -> u32 {
    (t * 1e6).round().clamp(1.0, u32::MAX as f64) as u32
}

/// Linux 2.6.22 `tcp_vegas_cong_avoid` (and the 2006 `tcp_compound.c`),
/// `u32` arithmetic, results in
/// half-segments: `target_cwnd = ((old_wnd * baseRTT) << V_PARAM_SHIFT) /
/// rtt` and `diff = (old_wnd << V_PARAM_SHIFT) - target_cwnd`.
/// `(old_wnd * baseRTT) << 1` wraps at 2^32 as in the kernel (above 21474
/// segments at a 100 ms baseRTT, 7158 at 300 ms), which makes target small
/// and diff large. Returns `(diff, target)`.
pub fn fixed_point_diff(old_wnd: u32, base_us: u32, rtt_us: u32) -> (u32, u32) {
    let target = (old_wnd.wrapping_mul(base_us) << V_PARAM_SHIFT) / rtt_us.max(1);
    ((old_wnd << V_PARAM_SHIFT).wrapping_sub(target), target)
}

/// Linux's `vrtt = rtt_us + 1`: an RTT sample in whole microseconds plus one,
/// in seconds.
pub fn linux_vrtt(rtt: f64) -> f64 {
    ((rtt * 1e6).floor() + 1.0) / 1e6
}

/// RTT samples of one round (Linux `cntRTT`, `minRTT`), plus their sum and
/// the latest one for algorithms that use another per-round statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttRound {
    /// The round ends on the ACK that acknowledges this segment.
    pub beg_snd_nxt: u64,
    pub count: u32,
    pub min: f64,
    pub sum: f64,
    pub last: f64,
}

impl Default for RttRound {
    fn default() -> Self {
        RttRound { beg_snd_nxt: 0, count: 0, min: f64::INFINITY, sum: 0.0, last: f64::NAN }
    }
}

impl RttRound {
    pub fn add(&mut self, rtt: f64) {
        self.count += 1;
        self.min = self.min.min(rtt);
        self.sum += rtt;
        self.last = rtt;
    }

    /// Forgets the samples ("wipe the slate clean for the next RTT").
    pub fn clear(&mut self) {
        *self = RttRound { beg_snd_nxt: self.beg_snd_nxt, ..RttRound::default() };
    }

    /// Whether an ACK up to `snd_una` (next unacknowledged segment) ends the
    /// round: Linux `after(ack, beg_snd_nxt)`, in segments.
    pub fn ended_by(&self, snd_una: u64) -> bool {
        snd_una > self.beg_snd_nxt
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum / self.count as f64
        }
    }
}

/// Linux Vegas's per-connection measurement state, independent of the window
/// rule that uses it.
#[derive(Debug, Clone)]
pub struct DelayFrame {
    /// The sender's CA state, as last told.
    state: CaState,
    /// Linux `doing_vegas_now`: the delay-based rule runs in this round.
    pub enabled: bool,
    pub round: RttRound,
    /// Smallest RTT over the connection (since the last re-initialisation).
    pub base_rtt: f64,
    /// Add Linux's 1 us and truncate samples to whole microseconds.
    pub linux_rtt: bool,
    /// Re-initialise on TX_START (Linux; `false` keeps baseRTT across idle periods).
    pub restart_on_idle: bool,
    /// Keep baseRTT when re-initialising (the Compound port's choice).
    pub keep_base_on_restart: bool,
    last_snd_nxt: u64,
    high_snd_nxt: u64,
    restarts: u64,
}

impl DelayFrame {
    /// `tcp_vegas_init`: baseRTT = inf, enabled, round starting at segment 0.
    pub fn new(linux_rtt: bool, restart_on_idle: bool) -> Self {
        DelayFrame {
            state: CaState::Open,
            enabled: true,
            round: RttRound::default(),
            base_rtt: f64::INFINITY,
            linux_rtt,
            restart_on_idle,
            keep_base_on_restart: false,
            last_snd_nxt: 0,
            high_snd_nxt: 0,
            restarts: 0,
        }
    }

    /// `vegas_enable`.
    pub fn enable(&mut self, snd_nxt: u64) {
        self.enabled = true;
        self.round.beg_snd_nxt = snd_nxt;
        self.round.clear();
    }

    /// `vegas_disable`.
    pub fn disable(&mut self) {
        self.enabled = false;
    }

    /// Linux `vegas_state` (the algorithms' `on_state`): the delay-based rule
    /// runs in Open only; back in Open, a round starts at the `snd_nxt` of
    /// the ACK just processed.
    pub fn set_state(&mut self, new: CaState) {
        self.state = new;
        if new == CaState::Open {
            self.enable(self.last_snd_nxt);
        } else {
            self.disable();
        }
    }

    /// Every ACK (`on_ack_sample`): `pkts_acked` with the sample. Returns
    /// the sample as used (Linux `vrtt`), if any.
    pub fn on_ack_sample(&mut self, s: &AckSample) -> Option<f64> {
        self.last_snd_nxt = s.snd_nxt;
        self.high_snd_nxt = self.high_snd_nxt.max(s.snd_nxt);
        let used = s.rtt.filter(|r| *r >= 0.0).map(|r| if self.linux_rtt { linux_vrtt(r) } else { r.max(1e-9) });
        if let Some(v) = used {
            self.base_rtt = self.base_rtt.min(v);
            self.round.add(v);
        }
        used
    }

    /// `on_send`: raises TX_START (re-initialisation) when nothing else is
    /// in flight. Returns whether it re-initialised.
    pub fn on_send(&mut self, in_flight: u64) -> bool {
        if self.restart_on_idle && in_flight <= 1 {
            self.restart();
            true
        } else {
            false
        }
    }

    /// `tcp_vegas_init` from `cwnd_event`: baseRTT forgotten (unless
    /// `keep_base_on_restart`), then `vegas_enable` — also in the Loss state,
    /// as in Linux, where TX_START follows the timeout's retransmission.
    pub fn restart(&mut self) {
        if !self.keep_base_on_restart {
            self.base_rtt = f64::INFINITY;
        }
        self.restarts += 1;
        self.enable(self.high_snd_nxt);
    }

    pub fn state(&self) -> CaState {
        self.state
    }

    /// Re-initialisations so far (TX_START events).
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// `snd_nxt` of the latest ACK sample.
    pub fn snd_nxt(&self) -> u64 {
        self.last_snd_nxt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(snd_una: u64, snd_nxt: u64, rtt: Option<f64>, duplicate: bool) -> AckSample {
        AckSample { rtt, snd_una, snd_nxt, duplicate, ..AckSample::test(0.0, 1) }
    }

    #[test]
    fn vrtt_adds_one_microsecond_to_whole_microseconds() {
        // tcp_vegas_pkts_acked: vrtt = rtt_us + 1.
        assert!((linux_vrtt(0.0) - 1e-6).abs() < 1e-15);
        assert!((linux_vrtt(0.0400009) - 0.040001).abs() < 1e-12);
    }

    #[test]
    fn base_is_the_connection_minimum_and_rounds_keep_their_own() {
        let mut f = DelayFrame::new(false, true);
        for (una, r) in [(1, 0.05), (2, 0.04), (3, 0.06)] {
            f.on_ack_sample(&ack(una, 10, Some(r), false));
        }
        assert_eq!(f.base_rtt, 0.04);
        assert_eq!((f.round.count, f.round.min), (3, 0.04));
        assert!((f.round.mean() - 0.05).abs() < 1e-12);
        f.round.clear();
        f.on_ack_sample(&ack(4, 10, Some(0.07), false));
        assert_eq!((f.round.count, f.round.min, f.base_rtt), (1, 0.07, 0.04));
        // A round ends on the ACK that passes beg_snd_nxt, not the one reaching it.
        f.round.beg_snd_nxt = 10;
        assert!(!f.round.ended_by(10));
        assert!(f.round.ended_by(11));
    }

    #[test]
    fn disabled_outside_open_and_restarted_on_return() {
        // tcp_vegas_state: Open -> vegas_enable (beg_snd_nxt = snd_nxt of the
        // ACK just processed, fresh round), any other state -> vegas_disable.
        let mut f = DelayFrame::new(false, true);
        f.on_ack_sample(&ack(5, 20, Some(0.05), false));
        f.on_ack_sample(&ack(5, 20, Some(0.05), true));
        f.set_state(CaState::Disorder);
        assert!(!f.enabled);
        f.on_ack_sample(&ack(8, 23, Some(0.05), false));
        assert!(!f.enabled, "an ACK alone changes nothing: the sender tells the state");
        f.set_state(CaState::Open);
        assert!(f.enabled);
        assert_eq!((f.round.beg_snd_nxt, f.round.count), (23, 0));
        for s in [CaState::Recovery, CaState::Cwr, CaState::Loss] {
            f.set_state(s);
            assert!(!f.enabled, "{s:?}");
            f.on_ack_sample(&ack(30, 40, Some(0.05), false));
            f.set_state(CaState::Open);
            assert!(f.enabled);
            assert_eq!(f.round.beg_snd_nxt, 40);
        }
    }

    #[test]
    fn tx_start_reinitialises_the_base_rtt() {
        // cwnd_event(TX_START) -> tcp_vegas_init: baseRTT = inf, enable.
        let mut f = DelayFrame::new(false, true);
        f.on_ack_sample(&ack(5, 20, Some(0.05), false));
        assert!(!f.on_send(3));
        assert_eq!(f.base_rtt, 0.05);
        assert!(f.on_send(1));
        assert_eq!(f.base_rtt, f64::INFINITY);
        assert!(f.enabled);
        assert_eq!(f.round.beg_snd_nxt, 20);
        // Without idle restart, or keeping the base (Compound port), it stays.
        let mut g = DelayFrame::new(false, false);
        g.on_ack_sample(&ack(5, 20, Some(0.05), false));
        assert!(!g.on_send(1));
        assert_eq!(g.base_rtt, 0.05);
        let mut h = DelayFrame::new(false, true);
        h.keep_base_on_restart = true;
        h.on_ack_sample(&ack(5, 20, Some(0.05), false));
        assert!(h.on_send(1));
        assert_eq!(h.base_rtt, 0.05);
    }
}
