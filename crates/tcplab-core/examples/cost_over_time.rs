//! The event loop's cost per event against simulated time, for one
//! benchmark scenario run from the start:
//!
//! ```sh
//! cargo run --release -p tcplab-core --example cost_over_time -- flows=10000 30 [WINDOWS] [--access-delays D1,D2,..]
//! ```
//!
//! SCENARIO is a standard scenario (S1-S4) or a scaling point (`flows=1000`,
//! `window=100`, ...), SECONDS its simulated duration, WINDOWS how many
//! slices of simulated time to report (10). `--access-delays` (seconds)
//! gives the access links of flow i (all four) the i-th delay of the list,
//! cycling, instead of the scenario's: an experiment on what the access
//! links' delay lines cost (docs/performance.md, "What the 10,000-flow
//! point pays for"). Each line is the wall time per
//! event over one slice, measured at the run's progress reports (every 2^20
//! events, where the run also trims its memory, as in `tcplab bench`); the
//! run's last partial slice is not printed.
//! This is what showed that the flows curve needs a warm-up
//! (docs/performance.md, "The flows curve after a warm-up"). It prints
//! figures and asserts nothing.

use std::time::Instant;

use tcplab_core::scenarios::bench::{self, Length};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: cost_over_time SCENARIO SECONDS [WINDOWS] [--access-delays D1,D2,..]";
    let access: Option<Vec<f64>> = args.iter().position(|a| a == "--access-delays").map(|i| {
        let list = args.get(i + 1).expect(usage).clone();
        args.drain(i..i + 2);
        list.split(',')
            .map(|d| {
                d.parse().ok().filter(|d: &f64| d.is_finite() && *d >= 0.0).expect("--access-delays: seconds >= 0")
            })
            .collect()
    });
    let name = args.first().expect(usage);
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).filter(|s: &f64| s.is_finite() && *s > 0.0).expect(usage);
    let windows: u32 = args.get(2).map_or(Some(10), |s| s.parse().ok()).filter(|&n| n > 0).expect(usage);
    let sc = bench::scenario(name, Length::Seconds(secs))
        .or_else(|| bench::AXES.iter().flat_map(|a| bench::scaling(a, false).unwrap()).find(|s| &s.name == name))
        .unwrap_or_else(|| panic!("unknown scenario {name}"));
    let mut spec = sc.spec.unwrap_or_else(|| panic!("{name} is not runnable here: {}", sc.skip.unwrap_or_default()));
    spec.duration = secs;
    spec.measure_start = secs / 2.0;
    if let Some(ds) = &access {
        // A dumbbell (scenarios::Dumbbell): the two bottleneck links, then
        // four access links per flow.
        assert!(spec.links.len() == 2 + 4 * spec.flows.len(), "--access-delays: {name} is not a dumbbell");
        for (i, l) in spec.links.iter_mut().skip(2).enumerate() {
            l.delay = ds[(i / 4) % ds.len()];
        }
    }
    // The description gives the benchmark's duration; this run is SECONDS long, from the start.
    let with = access.as_ref().map_or(String::new(), |d| format!(", access delays {d:?} s"));
    println!("{name}{with}, {secs} s from the start: {}", sc.description);
    let mut w = tcplab_core::World::new(spec).expect("a valid scenario");
    let step = secs / windows as f64;
    let t0 = Instant::now();
    // (simulated time, wall time, progress reports) at the last line printed.
    let (mut sim0, mut wall0, mut n0, mut n) = (0.0f64, 0.0f64, 0u64, 0u64);
    w.run_with_progress(|f| {
        n += 1;
        let sim = f * secs;
        if sim >= sim0 + step || f >= 1.0 {
            let wall = t0.elapsed().as_secs_f64();
            // Every report but the last comes after 2^20 more events.
            let events = ((n - n0) << 20) as f64;
            if f < 1.0 {
                println!("{sim0:8.1} - {sim:8.1} s: {:6.1} ns per event", (wall - wall0) / events * 1e9);
            }
            (sim0, wall0, n0) = (sim, wall, n);
        }
    });
    // What the network did over the second half (the run's measurement
    // window): the cost depends on it too (queue occupancy, losses).
    let r = w.into_results();
    let b = &r.links[0];
    println!(
        "{}, second half: utilization {:.3}, mean queue {:.0} packets, {} drops, {} timeouts",
        b.name,
        b.utilization,
        b.queue_mean_packets,
        b.drops,
        r.flows.iter().map(|f| f.timeouts).sum::<u64>()
    );
}
