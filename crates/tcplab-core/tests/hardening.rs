//! Issue 31 (core part): every time the core computes is exact or the input
//! is refused naming the field and the representable range; inputs that
//! size memory are estimated and refused over the limit; deserialization
//! errors name the field path.

mod common;

use common::line;
use tcplab_core::estimate::estimate;
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::*;
use tcplab_core::{run, RunSpec, SpecError};

fn dumbbell(rate: f64, rtt: f64, duration: f64) -> RunSpec {
    let mut d = Dumbbell::new(1, rate, rtt, 50);
    (d.duration, d.measure_start) = (duration, 0.0);
    d.spec()
}

fn refused(spec: RunSpec) -> SpecError {
    match run(spec) {
        Ok(r) => panic!("accepted; flows: {:?}", r.flows.iter().map(|f| f.bytes_delivered).collect::<Vec<_>>()),
        Err(e) => e,
    }
}

/// The error names `field` and says the range it must be in.
fn assert_names(e: &SpecError, field: &str, range_words: &[&str]) {
    assert_eq!(e.field, field, "{e}");
    for w in range_words {
        assert!(e.message.contains(w), "{e} lacks {w:?}");
    }
}

// Item 1: rates and delays.

#[test]
fn an_rtt_beyond_simulated_time_is_refused_not_reported_as_full_goodput() {
    // On main: 9.996 Mbit/s goodput and utilization 1.0 (the sums wrapped).
    let e = refused(dumbbell(10e6, 4e7, 2.0));
    assert!(e.field.starts_with("links[") && e.field.ends_with("].delay"), "{e}");
    assert!(e.message.contains("2^61 ps") && e.message.contains("2.305843e6 s"), "{e}");
    let mut s = line(10e6, 50, Recovery::Sack, 2.0);
    s.links[1].delay = 1e300;
    assert_names(&refused(s), "links[1].delay", &["from 0 to 2.305843e6 s", "got 1e300"]);
}

#[test]
fn a_delay_longer_than_the_run_but_representable_delivers_nothing() {
    // 2e6 s one way (just under the 2^61 ps limit) on a 2 s run: exact, 0.
    let mut s = line(10e6, 50, Recovery::Sack, 2.0);
    s.links[1].delay = 2e6;
    let r = run(s).unwrap();
    assert_eq!(r.flows[0].bytes_delivered, 0);
    assert_eq!(r.flows[0].goodput_bps, 0.0);
    assert_eq!(r.links[1].packets_out, 0);
}

#[test]
fn rates_outside_what_picoseconds_represent_are_refused() {
    for rate in [1e-5, 1e-6, 0.2, 1e30, 9e12, f64::INFINITY] {
        let mut s = line(10e6, 50, Recovery::Sack, 2.0);
        s.links[1].rate_bps = rate;
        assert_names(&refused(s), "links[1].rate_bps", &["from 0.2274 bit/s", "to 8e12 bit/s"]);
    }
    // The limits themselves are accepted.
    for rate in [limits::MIN_RATE_BPS, limits::MAX_RATE_BPS] {
        let mut s = line(10e6, 50, Recovery::Sack, 0.01);
        s.links[1].rate_bps = rate;
        run(s).unwrap();
    }
}

#[test]
fn a_slow_link_delivers_nothing_when_one_packet_outlasts_the_run() {
    // On main, 1e-5 bit/s delivered 15,000 bytes in 2 s; 0.3 bit/s takes
    // 40,000 s per 1500-byte packet.
    let mut s = line(10e6, 50, Recovery::Sack, 2.0);
    s.links[1].rate_bps = 0.3;
    let r = run(s).unwrap();
    assert_eq!(r.flows[0].bytes_delivered, 0);
    assert_eq!(r.links[1].packets_out, 0);
    assert!(r.links[1].utilization <= 1.0);
}

