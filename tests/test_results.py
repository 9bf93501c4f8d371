"""Results built from a dict shaped like the core's return value (no core
needed): DataFrames, joined names, goodput over any window, summary, save/load,
and the cwnd/queue plot."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from tcplab import Dumbbell, Results, load_scenario


def fake_raw(sample=0.5, duration=10.0):
    t = np.arange(0.0, duration + 1e-9, sample)
    n = len(t)
    # flow 0 delivers 1e6 B/s, flow 1 delivers 2e6 B/s from t = 2 s
    d0 = 1e6 * t
    d1 = 2e6 * np.maximum(0.0, t - 2.0)
    nan = float("nan")
    return {
        "flows": {
            "flow": np.array([0, 1]), "name": ["flow1", "flow2"], "src": ["s1", "s2"], "dst": ["d1", "d2"],
            "algorithm": ["newreno", "reno"], "recovery": ["newreno", "sack"],
            "goodput_bps": np.array([8e6, 16e6]), "bytes_delivered": np.array([1e7, 1.6e7]),
            "data_packets_sent": np.array([7000, 11000]), "retransmits": np.array([3, 0]),
            "timeouts": np.array([0, 1]), "fast_recoveries": np.array([3, 0]),
            "data_packets_received": np.array([6990, 10990]), "data_packets_dropped": np.array([3, 0]),
            "data_packets_in_network": np.array([7, 10]), "acks_sent": np.array([6990, 10990]),
            "acks_received": np.array([6989, 10989]), "acks_dropped": np.array([0, 0]),
            "acks_in_network": np.array([1, 1]), "rtt_samples": np.array([6000, 0]),
            "rtt_min": np.array([0.02, nan]), "rtt_mean": np.array([0.03, nan]), "rtt_max": np.array([0.05, nan]),
            "srtt": np.array([0.03, nan]), "cwnd": np.array([20.0, 30.0]), "ssthresh": np.array([15.0, 1e9]),
        },
        "links": {
            "link": np.array([0, 1]), "name": ["r1-r2", "r2-r1"], "src": ["r1", "r2"], "dst": ["r2", "r1"],
            "rate_bps": np.array([1e7, 1e7]), "delay": np.array([0.01, 0.01]),
            "utilization": np.array([0.97, 0.02]), "packets_in": np.array([18000, 17000]),
            "packets_out": np.array([17990, 17000]), "drops": np.array([3, 0]),
            "packets_in_link": np.array([7, 0]), "bytes_out": np.array([2.6e7, 6.8e5]),
            "data_packets_out": np.array([17990, 0]), "queue_mean_packets": np.array([5.0, 0.0]),
            "queue_max_packets": np.array([20.0, 1.0]), "queue_mean_bytes": np.array([7500.0, 0.0]),
        },
        "files": {"flow": np.array([1, 1]), "index": np.array([0, 1]), "size": np.array([1000, 2000]),
                  "start": np.array([0.0, 1.0]), "finish": np.array([0.5, nan]), "fct": np.array([0.5, nan])},
        "flow_ts": {
            "time": np.concatenate([t, t]), "flow": np.repeat([0, 1], n),
            "cwnd": np.concatenate([np.full(n, 10.0), np.full(n, 20.0)]),
            "ssthresh": np.full(2 * n, 1e9), "srtt": np.full(2 * n, 0.03),
            "in_flight": np.full(2 * n, 10.0), "delivered_bytes": np.concatenate([d0, d1]),
        },
        "queue_ts": {"time": t, "link": np.zeros(n, dtype=np.int64), "packets": np.linspace(0, 20, n),
                     "bytes": np.linspace(0, 30000, n)},
        "meta": {"events": np.int64(123456), "sim_time": np.float64(duration), "wall_s": 0.25, "seed": 7},
    }


SPEC = {"duration": 10.0, "measure_start": 5.0}


def test_tables_and_joined_names():
    r = Results(fake_raw(), spec=SPEC, name="fake")
    for t in ("flows", "links", "files", "flow_ts", "queue_ts"):
        assert isinstance(getattr(r, t), pd.DataFrame)
    assert list(r.flows["name"]) == ["flow1", "flow2"]
    assert list(r.files["flow_name"]) == ["flow2", "flow2"]
    assert set(r.flow_ts["flow_name"].unique()) == {"flow1", "flow2"}
    assert (r.flow_ts.loc[r.flow_ts["flow"] == 1, "flow_name"] == "flow2").all()
    assert (r.queue_ts["link_name"] == "r1-r2").all()
    assert r.meta == {"events": 123456, "sim_time": 10.0, "wall_s": 0.25, "seed": 7}
    assert type(r.meta["events"]) is int


def test_goodput_window():
    r = Results(fake_raw(), spec=SPEC)
    assert r.goodput(0, 10, flow=0) == pytest.approx(8e6)
    assert r.goodput(0, 10, flow="flow1") == pytest.approx(8e6)
    assert r.goodput(5, 10, flow=1) == pytest.approx(16e6)
    assert r.goodput(0, 2, flow=1) == pytest.approx(0.0)
    # interpolation between samples (0.25 s is between the 0.0 and 0.5 samples)
    assert r.goodput(0.25, 1.25, flow=0) == pytest.approx(8e6)
    assert r.goodput(1.0, 3.0, flow=1) == pytest.approx(8e6)  # 2e6 B over 2 s
    s = r.goodput(4, 8)
    assert isinstance(s, pd.Series) and list(s.index) == [0, 1]
    assert s[0] == pytest.approx(8e6) and s[1] == pytest.approx(16e6)
    with pytest.raises(ValueError):
        r.goodput(5, 5)
    with pytest.raises(KeyError):
        r.goodput(0, 1, flow="nope")


def test_goodput_assumes_zero_at_time_zero():
    raw = fake_raw()
    keep = raw["flow_ts"]["time"] >= 1.0
    raw["flow_ts"] = {k: np.asarray(v)[keep] for k, v in raw["flow_ts"].items()}
    r = Results(raw, spec=SPEC)
    assert r.goodput(0, 1, flow=0) == pytest.approx(8e6)


def test_summary_shape_and_json():
    r = Results(fake_raw(), spec=SPEC, name="fake")
    s = r.summary()
    json.dumps(s, allow_nan=False)
    assert set(s) == {"scenario", "flows", "links", "meta"}
    assert s["scenario"] == "fake"
    assert s["flows"][0] == {"id": 0, "name": "flow1", "algorithm": "newreno", "goodput_bps": 8e6,
                             "retransmits": 3, "timeouts": 0}
    assert s["links"][0] == {"name": "r1-r2", "utilization": 0.97, "drops": 3, "losses": 0}  # (no losses column: 0)
    assert s["meta"]["events"] == 123456 and s["meta"]["measure_start"] == 5.0
    assert r.jain_index() == pytest.approx((8 + 16) ** 2 / (2 * (64 + 256)))


def test_save_and_load(tmp_path):
    sc = Dumbbell(2, "10Mbps", "20ms", 20, duration="10s")
    r = Results(fake_raw(), scenario=sc, spec=sc.to_spec())
    r.save(tmp_path / "out")
    files = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"flows.parquet", "links.parquet", "files.parquet", "flow_ts.parquet", "queue_ts.parquet",
            "summary.json", "scenario.toml"} <= files
    assert load_scenario(tmp_path / "out" / "scenario.toml").to_spec() == sc.to_spec()
    back = Results.load(tmp_path / "out")
    pd.testing.assert_frame_equal(back.flows, r.flows)
    assert math.isnan(back.files["fct"][1])
    assert back.summary()["flows"] == r.summary()["flows"]
    assert back.goodput(0, 10, flow=0) == pytest.approx(8e6)


def test_plot_writes_png(tmp_path):
    sc = Dumbbell(2, "10Mbps", "20ms", 20, duration="10s")
    r = Results(fake_raw(), scenario=sc, spec=sc.to_spec())
    from tcplab.plot import plot_cwnd_queue

    out = tmp_path / "p.png"
    plot_cwnd_queue(r, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot_cwnd_queue(r, tmp_path / "q.png", flows=["flow2"], links=["r1-r2"], bdp_packets=17, buffer_packets=20)
    assert (tmp_path / "q.png").stat().st_size > 1000
