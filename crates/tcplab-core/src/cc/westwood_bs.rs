//! Reno-friendly TCP Westwood by router buffer estimation (`westwood-bs`,
//! aliases `kk-westwood`, `westwood-kk`): Kaneko & Katto's proposal.
//!
//! Source: K. Kaneko, J. Katto, "Reno Friendly TCP Westwood Based on Router
//! Buffer Estimation", ICAS-ICNS 2005, as restated in
//! `docs/papers/kk-westwood.md` and `docs/reference/cc-algorithms.md`
//! s14.2. It is Westwood with Rate Estimation ([`super::westwood_re`], which
//! supplies ERE, RTT_min, Reno growth and the loss timing) plus the
//! Residual Capacity Estimator ([`super::rce`], which supplies C), and a
//! different post-loss window:
//!
//! ```text
//! BS_estimate          = (RTT - RTT_min) * C / (packet_size * 8)        packets
//! BDP                  = C * RTT_min / (packet_size * 8)                packets
//! diff_delay           = (BS_estimate - BDP) * packet_size * 8 / C      s
//! compensated_RTT_min  = RTT / (RTT - diff_delay) * RTT_min             s
//! ssthresh (on loss)   = ERE * compensated_RTT_min / (packet_size * 8)  packets
//! ```
//!
//! then `cwnd = ssthresh` if cwnd > ssthresh (3 duplicate ACKs) or cwnd = 1
//! (timeout), as Westwood. Here C and ERE are in segments per second, so the
//! `packet_size * 8` factors vanish. Algebraically diff_delay = RTT - 2
//! RTT_min and compensated_RTT_min = RTT / 2 whatever C is (the reference
//! notes it; the code evaluates the formulas as written and the tests check
//! the identity). Before the first RCE measurement (C unknown) the identity
//! is used, which is the same value.
//!
//! Unspecified by the paper, exposed as parameters:
//! - `rtt_sample`: which RTT enters BS_estimate and compensated_RTT_min:
//!   `latest` (default: the latest RTT sample at the loss, the same sample
//!   Westwood's estimator keeps, Linux `w->rtt`; at a drop-tail loss it is
//!   close to the RTT of a full buffer, which is what the compensation is
//!   for), `srtt` (the sender's smoothed RTT), `epoch_max` (largest sample
//!   since the previous loss).
//! - the RCE's `rce_interval` (0 = the RTO), `rce_filter` (`last`, `ewma`,
//!   `max`), `rce_gain`, `rce_discard_on_loss`, `rce_min_gaps` (see `rce.rs`).
//! - everything Westwood-RE takes (interval T, filter, timing...).
//!
//! Traced variables (`trace_vars`, sampled into the run's `cc_ts` series):
//! `rtt` (the RTT the estimate uses), `rtt_min`, `capacity_seg_s` (RCE),
//! `bs_estimate` (packets), `bdp` (packets), `ere_seg_s`, `comp_rtt_min`,
//! `rce_count` (completed capacity measurements, so a consumer can pick each
//! new one) and `rce_last_seg_s` (the raw value of the latest measurement).

use super::rce::{Rce, RceConfig, RceFilter};
use super::westwood::Westwood;
use super::westwood_re;
use super::{AckSample, AlgorithmInfo, CongestionControl, LossEvent, ParamInfo, Params, Window};
use crate::error::SpecError;
use crate::param_choice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttSample {
    Latest,
    Srtt,
    EpochMax,
}

/// The paper's quantities at one instant (segments, seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferEstimate {
    pub rtt: f64,
    pub rtt_min: f64,
    /// C, segments/s (0 if not measured yet).
    pub capacity: f64,
    pub bs_estimate: f64,
    pub bdp: f64,
    pub diff_delay: f64,
    pub compensated_rtt_min: f64,
}

