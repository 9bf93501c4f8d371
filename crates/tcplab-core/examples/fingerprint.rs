//! `cargo run --release -p tcplab-core --example fingerprint [spec.json ...]`
//!
//! Prints one line per scenario: a 64-bit FNV-1a hash of everything a run
//! returns (every flow, link and file row, every sampled series, the event
//! count; the wall time excluded), the event count and the bottleneck data
//! packets. Run it before and after an optimization of the engine: any
//! difference means the change altered simulation results, not just speed.
//! `f64` values enter through their `Debug` form, which round-trips exactly,
//! so equal hashes mean bit-for-bit equal results.
//!
//! The built-in set covers every recovery variant, every algorithm, delayed
//! ACKs, SACK with several blocks, files, scripted and random loss,
//! byte-limited queues, a loss classifier, many flows and sampled traces;
//! extra scenarios can be given as RunSpec JSON files.
//!
//! Scenarios added later (at the end of the list, after `knn-classifier`)
//! have hashes of their own, first taken when they were added: queue
//! disciplines with their sampled series and sojourn statistics, ECN
//! marking and feedback, unresponsive sources. Adding one changes only
//! the "(all)" line; every earlier line must stay identical, so compare a
//! change's output with the old one line by line, over the scenarios both
//! have.

use tcplab_core::cc::EcnMode;
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::*;
use tcplab_core::RunSpec;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn dumbbell(flows: usize, rate: f64, rtt: f64, buffer: u64, algo: &str, rec: Recovery, secs: f64) -> Dumbbell {
    let mut d = Dumbbell::new(flows, rate, rtt, buffer);
    d.algorithm = algo.into();
    d.recovery = rec;
    d.duration = secs;
    d.measure_start = secs / 2.0;
    d.sample_interval = 0.01;
    d
}

fn with_flows(mut s: RunSpec, f: impl Fn(usize, &mut FlowSpec)) -> RunSpec {
    for (i, fl) in s.flows.iter_mut().enumerate() {
        f(i, fl);
    }
    s
}

