//! The benchmark suite of `tcplab bench` and `cargo bench -p tcplab-core`.
//!
//! Standard scenarios (S1-S6) and scaling curves (flows, rate, window,
//! algorithm). Each is a plain [`RunSpec`] plus what the benchmark reports
//! about it; speed is printed, never asserted.
//!
//! Developer tooling: compiled only with the cargo feature `bench`, which
//! this crate's own benches, examples and tests turn on (a dev-dependency on
//! itself), and the extension's default build enables for `tcplab bench`
//! (crates/tcplab-py/src/bench.rs). The core's API has no benchmark without it.

use super::{AccessDelay, Dumbbell};
use crate::spec::{Recovery, RunSpec};

/// One benchmark run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// "S1".."S6", or "flows=100", "rate=1e9", "window=1000" for scaling points.
    pub name: String,
    pub description: String,
    /// `None`: a placeholder that the suite skips, saying `skip`.
    pub spec: Option<RunSpec>,
    pub skip: Option<String>,
    /// Name of the link whose data packets are counted as "bottleneck packets".
    pub bottleneck: String,
    /// Scaling curves: the value on the curve's axis.
    pub axis_value: Option<f64>,
    /// Simulated seconds at the start of the run left out of the cost
    /// figures (0: none). See [`warm_up`].
    pub warmup: f64,
}

/// The counts of a run at the end of its warm-up ([`warm_up`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WarmUp {
    /// Simulated seconds.
    pub seconds: f64,
    pub events: u64,
    /// Per link, in the spec's order: packets and data packets that
    /// reached the link's far end.
    pub packets_out: Vec<u64>,
    pub data_packets_out: Vec<u64>,
}

impl WarmUp {
    pub fn packet_hops(&self) -> u64 {
        self.packets_out.iter().sum()
    }
}

/// Runs `w` through the first `warmup` simulated seconds (nothing if 0)
/// and returns its counts then, so a benchmark can report the rest of
/// the run alone: events, packet-hops and bottleneck packets after the
/// warm-up are the final counts less these, and the event loop's wall
/// time ([`crate::results::RunMeta::wall_s`]) counts only what
/// [`crate::World::run`] does after it. Memory is trimmed during the
/// warm-up as in a run. A warm-up that is not shorter than the run is
/// refused (nothing would be left to measure).
///
/// Why: with thousands of flows the cost per event rises for the first
/// ten or so simulated seconds, as the flows' windows grow to their
/// sawtooth and the state read per packet outgrows the caches (10,000
/// flows on this project's Zen 5 machine: about 39 ns per event over
/// the first 3 s, 46-49 from 9 s on); a short run from the start would
/// report the cheap early part as the cost of a long one.
pub fn warm_up(w: &mut crate::World, warmup: f64, duration: f64) -> Result<Option<WarmUp>, crate::SpecError> {
    if !(warmup.is_finite() && warmup >= 0.0) {
        return Err(crate::SpecError::new(
            "warmup".into(),
            format!("must be a finite number of seconds >= 0, got {warmup}"),
        ));
    }
    if warmup == 0.0 {
        return Ok(None);
    }
    if warmup >= duration {
        return Err(crate::SpecError::new(
            "warmup".into(),
            format!("must be shorter than the run's duration ({duration} s), got {warmup} s"),
        ));
    }
    w.run_until(crate::sim::time::from_secs(warmup));
    let (packets_out, data_packets_out) = w.link_stats().map(|l| (l.packets_out, l.data_packets_out)).unzip();
    Ok(Some(WarmUp { seconds: warmup, events: w.events_done(), packets_out, data_packets_out }))
}

/// How long the runs are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// The documented durations.
    Full,
    /// Shortened so the whole suite runs in seconds: checks it runs, not speed.
    Quick,
    /// This simulated duration (seconds) for every scenario; scaling points ignore it.
    Seconds(f64),
}

/// Names of the standard scenarios, in order.
pub const SUITE: &[&str] = &["S1", "S2", "S3", "S4", "S5", "S6"];
/// Axes of the scaling curves.
pub const AXES: &[&str] = &["flows", "rate", "window", "algorithm"];

/// The `algorithm` axis's extra point: NewReno with the k-NN loss
/// classifier (jm-knn), which records every ACK.
pub const KNN_POINT: &str = "newreno+knn";
/// And CUBIC with the Linux profile (PRR, RACK-TLP, F-RTO, undo, the
/// Linux receiver with D-SACK, 52-byte headers): against the plain
/// `cubic` point, what the Linux mechanisms cost per packet.
pub const LINUX_POINT: &str = "cubic+linux";

