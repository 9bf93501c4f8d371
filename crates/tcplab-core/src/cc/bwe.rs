//! Westwood-family bandwidth estimation, as a component shared by Westwood+
//! and the algorithms built on its estimate (Westwood with Rate Estimation,
//! residual-capacity estimators, AdaptiveReno).
//!
//! Sources: Linux `net/ipv4/tcp_westwood.c` (`tcp_westwood_init`,
//! `tcp_westwood_pkts_acked`, `westwood_update_window`, `westwood_filter`,
//! `westwood_acked_count`, `westwood_fast_bw`, `update_rtt_min`,
//! `tcp_westwood_bw_rttmin`); Grieco & Mascolo, ACM CCR 34(2) 2004 (one
//! sample per RTT); ns-3 `tcp-westwood-plus.cc` (Tustin filter option).
//!
//! Units: Linux counts bytes (`snd_una` differences, one `mss_cache` per
//! duplicate ACK) and keeps `bw_est` in bytes per jiffy, then divides
//! `bw_est * rtt_min` by the MSS. The simulator counts segments, so the
//! estimate is kept directly in **segments per second** and
//! `bdp_segments() = bw_est [seg/s] * rtt_min [s]` needs no MSS: for
//! full-sized segments it equals Linux's `bw_est * rtt_min / mss_cache`
//! without the integer truncations of bytes/jiffy (which only matter below
//! about one MSS per jiffy). Times are exact seconds (Linux: jiffies).
//!
//! Per ACK, in Linux's order (since the 2024 reordering `pkts_acked` runs
//! before `in_ack_event`):
//! 1. `pkts_acked`: `rtt` = this ACK's RTT sample if any.
//! 2. `westwood_update_window`: on the first ACK take `snd_una` as the
//!    counting baseline; if more than `max(rtt, 50 ms)` has elapsed since the
//!    window opened, sample = counted / elapsed, filter it, reopen the window.
//! 3. Count this ACK (`westwood_acked_count`): cumulatively acknowledged
//!    segments; a duplicate ACK counts one segment and is remembered in
//!    `accounted`; a later cumulative ACK covering more than one segment is
//!    reduced by `accounted` (if `accounted` covers it all it counts one).
//! 4. `update_rtt_min`: `rtt_min = min(rtt_min, rtt)`, or `= rtt` after a reset.
//!
//! Deviation: Linux uses the plain "fast path" count (`snd_una` advance,
//! without the `accounted` correction) for header-predicted in-order ACKs and
//! the corrected count for "slow path" ACKs (duplicates, SACK, ...). Whether
//! header prediction succeeds is invisible here, so every ACK takes the slow
//! path; the two counts differ only for an ACK of new data arriving while
//! `accounted > 0`, where the slow path avoids counting segments twice (the
//! papers' rule).

use super::filters::{CascadedEwma, Ewma, IntervalSample, IntervalSampler, LowPass, RunningMin, TustinFilter};
use super::AckSample;

/// Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20: shortest sampling interval, seconds.
pub const WESTWOOD_RTT_MIN: f64 = 0.05;
/// Linux `TCP_WESTWOOD_INIT_RTT` = 20*HZ: initial `rtt` and `rtt_min`, seconds.
pub const WESTWOOD_INIT_RTT: f64 = 20.0;

/// Linux `westwood_acked_count`, in segments: the amount an ACK contributes to
/// the bandwidth sample, with duplicate ACKs counted as one delivered segment
/// each and later cumulative ACKs reduced by what duplicates pre-counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckAccounting {
    /// `snd_una` at the previous ACK.
    pub snd_una: u64,
    /// Segments already counted by duplicate ACKs.
    pub accounted: u64,
}

impl AckAccounting {
    /// Segments to count for an ACK that moved `snd_una` to `snd_una`.
    pub fn count(&mut self, snd_una: u64) -> u64 {
        let mut cumul = snd_una.saturating_sub(self.snd_una);
        if cumul == 0 {
            // Duplicate ACK: one segment left the network.
            self.accounted += 1;
            cumul = 1;
        }
        if cumul > 1 {
            // Partial or delayed ACK.
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = 1;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = snd_una;
        cumul
    }
}

/// Low-pass filter choice for [`WestwoodBwe`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BweFilter {
    /// Linux: two cascaded EWMAs with this gain (1/8).
    LinuxCascaded { gain: f64 },
    /// Westwood+ paper: one EWMA, `b = (1 - gain) b + gain s` (gain 0.1).
    Ewma { gain: f64 },
    /// ns-3 Westwood+: Tustin filter with coefficient `a` (0.9).
    Tustin { a: f64 },
}

