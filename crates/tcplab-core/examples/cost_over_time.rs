//! The event loop's cost per event against simulated time, for one
//! benchmark scenario run from the start:
//!
//! ```sh
//! cargo run --release -p tcplab-core --example cost_over_time -- flows=10000 30 [WINDOWS]
//! ```
//!
//! SCENARIO is a standard scenario (S1-S4) or a scaling point (`flows=1000`,
//! `window=100`, ...), SECONDS its simulated duration, WINDOWS how many
//! slices of simulated time to report (10). Each line is the wall time per
//! event over one slice, measured at the run's progress reports (every 2^20
//! events, where the run also trims its memory, as in `tcplab bench`); the
//! run's last partial slice is not printed.
//! This is what showed that the flows curve needs a warm-up
//! (docs/performance.md, "The flows curve after a warm-up"). It prints
//! figures and asserts nothing.

use std::time::Instant;

use tcplab_core::scenarios::bench::{self, Length};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: cost_over_time SCENARIO SECONDS [WINDOWS]";
    let name = args.first().expect(usage);
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).filter(|s: &f64| s.is_finite() && *s > 0.0).expect(usage);
    let windows: u32 = args.get(2).map_or(Some(10), |s| s.parse().ok()).filter(|&n| n > 0).expect(usage);
    let sc = bench::scenario(name, Length::Seconds(secs))
        .or_else(|| bench::AXES.iter().flat_map(|a| bench::scaling(a, false).unwrap()).find(|s| &s.name == name))
        .unwrap_or_else(|| panic!("unknown scenario {name}"));
    let mut spec = sc.spec.unwrap_or_else(|| panic!("{name} is not runnable here: {}", sc.skip.unwrap_or_default()));
    spec.duration = secs;
    spec.measure_start = secs / 2.0;
    // The description gives the benchmark's duration; this run is SECONDS long, from the start.
    println!("{name}, {secs} s from the start: {}", sc.description);
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
}