/// Evaluates the paper's formulas as written. `capacity` in segments/s; with
/// `capacity <= 0` BS_estimate and BDP are 0 and diff_delay uses the
/// identity RTT - 2 RTT_min.
pub fn buffer_estimate(rtt: f64, rtt_min: f64, capacity: f64) -> BufferEstimate {
    let (bs, bdp, diff) = if capacity > 0.0 {
        let bs = (rtt - rtt_min) * capacity;
        let bdp = capacity * rtt_min;
        (bs, bdp, (bs - bdp) / capacity)
    } else {
        (0.0, 0.0, rtt - 2.0 * rtt_min)
    };
    let den = rtt - diff;
    let comp = if den > 0.0 { rtt / den * rtt_min } else { rtt_min };
    BufferEstimate {
        rtt,
        rtt_min,
        capacity: capacity.max(0.0),
        bs_estimate: bs,
        bdp,
        diff_delay: diff,
        compensated_rtt_min: comp,
    }
}

pub struct WestwoodBs {
    pub ww: Westwood,
    pub rce: Rce,
    pub rtt_sample: RttSample,
    srtt: f64,
    epoch_max: f64,
    last_now: f64,
    rce_count: u64,
    rce_last: f64,
}

param_choice!(RttSample { Latest => "latest", Srtt => "srtt", EpochMax => "epoch_max" });

/// How successive RCE measurements combine (`rce_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RceKind {
    Last,
    Ewma,
    Max,
}

param_choice!(RceKind { Last => "last", Ewma => "ewma", Max => "max" });

/// Westwood-BS's parameters: Westwood-RE's plus the buffer estimate's;
/// `Default` is where each default is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub re: westwood_re::Config,
    pub rtt_sample: RttSample,
    /// Seconds; 0: the RTO.
    pub rce_interval: f64,
    pub rce_filter: RceKind,
    pub rce_gain: f64,
    pub rce_discard_on_loss: bool,
    pub rce_min_gaps: u64,
}

impl Default for Config {
    fn default() -> Self {
        let rce = RceConfig::default();
        Config {
            re: westwood_re::Config::default(),
            rtt_sample: RttSample::Latest,
            rce_interval: rce.interval.unwrap_or(0.0),
            rce_filter: RceKind::Last,
            rce_gain: 0.25,
            rce_discard_on_loss: rce.discard_on_loss,
            rce_min_gaps: rce.min_gaps as u64,
        }
    }
}

impl Config {
    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        let d = Config::default();
        let p = Params::new(map, field, &info().param_names())?;
        let rtt_sample = p.pick("rtt_sample", d.rtt_sample)?;
        let rce_interval = p.f64("rce_interval", d.rce_interval, |x| x >= 0.0, "a time >= 0 in seconds")?;
        let rce_gain = p.f64("rce_gain", d.rce_gain, |g| g > 0.0 && g <= 1.0, "a fraction in (0, 1]")?;
        let rce_filter = p.pick("rce_filter", d.rce_filter)?;
        let rce_discard_on_loss = p.bool("rce_discard_on_loss", d.rce_discard_on_loss)?;
        let rce_min_gaps =
            p.u64("rce_min_gaps", d.rce_min_gaps, |x| x >= 1 && x <= u32::MAX as u64, "an integer >= 1")?;
        Ok(Config {
            re: westwood_re::Config::read(&p)?,
            rtt_sample,
            rce_interval,
            rce_filter,
            rce_gain,
            rce_discard_on_loss,
            rce_min_gaps,
        })
    }

    /// The capacity estimator these parameters give.
    pub fn rce(&self) -> RceConfig {
        RceConfig {
            interval: if self.rce_interval > 0.0 { Some(self.rce_interval) } else { None },
            discard_on_loss: self.rce_discard_on_loss,
            min_gaps: self.rce_min_gaps as u32,
            filter: match self.rce_filter {
                RceKind::Ewma => RceFilter::Ewma { gain: self.rce_gain },
                RceKind::Max => RceFilter::Max,
                RceKind::Last => RceFilter::Last,
            },
            ..RceConfig::default()
        }
    }
}

