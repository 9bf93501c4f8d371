//! Ready-made run descriptions for tests and benchmarks written in Rust (the
//! Python package has the full builders with units and validation).

use crate::spec::*;

/// Parameters of the mv-highspeed dumbbell (shared/spec/mv-highspeed.md):
/// N senders on their own access links to R1, bottleneck R1 -> R2 of capacity
/// C and round-trip propagation delay `rtt`, R2 to N receivers; sender i's and
/// receiver i's access links have one-way delay 2.5 * i / N ms; drop-tail
/// buffer of `buffer_packets` at R1.
#[derive(Debug, Clone)]
pub struct Dumbbell {
    pub flows: usize,
    pub rate_bps: f64,
    pub rtt: f64,
    pub buffer_packets: u64,
    pub access_rate_bps: f64,
    pub duration: f64,
    pub measure_start: f64,
    pub sample_interval: f64,
    pub algorithm: String,
    pub recovery: Recovery,
    pub packet_size: u32,
    pub accounting: Accounting,
    pub seed: u64,
}

impl Dumbbell {
    pub fn new(flows: usize, rate_bps: f64, rtt: f64, buffer_packets: u64) -> Self {
        Dumbbell {
            flows,
            rate_bps,
            rtt,
            buffer_packets,
            access_rate_bps: 10.0 * rate_bps,
            duration: 100.0,
            measure_start: 50.0,
            sample_interval: 0.0,
            algorithm: "newreno".into(),
            recovery: Recovery::NewReno,
            packet_size: 1500,
            accounting: Accounting::Ns2,
            seed: 1,
        }
    }

    /// BDP in packets of `packet_size` for the bottleneck RTT.
    pub fn bdp_packets(rate_bps: f64, rtt: f64, packet_size: u32) -> u64 {
        (rate_bps * rtt / (8.0 * packet_size as f64)).round().max(1.0) as u64
    }

    pub fn spec(&self) -> RunSpec {
        let mut nodes = vec![
            NodeSpec { name: "r1".into(), kind: NodeKind::Router },
            NodeSpec { name: "r2".into(), kind: NodeKind::Router },
        ];
        let link = |name: String, src: String, dst: String, rate: f64, delay: f64, limit: Option<u64>| LinkSpec {
            name,
            src,
            dst,
            rate_bps: rate,
            delay,
            queue: QueueSpec { limit_packets: limit, limit_bytes: None },
            loss: None,
        };
        let mut links = vec![
            link("r1->r2".into(), "r1".into(), "r2".into(), self.rate_bps, self.rtt / 2.0, Some(self.buffer_packets)),
            link("r2->r1".into(), "r2".into(), "r1".into(), self.rate_bps, self.rtt / 2.0, None),
        ];
        let mut flows = Vec::new();
        for i in 1..=self.flows {
            let d = 2.5e-3 * i as f64 / self.flows as f64;
            let (s, r) = (format!("s{i}"), format!("d{i}"));
            nodes.push(NodeSpec { name: s.clone(), kind: NodeKind::Host });
            nodes.push(NodeSpec { name: r.clone(), kind: NodeKind::Host });
            for (a, b) in [(&s, "r1"), (&r, "r2")] {
                links.push(link(format!("{a}->{b}"), a.clone(), b.into(), self.access_rate_bps, d, None));
                links.push(link(format!("{b}->{a}"), b.into(), a.clone(), self.access_rate_bps, d, None));
            }
            let mut f: FlowSpec = serde_json::from_value(serde_json::json!({
                "name": format!("f{i}"), "src": s, "dst": r,
                "cc": {"algorithm": self.algorithm}, "recovery": self.recovery,
                "packet_size": self.packet_size, "accounting": self.accounting,
            }))
            .expect("valid flow");
            f.init_cwnd = 2.0;
            flows.push(f);
        }
        RunSpec {
            seed: self.seed,
            duration: self.duration,
            measure_start: self.measure_start,
            sample_interval: self.sample_interval,
            nodes,
            links,
            routes: vec![],
            flows,
            trace_links: None,
        }
    }
}
