"""`tcplab bench --compare`: two reports side by side, changes and summaries."""

import json
import math

import pytest

from tcplab.devtools import benchcompare as bc
from tcplab.devtools.bench import main as bench_main


def _row(name, ns, mb, core_ns=None):
    return {"scenario": name, "ns_per_packet_hop": ns, "core_ns_per_packet_hop": ns if core_ns is None else core_ns,
            "peak_rss_mb": mb}


def _report(commit, s1_ns, flows, cpu="AMD EPYC", quick=False, extra=()):
    pts = [_row(f"flows={n}", 99.0, 30.0 + n, core_ns=ns) for n, ns in flows]
    v = [ns for _, ns in flows]
    return {
        "tool": "tcplab bench", "commit": commit, "date": "2026-11-26T00:00:00+00:00", "quick": quick,
        "machine": {"cpu": cpu, "cores": 2},
        "scenarios": [_row("S1", s1_ns, 50.0), _row("S2", 20.0, 40.0)] + [_row(n, 1.0, 1.0) for n in extra],
        "scaling": {"flows": {"points": pts, "flatness": max(v) / min(v), "round_flatness": []}},
        "memory": {"runs": [dict(_row("S1 2000s no traces", 20.0, 34.0), traces=False)]},
    }


def test_rows_are_matched_by_name_and_changes_are_after_over_before():
    a = _report("aaa", 20.0, [(1, 20.0), (10000, 40.0)], extra=("S9",))
    b = _report("bbb", 22.0, [(1, 20.0), (10000, 36.0), (3000, 35.0)])
    b["memory"]["runs"][0]["peak_rss_mb"] = 17.0
    res = bc.compare(a, b)
    rows = {(r["section"], r["scenario"]): r for r in res["rows"]}
    assert rows[("scenarios", "S1")]["ns_change"] == pytest.approx(0.10)
    assert rows[("scenarios", "S2")]["ns_change"] == pytest.approx(0.0)
    # Scaling points compare the event loop's figure, not the whole call's.
    assert rows[("scaling: flows", "flows=10000")]["ns_change"] == pytest.approx(-0.10)
    assert rows[("memory", "S1 2000s no traces")]["mb_change"] == pytest.approx(-0.5)
    assert math.isnan(rows[("memory", "S1 2000s no traces")]["ns_change"])
    s = res["summary"]
    assert s["scenarios"]["ns_geomean_change"] == pytest.approx(math.sqrt(1.1 * 1.0) - 1)
    assert s["scaling: flows"]["ns_geomean_change"] == pytest.approx(math.sqrt(1.0 * 0.9) - 1)
    assert (s["scaling: flows"]["flatness_before"], s["scaling: flows"]["flatness_after"]) == (2.0, 36.0 / 20.0)
    assert res["only_before"] == {"scenarios": ["S9"]}
    assert res["only_after"] == {"scaling: flows": ["flows=3000"]}
    assert res["warnings"] == []
    assert (res["before"]["commit"], res["after"]["commit"]) == ("aaa", "bbb")


def test_incomparable_reports_are_warned_about():
    a = _report("a", 20.0, [(1, 20.0), (10, 30.0)])
    res = bc.compare(a, _report("b", 20.0, [(1, 20.0), (10, 30.0)], cpu="Intel Xeon"))
    assert any("different machines" in w for w in res["warnings"])
    res = bc.compare(a, _report("b", 20.0, [(1, 20.0), (10, 30.0)], quick=True))
    assert any("one report is --quick" in w for w in res["warnings"])
    # A profile-guided build against a plain one (a report without "build"
    # predates the field and was a plain release build).
    pgo = _report("b", 20.0, [(1, 20.0), (10, 30.0)])
    pgo["build"] = "release, pgo optimized"
    res = bc.compare(a, pgo)
    assert [w for w in res["warnings"] if "different builds" in w] == [
        "different builds: release against release, pgo optimized; a change is partly the compiler's "
        "(scripts/pgo.sh)"]
    assert res["after"]["build"] == "release, pgo optimized"
    a["build"] = "release"
    assert bc.compare(a, _report("b", 20.0, [(1, 20.0), (10, 30.0)]))["warnings"] == []


def test_the_command_prints_and_writes_the_comparison(tmp_path, capsys):
    pa, pb, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    pa.write_text(json.dumps(_report("aaa", 20.0, [(1, 20.0), (10000, 40.0)])))
    pb.write_text(json.dumps(_report("bbb", 22.0, [(1, 20.0), (10000, 36.0)])))
    assert bench_main(["--compare", str(pa), str(pb)]) == 0
    text = capsys.readouterr().out
    assert "20.0 -> 22.0" in text and "+10.0 %" in text and "-10.0 %" in text
    assert "largest / smallest 2.00 -> 1.80" in text
    assert bench_main(["--compare", str(pa), str(pb), "--json", str(out)]) == 0
    assert "+10.0 %" in capsys.readouterr().out  # the table too, with a file
    res = json.loads(out.read_text())
    assert len(res["rows"]) == 2 + 2 + 1
    assert bench_main(["--compare", str(pa), str(pb), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["after"]["commit"] == "bbb"


def test_bad_reports_and_options_are_refused_naming_them(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_report("a", 20.0, [(1, 20.0), (10, 30.0)])))
    bad_json, cargo, other = tmp_path / "x.json", tmp_path / "cargo.json", tmp_path / "camp.json"
    bad_json.write_text("{not json")
    cargo.write_text(json.dumps([{"scenario": "S1"}]))
    other.write_text(json.dumps({"tool": "something else"}))
    partial = tmp_path / "partial.json"
    rep = _report("a", 20.0, [(1, 20.0), (10, 30.0)])
    del rep["scaling"]["flows"]["points"][0]["core_ns_per_packet_hop"]
    partial.write_text(json.dumps(rep))
    for path, msg in ((tmp_path / "missing.json", "cannot read"), (bad_json, "is not JSON"),
                      (partial, "without the field 'core_ns_per_packet_hop'"),
                      (cargo, "cargo bench's JSON"), (other, "is not a `tcplab bench --json` report")):
        assert bench_main(["--compare", str(good), str(path)]) == 2
        err = capsys.readouterr().err
        assert "--compare:" in err and msg in err and str(path) in err
    with pytest.raises(SystemExit):
        bench_main(["--compare", str(good), str(good), "--scaling", "flows"])
    assert "--compare: reads two reports and runs nothing; drop --scaling" in capsys.readouterr().err
    assert bench_main(["--compare", str(good), str(good), "--json", str(tmp_path / "no" / "c.json")]) == 2
    assert "--json: cannot write" in capsys.readouterr().err


def test_a_real_report_against_itself_changes_nothing(tmp_path):
    path = tmp_path / "q.json"
    assert bench_main(["--quick", "--only", "S1,S2", "--json", str(path)]) == 0
    rep = bc.load(str(path))
    res = bc.compare(rep, rep)
    assert [r["scenario"] for r in res["rows"]] == ["S1", "S2"]
    assert all(r["ns_change"] == 0.0 and r["mb_change"] == 0.0 for r in res["rows"])
    assert res["warnings"] == ["both reports are --quick: they show that the suite runs, not how fast"]
