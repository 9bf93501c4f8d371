//! Retransmission timeout estimator, RFC 6298.
//!
//! "When the first RTT measurement R is made, the host MUST set SRTT <- R,
//! RTTVAR <- R/2, RTO <- SRTT + max (G, K*RTTVAR) where K = 4." Later samples:
//! "RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, SRTT <- (1 - alpha) *
//! SRTT + alpha * R'" with alpha = 1/8, beta = 1/4. The RTO is clamped to
//! `[min_rto, max_rto]` (RFC 6298 recommends a 1 s minimum; Linux uses 200 ms,
//! the default here). On expiry the timer backs off exponentially (RFC 6298
//! 5.5) and keeps the backed-off value until a new valid sample (Karn).
//!
//! Two ways to apply the minimum ([`RtoMode`]): RFC 6298 clamps the whole
//! value; Linux floors the variance term (`rttvar >= rto_min` in
//! `tcp_rtt_estimator`/`tcp_set_rto`), so `RTO >= SRTT + min_rto`. The
//! difference matters with a long, slowly filling queue: RTTVAR decays towards
//! zero while SRTT lags the rising RTT, and the RFC form then expires just
//! before the fast retransmission's ACK returns (a spurious timeout).
//! Linux's asymmetric deviation gain and per-window `mdev_max` are not modelled.

use crate::spec::RtoMode;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    pub srtt: f64,
    pub rttvar: f64,
    rto: f64,
    pub min_rto: f64,
    pub max_rto: f64,
    /// Clock granularity G (seconds).
    pub granularity: f64,
    pub mode: RtoMode,
    pub backoff: u32,
    pub samples: u64,
    pub sum: f64,
    pub min_rtt: f64,
    pub max_rtt: f64,
}

impl RttEstimator {
    pub fn new(init_rto: f64, min_rto: f64, max_rto: f64, mode: RtoMode) -> Self {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            rto: init_rto,
            min_rto,
            max_rto,
            granularity: 0.0,
            mode,
            backoff: 0,
            samples: 0,
            sum: 0.0,
            min_rtt: f64::INFINITY,
            max_rtt: 0.0,
        }
    }

    pub fn on_sample(&mut self, r: f64) {
        if self.samples == 0 {
            self.srtt = r;
            self.rttvar = r / 2.0;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        self.rto = match self.mode {
            RtoMode::Rfc6298 => (self.srtt + self.granularity.max(4.0 * self.rttvar)).max(self.min_rto),
            RtoMode::Linux => self.srtt + (4.0 * self.rttvar).max(self.min_rto),
        }
        .min(self.max_rto);
        self.backoff = 0;
        self.samples += 1;
        self.sum += r;
        self.min_rtt = self.min_rtt.min(r);
        self.max_rtt = self.max_rtt.max(r);
    }

    /// The current timeout including backoff, seconds.
    #[inline]
    pub fn rto(&self) -> f64 {
        if self.backoff == 0 {
            return self.rto;
        }
        (self.rto * (1u64 << self.backoff.min(30)) as f64).min(self.max_rto)
    }

    pub fn on_timeout(&mut self) {
        self.backoff += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_later_samples_follow_rfc6298() {
        let mut e = RttEstimator::new(1.0, 0.2, 60.0, RtoMode::Rfc6298);
        assert_eq!(e.rto(), 1.0);
        e.on_sample(0.1);
        assert_eq!((e.srtt, e.rttvar), (0.1, 0.05));
        // RTO = 0.1 + 4 * 0.05 = 0.3
        assert!((e.rto() - 0.3).abs() < 1e-12);
        e.on_sample(0.2);
        // RTTVAR = 0.75*0.05 + 0.25*0.1 = 0.0625; SRTT = 0.875*0.1 + 0.125*0.2 = 0.1125
        assert!((e.rttvar - 0.0625).abs() < 1e-12);
        assert!((e.srtt - 0.1125).abs() < 1e-12);
        assert!((e.rto() - (0.1125 + 0.25)).abs() < 1e-12);
    }

    #[test]
    fn minimum_clamps_and_backoff_doubles_until_a_new_sample() {
        let mut e = RttEstimator::new(1.0, 0.2, 60.0, RtoMode::Rfc6298);
        e.on_sample(0.01); // 0.01 + 0.02 -> clamped to 0.2
        assert_eq!(e.rto(), 0.2);
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), 0.8);
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), 60.0);
        e.on_sample(0.01);
        assert_eq!(e.rto(), 0.2);
    }

    #[test]
    fn linux_mode_floors_the_variance_term() {
        // Linux: RTO >= SRTT + rto_min even when RTTVAR is tiny.
        let mut e = RttEstimator::new(1.0, 0.2, 60.0, RtoMode::Linux);
        e.on_sample(0.3);
        for _ in 0..100 {
            e.on_sample(0.3);
        }
        assert!(e.rttvar < 1e-6);
        assert!((e.rto() - 0.5).abs() < 1e-9);
        let mut r = RttEstimator::new(1.0, 0.2, 60.0, RtoMode::Rfc6298);
        for _ in 0..100 {
            r.on_sample(0.3);
        }
        assert!((r.rto() - 0.3).abs() < 1e-6);
    }
}
