"""`tcplab bench --ns3`: the ns-3 side is given tcplab's own S1 dumbbell,
and a missing ns-3 is a clear error. ns-3 itself is not installed by the
project (it is an optional comparison), so its run is replaced by a stand-in
where one is needed; speeds are never asserted."""

import json
import os
import stat
import sys

import pytest

from tcplab import _core
from tcplab.devtools import ns3compare
from tcplab.devtools.bench import main as bench_main


def _s1_spec(seconds=2.0):
    sc = next(s for s in _core.bench_suite(False, seconds) if s["name"] == "S1")
    return json.loads(sc["spec_json"])


def test_the_ns3_side_gets_s1s_dumbbell():
    cfg = ns3compare.ns3_config(_s1_spec(7.0))
    # S1: 200 Mbit/s, RTT 100 ms (50 ms each way), B = 0.1 BDP of 1500-byte packets, access links at 10x the
    # bottleneck rate, one flow with an initial window of 10 and Linux's 200 ms minimum RTO.
    bdp = round(200e6 * 0.1 / (8 * 1500))
    assert cfg["duration"] == 7.0
    assert cfg["rate_bps"] == 200e6 and cfg["delay"] == 0.05
    assert cfg["buffer_packets"] == round(0.1 * bdp) == 167
    assert cfg["access_rate_bps"] == 10 * cfg["rate_bps"]
    assert cfg["src_delay"] == cfg["dst_delay"] == 0.0025
    assert cfg["packet_size"] == 1500 and cfg["init_cwnd"] == 10.0 and cfg["min_rto"] == 0.2
    assert cfg["algorithm"] == "newreno" and cfg["socket_type"] == "ns3::TcpNewReno"
    assert cfg["sack"] is False  # NewReno recovery, as S1's flow


def test_a_window_curve_point_is_one_cubic_flow_with_sack_and_a_bdp_of_buffer():
    cfg = ns3compare.ns3_config(json.loads(ns3compare.scenarios()["window=1000"]["spec_json"]))
    # The window curve: the rate set so that BDP = W over RTT 100 ms with 1500-byte packets, B = BDP.
    assert cfg["rate_bps"] == pytest.approx(1000 * 1500 * 8 / 0.1) and cfg["buffer_packets"] == 1000
    assert cfg["algorithm"] == "cubic" and cfg["socket_type"] == "ns3::TcpCubic" and cfg["sack"] is True
    assert set(ns3compare.scenarios()) >= {"window=10", "window=100000", "rate=1e7"}


def test_what_the_ns3_side_cannot_build_is_named():
    spec = _s1_spec()
    two = dict(spec, flows=spec["flows"] * 2)
    with pytest.raises(ValueError, match="flows: .*exactly one flow, got 2"):
        ns3compare.ns3_config(two)
    no_bn = dict(spec, links=[lk for lk in spec["links"] if lk["name"] != "r1->r2"])
    with pytest.raises(ValueError, match="links: .*'r1->r2'"):
        ns3compare.ns3_config(no_bn)
    bic = dict(spec, flows=[dict(spec["flows"][0], cc={"algorithm": "bic", "params": {}})])
    with pytest.raises(ValueError, match="flows: the ns-3 side has cubic, newreno, reno; the flow has bic"):
        ns3compare.ns3_config(bic)


def test_the_ns3_child_is_valid_python():
    compile(ns3compare._NS3_CHILD, "<ns3 child>", "exec")


def test_an_interpreter_without_ns3_is_a_clear_error(tmp_path):
    # The same interpreter without site-packages: it runs, but cannot import ns-3.
    py = tmp_path / "python-without-ns3"
    py.write_text(f"#!/bin/sh\nexec '{sys.executable}' -S \"$@\"\n")
    py.chmod(py.stat().st_mode | stat.S_IXUSR)
    cfg = ns3compare.ns3_config(_s1_spec())
    with pytest.raises(ns3compare.Ns3Unavailable) as e:
        ns3compare.run_ns3(cfg, str(py))
    msg = str(e.value)
    assert msg.startswith("--ns3-python:") and "cannot import ns-3" in msg and "-m pip install ns3" in msg
    with pytest.raises(ns3compare.Ns3Unavailable, match="--ns3-python: cannot run"):
        ns3compare.run_ns3(cfg, str(tmp_path / "no-such-python"))


