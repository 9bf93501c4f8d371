//! Reno / NewReno congestion control (the window rules; the loss-recovery
//! variant, Reno, NewReno or SACK, is chosen per flow in the sender).
//!
//! Sources:
//! - RFC 5681 section 3.1: slow start `cwnd += min(N, SMSS)` per ACK,
//!   congestion avoidance `cwnd += SMSS*SMSS/cwnd`, on loss
//!   `ssthresh = max(FlightSize / 2, 2*SMSS)`.
//! - Linux `net/ipv4/tcp_cong.c`: `tcp_reno_cong_avoid`, `tcp_slow_start`,
//!   `tcp_cong_avoid_ai`, `tcp_reno_ssthresh` (`max(cwnd >> 1, 2)`): integer
//!   cwnd in packets with the `snd_cwnd_cnt` credit counter; slow start leftover
//!   credit is applied to congestion avoidance in the same ACK.
//!
//! Variants (parameter `mode`):
//! - `linux` (default): integer cwnd with the credit counter, as above.
//! - `float`: fractional cwnd updated per ACK of new data, as RFC 5681 and
//!   ns-2's `opencwnd()`: slow start `cwnd += min(acked, 1)` ("cwnd +=
//!   min (N, SMSS)"), congestion avoidance `cwnd += 1/cwnd` ("cwnd +=
//!   SMSS*SMSS/cwnd"), whatever the number of segments the ACK covers.
//!
//! Deviations: the cwnd clamp (`snd_cwnd_clamp`) is the receiver window,
//! enforced by the sender; growth is gated by `cwnd_limited` as Linux's
//! `tcp_is_cwnd_limited` without its slow-start "2 x max_packets_out" allowance.

