//! TCP Westwood with Rate Estimation (`westwood-re`, alias `westwood_re`,
//! `tcpw-re`): Westwood's loss response with the Eligible Rate Estimate
//! (ERE) from rate samples taken once per interval T.
//!
//! Sources: R. Wang, M. Valla, M. Sanadidi, B. Ng, M. Gerla,
//! "Efficiency/Friendliness Tradeoffs in TCP Westwood", ISCC 2002 (RE: the
//! data acknowledged over an interval T, e.g. one RTT, divided by T);
//! K. Kaneko, J. Katto, ICAS-ICNS 2005 as restated in
//! `docs/papers/kk-westwood.md`: "every interval T (about one RTT) the
//! sender takes a sample = data acknowledged during the interval / T and
//! low-pass filters the samples into ERE. On 3 duplicate ACKs
//! ssthresh = ERE x RTT_min / (packet_size x 8) and cwnd = ssthresh if
//! cwnd > ssthresh. On timeout cwnd = 1, ssthresh as above."
//!
//! This is [`super::westwood::Westwood`] (the papers' variant: ssthresh on
//! the third duplicate ACK, no rtt_min reset, fractional Reno growth) with
//! the shared estimator [`super::bwe::WestwoodBwe`] configured for RE:
//! - T = the latest RTT sample with no 50 ms floor (`min_interval = 0`), or a
//!   fixed `interval`; the paper says "about one RTT".
//! - Filter: Tustin with a = 0.9 (ns-3 / UCLA TCPW form; the reference's
//!   suggested default, s14.2); the filter is not fixed by the paper.
//!
//! Every Westwood parameter is accepted with these defaults changed.

use super::bwe::{BweConfig, WestwoodBwe};
use super::westwood::{self, Westwood};
use super::{variant_default, AlgorithmInfo, Choice, CongestionControl, ParamInfo, Params};
use crate::error::SpecError;

/// Westwood-RE's parameters: Westwood's, read over RE's defaults
/// ([`re_base`]), plus the sampling interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub ww: westwood::Config,
    /// RE sampling interval T, seconds; 0: the latest RTT sample.
    pub interval: f64,
}

/// RE's defaults for a Westwood variant: a Tustin filter and no floor on
/// the sampling interval.
pub fn re_base(variant: westwood::Variant) -> westwood::Config {
    westwood::Config { filter: westwood::Filter::Tustin, min_interval: 0.0, ..westwood::Config::for_variant(variant) }
}

impl Default for Config {
    fn default() -> Self {
        Config { ww: re_base(westwood::Variant::Paper), interval: 0.0 }
    }
}

impl Config {
    fn variants() -> Vec<(&'static str, westwood::Config)> {
        [westwood::Variant::Paper, westwood::Variant::Linux].map(|v| (v.name(), re_base(v))).into()
    }

    /// Reads RE's parameters from `p` (whose allowed names may be more).
    pub fn read(p: &Params) -> Result<Self, SpecError> {
        let d = Config::default();
        let interval = p.f64("interval", d.interval, |x| x >= 0.0, "a time >= 0 in seconds")?;
        Ok(Config { ww: westwood::Config::read(p, d.ww.variant, re_base)?, interval })
    }

    /// Reads a spec's parameters over the defaults; errors name the field.
    pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Self, SpecError> {
        Config::read(&Params::new(map, field, &info().param_names())?)
    }

    /// The Westwood these parameters configure.
    pub fn westwood(&self) -> Westwood {
        let mut w = Westwood::with(&self.ww);
        let fixed_interval = if self.interval > 0.0 { Some(self.interval) } else { None };
        w.bwe = WestwoodBwe::new(BweConfig { fixed_interval, ..self.ww.bwe() });
        w
    }
}

