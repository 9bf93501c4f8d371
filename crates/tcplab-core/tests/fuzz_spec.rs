//! Fuzzing the run description (issue 31, "What must hold"): arbitrary
//! mutations of valid RunSpec JSON (numbers set to 0, -1, huge, tiny,
//! non-integers; strings, nulls, removed keys, wrong types) are parsed,
//! validated, built and run (the duration capped small). None may panic or
//! abort, take longer than a time budget or allocate more than a memory
//! budget (counted by this binary's global allocator), and every rejection
//! must name a field.
//!
//! 1000 cases by default (about a second); `PROPTEST_CASES=5000 cargo test
//! --release -p tcplab-core --test fuzz_spec` for a longer search.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{json, Value};
use tcplab_core::scenarios::Dumbbell;
use tcplab_core::spec::{Recovery, RunSpec};
use tcplab_core::World;

/// Counts the bytes allocated now and the peak since the last reset.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        NOW.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let now = NOW.fetch_add(new - l.size(), Ordering::Relaxed) + (new - l.size());
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Each case's memory limit (`RunSpec::memory_limit`, unless the case
/// mutates it) and the most it may allocate beyond what was live before:
/// the estimate is approximate, by at most a factor of two.
const CASE_MEMORY_LIMIT: u64 = 256 << 20;
const ALLOC_BUDGET: usize = 2 * CASE_MEMORY_LIMIT as usize;
/// Runs longer than this (simulated) are cut to it.
const MAX_DURATION: f64 = 0.2;
/// Runs estimated to need more events are built, not run.
const MAX_EVENTS: f64 = 3e6;
/// No case may take longer (a guard against hangs, far above the norm).
const TIME_BUDGET: Duration = Duration::from_secs(30);

/// The valid descriptions mutated: a dumbbell, a line with files, a
/// discipline link with sources, the Linux receiver.
fn bases() -> Vec<Value> {
    let mut d = Dumbbell::new(2, 10e6, 0.04, 30);
    (d.duration, d.measure_start, d.sample_interval) = (0.2, 0.05, 0.01);
    d.recovery = Recovery::Sack;
    let dumbbell = serde_json::to_value(d.spec()).unwrap();

    let mut l = Dumbbell::new(1, 5e6, 0.02, 20);
    (l.duration, l.measure_start) = (0.2, 0.0);
    l.algorithm = "cubic".into();
    let mut files = serde_json::to_value(l.spec()).unwrap();
    files["flows"][0]["app"] =
        json!({"kind": "files", "files": [{"size": 30000, "start": 0.0}, {"size": 5000, "start": 0.05}]});
    files["flows"][0]["drop_segments"] = json!([3, 7]);
    files["links"][0]["loss"] = json!({"kind": "bernoulli", "p": 0.01});
    files["loss_trace"] = json!(true);

    let mut q = Dumbbell::new(2, 20e6, 0.03, 100);
    (q.duration, q.measure_start, q.sample_interval) = (0.2, 0.0, 0.02);
    let mut qdisc = serde_json::to_value(q.spec()).unwrap();
    qdisc["links"][0]["queue"] =
        json!({"limit_packets": 100, "discipline": "pie", "params": {"target": 0.015, "tupdate": 0.015, "ecn": true}});
    qdisc["links"][1]["queue"] =
        json!({"limit_packets": 100, "discipline": "fq_codel", "params": {"target": 0.005, "interval": 0.1}});
    qdisc["flows"][1]["app"] = json!({"kind": "on_off", "rate_bps": 2e6, "on": 0.05, "off": 0.05});
    qdisc["flows"][1]["recovery"] = json!("sack");

    let mut x = Dumbbell::new(1, 50e6, 0.01, 50);
    (x.duration, x.measure_start) = (0.2, 0.0);
    x.recovery = Recovery::Sack;
    let mut linux = serde_json::to_value(x.spec()).unwrap();
    for (k, v) in [
        ("ack_policy", json!("linux")),
        ("delack_min", json!(0.01)),
        ("rack", json!(true)),
        ("tlp", json!(true)),
        ("prr", json!(true)),
        ("pacing", json!(true)),
        ("rwnd_packets", json!(1000)),
        ("init_ssthresh", json!(20)),
    ] {
        linux["flows"][0][k] = v;
    }
    vec![dumbbell, files, qdisc, linux]
}