fn entry(name: &str, description: String, d: Dumbbell) -> Scenario {
    let spec = d.spec();
    let bottleneck = spec.links[Dumbbell::BOTTLENECK].name.clone();
    Scenario { name: name.into(), description, spec: Some(spec), skip: None, bottleneck, axis_value: None, warmup: 0.0 }
}

fn timed(mut d: Dumbbell, full: f64, quick: f64, measure_from: f64, len: Length) -> Dumbbell {
    d.duration = match len {
        Length::Full => full,
        Length::Quick => quick,
        Length::Seconds(s) => s,
    };
    // The documented measurement start as a fraction of the run.
    d.measure_start = d.duration * measure_from / full;
    d
}

fn bdp(rate: f64, rtt: f64) -> u64 {
    Dumbbell::bdp_packets(rate, rtt, 1500)
}

/// Rounded to the nearest packet, at least 1 (as the Python `"0.1BDP"`).
fn fraction(bdp: u64, f: f64) -> u64 {
    ((bdp as f64 * f).round() as u64).max(1)
}

/// Standard scenario `name` (see [`SUITE`]), or `None` if unknown.
pub fn scenario(name: &str, len: Length) -> Option<Scenario> {
    let secs = |d: &Dumbbell| format!("{} s", d.duration);
    Some(match name {
        "S1" => {
            let mut d = Dumbbell::new(1, 200e6, 0.1, fraction(bdp(200e6, 0.1), 0.1));
            d.init_cwnd = 10.0;
            d.sample_interval = 0.01;
            let d = timed(d, 2000.0, 20.0, 1000.0, len);
            let desc = format!(
                "one NewReno flow, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, {}, traces every 10 ms (Table I cell)",
                secs(&d)
            );
            entry("S1", desc, d)
        }
        "S2" => {
            let mut d = Dumbbell::new(1, 200e6, 0.1, bdp(200e6, 0.1));
            d.algorithm = "cubic".into();
            d.params.insert("variant".into(), "2005".into());
            d.recovery = Recovery::Sack;
            d.init_cwnd = 10.0;
            d.sample_interval = 0.01;
            let d = timed(d, 2000.0, 20.0, 1000.0, len);
            let desc = format!("one CUBIC flow (2005, SACK; the Table I cell), 200 Mbit/s, RTT 100 ms, B = BDP, {}, traces every 10 ms", secs(&d));
            entry("S2", desc, d)
        }
        "S3" => {
            let mut d = Dumbbell::new(10, 1e9, 0.1, fraction(bdp(1e9, 0.1), 0.1));
            d.algorithm = "cubic".into();
            d.recovery = Recovery::Sack;
            d.init_cwnd = 10.0;
            d.sample_interval = 0.01;
            let d = timed(d, 2000.0, 5.0, 1000.0, len);
            let desc = format!(
                "10 CUBIC flows (Linux, SACK), 1 Gbit/s, RTT 100 ms, B = 0.1 BDP, {}, traces every 10 ms",
                secs(&d)
            );
            entry("S3", desc, d)
        }
        "S4" => {
            // mv-buffers Fig. 8 (python/tcplab/experiments/mv_buffers.py):
            // 600 s measured from 100 s, starts uniform in [0, 10) s,
            // access delays uniform in (0, 10 ms), samples every 1 s; the
            // buffer is the 0.1 BDP point of the figure's sweep.
            let mut d = Dumbbell::new(200, 200e6, 0.1, fraction(bdp(200e6, 0.1), 0.1));
            d.init_cwnd = 10.0;
            d.access_delay = AccessDelay::Uniform { max: 0.01 };
            d.start_spread = 10.0;
            d.sample_interval = 1.0;
            let mut d = timed(d, 600.0, 20.0, 100.0, len);
            if len == Length::Quick {
                d.start_spread = 2.0;
            }
            let desc =
                format!("200 NewReno flows, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, {} (mv-buffers Fig. 8)", secs(&d));
            entry("S4", desc, d)
        }
        "S6" => {
            // S3 with FQ-CoDel (RFC 8290, Linux defaults) on the
            // bottleneck, its limit S3's buffer: what a queue
            // discipline costs per packet against the fast drop-tail
            // FIFO (issue 28's budget: 1.5x S3).
            let Some(Scenario { spec: Some(mut spec), .. }) = scenario("S3", len) else { unreachable!() };
            spec.links[Dumbbell::BOTTLENECK].queue.discipline = Some("fq_codel".into());
            let desc = format!("S3 with FQ-CoDel on the bottleneck (limit 0.1 BDP), {} s", spec.duration);
            let bottleneck = spec.links[Dumbbell::BOTTLENECK].name.clone();
            Scenario {
                name: "S6".into(),
                description: desc,
                spec: Some(spec),
                skip: None,
                bottleneck,
                axis_value: None,
                warmup: 0.0,
            }
        }
        "S5" => Scenario {
            name: "S5".into(),
            description: "ssm-interactions parking lot at full scale".into(),
            spec: None,
            // The parking-lot generator is Python's (tcplab.generate);
            // `tcplab bench` builds S5 there, cargo bench skips it.
            skip: Some("S5 is generated by the Python front end (tcplab.generate); run it with `tcplab bench`".into()),
            bottleneck: String::new(),
            axis_value: None,
            warmup: 0.0,
        },
        _ => return None,
    })
}

