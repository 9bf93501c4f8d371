//! Physics and bookkeeping that must hold for every run: packets are
//! conserved per flow and per link, utilization never exceeds 1, runs are
//! deterministic, and random networks neither panic nor stall.

mod common;

use common::{assert_conservation, line};
use proptest::prelude::*;
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::*;

fn dumbbell(n: usize, buffer: u64, recovery: Recovery) -> RunSpec {
    let mut d = Dumbbell::new(n, 20e6, 0.04, buffer);
    d.duration = 20.0;
    d.measure_start = 10.0;
    d.sample_interval = 0.05;
    d.recovery = recovery;
    d.spec()
}

#[test]
fn packets_are_conserved_across_scenarios_with_losses_and_timeouts() {
    let mut specs = vec![];
    for rec in [Recovery::Reno, Recovery::NewReno, Recovery::Sack] {
        specs.push(dumbbell(1, 7, rec)); // small buffer: losses, timeouts
        specs.push(dumbbell(5, 20, rec));
        let mut s = dumbbell(3, 67, rec);
        for f in &mut s.flows {
            f.delayed_ack = true;
        }
        specs.push(s);
    }
    // Files that start and stop, and a byte-limited queue.
    let mut s = line(10e6, 10, Recovery::Sack, 10.0);
    s.flows[0].app = AppSpec::Files {
        files: (0..20).map(|i| FileSpec { size: 5000 + 37_000 * i, start: 0.3 * i as f64 }).collect(),
    };
    s.links[1].queue = QueueSpec { limit_bytes: Some(15_000), ..Default::default() };
    specs.push(s);
    let mut saw_timeout = false;
    let mut saw_drop = false;
    for spec in specs {
        let r = tcplab_core::run(spec).unwrap();
        assert_conservation(&r);
        saw_timeout |= r.flows.iter().any(|f| f.timeouts > 0);
        saw_drop |= r.links.iter().any(|l| l.drops > 0);
    }
    assert!(saw_timeout && saw_drop, "the scenarios must exercise drops and timeouts");
}

fn lossy(loss: LossSpec, seed: u64) -> RunSpec {
    let mut s = dumbbell(2, 40, Recovery::Sack);
    s.seed = s.seed.wrapping_add(seed);
    s.links[0].loss = Some(loss.clone()); // data direction of the bottleneck
    s.links[1].loss = Some(loss); // ACK direction
    s
}

#[test]
fn random_loss_is_counted_apart_from_drops_and_conserves_packets() {
    let r = tcplab_core::run(lossy(LossSpec::Bernoulli { p: 0.01 }, 0)).unwrap();
    assert_conservation(&r);
    let (data, acks) = (&r.links[0], &r.links[1]);
    for l in [data, acks] {
        // Measured loss rate: losses / packets that completed the link, within 4 sigma of p.
        let n = (l.losses + l.packets_out) as f64;
        let rate = l.losses as f64 / n;
        assert!((rate - 0.01).abs() < 4.0 * (0.01f64 * 0.99 / n).sqrt(), "{}: {rate} over {n} packets", l.name);
    }
    let lost: u64 = r.flows.iter().map(|f| f.data_packets_lost + f.acks_lost).sum();
    assert_eq!(lost, data.losses + acks.losses);
    assert!(
        r.flows.iter().all(|f| f.retransmits >= f.data_packets_lost),
        "every lost segment is retransmitted or pending"
    );
}

#[test]
fn loss_draws_follow_the_seed() {
    let a =
        tcplab_core::run(lossy(LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.3, loss_good: 0.0, loss_bad: 1.0 }, 0))
            .unwrap();
    let b =
        tcplab_core::run(lossy(LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.3, loss_good: 0.0, loss_bad: 1.0 }, 0))
            .unwrap();
    let c =
        tcplab_core::run(lossy(LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.3, loss_good: 0.0, loss_bad: 1.0 }, 1))
            .unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_ne!(a.links[0].losses, c.links[0].losses, "another seed draws other losses");
    assert_conservation(&c);
}

#[test]
fn files_complete_in_order_and_deliver_exactly_their_bytes() {
    let mut s = line(10e6, 30, Recovery::Sack, 30.0);
    let sizes: Vec<u64> = vec![1, 1460, 1461, 100_000, 2_000_000];
    s.flows[0].app = AppSpec::Files {
        files: sizes.iter().enumerate().map(|(i, &size)| FileSpec { size, start: i as f64 }).collect(),
    };
    let r = tcplab_core::run(s).unwrap();
    assert_conservation(&r);
    assert_eq!(r.flows[0].bytes_delivered, sizes.iter().sum::<u64>());
    for (f, size) in r.files.iter().zip(&sizes) {
        assert_eq!(f.size, *size);
        assert!(f.finish.is_finite() && f.fct > 0.0);
        // Completion is when the receiver holds the last byte (the connection is
        // already open): never sooner than the one-way delay plus serialization.
        assert!(f.fct >= 0.025 + *size as f64 * 8.0 / 10e6, "file of {size} B took {}", f.fct);
    }
}

