//! `cargo bench -p tcplab-core [-- S1 S3] [-- --quick] [-- --seconds 30]
//! [-- --scaling flows|rate|window|algorithm] [-- --json PATH]`: the benchmark suite of
//! `tcplab bench` without Python, from the same definitions
//! (`tcplab_core::scenarios::bench`). Each scenario runs in a child process
//! (this binary again), so its peak memory is its own. Prints figures;
//! asserts nothing about speed. `TCPLAB_BENCH_SECONDS` (or `--seconds`) sets
//! the simulated duration of the standard scenarios, and of the scaling
//! points too, which then run from the start without their warm-up
//! (`tcplab bench --scaling` keeps the points' own durations). "loop ns" is the event
//! loop's time per packet-hop, after the scenario's warm-up if it has one
//! (the flows curve: `bench::FLOWS_WARMUP`); "ns/pkt-hop" is the whole
//! run's, building and results included.

use std::process::Command;
use std::time::Instant;

use tcplab_core::scenarios::bench::{self, Length, Scenario};

fn peak_rss_mb() -> f64 {
    // VmHWM: the process's peak resident set (Linux).
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn find(name: &str, len: Length) -> Scenario {
    if let Some(s) = bench::scenario(name, len) {
        return s;
    }
    for axis in bench::AXES {
        for mut s in bench::scaling(axis, len == Length::Quick).unwrap() {
            if s.name == name {
                if let (Length::Seconds(t), Some(spec)) = (len, s.spec.as_mut()) {
                    // A duration given is run from the start: no warm-up.
                    spec.duration = t;
                    spec.measure_start = t / 2.0;
                    s.warmup = 0.0;
                }
                return s;
            }
        }
    }
    panic!("unknown scenario {name}");
}

/// The part of a run after `--warmup`, apart so a profiler can collect it
/// alone (`valgrind --tool=callgrind --collect-atstart=no
/// --toggle-collect='*profiled_part*'`).
#[inline(never)]
fn profiled_part(w: &mut tcplab_core::World) {
    w.run();
}

/// Child: runs one scenario, prints one JSON line.
fn child(name: &str, len: Length, warmup: f64) {
    let sc = find(name, len);
    let spec = sc.spec.expect("a runnable scenario");
    let sim = spec.duration;
    let t = Instant::now();
    let mut w = tcplab_core::World::new(spec).expect("valid scenario");
    // `--warmup` (for a profiler) replaces the scenario's own warm-up.
    let warmup = if warmup > 0.0 { warmup } else { sc.warmup };
    let warm = bench::warm_up(&mut w, warmup, sim).unwrap_or_else(|e| panic!("{e}"));
    profiled_part(&mut w);
    let r = w.into_results();
    let wall = t.elapsed().as_secs_f64();
    let hops: u64 = r.links.iter().map(|l| l.packets_out).sum();
    let bi = r.links.iter().position(|l| l.name == sc.bottleneck).unwrap();
    let b = &r.links[bi];
    // Whole run (wall time from building to results) and, for the event
    // loop's figure, the part after the warm-up.
    let measured_hops = hops - warm.as_ref().map_or(0, |x| x.packet_hops());
    let row = serde_json::json!({
        "scenario": sc.name, "description": sc.description, "simulated_s": sim, "warmup_s": warmup,
        "wall_s": wall, "core_wall_s": r.meta.wall_s,
        "bottleneck_data_packets": b.data_packets_out, "packets_per_s": b.data_packets_out as f64 / wall,
        "measured_bottleneck_data_packets": b.data_packets_out - warm.as_ref().map_or(0, |x| x.data_packets_out[bi]),
        "events": r.meta.events, "events_per_s": r.meta.events as f64 / wall,
        "measured_events": r.meta.events - warm.as_ref().map_or(0, |x| x.events),
        "packet_hops": hops, "ns_per_packet_hop": wall * 1e9 / hops.max(1) as f64,
        "measured_packet_hops": measured_hops, "core_ns_per_packet_hop": r.meta.wall_s * 1e9 / measured_hops.max(1) as f64,
        "peak_rss_mb": peak_rss_mb(), "utilization": b.utilization, "axis_value": sc.axis_value,
    });
    println!("{row}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut len = match std::env::var("TCPLAB_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()) {
        Some(s) => Length::Seconds(s),
        None => Length::Full,
    };
    let (mut names, mut scaling, mut json, mut child_of) = (Vec::<String>::new(), None, None, None);
    let mut warmup = 0.0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => len = Length::Quick,
            "--seconds" => len = Length::Seconds(it.next().and_then(|s| s.parse().ok()).expect("--seconds N")),
            "--scaling" => scaling = Some(it.next().expect("--scaling AXIS").clone()),
            "--json" => json = Some(it.next().expect("--json PATH").clone()),
            "--child" => child_of = Some(it.next().expect("--child NAME").clone()),
            "--warmup" => warmup = it.next().and_then(|s| s.parse().ok()).expect("--warmup SECONDS"),
            s if !s.starts_with('-') => names.extend(s.split(',').map(String::from)),
            _ => {} // libtest-style flags cargo may pass
        }
    }
    if let Some(n) = child_of {
        return child(&n, len, warmup);
    }
    let list: Vec<Scenario> = match &scaling {
        Some(axis) => bench::scaling(axis, len == Length::Quick)
            .unwrap_or_else(|| panic!("unknown axis {axis}; known: {:?}", bench::AXES)),
        None => bench::suite(len).into_iter().filter(|s| names.is_empty() || names.contains(&s.name)).collect(),
    };
    let exe = std::env::current_exe().unwrap();
    let mut rows = Vec::new();
    let w = list.iter().map(|s| s.name.len()).max().unwrap_or(0).max(14);
    println!(
        "{:<w$} {:>9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8}",
        "scenario", "sim s", "wall s", "pkts/s", "events/s", "ns/pkt-hop", "loop ns", "peak MB"
    );
    for sc in list {
        if let Some(why) = &sc.skip {
            println!("{:<w$} skipped: {why}", sc.name);
            continue;
        }
        let mut cmd = Command::new(&exe);
        cmd.args(["--child", &sc.name]);
        match len {
            Length::Quick => {
                cmd.arg("--quick");
            }
            Length::Seconds(s) => {
                cmd.args(["--seconds", &s.to_string()]);
            }
            Length::Full => {}
        }
        cmd.env_remove("TCPLAB_BENCH_SECONDS");
        let out = cmd.output().expect("child runs");
        assert!(out.status.success(), "{} failed: {}", sc.name, String::from_utf8_lossy(&out.stderr));
        let row: serde_json::Value = serde_json::from_slice(&out.stdout).expect("child JSON");
        let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:<w$} {:>9} {:>8.2} {:>8.2}M {:>8.2}M {:>10.1} {:>10.1} {:>8.1}",
            sc.name,
            f("simulated_s"),
            f("wall_s"),
            f("packets_per_s") / 1e6,
            f("events_per_s") / 1e6,
            f("ns_per_packet_hop"),
            f("core_ns_per_packet_hop"),
            f("peak_rss_mb")
        );
        rows.push(row);
    }
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_string_pretty(&rows).unwrap()).expect("writable JSON path");
    }
}