/// Every place in `v` a mutation can reach: (path of keys/indices, is it an
/// object member that can be removed).
fn places(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(path.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Value::String(k.clone()));
                places(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(json!(i));
                places(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Numbers at and past every bound: what a numeric field is set to.
fn numbers() -> Vec<Value> {
    vec![
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(0.5),
        json!(1.5),
        json!(1e-300),
        json!(1e-13),
        json!(1e-12),
        json!(1e-6),
        json!(1e300),
        json!(-1e300),
        json!(1e12),
        json!(1e30),
        json!(2e6),
        json!(2.4e6),
        json!(4e7),
        json!(65535),
        json!(65536),
        json!(u32::MAX),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(18446744073709551616.0),
        json!(9e12),
        json!(0.2),
        json!(0.3),
        json!(3600),
        json!(1e7),
        json!(1e9),
    ]
}

/// Any replacement: numbers, other types, or `None` (remove the key or
/// the array element).
fn replacements() -> Vec<Option<Value>> {
    let mut r: Vec<Option<Value>> = numbers().into_iter().map(Some).collect();
    for v in [
        json!(""),
        json!("x"),
        json!("\u{10FFFF}"),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
        json!([1, 2]),
        json!({"kind": "bulk"}),
    ] {
        r.push(Some(v));
    }
    r.push(None);
    r
}

/// The replacement for the value `old`: mostly one of its own kind (a
/// number for a number), so most cases get past parsing; with
/// `any_kind`, anything.
fn replacement(old: Option<&Value>, pick: prop::sample::Index, any_kind: bool) -> Option<Value> {
    match old {
        Some(Value::Number(_)) if !any_kind => Some(pick.get(&numbers()).clone()),
        Some(Value::Bool(b)) if !any_kind => Some(json!(!b)),
        // Names of other things, algorithms, disciplines, policies, nothing.
        Some(Value::String(_)) if !any_kind => Some(json!(pick.get(&[
            "",
            "x",
            "r1",
            "r2",
            "s1",
            "d1",
            "f1",
            "r1->r2",
            "\u{10FFFF}",
            "cubic",
            "bbr",
            "bbr3",
            "dctcp",
            "vegas",
            "pie",
            "codel",
            "red",
            "dualpi2",
            "linux",
            "rfc",
            "reno",
            "newreno",
            "sack",
            "classic",
            "accecn",
            "cbr",
            "on_off",
            "files",
            "bulk",
            "gilbert_elliott",
            "ns2",
            "payload",
            "ect1",
            "knn",
        ]))),
        // An object or array: removed (a missing key, one element fewer).
        Some(Value::Object(_) | Value::Array(_)) if !any_kind => None,
        _ => pick.get(&replacements()).clone(),
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut cur = v;
    for k in path {
        cur = match k {
            Value::String(s) => cur.get_mut(s.as_str())?,
            Value::Number(n) => cur.get_mut(n.as_u64()? as usize)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Applies a mutation: replace the value at `path`, or remove it.
fn mutate(v: &mut Value, path: &[Value], with: Option<Value>) {
    match with {
        Some(x) => {
            if let Some(slot) = get_mut(v, path) {
                *slot = x;
            }
        }
        None => {
            let Some((last, parent)) = path.split_last() else { return };
            match (get_mut(v, parent), last) {
                (Some(Value::Object(m)), Value::String(k)) => {
                    m.remove(k);
                }
                (Some(Value::Array(a)), Value::Number(n)) => {
                    let i = n.as_u64().unwrap() as usize;
                    if i < a.len() {
                        a.remove(i);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Cases by outcome (parse, validate, estimate, build errors; runs; built
/// but not run), printed at the end for a look at what the search reached.
static OUTCOMES: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

fn count(i: usize) {
    OUTCOMES[i].fetch_add(1, Ordering::Relaxed);
}

fn assert_names_a_field(e: &tcplab_core::SpecError, text: &str) {
    assert!(!e.field.is_empty() && e.field != "spec", "rejection without a field: {e}\nspec: {text}");
}

/// Parses, validates, builds and (if cheap enough) runs one description.
fn check(text: &str) {
    let t0 = Instant::now();
    let live = NOW.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    let spec = match RunSpec::from_json(text) {
        Ok(s) => s,
        Err(e) => {
            if std::env::var_os("FUZZ_SHOW").is_some() {
                eprintln!("parse: {e}");
            }
            return (count(0), assert_names_a_field(&e, text)).1;
        }
    };
    let mut spec = spec;
    if let Err(e) = spec.validate() {
        return (count(1), assert_names_a_field(&e, text)).1;
    }
    if spec.duration > MAX_DURATION {
        (spec.duration, spec.measure_start) = (MAX_DURATION, 0.0);
    }
    spec.memory_limit = Some(spec.memory_limit.map_or(CASE_MEMORY_LIMIT, |m| m.min(CASE_MEMORY_LIMIT)));
    let cheap = match tcplab_core::estimate::estimate(&spec) {
        Ok(e) => e.events <= MAX_EVENTS,
        Err(e) => return (count(2), assert_names_a_field(&e, text)).1,
    };
    // The front end's check (World::check, `_core.validate`) refuses what
    // building refuses, with the same error; building adds only memory.
    let checked = World::check(&spec);
    let mut w = match World::new(spec) {
        Ok(w) => {
            assert!(checked.is_ok(), "check refused what new built: {:?}\nspec: {text}", checked.err());
            w
        }
        Err(e) => {
            match checked {
                Err(c) => assert_eq!((c.field, c.message), (e.field.clone(), e.message.clone()), "spec: {text}"),
                Ok(_) => assert!(
                    e.message.contains("memory_limit") || e.message.contains("out of memory"),
                    "check accepted what new refused for more than memory: {e}\nspec: {text}"
                ),
            }
            return (count(3), assert_names_a_field(&e, text)).1;
        }
    };
    count(if cheap { 4 } else { 5 });
    if cheap {
        w.run();
        let r = w.into_results();
        for l in &r.links {
            assert!(
                l.utilization <= 1.0 + 1e-9 && l.utilization >= 0.0,
                "utilization {} of {}\nspec: {text}",
                l.utilization,
                l.name
            );
        }
    } else {
        drop(w);
    }
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(live);
    assert!(peak <= ALLOC_BUDGET, "allocated {peak} B at peak, over {ALLOC_BUDGET}\nspec: {text}");
    assert!(t0.elapsed() < TIME_BUDGET, "took {:?}\nspec: {text}", t0.elapsed());
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

#[test]
fn the_bases_run() {
    for b in bases() {
        let spec = RunSpec::from_json(&b.to_string()).unwrap();
        tcplab_core::run(spec).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_specs_never_crash_and_name_their_field(
        base in 0usize..4,
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), prop::bool::weighted(0.1)), 1..3),
    ) {
        let mut v = bases().swap_remove(base);
        for (at, with, any_kind) in picks {
            let mut all = Vec::new();
            places(&v, &mut Vec::new(), &mut all);
            // The root itself is not replaced (that only tests "not an object").
            let path = all[1 + at.index(all.len() - 1)].clone();
            let new = replacement(get_mut(&mut v, &path).map(|x| &*x), with, any_kind);
            mutate(&mut v, &path, new);
        }
        check(&v.to_string());
    }
}

#[test]
fn zz_report_outcomes() {
    // Runs after the search when the tests run one at a time; informative only.
    let o: Vec<usize> = OUTCOMES.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    eprintln!(
        "outcomes: parse errors {}, validate {}, estimate {}, build {}, ran {}, built only {}",
        o[0], o[1], o[2], o[3], o[4], o[5]
    );
}