#[test]
fn same_scenario_and_seed_give_identical_results() {
    let spec = dumbbell(4, 30, Recovery::Sack);
    let a = tcplab_core::run(spec.clone()).unwrap();
    let b = tcplab_core::run(spec).unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_eq!(a.meta.events, b.meta.events);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.flow_ts.cwnd), bits(&b.flow_ts.cwnd));
    assert_eq!(bits(&a.flow_ts.srtt), bits(&b.flow_ts.srtt));
    assert_eq!(a.flow_ts.delivered_bytes, b.flow_ts.delivered_bytes);
    assert_eq!(a.queue_ts.packets, b.queue_ts.packets);
}

#[test]
fn single_flow_with_a_bdp_buffer_fills_the_link() {
    // A single Reno flow keeps the link busy iff B >= C*T (beta = 1/2).
    let mut d = Dumbbell::new(1, 20e6, 0.1, 0);
    d.buffer_packets = Dumbbell::bdp_packets(20e6, 0.11, 1500) + 5;
    d.duration = 200.0;
    d.measure_start = 100.0;
    let r = tcplab_core::run(d.spec()).unwrap();
    assert_conservation(&r);
    assert!(r.links[0].utilization > 0.995, "utilization {}", r.links[0].utilization);
    let g = r.flows[0].goodput_bps;
    // Bytes in flight at the window's start may land inside it: at most a
    // couple of packets over the window.
    assert!(g <= 20e6 + 2.0 * 1500.0 * 8.0 / 100.0 && g > 0.99 * 20e6, "goodput {g}");
}

#[test]
fn errors_name_the_field() {
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.links[1].rate_bps = 0.0;
    assert_eq!(tcplab_core::World::new(s).err().unwrap().field, "links[1].rate_bps");
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.links.retain(|l| l.name != "r->h2");
    let e = tcplab_core::World::new(s).err().unwrap();
    assert_eq!(e.field, "flows[0]");
    assert!(e.message.contains("no route"), "{}", e.message);
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.links[1].queue.limit_packets = Some(0);
    assert_eq!(tcplab_core::World::new(s).err().unwrap().field, "links[1].queue.limit_packets");
    // Packets are at most 65,535 bytes (sizes are 16 bits on the wire).
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.flows[0].packet_size = 65_536;
    let e = tcplab_core::World::new(s).err().unwrap();
    assert_eq!(e.field, "flows[0].packet_size");
    assert!(e.message.contains("at most 65535"), "{}", e.message);
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.flows[0].ack_size = 70_000;
    assert_eq!(tcplab_core::World::new(s).err().unwrap().field, "flows[0].ack_size");
    // Simulated time is at most 2^61 ps (senders pack flags above it).
    let mut s = line(10e6, 10, Recovery::Sack, 1.0);
    s.duration = 2.4e6;
    let e = tcplab_core::World::new(s).err().unwrap();
    assert_eq!(e.field, "duration");
    assert!(e.message.contains("2^61 ps"), "{}", e.message);
    // The largest allowed size runs, and its packets keep their size.
    let mut s = line(100e6, 10, Recovery::Sack, 1.0);
    s.flows[0].packet_size = 65_535;
    s.links[1].queue.limit_packets = Some(1000);
    let r = tcplab_core::run(s).unwrap();
    assert_conservation(&r);
    let l = &r.links[0];
    assert!(
        l.data_packets_out > 0 && l.bytes_out >= l.data_packets_out * 65_535,
        "{} bytes in {} packets",
        l.bytes_out,
        l.data_packets_out
    );
}

#[expect(clippy::too_many_arguments, reason = "one argument per value the proptest draws")]
fn random_spec(
    flows: usize,
    rates: Vec<f64>,
    delays: Vec<f64>,
    buffer: u64,
    ack_buffer: u64,
    rec: u8,
    delack: bool,
    loss: f64,
) -> RunSpec {
    let recovery = [Recovery::Reno, Recovery::NewReno, Recovery::Sack][rec as usize % 3];
    let mut d = Dumbbell::new(flows, rates[0], delays[0], buffer);
    d.duration = 15.0;
    d.measure_start = 5.0;
    d.sample_interval = 0.1;
    d.recovery = recovery;
    let mut s = d.spec();
    // Random access rates and delays, and a finite reverse queue (ACK drops).
    for (i, l) in s.links.iter_mut().enumerate().skip(2) {
        l.rate_bps = rates[i % rates.len()];
        l.delay = delays[i % delays.len()];
    }
    s.links[1].queue.limit_packets = Some(ack_buffer);
    if loss > 0.0 {
        s.links[0].loss = Some(LossSpec::Bernoulli { p: loss });
    }
    for (i, f) in s.flows.iter_mut().enumerate() {
        f.delayed_ack = delack;
        f.start = 0.05 * i as f64;
    }
    s
}

