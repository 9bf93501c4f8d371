//! Residual Capacity Estimator (RCE): a sender-side estimate of the
//! bottleneck capacity from the spacing of returning ACKs, as used by
//! Kaneko & Katto's buffer-estimating Westwood (`westwood_bs.rs`).
//!
//! Source: K. Kaneko, J. Katto, "Reno Friendly TCP Westwood Based on Router
//! Buffer Estimation", ICAS-ICNS 2005, as restated in
//! `docs/papers/kk-westwood.md` and `docs/reference/cc-algorithms.md`
//! s14.2 (RCE is attributed there to Palazzi et al.; that paper was not
//! available):
//!
//! > the sender counts the packets it sends during one RTO-long interval and
//! > then watches the corresponding returning ACKs over `ACKs_slot_time`;
//! > `wasted_time` is the sum, over ACK inter-arrival gaps, of the time by
//! > which a gap exceeds the average gap (buffering periods); capacity
//! > `C = bits_ACKed / (ACKs_slot_time - wasted_time)`.
//!
//! Procedure here, one measurement at a time, measurements back to back:
//! 1. Counting: the measurement opens at an ACK at time `t0`; the packets it
//!    covers are the new segments sent from then on, `[first, end)` with
//!    `first` = `snd_nxt` at `t0` and `end` = `snd_nxt` at the first ACK at
//!    least one interval (the RTO by default) after `t0`. The sender's
//!    sends are seen at ACK granularity (the hooks give `snd_nxt` with every
//!    ACK; `on_send` carries no sequence number).
//! 2. Watching: the ACK slot opens at the first ACK that acknowledges
//!    `first` (`snd_una > first`) and closes at the ACK that acknowledges
//!    `end - 1` (`snd_una >= end`). Every ACK in between, duplicates
//!    included, adds one inter-arrival gap; `bits_ACKed` is what the ACKs
//!    after the opening one acknowledge, counted as Westwood counts
//!    (`bwe::AckAccounting`: a duplicate ACK is one delivered segment).
//! 3. `ACKs_slot_time` = close - open; average gap = slot / number of gaps;
//!    `wasted_time = sum max(0, gap - average)`;
//!    `C = bits_ACKed / (slot - wasted_time)`.
//!
//! Choices the source leaves open (parameters of the algorithms using it):
//! - `interval`: `None` = the RTO, computed from this estimator's own RTT
//!   samples as Linux does (`srtt + max(4 rttvar, 200 ms)`, RFC 6298
//!   smoothing) since the hooks do not carry the sender's RTO; or a fixed
//!   time.
//! - `discard_on_loss` (default true): a measurement during which a
//!   duplicate ACK arrived, or which an RTO interrupted, is dropped: the
//!   recovery's gaps measure the loss, not the path.
//! - `min_gaps` (default 10): fewer gaps give no estimate.
//! - `filter` of successive measurements: `last` (default: the newest
//!   measurement, the procedure as written), `ewma` (gain), `max`.
//!
//! Units: segments and seconds; the estimate is in segments per second
//! (multiply by the wire packet size in bits for bit/s).

use super::bwe::AckAccounting;
use super::filters::Ewma;
use super::AckSample;

/// How successive RCE measurements are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RceFilter {
    /// The newest measurement.
    Last,
    /// EWMA with this gain on the new measurement.
    Ewma { gain: f64 },
    /// The largest measurement so far.
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RceConfig {
    /// Counting interval, seconds; `None` = the RTO.
    pub interval: Option<f64>,
    pub discard_on_loss: bool,
    pub min_gaps: u32,
    pub filter: RceFilter,
    /// Floor of the RTO, seconds (Linux `TCP_RTO_MIN`, 200 ms).
    pub min_rto: f64,
}

impl Default for RceConfig {
    fn default() -> Self {
        RceConfig { interval: None, discard_on_loss: true, min_gaps: 10, filter: RceFilter::Last, min_rto: 0.2 }
    }
}

/// One completed measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RceSample {
    /// Time the ACK slot closed, s.
    pub time: f64,
    /// Segments acknowledged in the slot (after its opening ACK).
    pub acked: f64,
    /// `ACKs_slot_time`, s.
    pub slot: f64,
    /// `wasted_time`, s.
    pub wasted: f64,
    /// Number of inter-arrival gaps.
    pub gaps: u32,
    /// `acked / (slot - wasted)`, segments per second.
    pub capacity: f64,
}

