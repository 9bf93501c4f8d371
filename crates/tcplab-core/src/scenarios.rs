//! Ready-made run descriptions for tests and benchmarks written in Rust (the
//! Python package has the full builders with units and validation), and,
//! with the cargo feature `bench`, the benchmark suite (`bench`), whose
//! definitions both `cargo bench` and `tcplab bench` use.

use crate::spec::*;

/// Access-link propagation delays of a [`Dumbbell`].
#[derive(Debug, Clone, PartialEq)]
pub enum AccessDelay {
    /// mv-highspeed: sender i's and receiver i's access links both have
    /// `2.5 * i / N` ms, i = 1..N.
    Spread,
    /// mv-buffers: every access link's delay drawn independently, uniform in
    /// `[0, max)` seconds, as the Python dumbbell draws them:
    /// `numpy.random.default_rng(seed).uniform(0, max, size=(2, N))`
    /// ([`crate::sim::numpy_rng::uniform_access_delays`]), so a seed gives the same network in both.
    Uniform { max: f64 },
}

/// Parameters of the mv-highspeed dumbbell (docs/papers/mv-highspeed.md):
/// N senders on their own access links to R1, bottleneck R1 -> R2 of capacity
/// C and round-trip propagation delay `rtt`, R2 to N receivers; drop-tail
/// buffer of `buffer_packets` at R1.
#[derive(Debug, Clone)]
pub struct Dumbbell {
    pub flows: usize,
    pub rate_bps: f64,
    pub rtt: f64,
    pub buffer_packets: u64,
    pub access_rate_bps: f64,
    pub access_delay: AccessDelay,
    pub duration: f64,
    pub measure_start: f64,
    pub sample_interval: f64,
    pub algorithm: String,
    /// Parameters of the congestion control (JSON object), the same for every flow.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub recovery: Recovery,
    pub packet_size: u32,
    pub accounting: Accounting,
    pub init_cwnd: f64,
    /// Flow start times are uniform in `[0, start_spread)` seconds (drawn from
    /// the run's workload stream); 0: every flow starts at 0.
    pub start_spread: f64,
    pub seed: u64,
}

/// SplitMix64-based uniform draws in [0, 1) from (seed, purpose), for
/// builder-side randomness (start times).
fn uniform_draws(seed: u64, purpose: u64, n: usize) -> Vec<f64> {
    use rand::Rng;
    let mut r = crate::sim::rng::stream(seed, crate::sim::rng::StreamKind::Workload, purpose);
    (0..n).map(|_| r.gen::<f64>()).collect()
}

impl Dumbbell {
    pub fn new(flows: usize, rate_bps: f64, rtt: f64, buffer_packets: u64) -> Self {
        Dumbbell {
            flows,
            rate_bps,
            rtt,
            buffer_packets,
            access_rate_bps: 10.0 * rate_bps,
            access_delay: AccessDelay::Spread,
            duration: 100.0,
            measure_start: 50.0,
            sample_interval: 0.0,
            algorithm: "newreno".into(),
            params: serde_json::Map::new(),
            recovery: Recovery::NewReno,
            packet_size: 1500,
            accounting: Accounting::Ns2,
            init_cwnd: 2.0,
            start_spread: 0.0,
            seed: 1,
        }
    }

    /// BDP in packets of `packet_size` for the bottleneck RTT.
    pub fn bdp_packets(rate_bps: f64, rtt: f64, packet_size: u32) -> u64 {
        (rate_bps * rtt / (8.0 * packet_size as f64)).round().max(1.0) as u64
    }

    /// Index of the bottleneck (data direction) in `spec().links`.
    pub const BOTTLENECK: usize = 0;

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
            queue: QueueSpec { limit_packets: limit, ..Default::default() },
            loss: None,
        };
        let mut links = vec![
            link("r1->r2".into(), "r1".into(), "r2".into(), self.rate_bps, self.rtt / 2.0, Some(self.buffer_packets)),
            link("r2->r1".into(), "r2".into(), "r1".into(), self.rate_bps, self.rtt / 2.0, None),
        ];
        let n = self.flows;
        let delays: Vec<[f64; 2]> = match self.access_delay {
            AccessDelay::Spread => (1..=n).map(|i| [2.5e-3 * i as f64 / n as f64; 2]).collect(),
            AccessDelay::Uniform { max } => crate::sim::numpy_rng::uniform_access_delays(self.seed, n, max),
        };
        let starts = if self.start_spread > 0.0 {
            uniform_draws(self.seed, 2, n).into_iter().map(|u| u * self.start_spread).collect()
        } else {
            vec![0.0; n]
        };
        let mut flows = Vec::new();
        for i in 1..=n {
            let (s, r) = (format!("s{i}"), format!("d{i}"));
            nodes.push(NodeSpec { name: s.clone(), kind: NodeKind::Host });
            nodes.push(NodeSpec { name: r.clone(), kind: NodeKind::Host });
            for (k, (a, b)) in [(&s, "r1"), (&r, "r2")].into_iter().enumerate() {
                let d = delays[i - 1][k];
                links.push(link(format!("{a}->{b}"), a.clone(), b.into(), self.access_rate_bps, d, None));
                links.push(link(format!("{b}->{a}"), b.into(), a.clone(), self.access_rate_bps, d, None));
            }
            let mut f: FlowSpec = serde_json::from_value(serde_json::json!({
                "name": format!("f{i}"), "src": s, "dst": r,
                "cc": {"algorithm": self.algorithm, "params": self.params}, "recovery": self.recovery,
                "packet_size": self.packet_size, "accounting": self.accounting,
            }))
            .expect("valid flow");
            f.init_cwnd = self.init_cwnd;
            f.start = starts[i - 1];
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
            loss_trace: false,
            pcap: Vec::new(),
            pcap_limit: None,
            memory_limit: None,
        }
    }
}

/// The benchmark suite (developer tooling, behind the cargo feature `bench`).
#[cfg(feature = "bench")]
pub mod bench;