proptest! {
    // A fixed seed keeps CI reproducible; raise `cases` locally to explore more.
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x7c9_1ab5),
        ..ProptestConfig::default()
    })]
    #[test]
    fn random_networks_conserve_packets_and_never_stall(
        flows in 1usize..6,
        rates in proptest::collection::vec(1e6f64..100e6, 4),
        delays in proptest::collection::vec(0.0f64..0.05, 4),
        buffer in 1u64..100,
        ack_buffer in 2u64..200,
        rec in 0u8..3,
        delack in any::<bool>(),
        loss in prop_oneof![Just(0.0), 0.0f64..0.05],
    ) {
        let spec = random_spec(flows, rates, delays, buffer, ack_buffer, rec, delack, loss);
        let mut w = tcplab_core::World::new(spec).unwrap();
        w.run();
        let r = w.results();
        assert_conservation(&r);
        for f in &r.flows {
            prop_assert!(f.bytes_delivered > 0, "flow {} delivered nothing: {:?}", f.name, f);
            // A stall is outstanding data that nothing will ever retransmit:
            // the retransmission timer must be armed, with its event queued.
            let s = w.sender(f.id as usize);
            if s.snd_una < s.high_data {
                let deadline = s.rto_deadline;
                prop_assert!(deadline.is_some(), "flow {} has data outstanding and no timer", f.name);
                prop_assert!(s.rto_event.is_some_and(|e| e <= deadline.unwrap()), "flow {}: timer armed but no event queued", f.name);
            }
            // No progress in the second half is only allowed while waiting on a
            // backed-off timer (Karn: retransmissions give no RTT sample, so the
            // backoff persists through go-back-N).
            let series: Vec<u64> = r.flow_ts.flow.iter().zip(&r.flow_ts.delivered_bytes)
                .filter(|(id, _)| **id == f.id).map(|(_, d)| *d).collect();
            if *series.last().unwrap() == series[series.len() / 2] {
                prop_assert!(s.rtt.backoff >= 1, "flow {} made no progress without a backed-off timer: {:?}", f.name, f);
            }
        }
    }
}

/// Runs above `TREE_MAX_LINKS` links use the radix heap and their own event
/// loop; below, the tree. Both must give the same run, event for event:
/// the same lossy dumbbell (every recovery, delayed ACKs, random loss,
/// traces), alone and padded with idle links that no route uses.
#[test]
fn radix_heap_and_tree_runs_are_identical() {
    use tcplab_core::sim::event::TREE_MAX_LINKS;
    for (k, rec) in [Recovery::Reno, Recovery::NewReno, Recovery::Sack].into_iter().enumerate() {
        let mut s = dumbbell(4, 9 + 5 * k as u64, rec);
        s.flows[1].delayed_ack = true;
        s.links[0].loss = Some(LossSpec::Bernoulli { p: 0.002 });
        s.trace_links = Some(s.links.iter().map(|l| l.name.clone()).collect());
        let n = s.links.len();
        let mut padded = s.clone();
        let pad = TREE_MAX_LINKS + 1 - n;
        for i in 0..=pad {
            padded.nodes.push(NodeSpec { name: format!("idle{i}"), kind: NodeKind::Router });
        }
        for i in 0..pad {
            let mut l = s.links[2].clone();
            (l.name, l.src, l.dst) = (format!("idle{i}->idle{}", i + 1), format!("idle{i}"), format!("idle{}", i + 1));
            padded.links.push(l);
        }
        assert!(padded.links.len() > TREE_MAX_LINKS);
        let (a, b) = (tcplab_core::run(s).unwrap(), tcplab_core::run(padded).unwrap());
        assert!(a.flows.iter().any(|f| f.timeouts + f.fast_recoveries > 0), "the run must recover from losses");
        assert_eq!(a.meta.events, b.meta.events);
        assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
        assert_eq!(format!("{:?}", a.links), format!("{:?}", &b.links[..n]));
        assert_eq!(
            format!("{:?}", (&a.flow_ts, &a.queue_ts, &a.cc_ts)),
            format!("{:?}", (&b.flow_ts, &b.queue_ts, &b.cc_ts))
        );
        assert!(b.links[n..].iter().all(|l| l.packets_in == 0));
    }
}