fn scenarios() -> Vec<(String, RunSpec)> {
    let bdp = |rate: f64, rtt: f64| Dumbbell::bdp_packets(rate, rtt, 1500);
    // The bench suite's shapes, shortened.
    let mut v: Vec<(String, RunSpec)> = vec![
        (
            "s1-newreno-60s".into(),
            dumbbell(1, 200e6, 0.1, bdp(200e6, 0.1) / 10, "newreno", Recovery::NewReno, 60.0).spec(),
        ),
        ("s2-cubic-60s".into(), dumbbell(1, 200e6, 0.1, bdp(200e6, 0.1), "cubic", Recovery::NewReno, 60.0).spec()),
        (
            "s3-10cubic-sack-10s".into(),
            dumbbell(10, 1e9, 0.1, bdp(1e9, 0.1) / 10, "cubic", Recovery::Sack, 10.0).spec(),
        ),
        (
            "s4-200newreno-20s".into(),
            dumbbell(200, 200e6, 0.1, bdp(200e6, 0.1) / 10, "newreno", Recovery::NewReno, 20.0).spec(),
        ),
        // 16,402 links: the radix heap and its event loop.
        (
            "radix-4100newreno-2s".into(),
            dumbbell(4100, 41e9, 0.1, bdp(41e9, 0.1) / 10, "newreno", Recovery::NewReno, 2.0).spec(),
        ),
    ];
    // Every algorithm and recovery on a small, lossy dumbbell.
    let algos = ["newreno", "bic", "cubic", "scalable", "highspeed", "htcp", "westwood", "westwood-re", "westwood-bs"];
    for (k, a) in algos.iter().enumerate() {
        for rec in [Recovery::Reno, Recovery::NewReno, Recovery::Sack] {
            let mut d = dumbbell(3, 20e6, 0.04, 7 + 11 * k as u64, a, rec, 30.0);
            d.seed = 1 + k as u64;
            let s = with_flows(d.spec(), |i, f| {
                f.delayed_ack = i == 1;
                f.limited_transmit = i == 2;
                f.start = 0.1 * i as f64;
            });
            v.push((format!("{a}-{rec:?}"), s));
        }
    }
    // SACK with random loss both ways, payload accounting, 4 blocks, byte-limited queue.
    let mut s = with_flows(dumbbell(2, 50e6, 0.06, 50, "cubic", Recovery::Sack, 30.0).spec(), |_, f| {
        f.sack_blocks = 4;
        f.accounting = Accounting::Payload;
        f.delayed_ack = true;
    });
    s.links[0].loss = Some(LossSpec::Bernoulli { p: 0.003 });
    s.links[1].loss = Some(LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.3, loss_good: 0.0, loss_bad: 1.0 });
    s.links[0].queue = QueueSpec { limit_bytes: Some(60_000), ..Default::default() };
    v.push(("sack-random-loss".into(), s));
    // Files, scripted loss, restart after idle, a loss classifier.
    let s = with_flows(dumbbell(2, 10e6, 0.05, 20, "newreno", Recovery::Sack, 20.0).spec(), |i, f| {
        f.app = AppSpec::Files {
            files: (0..15)
                .map(|k| FileSpec { size: 3000 + 41_000 * k, start: 0.25 * k as f64 + 0.05 * i as f64 })
                .collect(),
        };
        f.drop_segments = vec![3, 4, 40, 41, 42, 200];
    });
    v.push(("files-scripted-loss".into(), s));
    let mut s = with_flows(dumbbell(2, 10e6, 0.05, 20, "newreno", Recovery::NewReno, 20.0).spec(), |_, f| {
        f.loss_classifier = Some(LossClassifierSpec { kind: "knn".into(), params: Default::default() });
    });
    s.links[0].loss = Some(LossSpec::Bernoulli { p: 0.005 });
    v.push(("knn-classifier".into(), s));
    // Added with the queue disciplines and ECN (hashes of their own).
    // FQ-CoDel (ecn on by default) over four CUBIC flows of different RTTs
    // with AccECN, AccECN, classic ECN and none: marks, CoDel drops of the
    // flow without ECN, the fattest-flow drop at the 100-packet limit, the
    // discipline's series (sample_interval 0.01 s) and sojourn statistics.
    let mut d = dumbbell(4, 20e6, 0.04, 100, "cubic", Recovery::Sack, 20.0);
    d.seed = 3;
    let mut s = with_flows(d.spec(), |i, f| {
        f.ecn = [Some(EcnMode::AccEcn), Some(EcnMode::AccEcn), Some(EcnMode::Classic), None][i];
        f.start = 0.1 * i as f64;
    });
    s.links[0].queue.discipline = Some("fq_codel".into());
    v.push(("fq_codel-4cubic-ecn".into(), s));
    // DCTCP (AccECN by default) through RED as a step marker at K = 20
    // packets: w_q = 1 (the instantaneous queue), max_p = 1, not gentle,
    // marks instead of forced drops (harddrop off). tcplab's RED wants
    // max_th > min_th; min_th 19 and max_th 20 mark exactly what Linux's
    // min = max = 20 does with a whole-packet queue (avg >= 20: hard mark;
    // avg = 19: p_b = 0).
    let mut s = with_flows(dumbbell(2, 100e6, 0.02, 200, "dctcp", Recovery::Sack, 10.0).spec(), |i, f| {
        f.start = 0.05 * i as f64;
    });
    s.links[0].queue.discipline = Some("red".into());
    s.links[0].queue.params = serde_json::json!({
        "min_th": 19, "max_th": 20, "w_q": 1, "max_p": 1, "gentle": false, "ecn": true, "harddrop": false,
    })
    .as_object()
    .unwrap()
    .clone();
    v.push(("red-step-2dctcp".into(), s));
    // PIE with ECN: a Reno flow with classic ECN against an unresponsive
    // CBR source sending ECT(1) and an on/off source without ECN (marked
    // up to PIE's 10 %, dropped otherwise).
    let mut s = with_flows(dumbbell(3, 10e6, 0.05, 200, "newreno", Recovery::NewReno, 20.0).spec(), |i, f| match i {
        0 => f.ecn = Some(EcnMode::Classic),
        1 => f.app = AppSpec::Cbr { rate_bps: 3e6, ecn: SourceEcn::Ect1 },
        _ => f.app = AppSpec::OnOff { rate_bps: 4e6, on: 0.5, off: 0.5, exponential: true, ecn: SourceEcn::NotEct },
    });
    s.links[0].queue.discipline = Some("pie".into());
    s.links[0].queue.params = serde_json::json!({ "ecn": true }).as_object().unwrap().clone();
    v.push(("pie-reno-cbr-onoff".into(), s));
    v
}

fn fingerprint(spec: RunSpec) -> (u64, u64, u64) {
    let mut w = tcplab_core::World::new(spec).expect("valid scenario");
    w.run();
    let mut r = w.results();
    r.meta.wall_s = 0.0;
    let text = without_defaults_of_later_fields(format!("{r:?}"));
    (fnv1a(text.as_bytes()), r.meta.events, r.links[0].data_packets_out)
}

/// Result fields added after the fingerprint was first taken are hashed
/// only when they differ from what a run without them returns, so the
/// hashes of the built-in scenarios stay comparable across versions: the
/// queue-discipline columns of a link without a discipline, an empty
/// discipline series, the ECN columns of a flow without ECN, the packet
/// capture of a run that captures no link.
fn without_defaults_of_later_fields(text: String) -> String {
    text.replace(", discipline: \"droptail\", marks: 0, aqm_drops: 0, sojourn_mean: None, sojourn_p50: None, sojourn_p95: None, sojourn_p99: None", "")
        .replace(", qdisc_ts: QdiscSeries { time: [], link: [], variable: [], value: [], names: [] }", "")
        .replace(", ecn: \"off\", ce_received: 0, ce_delivered: 0, ecn_reductions: 0", "")
        .replace(", packet_trace: None", "")
}

fn main() {
    let mut list = scenarios();
    for path in std::env::args().skip(1) {
        let json = std::fs::read_to_string(&path).expect("readable spec file");
        list.push((path.clone(), RunSpec::from_json(&json).expect("valid spec")));
    }
    let mut all = 0u64;
    for (name, spec) in list {
        let (h, events, pkts) = fingerprint(spec);
        all = all.rotate_left(7) ^ h;
        println!("{h:016x} {events:>10} events {pkts:>9} pkts  {name}");
    }
    println!("{all:016x} (all)");
}