#[test]
fn a_queue_of_largest_packets_at_the_slowest_rate_stays_exact() {
    // 65,535-byte packets at the slowest rate take 2^61 ps each; behind an
    // unlimited queue 10 of them add up past 2^64 ps. On main the sum
    // wrapped and packets "arrived" at once.
    let mut s = line(10e6, 50, Recovery::Sack, 2.0);
    s.links[1].rate_bps = limits::MIN_RATE_BPS;
    s.links[1].queue.limit_packets = None;
    s.flows[0].packet_size = 65_535;
    s.flows[0].init_cwnd = 10.0;
    let r = run(s).unwrap();
    assert_eq!(r.flows[0].bytes_delivered, 0);
    assert_eq!(r.links[1].packets_out, 0);
    // The initial window, and the timeout's retransmission.
    assert!(r.flows[0].data_packets_sent >= 10, "{:?}", r.flows[0]);
    common::assert_conservation(&r);
}

#[test]
fn every_time_field_is_bounded_and_named() {
    type Case = (&'static str, Box<dyn Fn(&mut RunSpec)>);
    let cases: Vec<Case> = vec![
        ("flows[0].start", Box::new(|s| s.flows[0].start = 1e300)),
        ("flows[0].min_rto", Box::new(|s| s.flows[0].min_rto = 1e300)),
        ("flows[0].max_rto", Box::new(|s| s.flows[0].max_rto = 1e300)),
        ("flows[0].init_rto", Box::new(|s| s.flows[0].init_rto = 1e20)),
        ("flows[0].delack_timeout", Box::new(|s| s.flows[0].delack_timeout = 1e-13)),
        ("sample_interval", Box::new(|s| s.sample_interval = 1e-13)),
        ("sample_interval", Box::new(|s| s.sample_interval = 1e300)),
        (
            "flows[0].app.files[0].start",
            Box::new(|s| s.flows[0].app = AppSpec::Files { files: vec![FileSpec { size: 1000, start: 1e300 }] }),
        ),
        (
            "flows[0].app.rate_bps",
            Box::new(|s| s.flows[0].app = AppSpec::Cbr { rate_bps: 1e30, ecn: SourceEcn::NotEct }),
        ),
        (
            "flows[0].app.on",
            Box::new(|s| {
                s.flows[0].app =
                    AppSpec::OnOff { rate_bps: 1e6, on: 1e300, off: 1.0, exponential: true, ecn: SourceEcn::NotEct }
            }),
        ),
        (
            "flows[0].app.off",
            Box::new(|s| {
                s.flows[0].app =
                    AppSpec::OnOff { rate_bps: 1e6, on: 1.0, off: 1e300, exponential: true, ecn: SourceEcn::NotEct }
            }),
        ),
    ];
    for (field, set) in cases {
        let mut s = line(10e6, 50, Recovery::Sack, 2.0);
        set(&mut s);
        let e = refused(s);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("2^61 ps") || e.message.contains("8e12 bit/s"), "{e}");
    }
}

#[test]
fn queue_discipline_times_are_bounded() {
    for (disc, param) in [
        ("pie", "target"),
        ("pie", "max_burst"),
        ("dualpi2", "target"),
        ("dualpi2", "step_thresh"),
        ("red", "target_delay"),
    ] {
        let mut s = line(10e6, 50, Recovery::Sack, 1.0);
        s.links[1].queue.discipline = Some(disc.into());
        s.links[1].queue.params.insert(param.into(), serde_json::json!(1e300));
        let e = refused(s);
        assert_eq!(e.field, format!("links[1].queue.params.{param}"), "{e}");
        assert!(e.message.contains("2^61 ps"), "{e}");
    }
}

#[test]
fn an_exponential_on_period_past_the_end_does_not_wrap() {
    // Mean on-period at the limit: a draw can be many times that, past
    // 2^64 ps; the source stays on to the end of the run.
    let mut s = line(10e6, 1000, Recovery::Sack, 0.5);
    s.flows[0].app =
        AppSpec::OnOff { rate_bps: 1e6, on: limits::MAX_SPAN_S, off: 1.0, exponential: true, ecn: SourceEcn::NotEct };
    let r = run(s).unwrap();
    // 1 Mbit/s of 1500-byte packets for 0.5 s: 42 packets sent (one at 0).
    assert_eq!(r.flows[0].data_packets_sent, 42);
}

// Item 2: memory.

