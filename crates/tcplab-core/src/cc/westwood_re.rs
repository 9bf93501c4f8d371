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
//! Every Westwood parameter is accepted with these defaults changed.

use super::bwe::{BweConfig, WestwoodBwe};
use super::westwood::Westwood;
use super::{AlgorithmInfo, CongestionControl, ParamInfo, Params};
use crate::error::SpecError;

/// Westwood's parameters plus RE's `interval`.
pub const PARAMS: &[&str] = &[
    "variant",
    "bwe_timing",
    "reset_rtt_min_on_rto",
    "mode",
    "filter",
    "filter_gain",
    "min_interval",
    "init_rtt",
    "interval",
];

pub fn params_info() -> Vec<ParamInfo> {
    vec![
        ParamInfo { name: "interval", default: "0 (one RTT)".into(), description: "RE sampling interval T, s; 0 = the latest RTT sample", source: "Wang et al. 2002 (T about one RTT); unspecified in Kaneko & Katto" },
        ParamInfo { name: "variant", default: "paper".into(), description: "Westwood timing variant (see westwood): paper = ssthresh = ERE x RTTmin on the 3rd dupack, cwnd = min(cwnd, ssthresh)", source: "Kaneko & Katto; Mascolo et al. 2001" },
        ParamInfo { name: "filter", default: "tustin".into(), description: "low-pass filter of the rate samples: tustin (a = 1 - filter_gain), ewma, linux", source: "ns-3 / UCLA TCPW (unspecified in the paper)" },
        ParamInfo { name: "filter_gain", default: "0.1".into(), description: "weight of the new input (Tustin a = 0.9)", source: "Grieco & Mascolo 2004; ns-3" },
        ParamInfo { name: "min_interval", default: "0".into(), description: "floor of the sampling interval, s (Linux Westwood+ uses 50 ms)", source: "choice: RE samples every RTT" },
        ParamInfo { name: "bwe_timing", default: "immediate (variant paper)".into(), description: "as westwood: when ERE x RTTmin is applied", source: "westwood.rs" },
        ParamInfo { name: "reset_rtt_min_on_rto", default: "false (variant paper)".into(), description: "as westwood", source: "westwood.rs" },
        ParamInfo { name: "mode", default: "float (variant paper)".into(), description: "as westwood: Reno growth, float or Linux integer cwnd", source: "westwood.rs" },
        ParamInfo { name: "init_rtt", default: "20".into(), description: "as westwood: initial rtt and rtt_min, s", source: "westwood.rs" },
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
    Ok(Box::new(from_params(map, field, PARAMS)?))
}

/// Builds the RE-configured Westwood from `map`, which may hold any of
/// `allowed` (a superset of [`PARAMS`]; extra keys are the caller's).
pub fn from_params(
    map: &serde_json::Map<String, serde_json::Value>,
    field: &str,
    allowed: &'static [&'static str],
) -> Result<Westwood, SpecError> {
    let p = Params::new(map, field, allowed)?;
    let interval = p.f64("interval", 0.0, |x| x >= 0.0, "a time >= 0 in seconds")?;
    let mut ww_map = serde_json::Map::new();
    for k in super::westwood::PARAMS {
        if let Some(v) = map.get(*k) {
            ww_map.insert((*k).to_string(), v.clone());
        }
    }
    let defaults: [(&str, serde_json::Value); 3] =
        [("variant", "paper".into()), ("filter", "tustin".into()), ("min_interval", 0.0.into())];
    for (k, v) in defaults {
        ww_map.entry(k.to_string()).or_insert(v);
    }
    let mut w = Westwood::from_params(&ww_map, field)?;
    let cfg = BweConfig { fixed_interval: if interval > 0.0 { Some(interval) } else { None }, ..w.bwe.cfg };
    w.bwe = WestwoodBwe::new(cfg);
    Ok(w)
}

/// Westwood with RE and its defaults.
pub fn westwood_re() -> Westwood {
    from_params(&serde_json::Map::new(), "cc", PARAMS).expect("defaults are valid")
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
        let mut una = 0;
        for k in 0..=1000u64 {
            let now = k as f64 / 1024.0 * 1.024; // 1 ms steps
            w.on_ack_sample(&win, &ack(now, una, 0.02));
            una += 1;
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
        let w = from_params(&m, "f", PARAMS).unwrap();
        assert_eq!(w.bwe.cfg.fixed_interval, Some(0.25));
        let mut m = serde_json::Map::new();
        m.insert("intervl".into(), serde_json::json!(0.25));
        let e = from_params(&m, "flows[0].cc", PARAMS).err().unwrap();
        assert_eq!(e.field, "flows[0].cc.params.intervl");
    }
}
