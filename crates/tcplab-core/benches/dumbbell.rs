//! `cargo bench -p tcplab-core`: the S1 scenario of `tcplab bench` without
//! Python (one NewReno flow, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, 2000 s,
//! traces every 10 ms). Prints figures; asserts nothing about speed.
//! `TCPLAB_BENCH_SECONDS` shortens the simulated duration.

use std::time::Instant;
use tcplab_core::scenarios::Dumbbell;

fn main() {
    let secs: f64 = std::env::var("TCPLAB_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2000.0);
    let mut d = Dumbbell::new(1, 200e6, 0.1, 167);
    d.duration = secs;
    d.measure_start = secs / 2.0;
    d.sample_interval = 0.01;
    let t = Instant::now();
    let mut w = tcplab_core::World::new(d.spec()).expect("valid scenario");
    w.run();
    let r = w.results();
    let wall = t.elapsed().as_secs_f64();
    let pkts = r.links[0].data_packets_out;
    let hops: u64 = r.links.iter().map(|l| l.packets_out).sum();
    println!("S1 (Rust only): {secs} s simulated");
    println!("  wall time            {wall:.2} s");
    println!("  bottleneck packets/s {:.2} M ({pkts} data packets)", pkts as f64 / wall / 1e6);
    println!("  events/s             {:.2} M ({} events)", r.meta.events as f64 / wall / 1e6, r.meta.events);
    println!("  ns per packet-hop    {:.1}", wall * 1e9 / hops as f64);
    println!("  goodput              {:.3} Mbit/s, utilization {:.4}", r.flows[0].goodput_bps / 1e6, r.links[0].utilization);
}
