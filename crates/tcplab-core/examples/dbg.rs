use tcplab_core::scenarios::Dumbbell;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dur: f64 = args[1].parse().unwrap();
    let frac: f64 = args[2].parse().unwrap();
    let mut d = Dumbbell::new(1, 200e6, 0.1, (1667.0 * frac) as u64);
    d.duration = dur; d.measure_start = 0.0; d.sample_interval = 0.05;
    d.recovery = serde_json::from_value(serde_json::json!(args[3])).unwrap();
    let mut w = tcplab_core::World::new(d.spec()).unwrap();
    w.run();
    let r = w.results();
    let ts = &r.flow_ts; let q = &r.queue_ts;
    let mut last = (0.0, 0.0);
    for i in 0..ts.time.len() {
        let c = (ts.cwnd[i], ts.ssthresh[i]);
        if (c.1 != last.1) || i % 40 == 0 { println!("t {:.2} cwnd {:.0} ss {:.0} inflight {} q {} deliv {}", ts.time[i], c.0, c.1, ts.in_flight[i], q.packets[i], ts.delivered_bytes[i]); }
        last = c;
    }
    let f=&r.flows[0]; println!("retx {} to {} fr {}", f.retransmits, f.timeouts, f.fast_recoveries);
}
