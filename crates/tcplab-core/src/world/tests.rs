use super::build::{busiest_links, check_counts};
use super::*;

/// A dumbbell long enough for several progress reports (2^20 events
/// each); `flows` = 600 has more than `TREE_MAX_LINKS` links, so its
/// queue is the radix heap, while one flow runs on the tree.
fn long_world(flows: usize) -> World {
    let mut d = crate::scenarios::Dumbbell::new(flows, 100e6, 0.02, 200);
    d.duration = 40.0;
    d.measure_start = 0.0;
    let w = World::new(d.spec()).unwrap();
    assert_eq!(w.events.is_radix(), flows > 1, "the test must cover both event loops");
    w
}

/// Asked to stop at its first report, a run stops right there, on both
/// event loops: 2^20 events done, simulated time short of the end, not
/// finished; the progress callback is not called again.
#[test]
fn a_run_stops_when_progress_says_so() {
    for flows in [1, 600] {
        let mut w = long_world(flows);
        let mut calls = 0;
        let completed = w.run_or_stop(|_| {
            calls += 1;
            false
        });
        assert!(!completed, "flows = {flows}: {} events", w.events_done());
        assert_eq!(calls, 1);
        assert_eq!(w.events_done(), 1 << 20, "flows = {flows}");
        assert!(w.now() < w.end && !w.finished, "flows = {flows}");
    }
}

/// A run that is never asked to stop gives exactly what `run` gives.
#[test]
fn a_run_not_stopped_is_the_plain_run() {
    for flows in [1, 600] {
        let mut a = long_world(flows);
        a.run();
        let mut b = long_world(flows);
        let mut last = 0.0;
        assert!(b.run_or_stop(|f| {
            last = f;
            true
        }));
        assert_eq!(last, 1.0);
        assert_eq!(a.events_done(), b.events_done());
        let (ra, rb) = (a.into_results(), b.into_results());
        let goodput = |r: &RunResults| r.flows.iter().map(|f| f.goodput_bps.to_bits()).collect::<Vec<_>>();
        assert_eq!(goodput(&ra), goodput(&rb));
    }
}

/// Lanes go to the links on the most paths, ties to the lower index;
/// with fewer links than lanes the rest name no link.
#[test]
fn lanes_go_to_the_busiest_links() {
    let paths = [vec![0, 4, 2], vec![3, 4, 1], vec![2, 4], vec![1, 2]];
    assert_eq!(busiest_links(5, paths.iter()), [2, 4]); // 3 paths each; 1 has 2
    let ties = [vec![3, 1], vec![1, 3], vec![0]];
    assert_eq!(busiest_links(4, ties.iter()), [1, 3]);
    assert_eq!(busiest_links(1, [vec![0]].iter()), [0, u32::MAX]);
}

/// The largest counts an event word and a path end entry hold pass;
/// one more is refused, naming the field.
#[test]
fn link_and_flow_counts_are_bounded() {
    assert!(check_counts(1 << 29, 1 << 30).is_ok());
    let e = check_counts((1 << 29) + 1, 1).unwrap_err();
    assert_eq!(e.field, "links");
    assert!(e.message.contains("2^29"), "{}", e.message);
    let e = check_counts(1, (1 << 30) + 1).unwrap_err();
    assert_eq!(e.field, "flows");
    // The largest link index fits the event word's link bits, and the
    // largest flow index the end entry's flow bits.
    assert_eq!(((1u64 << 29) - 1) & crate::sim::event::LINK_MASK, (1 << 29) - 1);
    assert_eq!(PATH_END | PATH_ACK | ((1 << 30) - 1), u32::MAX);
}