#[test]
fn a_picosecond_sample_interval_is_refused_naming_it() {
    // On main: "memory allocation of 800000000008 bytes failed", SIGABRT.
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.sample_interval = 1e-12;
    let e = refused(s);
    assert_eq!(e.field, "sample_interval", "{e}");
    assert!(e.message.contains("memory_limit") && e.message.contains("100000000001 samples"), "{e}");
}

#[test]
fn a_huge_initial_window_is_refused_naming_it() {
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.flows[0].init_cwnd = 1e12;
    let e = refused(s);
    assert_eq!(e.field, "flows[0].init_cwnd", "{e}");
    assert!(e.message.contains("memory_limit"), "{e}");
    // A receiver window bounds what is in flight: then it runs.
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.flows[0].init_cwnd = 1e12;
    s.flows[0].rwnd_packets = Some(100);
    run(s).unwrap();
}

#[test]
fn the_front_ends_check_is_every_rule_but_the_memory_estimate() {
    // World::check (the front end's `_core.validate`) accepts a description
    // over its memory limit, which a run refuses: the limit is the machine's.
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.flows[0].init_cwnd = 1e12;
    tcplab_core::World::check(&s).unwrap();
    assert_eq!(refused(s).field, "flows[0].init_cwnd");
    // It refuses what is found only when the world is built: a discipline's
    // parameter, a window-controlling algorithm without SACK, a source faster
    // than its unlimited first link, no flows.
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.links[0].queue.discipline = Some("pie".into());
    s.links[0].queue.params.insert("tupdate".into(), serde_json::json!(1e-9));
    assert!(tcplab_core::World::check(&s).unwrap_err().field.starts_with("links[0].queue.params.tupdate"));
    let mut s = line(10e6, 50, Recovery::NewReno, 0.1);
    s.flows[0].cc.algorithm = "bbr".into();
    assert_eq!(tcplab_core::World::check(&s).unwrap_err().field, "flows[0].recovery");
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.flows[0].app = AppSpec::Cbr { rate_bps: 1e12, ecn: SourceEcn::NotEct };
    for l in &mut s.links {
        (l.queue.limit_packets, l.queue.limit_bytes) = (None, None);
    }
    assert_eq!(tcplab_core::World::check(&s).unwrap_err().field, "flows[0].app.rate_bps");
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.flows.clear();
    let e = tcplab_core::World::check(&s).unwrap_err();
    assert_eq!((e.field.as_str(), e.message.as_str()), ("flows", "no flows: nothing to simulate"));
    // A link traced twice would give each of its samples two rows.
    let mut s = line(10e6, 50, Recovery::Sack, 0.1);
    s.trace_links = Some(vec!["r->h2".into(), "h1->r".into(), "r->h2".into()]);
    let e = tcplab_core::World::check(&s).unwrap_err();
    assert_eq!((e.field.as_str(), e.message.as_str()), ("trace_links[2]", "link \"r->h2\" is listed twice"));
}

#[test]
fn memory_limit_is_the_callers_to_set() {
    // 1 us samples of a 1 s run with one flow: about 1e6 rows, fine by
    // default, refused under a 10 MB limit, and the estimate says so.
    let mut s = line(10e6, 50, Recovery::Sack, 1.0);
    s.sample_interval = 1e-6;
    let e = estimate(&s).unwrap();
    assert_eq!(e.samples, 1_000_001);
    assert!(e.memory_bytes < limits::DEFAULT_MEMORY_LIMIT && e.memory_bytes > 50_000_000, "{e:?}");
    s.memory_limit = Some(10_000_000);
    assert_eq!(refused(s.clone()).field, "sample_interval");
    s.memory_limit = Some(1 << 31);
    s.duration = 0.01;
    run(s).unwrap();
}

