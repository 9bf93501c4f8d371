use tcplab_core::scenarios::Dumbbell;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dur: f64 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(200.0);
    let frac: f64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(0.1);
    let rec = args.get(3).cloned().unwrap_or("newreno".into());
    let mut d = Dumbbell::new(1, 200e6, 0.1, (1667.0 * frac) as u64);
    d.duration = dur; d.measure_start = dur / 2.0; d.sample_interval = 0.01;
    d.recovery = serde_json::from_value(serde_json::json!(rec)).unwrap();
    let mut w = tcplab_core::World::new(d.spec()).unwrap();
    let t = std::time::Instant::now();
    w.run();
    let r = w.results();
    let el = t.elapsed().as_secs_f64();
    let f = &r.flows[0];
    println!("wall {el:.2}s events {} ev/s {:.2}M bottleneck pkts {} pkts/s {:.2}M", r.meta.events, r.meta.events as f64/el/1e6, r.links[0].data_packets_out, r.links[0].data_packets_out as f64/el/1e6);
    println!("goodput {:.3} Mbps util {:.4} drops {} retx {} to {} fr {} cwnd {} ss {} rtt {:.4}/{:.4}/{:.4}", f.goodput_bps/1e6, r.links[0].utilization, r.links[0].drops, f.retransmits, f.timeouts, f.fast_recoveries, f.cwnd, f.ssthresh, f.rtt_min, f.rtt_mean, f.rtt_max);
}
