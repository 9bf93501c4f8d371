//! The metrics a campaign's index keeps for each run: per-run totals and
//! per-flow goodput (the columns of `Campaign.results()`).
//!
//! Computed here only (the tests below check each rule; tests/test_sweep.py
//! follows them through a real campaign): sums in flow order; the bottleneck is the first of the job's `bottleneck` names
//! that is a link of the run, else the first link of highest utilization;
//! values that are not finite are null.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use tcplab_core::results::RunResults;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// A float, or the integer 0 for a run without flows (Python's empty sum).
    pub total_goodput_bps: Value,
    pub jain_index: Option<f64>,
    pub retransmits: u64,
    pub timeouts: u64,
    pub bottleneck: Option<String>,
    pub utilization: Option<f64>,
    pub drops: Option<u64>,
    pub queue_mean_packets: Option<f64>,
    pub events: u64,
    /// Goodput of each flow by name, in flow order (names are unique in a RunSpec).
    #[serde(serialize_with = "in_order")]
    pub flow_goodput_bps: Vec<(String, Option<f64>)>,
}

fn in_order<S: Serializer>(pairs: &[(String, Option<f64>)], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

fn fin(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn num(x: Option<f64>) -> Value {
    x.and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
}

/// Index of the bottleneck link: the first name of `bottleneck` that is a
/// link of the run, else the first link of highest utilization.
pub fn bottleneck_link(r: &RunResults, bottleneck: &[String]) -> Option<usize> {
    if let Some(i) = bottleneck.iter().find_map(|name| r.links.iter().position(|l| &l.name == name)) {
        return Some(i);
    }
    let mut best: Option<usize> = None;
    for (i, l) in r.links.iter().enumerate() {
        match best {
            None => best = Some(i),
            Some(b) if l.utilization > r.links[b].utilization => best = Some(i),
            _ => {}
        }
    }
    best
}

pub fn metrics(r: &RunResults, bottleneck: &[String]) -> Metrics {
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for f in &r.flows {
        s1 += f.goodput_bps;
        s2 += f.goodput_bps * f.goodput_bps;
    }
    let b = bottleneck_link(r, bottleneck).map(|i| &r.links[i]);
    Metrics {
        total_goodput_bps: if r.flows.is_empty() { Value::from(0) } else { num(fin(s1)) },
        jain_index: if s2 > 0.0 { fin(s1 * s1 / (r.flows.len() as f64 * s2)) } else { None },
        retransmits: r.flows.iter().map(|f| f.retransmits).sum(),
        timeouts: r.flows.iter().map(|f| f.timeouts).sum(),
        bottleneck: b.map(|l| l.name.clone()),
        utilization: b.and_then(|l| fin(l.utilization)),
        drops: b.map(|l| l.drops),
        queue_mean_packets: b.and_then(|l| fin(l.queue_mean_packets)),
        events: r.meta.events,
        flow_goodput_bps: r.flows.iter().map(|f| (f.name.clone(), fin(f.goodput_bps))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::results::{FlowResult, LinkResult, RunMeta};

    fn flow(name: &str, gp: f64, rtx: u64) -> FlowResult {
        FlowResult {
            id: 0,
            name: name.into(),
            src: String::new(),
            dst: String::new(),
            algorithm: String::new(),
            recovery: String::new(),
            goodput_bps: gp,
            bytes_delivered: 0,
            data_packets_sent: 0,
            retransmits: rtx,
            timeouts: 1,
            fast_recoveries: 0,
            loss_events: 0,
            loss_events_ignored: 0,
            data_packets_received: 0,
            data_packets_dropped: 0,
            data_packets_lost: 0,
            data_packets_in_network: 0,
            acks_sent: 0,
            acks_received: 0,
            acks_dropped: 0,
            acks_lost: 0,
            acks_in_network: 0,
            rtt_samples: 0,
            rtt_min: 0.0,
            rtt_mean: 0.0,
            rtt_max: 0.0,
            srtt: 0.0,
            cwnd: 0.0,
            ssthresh: 0.0,
            ecn: "off".into(),
            ce_received: 0,
            ce_delivered: 0,
            ecn_reductions: 0,
        }
    }

    fn link(name: &str, util: f64, drops: u64) -> LinkResult {
        LinkResult {
            id: 0,
            name: name.into(),
            src: String::new(),
            dst: String::new(),
            rate_bps: 0.0,
            delay: 0.0,
            utilization: util,
            packets_in: 0,
            packets_out: 0,
            drops,
            losses: 0,
            packets_in_link: 0,
            bytes_out: 0,
            data_packets_out: 0,
            queue_mean_packets: f64::NAN,
            queue_max_packets: 0,
            queue_mean_bytes: 0.0,
            discipline: "droptail".into(),
            marks: 0,
            aqm_drops: 0,
            sojourn_mean: None,
            sojourn_p50: None,
            sojourn_p95: None,
            sojourn_p99: None,
        }
    }

    fn run(flows: Vec<FlowResult>, links: Vec<LinkResult>) -> RunResults {
        RunResults {
            flows,
            links,
            files: vec![],
            flow_ts: Default::default(),
            queue_ts: Default::default(),
            cc_ts: Default::default(),
            qdisc_ts: Default::default(),
            drop_trace: Default::default(),
            retransmit_trace: Default::default(),
            packet_trace: None,
            meta: RunMeta { events: 7, sim_time: 1.0, wall_s: 0.0, seed: 1 },
        }
    }

    #[test]
    fn jain_index_sums_and_bottleneck_choice() {
        let r = run(
            vec![flow("a", 3.0, 2), flow("b", 1.0, 5)],
            vec![link("x", 0.5, 1), link("y", 0.9, 2), link("z", 0.9, 3)],
        );
        let m = metrics(&r, &[]);
        assert_eq!(m.total_goodput_bps, Value::from(4.0));
        // Jain's index (sum x)^2 / (n sum x^2) = 16 / (2 * 10)
        assert_eq!(m.jain_index, Some(0.8));
        assert_eq!((m.retransmits, m.timeouts, m.events), (7, 2, 7));
        // the first link of highest utilization; its queue mean is NaN -> null
        assert_eq!((m.bottleneck.as_deref(), m.drops, m.queue_mean_packets), (Some("y"), Some(2), None));
        // a named bottleneck wins, the first of the names that exists
        let m = metrics(&r, &["nope".into(), "z".into(), "x".into()]);
        assert_eq!(m.bottleneck.as_deref(), Some("z"));
        assert_eq!(m.flow_goodput_bps, vec![("a".to_string(), Some(3.0)), ("b".to_string(), Some(1.0))]);
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.ends_with(r#""flow_goodput_bps":{"a":3.0,"b":1.0}}"#), "{text}");
    }

    #[test]
    fn empty_runs_and_non_finite_values() {
        let m = metrics(&run(vec![], vec![]), &[]);
        assert_eq!(m.total_goodput_bps, Value::from(0));
        assert!(m.total_goodput_bps.is_u64());
        assert_eq!((m.jain_index, m.bottleneck.clone(), m.utilization), (None, None, None));
        let m = metrics(&run(vec![flow("a", 0.0, 0)], vec![link("x", f64::NAN, 0)]), &[]);
        assert_eq!((m.jain_index, m.utilization), (None, None)); // no goodput: no index; NaN -> null
        let m = metrics(&run(vec![flow("a", f64::INFINITY, 0)], vec![]), &[]);
        assert_eq!(m.total_goodput_bps, Value::Null);
        assert_eq!(m.flow_goodput_bps, vec![("a".to_string(), None)]);
    }
}