#[test]
fn researchers_inputs_keep_working() {
    // 100 Gbit/s, 10 s one-way satellite delay, an hour-long run estimate,
    // 10,000 flows: none refused.
    let mut s = line(100e9, 50, Recovery::Sack, 0.05);
    s.links[1].delay = 10.0;
    run(s).unwrap();
    let mut d = Dumbbell::new(10_000, 10e9, 0.1, 1000);
    (d.duration, d.measure_start, d.sample_interval) = (3600.0, 0.0, 1.0);
    let e = estimate(&d.spec()).unwrap();
    assert!(e.memory_bytes < limits::DEFAULT_MEMORY_LIMIT, "{e:?}");
    // 10 Gbit/s for an hour in 1500-byte packets.
    assert!((e.packets / (10e9 * 3600.0 / 12_000.0) - 1.0).abs() < 1e-9, "{}", e.packets);
    assert!(e.events > 4.0 * e.packets);
}

// Item 9: deserialization errors name the field.

fn json_error(v: serde_json::Value) -> SpecError {
    RunSpec::from_json(&v.to_string()).unwrap_err()
}

fn line_json() -> serde_json::Value {
    serde_json::to_value(line(10e6, 50, Recovery::Sack, 1.0)).unwrap()
}

#[test]
fn deserialization_errors_name_the_field_path() {
    let mut v = line_json();
    v["flows"][0]["dupthresh"] = serde_json::json!(1e300);
    let e = json_error(v);
    assert_eq!(e.field, "flows[0].dupthresh", "{e}");
    assert!(e.message.contains("1e+300") && e.message.contains("u32"), "{e}");

    let mut v = line_json();
    v["flows"][0]["app"] = serde_json::json!({"kind": "files", "files": [{"size": 1e30, "start": 0}]});
    let e = json_error(v);
    assert!(e.field.starts_with("flows[0].app"), "{e}");

    let mut v = line_json();
    v["links"][2]["rate_bps"] = serde_json::json!("fast");
    assert_eq!(json_error(v).field, "links[2].rate_bps");

    let mut v = line_json();
    v.as_object_mut().unwrap().remove("duration");
    assert_eq!(json_error(v).field, "duration");

    let mut v = line_json();
    v["links"][0].as_object_mut().unwrap().remove("delay");
    assert_eq!(json_error(v).field, "links[0].delay");

    let mut v = line_json();
    v["flows"][0]["bogus"] = serde_json::json!(1);
    assert_eq!(json_error(v).field, "flows[0].bogus");

    // A lone surrogate, written as JSON writes it.
    let text = line_json().to_string().replacen("\"name\":\"f\"", "\"name\":\"\\ud800\"", 1);
    let e = RunSpec::from_json(&text).unwrap_err();
    assert_eq!(e.field, "flows[0].name", "{e}");
    assert!(e.message.contains("escape"), "{e}");
}

#[test]
fn a_queue_limit_holds_when_waiting_times_pass_2_to_the_64_ps() {
    // 40 packets of 65,535 B at the slowest rate into a 20-packet queue:
    // one in service, 20 waiting, 19 dropped. On main the waiting packets'
    // start times wrapped past 2^64 ps, counted them as started, and the
    // queue took more than its limit.
    let mut s = line(10e6, 20, Recovery::Sack, 2.0);
    s.links[1].rate_bps = limits::MIN_RATE_BPS;
    s.flows[0].packet_size = 65_535;
    s.flows[0].init_cwnd = 40.0;
    s.flows[0].init_rto = 100.0;
    let r = run(s).unwrap();
    assert_eq!(r.links[1].packets_in, 40);
    assert_eq!(r.links[1].drops, 19);
    assert_eq!(r.links[1].packets_in_link, 21);
    assert!(r.links[1].queue_max_packets <= 20, "{:?}", r.links[1]);
    common::assert_conservation(&r);
}

#[test]
fn a_measurement_window_shorter_than_a_picosecond_is_refused() {
    // Found by tests/fuzz_spec.rs: duration 1e-300 ran with an empty
    // window and reported utilization NaN.
    let mut s = line(10e6, 50, Recovery::Sack, 1e-300);
    assert_eq!(refused(s.clone()).field, "measure_start");
    (s.duration, s.measure_start) = (1.2e-12, 0.9e-12);
    assert_eq!(refused(s.clone()).field, "measure_start");
    (s.duration, s.measure_start) = (2e-12, 0.0);
    let r = run(s).unwrap();
    assert!(r.links.iter().all(|l| l.utilization.is_finite()));
}