pub fn info() -> AlgorithmInfo {
    let d = Config::default();
    let mut params = vec![
        ParamInfo::new("rtt_sample", d.rtt_sample, "RTT used in BS_estimate / compensated_RTT_min: latest sample, srtt, or epoch_max (largest since the last loss)", "unspecified in Kaneko & Katto 2005"),
        ParamInfo::new("rce_interval", format!("{} (the RTO)", d.rce_interval), "RCE counting interval, s", "Kaneko & Katto (RTO-long interval)"),
        ParamInfo::new("rce_filter", d.rce_filter, "combining successive RCE measurements: last, ewma, max", "unspecified"),
        ParamInfo::new("rce_gain", d.rce_gain, "EWMA gain for rce_filter = ewma", "choice"),
        ParamInfo::new("rce_discard_on_loss", d.rce_discard_on_loss, "drop RCE measurements whose ACK slot saw duplicate ACKs or an RTO", "choice"),
        ParamInfo::new("rce_min_gaps", d.rce_min_gaps, "fewest ACK gaps for an RCE measurement", "choice"),
    ];
    params.extend(super::westwood_re::params_info());
    AlgorithmInfo {
        name: "westwood-bs",
        aliases: &["kk-westwood", "westwood-kk", "westwood_bs"],
        description:
            "Kaneko & Katto's Reno-friendly Westwood: Westwood-RE whose post-loss window is ERE x compensated_RTT_min, \
                      from a router-buffer estimate with RCE capacity (compensated_RTT_min = RTT/2).",
        params,
    }
}

pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(WestwoodBs::from_params(map, field)?))
}

impl WestwoodBs {
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Ok(WestwoodBs::with(&Config::from_params(map, field)?))
    }

    pub fn with(c: &Config) -> Self {
        WestwoodBs {
            ww: c.re.westwood(),
            rce: Rce::new(c.rce()),
            rtt_sample: c.rtt_sample,
            srtt: 0.0,
            epoch_max: 0.0,
            last_now: 0.0,
            rce_count: 0,
            rce_last: 0.0,
        }
    }

    /// The RTT the paper's formulas use now.
    pub fn rtt(&self) -> f64 {
        match self.rtt_sample {
            RttSample::Latest => self.ww.bwe.rtt(),
            RttSample::Srtt => {
                if self.srtt > 0.0 {
                    self.srtt
                } else {
                    self.ww.bwe.rtt()
                }
            }
            RttSample::EpochMax => {
                if self.epoch_max > 0.0 {
                    self.epoch_max
                } else {
                    self.ww.bwe.rtt()
                }
            }
        }
    }

    /// BS_estimate, BDP, diff_delay and compensated_RTT_min now.
    pub fn estimate(&self) -> BufferEstimate {
        buffer_estimate(self.rtt(), self.ww.bwe.rtt_min(), self.rce.capacity())
    }

    /// Post-loss window: `max(ERE x compensated_RTT_min, 2)` truncated.
    pub fn target(&self) -> f64 {
        (self.ww.bwe.bw_est() * self.estimate().compensated_rtt_min).floor().max(2.0)
    }
}