def test_the_comparison_divides_what_each_side_measured(monkeypatch):
    seen = {}

    def fake_ns3(cfg, python, timeout=None):
        seen["cfg"], seen["python"] = cfg, python
        return {"wall_s": 4.0, "bottleneck_data_packets": 20_000, "events": 123, "peak_rss_mb": 600.0}

    monkeypatch.setattr(ns3compare, "run_ns3", fake_ns3)
    res = ns3compare.compare(2.0, "/some/python")
    assert seen["python"] == "/some/python" and seen["cfg"] == res["config"] and res["config"]["duration"] == 2.0
    assert res["ns3"]["events"] == 123  # ns-3's own figures are kept whole
    ns3, tl = res["rows"]
    assert ns3["simulator"] == "ns-3" and ns3["packets_per_s"] == 5000.0 and ns3["wall_s_per_simulated_s"] == 2.0
    assert tl["simulator"] == "tcplab" and tl["simulated_s"] == 2.0
    assert tl["bottleneck_data_packets"] > 0 and tl["wall_s"] > 0
    assert tl["packets_per_s"] == pytest.approx(tl["bottleneck_data_packets"] / tl["wall_s"])
    assert res["speedup_packets_per_s"] == pytest.approx(tl["packets_per_s"] / 5000.0)
    assert res["speedup_wall"] == pytest.approx(4.0 / tl["wall_s"])
    with pytest.raises(ValueError, match="--seconds: must be positive"):
        ns3compare.compare(0.0)
    assert seen["cfg"]["sack"] is False
    res = ns3compare.compare(1.0, "/some/python", ns3_sack=True)
    assert seen["cfg"]["sack"] is True and res["config"]["sack"] is True
    # A curve's point runs 20 s by default, whatever the curve's own length.
    res = ns3compare.compare(python="/some/python", scenario="window=100")
    assert seen["cfg"]["duration"] == 20.0 and res["rows"][1]["simulated_s"] == 20.0
    assert seen["cfg"]["scenario"] == "window=100" and seen["cfg"]["buffer_packets"] == 100
    with pytest.raises(ValueError, match="--ns3: no scenario 'window=7'; S1 or one of window=10, "):
        ns3compare.compare(1.0, scenario="window=7")
    with pytest.raises(ValueError, match="--seconds: must be positive, got -2"):
        ns3compare.compare(-2.0, scenario="window=100")


def test_ns3_options_are_checked_on_the_command_line(capsys, tmp_path):
    with pytest.raises(SystemExit):
        bench_main(["--ns3-python", "/usr/bin/python3"])
    assert "--ns3-python: applies to --ns3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_main(["--ns3-sack"])
    assert "--ns3-sack: applies to --ns3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_main(["--ns3", "--scaling", "flows", "--quick"])
    assert "--ns3: runs its comparison on its own; drop --scaling, --quick" in capsys.readouterr().err
    assert bench_main(["--ns3", "window=7"]) == 2
    assert "tcplab bench: error: --ns3: no scenario 'window=7'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_main(["--ns3", "--seconds", "-1"])
    assert "--seconds: must be positive, got -1.0" in capsys.readouterr().err
    # A missing ns-3 is reported as an error with its cause, exit status 2, no traceback.
    assert bench_main(["--ns3", "--seconds", "1", "--ns3-python", os.fspath(tmp_path / "none")]) == 2
    assert "tcplab bench: error: --ns3-python: cannot run" in capsys.readouterr().err