impl BweFilter {
    fn build(self) -> LowPass {
        match self {
            BweFilter::LinuxCascaded { gain } => LowPass::Cascaded(CascadedEwma::new(gain)),
            BweFilter::Ewma { gain } => LowPass::Ewma(Ewma::new(gain)),
            BweFilter::Tustin { a } => LowPass::Tustin(TustinFilter::new(a)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BweConfig {
    /// Shortest sampling interval, seconds (Linux 50 ms).
    pub min_interval: f64,
    /// Initial `rtt` and `rtt_min`, seconds (Linux 20 s).
    pub init_rtt: f64,
    pub filter: BweFilter,
    /// Sampling interval basis: `None` = the latest RTT sample (Linux,
    /// Westwood+), `Some(T)` = a fixed interval T seconds (TCPW Rate
    /// Estimation with a configured T). Either way at least `min_interval`.
    pub fixed_interval: Option<f64>,
}

impl Default for BweConfig {
    fn default() -> Self {
        BweConfig {
            min_interval: WESTWOOD_RTT_MIN,
            init_rtt: WESTWOOD_INIT_RTT,
            filter: BweFilter::LinuxCascaded { gain: 1.0 / 8.0 },
            fixed_interval: None,
        }
    }
}

/// Westwood+ bandwidth estimator (Linux `struct westwood` minus the window
/// rules): one sample per RTT (at least 50 ms), low-pass filtered, plus the
/// latest RTT and the minimum RTT.
#[derive(Debug, Clone)]
pub struct WestwoodBwe {
    pub cfg: BweConfig,
    sampler: IntervalSampler,
    filter: LowPass,
    acks: AckAccounting,
    rtt: f64,
    rtt_min: RunningMin,
    first_ack: bool,
    last_sample: Option<IntervalSample>,
    samples: u64,
}

impl WestwoodBwe {
    pub fn new(cfg: BweConfig) -> Self {
        WestwoodBwe {
            cfg,
            sampler: IntervalSampler::new(cfg.min_interval),
            filter: cfg.filter.build(),
            acks: AckAccounting::default(),
            rtt: cfg.init_rtt,
            rtt_min: RunningMin::new_resetting(cfg.init_rtt),
            first_ack: true,
            last_sample: None,
            samples: 0,
        }
    }

    /// Connection start (Linux `tcp_westwood_init`: `rtt_win_sx = now`).
    /// Called lazily on the first send or ACK if not called before.
    pub fn start(&mut self, now: f64) {
        self.sampler.start(now);
    }

    /// Every ACK, duplicates included (`pkts_acked` then `in_ack_event`).
    /// Returns the interval sample if this ACK closed a window.
    pub fn on_ack(&mut self, s: &AckSample) -> Option<IntervalSample> {
        self.start(s.now);
        if let Some(r) = s.rtt {
            if r > 0.0 {
                self.rtt = r;
            }
        }
        // westwood_update_window
        let first = self.first_ack;
        if first {
            self.acks.snd_una = s.snd_una;
            self.first_ack = false;
        }
        let basis = self.cfg.fixed_interval.unwrap_or(self.rtt);
        let closed = self.sampler.poll(s.now, basis);
        if let Some(x) = closed {
            self.filter.update(x.rate());
            self.last_sample = Some(x);
            self.samples += 1;
        }
        // westwood_acked_count (see the module notes on the fast path); the
        // first ACK only sets the baseline, as Linux's fast path counts 0 for it.
        let counted = if first && !s.duplicate { 0 } else { self.acks.count(s.snd_una) };
        self.sampler.add(counted as f64);
        self.rtt_min.update(self.rtt);
        closed
    }

    /// Filtered bandwidth estimate, segments per second (Linux `bw_est`).
    pub fn bw_est(&self) -> f64 {
        self.filter.get()
    }

    /// First filter stage (Linux `bw_ns_est`).
    pub fn bw_ns_est(&self) -> f64 {
        self.filter.raw()
    }

    /// Latest RTT sample, seconds (Linux `rtt`).
    pub fn rtt(&self) -> f64 {
        self.rtt
    }

    /// Minimum RTT, seconds (Linux `rtt_min`).
    pub fn rtt_min(&self) -> f64 {
        self.rtt_min.get()
    }

    /// The next ACK sets `rtt_min` to the then-latest RTT (Linux after RTO).
    pub fn reset_rtt_min(&mut self) {
        self.rtt_min.request_reset();
    }

    /// `bw_est * rtt_min`, segments (not rounded).
    pub fn bdp_segments(&self) -> f64 {
        self.bw_est() * self.rtt_min()
    }

    /// Linux `tcp_westwood_bw_rttmin`: `max(bw_est * rtt_min / mss, 2)`
    /// truncated to whole segments.
    pub fn bw_rttmin(&self) -> f64 {
        self.bdp_segments().floor().max(2.0)
    }

    pub fn last_sample(&self) -> Option<IntervalSample> {
        self.last_sample
    }

    /// Number of bandwidth samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Segments counted in the open window.
    pub fn pending(&self) -> f64 {
        self.sampler.pending()
    }

    pub fn accounted(&self) -> u64 {
        self.acks.accounted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_acks_count_one_segment_and_are_deducted_later() {
        // westwood_acked_count: dupack -> cumul = mss, accounted += mss; a later
        // cumulative ACK > mss is reduced by accounted.
        let mut a = AckAccounting { snd_una: 100, accounted: 0 };
        assert_eq!(a.count(101), 1);
        assert_eq!(a.count(101), 1); // dupack
        assert_eq!(a.count(101), 1); // dupack
        assert_eq!(a.count(101), 1); // dupack
        assert_eq!(a.accounted, 3);
        // Recovery: the retransmission fills the hole and 5 segments are acked
        // at once; 3 of them were already counted by the dupacks.
        assert_eq!(a.count(106), 2);
        assert_eq!(a.accounted, 0);
        // A partial ACK smaller than what was accounted counts one segment.
        a.count(106);
        a.count(106);
        a.count(106); // accounted = 3
        assert_eq!(a.count(108), 1);
        assert_eq!(a.accounted, 1);
        // A one-segment ACK is never reduced (only cumul > mss is).
        assert_eq!(a.count(109), 1);
        assert_eq!(a.accounted, 1);
    }
}