impl CongestionControl for WestwoodBs {
    fn name(&self) -> &'static str {
        "westwood-bs"
    }

    fn on_send(&mut self, now: f64, bytes: u32, in_flight: u64) {
        self.ww.on_send(now, bytes, in_flight);
    }

    fn on_ack_sample(&mut self, w: &Window, s: &AckSample) {
        self.ww.on_ack_sample(w, s);
        if s.srtt > 0.0 {
            self.srtt = s.srtt;
        }
        if let Some(r) = s.rtt {
            self.epoch_max = self.epoch_max.max(r);
        }
        self.last_now = s.now;
        if let Some(m) = self.rce.on_ack(s) {
            self.rce_count += 1;
            self.rce_last = m.capacity;
        }
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.ww.on_ack(w, s);
    }

    fn ssthresh(&mut self, w: &Window, event: LossEvent, in_flight: u64, now: f64) -> f64 {
        let target = self.target();
        let ss = self.ww.ssthresh_with(w, event, in_flight, now, target);
        self.epoch_max = 0.0;
        ss
    }

    fn on_recovery_exit(&mut self, w: &mut Window, now: f64) {
        let target = self.target();
        self.ww.recovery_exit_with(w, now, target);
    }

    fn on_rto(&mut self, w: &mut Window, now: f64) {
        self.rce.on_rto();
        self.ww.on_rto(w, now);
    }

    fn trace_vars(&self, out: &mut Vec<(&'static str, f64)>) {
        let e = self.estimate();
        out.extend_from_slice(&[
            ("rtt", e.rtt),
            ("rtt_min", e.rtt_min),
            ("capacity_seg_s", e.capacity),
            ("bs_estimate", e.bs_estimate),
            ("bdp", e.bdp),
            ("ere_seg_s", self.ww.bwe.bw_est()),
            ("comp_rtt_min", e.compensated_rtt_min),
            ("rce_count", self.rce_count as f64),
            ("rce_last_seg_s", self.rce_last),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_reduce_to_rtt_over_two() {
        // C = 4166.7 seg/s (50 Mbit/s, 1500 B), RTT_min 90 ms, RTT 150 ms.
        let c = 50e6 / 12000.0;
        let e = buffer_estimate(0.15, 0.09, c);
        assert!((e.bs_estimate - 0.06 * c).abs() < 1e-9); // 250 packets queued
        assert!((e.bdp - 375.0).abs() < 1e-9);
        assert!((e.diff_delay - (0.15 - 0.18)).abs() < 1e-12);
        assert!((e.compensated_rtt_min - 0.075).abs() < 1e-12);
        // Independent of C, and the fallback without C is the same.
        for c2 in [10.0, 1e3, 1e6] {
            assert!((buffer_estimate(0.15, 0.09, c2).compensated_rtt_min - 0.075).abs() < 1e-12);
        }
        assert!((buffer_estimate(0.15, 0.09, 0.0).compensated_rtt_min - 0.075).abs() < 1e-12);
        // B = BDP: RTT = 2 RTT_min, no compensation.
        assert!((buffer_estimate(0.18, 0.09, c).compensated_rtt_min - 0.09).abs() < 1e-12);
    }

    #[test]
    fn loss_response_uses_compensated_rtt_min() {
        let mut b = WestwoodBs::from_params(&serde_json::Map::new(), "cc").unwrap();
        // Prime ERE at 1000 seg/s with RTT_min 0.1 s, then the RTT rises to 0.3 s.
        let win = Window { cwnd: 200.0, ssthresh: 1e9 };
        b.on_send(0.0, 1500, 1);
        let mut t = 0.0;
        for k in 0..5000u64 {
            let una = k; // one segment ACKed per step
            t = k as f64 * 0.001;
            let rtt = if k < 300 { 0.1 } else { 0.3 };
            let s = AckSample {
                now: t,
                acked: 1,
                cum_acked: 1,
                rtt: Some(rtt),
                srtt: rtt,
                min_rtt: 0.1,
                in_flight: 100,
                snd_una: una,
                snd_nxt: una + 100,
                delivered: una,
                cwnd_limited: true,
                duplicate: false,
            };
            b.on_ack_sample(&win, &s);
        }
        assert!((b.ww.bwe.bw_est() - 1000.0).abs() < 20.0, "{}", b.ww.bwe.bw_est());
        assert!((b.rce.capacity() - 1000.0).abs() < 1e-6, "{}", b.rce.capacity());
        let e = b.estimate();
        assert!((e.bs_estimate - 200.0).abs() < 1e-6, "{e:?}");
        assert!((e.compensated_rtt_min - 0.15).abs() < 1e-12);
        let ss = b.ssthresh(&win, LossEvent::FastRecovery, 200, t);
        // ERE x 0.15 s = 150 (plain Westwood: 100; Reno: 100 = 200/2).
        assert!((147.0..=153.0).contains(&ss), "{ss}");
    }

    #[test]
    fn params_are_checked() {
        let mut m = serde_json::Map::new();
        m.insert("rtt_sample".into(), serde_json::json!("median"));
        let e = WestwoodBs::from_params(&m, "flows[0].cc").err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.rtt_sample");
        let mut m = serde_json::Map::new();
        m.insert("interval".into(), serde_json::json!(0.2));
        m.insert("rtt_sample".into(), serde_json::json!("srtt"));
        let b = WestwoodBs::from_params(&m, "f").unwrap();
        assert_eq!(b.rtt_sample, RttSample::Srtt);
        assert_eq!(b.ww.bwe.cfg.fixed_interval, Some(0.2));
    }
}