#[derive(Debug, Clone)]
struct Measurement {
    t0: f64,
    first: u64,
    end: Option<u64>,
    open_at: Option<f64>,
    last_ack: f64,
    acked: f64,
    lossy: bool,
}

/// Computes one RCE value from an ACK slot: inter-arrival `gaps` (s) and the
/// segments acknowledged over them. Returns (wasted_time, capacity).
pub fn rce_capacity(gaps: &[f64], acked: f64) -> (f64, f64) {
    if gaps.is_empty() {
        return (0.0, 0.0);
    }
    let slot: f64 = gaps.iter().sum();
    let avg = slot / gaps.len() as f64;
    let wasted: f64 = gaps.iter().map(|g| (g - avg).max(0.0)).sum();
    let eff = slot - wasted;
    (wasted, if eff > 0.0 { acked / eff } else { 0.0 })
}

#[derive(Debug, Clone)]
pub struct Rce {
    pub cfg: RceConfig,
    acks: AckAccounting,
    first_ack: bool,
    srtt: f64,
    rttvar: f64,
    cur: Option<Measurement>,
    gaps: Vec<f64>,
    ewma: Ewma,
    value: f64,
    last: Option<RceSample>,
    samples: u64,
    discarded: u64,
}

impl Rce {
    pub fn new(cfg: RceConfig) -> Self {
        let gain = match cfg.filter {
            RceFilter::Ewma { gain } => gain,
            _ => 1.0,
        };
        Rce {
            cfg,
            acks: AckAccounting::default(),
            first_ack: true,
            srtt: 0.0,
            rttvar: 0.0,
            cur: None,
            gaps: Vec::new(),
            ewma: Ewma::new(gain),
            value: 0.0,
            last: None,
            samples: 0,
            discarded: 0,
        }
    }

    /// Linux-style RTO from this estimator's RTT samples (s); 1 s before any.
    pub fn rto(&self) -> f64 {
        if self.srtt == 0.0 {
            1.0
        } else {
            self.srtt + (4.0 * self.rttvar).max(self.cfg.min_rto)
        }
    }

    fn interval(&self) -> f64 {
        self.cfg.interval.unwrap_or_else(|| self.rto())
    }

    /// Every ACK, duplicates included. Returns the measurement it completed, if any.
    pub fn on_ack(&mut self, s: &AckSample) -> Option<RceSample> {
        if let Some(r) = s.rtt {
            if r > 0.0 {
                if self.srtt == 0.0 {
                    self.srtt = r;
                    self.rttvar = r / 2.0;
                } else {
                    self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
                    self.srtt = 0.875 * self.srtt + 0.125 * r;
                }
            }
        }
        let counted = if self.first_ack && !s.duplicate {
            self.acks.snd_una = s.snd_una;
            0
        } else {
            self.acks.count(s.snd_una)
        };
        self.first_ack = false;
        let interval = self.interval();
        let mut done = None;
        match self.cur.as_mut() {
            None => {
                self.cur = Some(Measurement::open(s));
                self.gaps.clear();
            }
            Some(m) => {
                if m.end.is_none() && s.now - m.t0 >= interval {
                    if s.snd_nxt > m.first {
                        m.end = Some(s.snd_nxt);
                    } else {
                        // Nothing new was sent: start again.
                        *m = Measurement::open(s);
                        self.gaps.clear();
                        return None;
                    }
                }
                match m.open_at {
                    None => {
                        if s.snd_una > m.first {
                            m.open_at = Some(s.now);
                            m.last_ack = s.now;
                        }
                    }
                    Some(_) => {
                        self.gaps.push(s.now - m.last_ack);
                        m.last_ack = s.now;
                        m.acked += counted as f64;
                        if s.duplicate {
                            m.lossy = true;
                        }
                    }
                }
                if let (Some(end), Some(open)) = (m.end, m.open_at) {
                    if s.snd_una >= end {
                        let lossy = m.lossy;
                        let acked = m.acked;
                        let (wasted, capacity) = rce_capacity(&self.gaps, acked);
                        let n = self.gaps.len() as u32;
                        let sample = RceSample { time: s.now, acked, slot: s.now - open, wasted, gaps: n, capacity };
                        *m = Measurement::open(s);
                        self.gaps.clear();
                        if (lossy && self.cfg.discard_on_loss) || n < self.cfg.min_gaps || capacity <= 0.0 {
                            self.discarded += 1;
                        } else {
                            self.accept(sample);
                            done = Some(sample);
                        }
                    }
                }
            }
        }
        done
    }