/// The parameters' documentation (shared with Westwood-BS).
pub fn params_info() -> Vec<ParamInfo> {
    let (d, v) = (Config::default(), Config::variants());
    vec![
        ParamInfo::new("interval", format!("{} (one RTT)", d.interval), "RE sampling interval T, s; 0 = the latest RTT sample", "Wang et al. 2002 (T about one RTT); unspecified in Kaneko & Katto"),
        ParamInfo::new("variant", d.ww.variant, "Westwood timing variant (see westwood): paper = ssthresh = ERE x RTTmin on the 3rd dupack, cwnd = min(cwnd, ssthresh)", "Kaneko & Katto; Mascolo et al. 2001"),
        ParamInfo::new("filter", variant_default(&v, |c| c.filter), "low-pass filter of the rate samples: tustin (a = 1 - filter_gain), ewma, linux", "ns-3 / UCLA TCPW (unspecified in the paper)"),
        ParamInfo::new("filter_gain", westwood::Config::filter_gain_default(), "weight of the new input (Tustin a = 0.9)", "Grieco & Mascolo 2004; ns-3"),
        ParamInfo::new("min_interval", variant_default(&v, |c| c.min_interval), "floor of the sampling interval, s (Linux Westwood+ uses 50 ms)", "choice: RE samples every RTT"),
        ParamInfo::new("bwe_timing", variant_default(&v, |c| c.bwe_timing), "as westwood: when ERE x RTTmin is applied", "westwood.rs"),
        ParamInfo::new("reset_rtt_min_on_rto", variant_default(&v, |c| c.reset_rtt_min_on_rto), "as westwood", "westwood.rs"),
        ParamInfo::new("mode", variant_default(&v, |c| c.mode), "as westwood: Reno growth, float or Linux integer cwnd", "westwood.rs"),
        ParamInfo::new("init_rtt", variant_default(&v, |c| c.init_rtt), "as westwood: initial rtt and rtt_min, s", "westwood.rs"),
    ]
}

pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "westwood-re",
        aliases: &["westwood_re", "tcpw-re"],
        description:
            "TCP Westwood with Rate Estimation: Reno growth; on loss ssthresh = max(ERE x RTTmin, 2) with ERE \
                      a low-pass filtered rate sampled once per interval T (one RTT by default).",
        params: params_info(),
    }
}

pub fn build(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>, SpecError> {
    Ok(Box::new(from_params(map, field)?))
}

/// The RE-configured Westwood of a spec's parameters.
pub fn from_params(map: &serde_json::Map<String, serde_json::Value>, field: &str) -> Result<Westwood, SpecError> {
    Ok(Config::from_params(map, field)?.westwood())
}

/// Westwood with RE and its defaults.
pub fn westwood_re() -> Westwood {
    Config::default().westwood()
}

#[cfg(test)]
mod tests {
    use super::super::bwe::BweFilter;
    use super::super::westwood::BweTiming;
    use super::super::{AckSample, LossEvent, Window};
    use super::*;

    fn ack(now: f64, snd_una: u64, rtt: f64) -> AckSample {
        AckSample {
            now,
            acked: 1,
            cum_acked: 1,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            in_flight: 10,
            snd_una,
            snd_nxt: snd_una + 10,
            delivered: snd_una,
            cwnd_limited: true,
            duplicate: false,
        }
    }

    #[test]
    fn defaults_are_re() {
        let w = westwood_re();
        assert_eq!(w.timing, BweTiming::Immediate);
        assert_eq!(w.bwe.cfg.filter, BweFilter::Tustin { a: 0.9 });
        assert_eq!(w.bwe.cfg.min_interval, 0.0);
        assert_eq!(w.bwe.cfg.fixed_interval, None);
    }

    #[test]
    fn samples_every_rtt_even_below_50ms_and_ssthresh_is_ere_rttmin() {
        // RTT 20 ms, 1000 segments/s: RE samples each 20 ms (Westwood+ would
        // wait 50 ms); ssthresh = 1000 x 0.02 = 20.
        let mut w = westwood_re();
        let win = Window { cwnd: 30.0, ssthresh: 1e9 };
        w.on_send(0.0, 1500, 1);
        for k in 0..=1000u64 {
            let now = k as f64 / 1024.0 * 1.024; // 1 ms steps
            w.on_ack_sample(&win, &ack(now, k, 0.02)); // snd_una = k: one segment per step
        }
        assert!(w.bwe.samples() >= 45, "{}", w.bwe.samples());
        assert!((w.bwe.bw_est() - 1000.0).abs() < 60.0, "{}", w.bwe.bw_est());
        let ss = w.ssthresh(&win, LossEvent::FastRecovery, 30, 1.1);
        assert!((19.0..=21.0).contains(&ss), "{ss}");
    }

    #[test]
    fn fixed_interval_and_unknown_params() {
        let mut m = serde_json::Map::new();
        m.insert("interval".into(), serde_json::json!(0.25));
        let w = from_params(&m, "f").unwrap();
        assert_eq!(w.bwe.cfg.fixed_interval, Some(0.25));
        let mut m = serde_json::Map::new();
        m.insert("intervl".into(), serde_json::json!(0.25));
        let e = from_params(&m, "flows[0].cc").err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.intervl");
    }
}
