"""`tcplab bench`: the suite runs and reports every scenario and field.

Speed is never asserted (a slow or busy machine gives slower figures, not
failures): only that `--quick --all` runs everything and that its JSON has
every scenario, curve point and field, with positive, finite values that
agree with each other.
"""

import json
import math
import re
import subprocess
import sys

import pytest

from tcplab import _core
from tcplab.devtools.bench import main as bench_main
from tcplab.devtools.measure import AXES, ROW_FIELDS

SUITE = ["S1", "S2", "S3", "S4", "S5", "S6"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    out = subprocess.run([sys.executable, "-m", "tcplab", "bench", "--quick", "--all", "--json", str(path)],
                         capture_output=True, text=True, check=True)
    assert "standard scenarios" in out.stdout and "scaling: flows" in out.stdout
    return json.loads(path.read_text())


def _check_row(r):
    for k in ROW_FIELDS:
        assert k in r, f"{r.get('scenario')}: no {k}"
    for k in ("simulated_s", "wall_s", "core_wall_s", "bottleneck_data_packets", "packets_per_s", "events",
              "events_per_s", "packet_hops", "ns_per_packet_hop", "peak_rss_mb", "utilization"):
        v = r[k]
        assert isinstance(v, (int, float)) and math.isfinite(v) and v > 0, f"{r['scenario']}: {k} = {v!r}"
    assert r["core_wall_s"] <= r["wall_s"]
    assert r["utilization"] <= 1.0 + 1e-9
    assert r["packets_per_s"] == pytest.approx(r["bottleneck_data_packets"] / r["wall_s"])
    assert r["events_per_s"] == pytest.approx(r["events"] / r["wall_s"])
    assert r["ns_per_packet_hop"] == pytest.approx(r["wall_s"] * 1e9 / r["packet_hops"])
    # Every data packet crosses the bottleneck and at least two other links, and is ACKed.
    assert r["packet_hops"] >= 3 * r["bottleneck_data_packets"]
    assert r["peak_rss_mb"] < 4096


def test_every_standard_scenario_is_reported_with_every_field(report):
    assert report["quick"] is True
    assert [r["scenario"] for r in report["scenarios"]] == SUITE
    for r in report["scenarios"]:
        _check_row(r)
    assert report["machine"]["cores"] >= 1 and report["machine"]["cpu"]
    assert "date" in report and "commit" in report
    # How the core was compiled, so that figures of a profile-guided build
    # are not taken for a plain one's (scripts/pgo.sh).
    assert re.fullmatch(r"(release|debug)(, pgo (instrumented|optimized))?", report["build"]), report["build"]


def test_s5_is_the_generated_parking_lot(report):
    assert report["skipped"] == []
    (s5,) = [r for r in report["scenarios"] if r["scenario"] == "S5"]
    assert s5["flows"] == 140 and s5["links"] == 8 + 4 * 140
    # The core's definition is a placeholder for cargo bench, which cannot generate it.
    (core_s5,) = [r for r in _core.bench_suite(quick=True) if r["name"] == "S5"]
    assert core_s5["spec_json"] is None and "tcplab bench" in core_s5["skip"]


def test_every_scaling_curve_has_increasing_points_and_a_flatness(report):
    assert set(report["scaling"]) == set(AXES)
    for axis, cur in report["scaling"].items():
        pts = cur["points"]
        assert len(pts) >= 3, axis
        values = [p["axis_value"] for p in pts]
        assert values == sorted(values) and len(set(values)) == len(values), axis
        for p in pts:
            _check_row(p)
            assert p["core_ns_per_packet_hop"] > 0
        assert math.isfinite(cur["flatness"]) and cur["flatness"] >= 1.0
        # One round: its ratio is that of the points' (only) runs.
        assert cur["round_flatness"] == [pytest.approx(cur["flatness"])]
    flows = report["scaling"]["flows"]["points"]
    assert [p["flows"] for p in flows] == [int(p["axis_value"]) for p in flows]


def test_the_flows_curve_measures_the_event_loop_after_its_warm_up(report):
    for p in report["scaling"]["flows"]["points"]:
        assert p["warmup_s"] == 1.0 and p["simulated_s"] >= 3.0
        # The measured part is the run less its first second: strictly less
        # than the whole, and the event loop's figure is over it alone.
        assert 0 < p["measured_packet_hops"] < p["packet_hops"]
        assert 0 < p["measured_events"] < p["events"]
        # (One flow starting late in the first second may send little in it.)
        assert 0 < p["measured_bottleneck_data_packets"] <= p["bottleneck_data_packets"]
        assert p["core_ns_per_packet_hop"] == pytest.approx(p["core_wall_s"] * 1e9 / p["measured_packet_hops"])
    for axis in ("rate", "window", "algorithm"):
        for p in report["scaling"][axis]["points"]:
            assert p["warmup_s"] == 0.0 and p["measured_packet_hops"] == p["packet_hops"]
    for r in report["scenarios"]:
        assert r["warmup_s"] == 0.0


def test_a_warm_up_reports_the_counts_of_the_runs_first_seconds():
    # The same run stopped at the warm-up's end has exactly the counts the
    # warm-up reports; the run itself is unchanged by it.
    (sc,) = [r for r in _core.bench_scaling("flows", quick=True) if r["name"] == "flows=10"]
    assert sc["warmup"] == 1.0
    spec = json.loads(sc["spec_json"])
    r = _core.bench_run(sc["spec_json"], warmup=1.0)
    plain = _core.bench_run(sc["spec_json"])
    assert "warmup" not in plain and "warmup" not in _core.run(sc["spec_json"])
    assert r["meta"]["events"] == plain["meta"]["events"]
    assert list(r["links"]["packets_out"]) == list(plain["links"]["packets_out"])
    first = _core.run(json.dumps(dict(spec, duration=1.0, measure_start=0.5)))
    w = r["warmup"]
    assert w["seconds"] == 1.0 and w["events"] == first["meta"]["events"]
    assert list(w["packets_out"]) == list(first["links"]["packets_out"])
    assert list(w["data_packets_out"]) == list(first["links"]["data_packets_out"])
    assert 0 < sum(w["packets_out"]) < sum(r["links"]["packets_out"])
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(_core.SpecError, match="warmup: must be a finite number of seconds >= 0"):
            _core.bench_run(sc["spec_json"], warmup=bad)
    # Nothing left to measure.
    for bad in (spec["duration"], spec["duration"] + 1):
        with pytest.raises(_core.SpecError, match=r"warmup: must be shorter than the run's duration \(3(\.0)? s\)"):
            _core.bench_run(sc["spec_json"], warmup=bad)


def test_a_duration_given_runs_a_flows_point_from_the_start():
    from tcplab.devtools.measure import with_duration

    (sc,) = [r for r in _core.bench_scaling("flows") if r["name"] == "flows=10000"]
    assert sc["warmup"] == 10.0 and sc["description"].endswith(", 5 s after a 10 s warm-up")
    short = with_duration(sc, 4.0)
    assert short["warmup"] == 0.0 and short["description"].endswith("B = 0.1 BDP, 4 s")
    assert json.loads(short["spec_json"])["duration"] == 4.0


def test_compare_warns_when_a_curve_was_measured_differently():
    from tcplab.devtools.benchcompare import compare

    def rep(warmup, sim):
        pt = {"scenario": "flows=1000", "core_ns_per_packet_hop": 40.0, "peak_rss_mb": 50.0, "simulated_s": sim}
        if warmup is not None:
            pt["warmup_s"] = warmup
        return {"machine": {"cpu": "x", "cores": 2}, "quick": False, "scenarios": [],
                "scaling": {"flows": {"points": [pt], "flatness": 1.0}}}

    assert compare(rep(None, 12.0), rep(0.0, 12.0))["warnings"] == []
    (w,) = compare(rep(None, 12.0), rep(10.0, 22.0))["warnings"]
    assert "measured differently" in w and "flows=1000" in w


def test_the_algorithm_axis_runs_every_algorithm_of_the_catalog(report):
    # An algorithm family added to the core is benchmarked without touching the suite.
    names = [a["name"] for a in _core.algorithms()]
    pts = report["scaling"]["algorithm"]["points"]
    assert [p["scenario"] for p in pts] == [f"algorithm={n}" for n in names] + ["algorithm=newreno+knn",
                                                                                 "algorithm=cubic+linux"]
    for p in pts:
        assert p["flows"] == 10 and p["simulated_s"] == 2.0
        # Every flow moved data through the 1 Gbit/s bottleneck: at least the initial windows.
        assert p["bottleneck_data_packets"] >= 10 * 10
    specs = {r["name"]: json.loads(r["spec_json"]) for r in _core.bench_scaling("algorithm", quick=True)}
    assert all(f["loss_classifier"] == {"kind": "knn", "params": {}} for f in specs["algorithm=newreno+knn"]["flows"])
    assert all(f["loss_classifier"] is None for f in specs["algorithm=newreno"]["flows"])
    assert {f["cc"]["algorithm"] for f in specs["algorithm=vegas"]["flows"]} == {"vegas"}
    # The Linux-profile point differs from the cubic point by the Linux mechanisms only.
    lin = specs["algorithm=cubic+linux"]["flows"][0]
    assert all(lin[k] for k in ("prr", "rack", "tlp", "frto", "undo", "dsack")) and lin["ack_policy"] == "linux"
    assert lin["cc"] == specs["algorithm=cubic"]["flows"][0]["cc"]


def test_memory_runs_cover_both_lengths_with_and_without_traces(report):
    mem = report["memory"]
    runs = mem["runs"]
    assert [(r["traces"], r["simulated_s"]) for r in runs] == [(False, 20.0), (False, 200.0), (True, 20.0),
                                                               (True, 200.0)]
    for r in runs:
        _check_row(r)
    assert runs[0]["trace_rows"] == runs[1]["trace_rows"] == 0
    assert runs[3]["trace_rows"] > runs[2]["trace_rows"] > 0
    assert mem["no_traces_peak_ratio"] > 0 and mem["traces_peak_ratio"] > 0


def test_the_suite_is_the_cores_definition_and_runs_for_cargo_bench_too():
    # One definition (tcplab_core::scenarios::bench): every entry is a valid run or a placeholder.
    rows = _core.bench_suite(quick=True)
    assert [r["name"] for r in rows] == SUITE
    for r in rows:
        if r["spec_json"] is None:
            assert r["skip"]
            continue
        _core.validate(r["spec_json"])
        spec = json.loads(r["spec_json"])
        assert r["bottleneck"] in [ln["name"] for ln in spec["links"]]
    full = {r["name"]: json.loads(r["spec_json"]) for r in _core.bench_suite() if r["spec_json"]}
    assert full["S1"]["duration"] == 2000 and full["S1"]["sample_interval"] == 0.01
    assert len(full["S3"]["flows"]) == 10 and len(full["S4"]["flows"]) == 200
    assert _core.bench_suite(seconds=30.0)[0]["spec_json"] and json.loads(
        _core.bench_suite(seconds=30.0)[0]["spec_json"])["duration"] == 30.0
    for axis in AXES:
        assert _core.bench_scaling(axis, quick=True)
    with pytest.raises(ValueError, match="unknown scaling axis") as e:
        _core.bench_scaling("bogus")
    # The front end's axes are the core's (listed in the core's error).
    assert str(e.value).split("known: ")[1].split(", ") == list(AXES)


def test_json_without_a_path_prints_the_report_and_only_selects(capsys):
    assert bench_main(["--quick", "--only", "S1", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [r["scenario"] for r in rep["scenarios"]] == ["S1"] and rep["skipped"] == []
    _check_row(rep["scenarios"][0])


def test_rounds_interleave_the_curve_and_give_each_round_its_ratio(monkeypatch):
    from tcplab.devtools import bench

    order = []
    scs = [{"name": f"p{i}", "description": "", "axis_value": float(i)} for i in range(3)]
    # Round k: point i costs (i + 1) * (k + 1) ns per hop, point 0 twice that: 2, 2, 3 ns in round 0 and
    # twice as much in round 1, so each round's ratio is 1.5.
    counter = {"k": 0}

    def fake_measure(sc, best_of, min_core_s=0.0):
        i = int(sc["axis_value"])
        k = counter["k"] // len(scs)
        counter["k"] += 1
        order.append((k, i))
        ns = (i + 1) * (k + 1) * (1 if i else 2)  # point 0 costs 2 in round 0, 4 in round 1
        return {"scenario": sc["name"], "core_wall_s": ns * 1e-3, "wall_s": ns * 1e-3, "packet_hops": 10 ** 6,
                "measured_packet_hops": 10 ** 6,
                "core_ns_per_packet_hop": float(ns), "peak_rss_mb": 10.0 + k, "runs": 1,
                "axis_value": sc["axis_value"]}

    monkeypatch.setattr(bench, "measure", fake_measure)
    monkeypatch.setattr(_core, "bench_scaling", lambda axis, quick: scs)
    rows = bench.run_scaling("flows", rounds=2)
    assert order == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert [r["core_ns_per_packet_hop_rounds"] for r in rows] == [[2.0, 4.0], [2.0, 4.0], [3.0, 6.0]]
    # Each point reports its fastest run and the largest peak over the rounds.
    assert [r["core_ns_per_packet_hop"] for r in rows] == [2.0, 2.0, 3.0]
    assert all(r["peak_rss_mb"] == 11.0 and r["runs"] == 2 for r in rows)
    assert bench.round_flatness(rows) == [1.5, 1.5]
    assert bench.flatness(rows) == 1.5
    with pytest.raises(ValueError, match="rounds"):
        bench.run_scaling("flows", rounds=0)


def test_rounds_are_checked_on_the_command_line(capsys):
    with pytest.raises(SystemExit):
        bench_main(["--rounds", "0", "--scaling", "flows", "--quick"])
    assert "--rounds: must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_main(["--rounds", "2", "--quick"])
    assert "--rounds: applies to the scaling curves" in capsys.readouterr().err


def test_a_core_built_without_the_bench_feature_is_explained(monkeypatch, capsys):
    # `cargo build --no-default-features` leaves the benchmark out of the extension: say so, no traceback.
    monkeypatch.delattr(_core, "bench_suite")
    assert bench_main(["--quick", "--only", "S1"]) == 2
    err = capsys.readouterr().err
    assert "tcplab bench: error:" in err and "cargo feature `bench`" in err