/// Every standard scenario, placeholders included.
pub fn suite(len: Length) -> Vec<Scenario> {
    SUITE.iter().map(|n| scenario(n, len).expect("known scenario")).collect()
}

/// Simulated seconds at the start of each point of the flows curve
/// left out of its figures ([`warm_up`]): the windows' first sawtooth
/// cycles (each flow's window is about 83 packets, a cycle about 4 s).
pub const FLOWS_WARMUP: f64 = 10.0;

/// Simulated seconds that give about `packets` bottleneck packets at
/// `rate`, within `[lo, hi]`.
fn budget(packets: f64, rate: f64, lo: f64, hi: f64) -> f64 {
    (packets * 12_000.0 / rate).clamp(lo, hi)
}

/// The points of one scaling curve (`axis` in [`AXES`]), or `None`.
///
/// - `flows`: N = 1 .. 10,000 NewReno flows sharing one bottleneck of
///   N x 10 Mbit/s (each flow's share, and so its window, stays about 83
///   packets), RTT 100 ms, B = 0.1 BDP, access delays uniform in (0,
///   10 ms), starts uniform in [0, 1) s; measured after a warm-up of
///   [`FLOWS_WARMUP`] simulated seconds, for about 10 M bottleneck
///   packets (within [5, 300] s) after it.
/// - `rate`: one CUBIC/SACK flow at 10 Mbit/s .. 100 Gbit/s, RTT 10 ms,
///   B = BDP (8 .. 83,333 packets), the same simulated time (2 s) at every
///   rate, as the issue asks, so the packet count grows with the rate.
/// - `window`: one CUBIC/SACK flow, RTT 100 ms, bottleneck rate chosen so
///   BDP = W for W = 10 .. 100,000 packets, B = BDP; about 10 M packets per
///   point (duration within [20, 2000] s).
///
/// - `algorithm`: every congestion control of the catalog
///   ([`crate::cc::catalog`], so an algorithm added there is measured
///   here too), with its defaults, then NewReno with the k-NN loss
///   classifier ([`KNN_POINT`]): 10 flows, 1 Gbit/s, RTT 100 ms,
///   B = 0.1 BDP (S3's network, mv-highspeed Fig. 13), SACK recovery,
///   120 s (about 10 M bottleneck packets at full utilization). The axis
///   value is the point's position (0, 1, ...); its name says which.
///
/// Traces are off: the curves measure the engine. Quick mode divides the
/// packet budgets by 1000 and keeps the smallest points of each curve
/// (every point of the algorithm axis, for 2 s).
pub fn scaling(axis: &str, quick: bool) -> Option<Vec<Scenario>> {
    let k = if quick { 1e-3 } else { 1.0 };
    let mut out = Vec::new();
    match axis {
        "flows" => {
            let ns: &[usize] = if quick { &[1, 10, 100] } else { &[1, 10, 100, 1000, 3000, 10_000] };
            for &n in ns {
                let rate = 10e6 * n as f64;
                let mut d = Dumbbell::new(n, rate, 0.1, fraction(bdp(rate, 0.1), 0.1));
                d.init_cwnd = 10.0;
                d.access_delay = AccessDelay::Uniform { max: 0.01 };
                d.start_spread = 1.0;
                let warmup = if quick { 1.0 } else { FLOWS_WARMUP };
                let measured = budget(1e7 * k, rate, if quick { 2.0 } else { 5.0 }, 300.0);
                d.duration = warmup + measured;
                d.measure_start = warmup;
                let desc = format!(
                    "{n} NewReno flows, {} Mbit/s, RTT 100 ms, B = 0.1 BDP, {measured} s after a {warmup} s warm-up",
                    rate / 1e6
                );
                let mut s = entry(&format!("flows={n}"), desc, d);
                s.axis_value = Some(n as f64);
                s.warmup = warmup;
                out.push(s);
            }
        }
        "rate" => {
            let rates: &[f64] = if quick { &[10e6, 100e6, 1e9] } else { &[10e6, 100e6, 1e9, 10e9, 100e9] };
            for &rate in rates {
                let mut d = Dumbbell::new(1, rate, 0.01, bdp(rate, 0.01));
                d.algorithm = "cubic".into();
                d.recovery = Recovery::Sack;
                d.init_cwnd = 10.0;
                d.duration = if quick { 0.2 } else { 2.0 };
                d.measure_start = d.duration / 2.0;
                let desc = format!("one CUBIC/SACK flow, {} Mbit/s, RTT 10 ms, B = BDP, {} s", rate / 1e6, d.duration);
                let mut s = entry(&format!("rate={rate:e}"), desc, d);
                s.axis_value = Some(rate);
                out.push(s);
            }
        }
        "window" => {
            let ws: &[u64] = if quick { &[10, 100, 1000] } else { &[10, 100, 1000, 10_000, 100_000] };
            for &w in ws {
                let rate = w as f64 * 12_000.0 / 0.1;
                let mut d = Dumbbell::new(1, rate, 0.1, w);
                d.algorithm = "cubic".into();
                d.recovery = Recovery::Sack;
                d.init_cwnd = 10.0;
                d.duration = budget(1e7 * k, rate, if quick { 5.0 } else { 20.0 }, 2000.0);
                d.measure_start = d.duration / 2.0;
                let desc = format!(
                    "one CUBIC/SACK flow, BDP = {w} packets ({} Mbit/s), RTT 100 ms, B = BDP, {} s",
                    rate / 1e6,
                    d.duration
                );
                let mut s = entry(&format!("window={w}"), desc, d);
                s.axis_value = Some(w as f64);
                out.push(s);
            }
        }
        "algorithm" => {
            let names = crate::cc::catalog().into_iter().map(|i| i.name).chain([KNN_POINT, LINUX_POINT]);
            for (i, name) in names.enumerate() {
                let rate = 1e9;
                let mut d = Dumbbell::new(10, rate, 0.1, fraction(bdp(rate, 0.1), 0.1));
                d.algorithm = name.split('+').next().unwrap_or(name).into();
                d.recovery = Recovery::Sack;
                d.init_cwnd = 10.0;
                d.duration = if quick { 2.0 } else { 120.0 };
                d.measure_start = d.duration / 2.0;
                let desc = format!("10 {name} flows (SACK), 1 Gbit/s, RTT 100 ms, B = 0.1 BDP, {} s", d.duration);
                let mut s = entry(&format!("algorithm={name}"), desc, d);
                if name == KNN_POINT {
                    let spec = s.spec.as_mut().expect("a dumbbell");
                    for f in &mut spec.flows {
                        f.loss_classifier =
                            Some(crate::spec::LossClassifierSpec { kind: "knn".into(), params: Default::default() });
                    }
                }
                if name == LINUX_POINT {
                    let spec = s.spec.as_mut().expect("a dumbbell");
                    for f in &mut spec.flows {
                        (f.prr, f.rack, f.tlp, f.frto, f.undo, f.dsack) = (true, true, true, true, true, true);
                        f.ack_policy = crate::spec::AckPolicy::Linux;
                        (f.header_size, f.ack_size) = (52, 52);
                    }
                }
                s.axis_value = Some(i as f64);
                out.push(s);
            }
        }
        _ => return None,
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{scaling, warm_up, AXES, FLOWS_WARMUP, KNN_POINT, LINUX_POINT};
    use crate::spec::Recovery;

    #[test]
    fn the_flows_curve_is_measured_after_its_warm_up() {
        for (quick, warmup) in [(false, FLOWS_WARMUP), (true, 1.0)] {
            let pts = scaling("flows", quick).unwrap();
            assert_eq!(pts.len(), if quick { 3 } else { 6 });
            for p in &pts {
                let spec = p.spec.as_ref().unwrap();
                assert_eq!(p.warmup, warmup, "{}", p.name);
                // A measured part after the warm-up, and the flows' own
                // measurement window (their goodput) over it.
                assert!(spec.duration >= warmup + if quick { 2.0 } else { 5.0 }, "{}: {} s", p.name, spec.duration);
                assert_eq!(spec.measure_start, warmup);
                assert!(p.description.ends_with(&format!(" s after a {warmup} s warm-up")), "{}", p.description);
            }
        }
        // The other curves start measuring at 0.
        for axis in ["rate", "window", "algorithm"] {
            assert!(scaling(axis, true).unwrap().iter().all(|p| p.warmup == 0.0));
        }
    }

    /// The warm-up changes nothing in the run, and what it reports is the
    /// state at its end: the counts of a run that stops there.
    #[test]
    fn a_warm_up_is_the_start_of_the_same_run() {
        let p = scaling("flows", true).unwrap().into_iter().find(|p| p.name == "flows=10").unwrap();
        let spec = p.spec.unwrap();
        let mut w = crate::World::new(spec.clone()).unwrap();
        let warm = warm_up(&mut w, 1.0, spec.duration).unwrap().expect("a warm-up");
        w.run();
        let whole = w.into_results();
        let plain = crate::run(spec.clone()).unwrap();
        assert_eq!(whole.meta.events, plain.meta.events);
        for (a, b) in whole.links.iter().zip(&plain.links) {
            assert_eq!((a.packets_out, a.data_packets_out, a.drops), (b.packets_out, b.data_packets_out, b.drops));
        }
        for (a, b) in whole.flows.iter().zip(&plain.flows) {
            assert_eq!(a.goodput_bps.to_bits(), b.goodput_bps.to_bits());
        }
        let mut short = spec;
        short.duration = 1.0;
        short.measure_start = 0.5;
        let first = crate::run(short).unwrap();
        assert_eq!(warm.seconds, 1.0);
        assert_eq!(warm.events, first.meta.events);
        assert_eq!(warm.packets_out, first.links.iter().map(|l| l.packets_out).collect::<Vec<_>>());
        assert_eq!(warm.data_packets_out, first.links.iter().map(|l| l.data_packets_out).collect::<Vec<_>>());
        let hops = |r: &crate::RunResults| r.links.iter().map(|l| l.packets_out).sum::<u64>();
        assert!(warm.packet_hops() > 0 && warm.packet_hops() < hops(&whole));
        // None asked, none run; one that leaves nothing to measure, or is
        // not a duration, is refused, naming the field.
        let mut w = crate::World::new(p_spec()).unwrap();
        assert_eq!(warm_up(&mut w, 0.0, 3.0), Ok(None));
        assert_eq!(w.now(), 0);
        for bad in [3.0, 4.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = warm_up(&mut w, bad, 3.0).unwrap_err();
            assert_eq!(e.field, "warmup", "{bad}: {e}");
        }
        assert_eq!(w.now(), 0);
    }

    fn p_spec() -> crate::RunSpec {
        scaling("flows", true).unwrap().remove(0).spec.unwrap()
    }

    #[test]
    fn the_algorithm_axis_measures_every_algorithm_of_the_catalog_and_the_knn_classifier() {
        let pts = scaling("algorithm", false).expect("a known axis");
        let mut want: Vec<String> = crate::cc::catalog().iter().map(|i| format!("algorithm={}", i.name)).collect();
        want.push(format!("algorithm={KNN_POINT}"));
        want.push(format!("algorithm={LINUX_POINT}"));
        assert_eq!(pts.iter().map(|p| p.name.clone()).collect::<Vec<_>>(), want);
        for (i, p) in pts.iter().enumerate() {
            assert_eq!(p.axis_value, Some(i as f64));
            let spec = p.spec.clone().expect("runnable");
            assert_eq!(spec.flows.len(), 10);
            assert_eq!(spec.links[0].rate_bps, 1e9);
            assert_eq!(spec.links[0].queue.limit_packets, Some(833)); // 0.1 x 8333
            assert_eq!(spec.duration, 120.0);
            let algo = p.name.trim_start_matches("algorithm=").split('+').next().unwrap();
            for f in &spec.flows {
                assert_eq!(f.cc.algorithm, algo);
                assert_eq!(f.rack && f.prr && f.tlp && f.frto && f.undo && f.dsack, p.name.ends_with("+linux"));
                assert_eq!(f.recovery, Recovery::Sack);
                assert_eq!(
                    f.loss_classifier.as_ref().map(|c| c.kind.as_str()),
                    (p.name.ends_with("+knn")).then_some("knn")
                );
            }
            crate::World::new(spec).unwrap_or_else(|e| panic!("{}: {e:?}", p.name));
        }
        let quick = scaling("algorithm", true).unwrap();
        assert_eq!(quick.len(), pts.len());
        assert!(quick.iter().all(|p| p.spec.as_ref().unwrap().duration == 2.0));
        assert!(AXES.contains(&"algorithm"));
    }
}