    fn accept(&mut self, x: RceSample) {
        self.value = match self.cfg.filter {
            RceFilter::Last => x.capacity,
            RceFilter::Ewma { .. } => self.ewma.update(x.capacity),
            RceFilter::Max => self.value.max(x.capacity),
        };
        self.last = Some(x);
        self.samples += 1;
    }

    /// A retransmission timeout: the sender goes back N, so the current
    /// measurement's sequence range no longer describes a clean ACK slot.
    pub fn on_rto(&mut self) {
        if self.cur.take().is_some() {
            self.discarded += 1;
        }
        self.gaps.clear();
    }

    /// Capacity estimate, segments per second (0 before the first measurement).
    pub fn capacity(&self) -> f64 {
        self.value
    }

    pub fn last_sample(&self) -> Option<RceSample> {
        self.last
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn discarded(&self) -> u64 {
        self.discarded
    }
}

impl Measurement {
    fn open(s: &AckSample) -> Self {
        Measurement { t0: s.now, first: s.snd_nxt, end: None, open_at: None, last_ack: s.now, acked: 0.0, lossy: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: f64, snd_una: u64, snd_nxt: u64, duplicate: bool) -> AckSample {
        AckSample {
            now,
            acked: 1,
            cum_acked: if duplicate { 0 } else { 1 },
            rtt: Some(0.1),
            srtt: 0.1,
            min_rtt: 0.1,
            in_flight: snd_nxt - snd_una,
            snd_una,
            snd_nxt,
            delivered: snd_una,
            cwnd_limited: true,
            duplicate,
        }
    }

    #[test]
    fn wasted_time_by_hand() {
        // Gaps 1,1,1,5 (avg 2): wasted = 3; 8 segments over 8 - 3 = 5 s.
        let (w, c) = rce_capacity(&[1.0, 1.0, 1.0, 5.0], 8.0);
        assert!((w - 3.0).abs() < 1e-12);
        assert!((c - 1.6).abs() < 1e-12);
        // Equal gaps: nothing wasted, capacity = rate.
        let (w, c) = rce_capacity(&[0.5; 10], 10.0);
        assert_eq!(w, 0.0);
        assert!((c - 2.0).abs() < 1e-12);
    }

    /// A saturated ACK clock: one ACK per 1/rate s, window `win` segments.
    fn clocked(rce: &mut Rce, rate: f64, win: u64, n: u64, t0: f64, una0: u64) -> (f64, u64) {
        let mut t = t0;
        let mut una = una0;
        for _ in 0..n {
            t += 1.0 / rate;
            una += 1;
            rce.on_ack(&ack(t, una, una + win, false));
        }
        (t, una)
    }

    #[test]
    fn saturated_ack_clock_gives_the_rate_exactly() {
        let mut r = Rce::new(RceConfig { interval: Some(0.5), ..Default::default() });
        clocked(&mut r, 1000.0, 100, 5000, 0.0, 0);
        assert!(r.samples() >= 3, "{}", r.samples());
        assert!((r.capacity() - 1000.0).abs() < 1e-6, "{}", r.capacity());
    }

    #[test]
    fn idle_periods_are_removed() {
        // Bursts of 20 ACKs at 1000/s separated by 80 ms idle: achieved rate
        // is 20/(0.1) = 200/s, but the bottleneck rate is 1000/s.
        let mut r = Rce::new(RceConfig { interval: Some(0.5), min_gaps: 10, ..Default::default() });
        let mut t = 0.0;
        let mut una = 0;
        for _ in 0..100 {
            for _ in 0..20 {
                t += 0.001;
                una += 1;
                r.on_ack(&ack(t, una, una + 20, false));
            }
            t += 0.08;
        }
        let s = r.last_sample().unwrap();
        // Each idle gap (0.081 s) exceeds the average, so wasted removes all
        // but one average gap per burst; the estimate is far above the
        // achieved 200/s and within a factor (1 + avg/0.02) of 1000/s.
        assert!(s.capacity > 500.0 && s.capacity <= 1000.0, "{s:?}");
    }

    #[test]
    fn lossy_measurements_are_discarded() {
        let mut r = Rce::new(RceConfig { interval: Some(0.2), ..Default::default() });
        let (mut t, una) = clocked(&mut r, 1000.0, 100, 150, 0.0, 0);
        for _ in 0..3 {
            t += 0.001;
            r.on_ack(&ack(t, una, una + 100, true));
        }
        clocked(&mut r, 1000.0, 100, 400, t, una);
        assert!(r.discarded() >= 1);
    }
}