use super::{AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Linux,
    Float,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsthreshBasis {
    /// Linux and ns-2: half the congestion window.
    Cwnd,
    /// RFC 5681 equation (4): half the FlightSize.
    FlightSize,
}

param_choice!(Mode { Linux => "linux", Float => "float" });
param_choice!(SsthreshBasis { Cwnd => "cwnd", FlightSize => "flightsize" });

/// Reno's parameters (`flows[i].cc.params`); `Default` is where each
/// default is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: Mode,
    pub ssthresh_basis: SsthreshBasis,
    /// Fraction of the window kept after a loss.
    pub beta: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config { mode: Mode::Linux, ssthresh_basis: SsthreshBasis::Cwnd, beta: 0.5 }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        Ok(Config {
            mode: p.pick("mode", d.mode)?,
            ssthresh_basis: p.pick("ssthresh_basis", d.ssthresh_basis)?,
            beta: p.f64("beta", d.beta, |b| b > 0.0 && b < 1.0, "a fraction in (0, 1)")?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Reno {
    pub mode: Mode,
    pub basis: SsthreshBasis,
    /// Fraction of the window kept after a loss (0.5).
    pub beta: f64,
    /// Linux `snd_cwnd_cnt`: ACK credit toward the next increment (integer mode).
    pub cwnd_cnt: u64,
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    AlgorithmInfo {
        name: "newreno",
        aliases: &["reno"],
        description: "Reno/NewReno window rules: slow start, +1 segment per RTT, halve on loss. \
                      The recovery variant (reno, newreno, sack) is the flow's `recovery` setting.",
        params: vec![
            ParamInfo::new("mode", d.mode, "linux: integer cwnd with snd_cwnd_cnt credit; float: per ACK, +min(N, 1) in slow start and +1/cwnd in congestion avoidance (RFC 5681, ns-2)", "Linux tcp_cong.c; ns-2 tcp.cc"),
            ParamInfo::new("ssthresh_basis", d.ssthresh_basis, "cwnd: ssthresh = max(beta*cwnd, 2) (Linux, ns-2); flightsize: max(beta*FlightSize, 2) (RFC 5681 eq. 4)", "RFC 5681 s3.1; Linux tcp_reno_ssthresh"),
            ParamInfo::new("beta", d.beta, "fraction of the window kept after a loss", "RFC 5681"),
        ],
    }
}

/// Registry constructor.
pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(Reno::from_params(map, field)?))
}

impl Reno {
    pub fn new(mode: Mode) -> Self {
        Reno::with(&Config { mode, ..Config::default() })
    }

    pub fn with(c: &Config) -> Self {
        Reno { mode: c.mode, basis: c.ssthresh_basis, beta: c.beta, cwnd_cnt: 0 }
    }

    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(Reno::with(&Config::from_params(map, field)?))
    }

    /// Linux `tcp_slow_start` (integer cwnd): `cwnd = min(cwnd + acked,
    /// ssthresh)`; returns the credit left once ssthresh is reached, which
    /// Linux applies to congestion avoidance in the same ACK. Shared by every
    /// algorithm with Linux's standard slow start.
    pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
        let cwnd = w.cwnd as u64;
        let ss = if w.ssthresh >= u64::MAX as f64 { u64::MAX } else { w.ssthresh as u64 };
        let new = (cwnd + acked).min(ss);
        w.cwnd = new as f64;
        acked - (new - cwnd)
    }

    /// Fractional slow start counting segments (RFC 5681 with ABC, L = acked):
    /// `cwnd += acked` up to ssthresh; returns the credit left for congestion
    /// avoidance in the same ACK. Shared by the paper/RFC variants of the
    /// algorithms that grow per segment delivered.
    pub fn slow_start_float(w: &mut Window, acked: f64) -> f64 {
        if !w.in_slow_start() {
            return acked;
        }
        let used = acked.min(w.ssthresh - w.cwnd);
        w.cwnd += used;
        acked - used
    }

    /// Linux `tcp_cong_avoid_ai(tp, w, acked)`: one segment per `w` acked.
    pub fn cong_avoid_ai(w: &mut Window, cwnd_cnt: &mut u64, width: u64, acked: u64) {
        let width = width.max(1);
        if *cwnd_cnt >= width {
            *cwnd_cnt = 0;
            w.cwnd += 1.0;
        }
        *cwnd_cnt += acked;
        if *cwnd_cnt >= width {
            let delta = *cwnd_cnt / width;
            *cwnd_cnt -= delta * width;
            w.cwnd += delta as f64;
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if !s.cwnd_limited || s.acked == 0 {
            return;
        }
        match self.mode {
            Mode::Linux => {
                let mut acked = s.acked as u64;
                if w.in_slow_start() {
                    acked = Self::slow_start(w, acked);
                    if acked == 0 {
                        return;
                    }
                }
                let width = w.cwnd as u64;
                Self::cong_avoid_ai(w, &mut self.cwnd_cnt, width, acked);
            }
            Mode::Float => {
                if w.in_slow_start() {
                    w.cwnd = (w.cwnd + 1.0).min(w.ssthresh.max(w.cwnd));
                } else {
                    w.cwnd += 1.0 / w.cwnd;
                }
            }
        }
    }

    fn on_rto(&mut self, _w: &mut Window, _now: f64) {
        // Linux tcp_enter_loss zeroes snd_cwnd_cnt on every timeout.
        self.cwnd_cnt = 0;
    }

    fn ssthresh(&mut self, w: &Window, _event: LossEvent, in_flight: u64, _now: f64) -> f64 {
        self.cwnd_cnt = 0;
        let base = match self.basis {
            SsthreshBasis::Cwnd => w.cwnd,
            SsthreshBasis::FlightSize => in_flight as f64,
        };
        match self.mode {
            Mode::Linux => ((base * self.beta).floor()).max(2.0),
            Mode::Float => (base * self.beta).max(2.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(acked: u32) -> AckSample {
        AckSample::test(0.0, acked)
    }

    #[test]
    fn slow_start_adds_one_segment_per_segment_acked_up_to_ssthresh() {
        // RFC 5681 s3.1 / Linux tcp_slow_start: cwnd = min(cwnd + acked, ssthresh),
        // the rest of the credit goes to congestion avoidance.
        let mut r = Reno::new(Mode::Linux);
        let mut w = Window { cwnd: 10.0, ssthresh: 12.0 };
        r.on_ack(&mut w, &sample(5));
        assert_eq!(w.cwnd, 12.0);
        assert_eq!(r.cwnd_cnt, 3);
    }

    #[test]
    fn linux_congestion_avoidance_adds_one_segment_per_window_acked() {
        // tcp_cong_avoid_ai(w = cwnd): +1 segment after cwnd segments are acked.
        let mut r = Reno::new(Mode::Linux);
        let mut w = Window { cwnd: 100.0, ssthresh: 50.0 };
        for _ in 0..99 {
            r.on_ack(&mut w, &sample(1));
        }
        assert_eq!(w.cwnd, 100.0);
        r.on_ack(&mut w, &sample(1));
        assert_eq!(w.cwnd, 101.0);
        // From 101 to 111 takes 101 + 102 + ... + 110 = 1055 ACKs, not one fewer.
        for _ in 0..1054 {
            r.on_ack(&mut w, &sample(1));
        }
        assert_eq!(w.cwnd, 110.0);
        r.on_ack(&mut w, &sample(1));
        assert_eq!(w.cwnd, 111.0);
    }

    #[test]
    fn float_congestion_avoidance_is_one_over_cwnd_per_ack() {
        // RFC 5681 (3.2): cwnd += SMSS*SMSS/cwnd per ACK, whatever it covers.
        let mut r = Reno::new(Mode::Float);
        let mut w = Window { cwnd: 20.0, ssthresh: 10.0 };
        r.on_ack(&mut w, &sample(1));
        assert!((w.cwnd - 20.05).abs() < 1e-12);
        r.on_ack(&mut w, &sample(2));
        assert!((w.cwnd - (20.05 + 1.0 / 20.05)).abs() < 1e-12);
    }

    #[test]
    fn float_slow_start_adds_at_most_one_segment_per_ack() {
        // RFC 5681 (2): cwnd += min (N, SMSS).
        let mut r = Reno::new(Mode::Float);
        let mut w = Window { cwnd: 10.0, ssthresh: 100.0 };
        r.on_ack(&mut w, &sample(2));
        assert_eq!(w.cwnd, 11.0);
    }

    #[test]
    fn ssthresh_is_half_the_window_at_least_two() {
        // Linux tcp_reno_ssthresh: max(cwnd >> 1, 2); RFC 5681 eq. (4) with FlightSize.
        let mut r = Reno::new(Mode::Linux);
        assert_eq!(r.ssthresh(&Window { cwnd: 101.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 90, 0.0), 50.0);
        assert_eq!(r.ssthresh(&Window { cwnd: 3.0, ssthresh: 1e9 }, LossEvent::Timeout, 3, 0.0), 2.0);
        let mut rfc = Reno { basis: SsthreshBasis::FlightSize, ..Reno::new(Mode::Float) };
        assert_eq!(rfc.ssthresh(&Window { cwnd: 100.0, ssthresh: 1e9 }, LossEvent::FastRecovery, 60, 0.0), 30.0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut r = Reno::new(Mode::Linux);
        let mut w = Window { cwnd: 10.0, ssthresh: 100.0 };
        let mut s = sample(5);
        s.cwnd_limited = false;
        r.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 10.0);
    }
}
