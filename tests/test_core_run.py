"""Short simulations through the compiled core (tcplab._core): the result
tables carry the contract's columns, the numbers are physically consistent,
runs are deterministic, and a single NewReno flow matches the saw-tooth model."""

import json
import math

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab import Dumbbell, Flow, Results, Scenario
from tcplab.analysis import reno_sawtooth_utilization


@pytest.fixture(autouse=True, scope="module")
def _core_module():
    """Every test here needs the compiled core; importing it inside a fixture
    makes each test fail (not the whole collection) while it is missing."""
    global _core
    from tcplab import _core as core

    _core = core
    return core


_core = None

FLOW_COLS = ["flow", "name", "src", "dst", "algorithm", "recovery", "goodput_bps", "bytes_delivered",
             "data_packets_sent", "retransmits", "timeouts", "fast_recoveries", "data_packets_received",
             "data_packets_dropped", "data_packets_in_network", "acks_sent", "acks_received", "acks_dropped",
             "acks_in_network", "rtt_samples", "rtt_min", "rtt_mean", "rtt_max", "srtt", "cwnd", "ssthresh"]
LINK_COLS = ["link", "name", "src", "dst", "rate_bps", "delay", "utilization", "packets_in", "packets_out", "drops",
             "packets_in_link", "bytes_out", "data_packets_out", "queue_mean_packets", "queue_max_packets",
             "queue_mean_bytes"]
FILE_COLS = ["flow", "index", "size", "start", "finish", "fct"]
FLOW_TS_COLS = ["time", "flow", "cwnd", "ssthresh", "srtt", "in_flight", "delivered_bytes"]
QUEUE_TS_COLS = ["time", "link", "packets", "bytes"]
META_KEYS = {"events", "sim_time", "wall_s", "seed"}


def small(**kw):
    args = dict(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="5s",
                measure_start="1s", sample_interval="10ms", seed=1)
    args.update(kw)
    return Dumbbell(**args)


@pytest.fixture(scope="module")
def res():
    return tcplab.run(small())


def test_error_classes():
    assert issubclass(_core.SpecError, ValueError)
    assert issubclass(_core.SimulationError, RuntimeError)
    assert tcplab.SpecError is _core.SpecError
    assert isinstance(_core.version(), str) and tcplab.__version__ == _core.version()


def test_contract_columns(res):
    assert isinstance(res, Results)
    for table, cols in [("flows", FLOW_COLS), ("links", LINK_COLS), ("files", FILE_COLS),
                        ("flow_ts", FLOW_TS_COLS), ("queue_ts", QUEUE_TS_COLS)]:
        df = getattr(res, table)
        assert isinstance(df, pd.DataFrame)
        missing = [c for c in cols if c not in df.columns]
        assert not missing, f"{table} lacks {missing}"
    assert META_KEYS <= set(res.meta)
    assert res.meta["seed"] == 1 and res.meta["sim_time"] == pytest.approx(5.0)
    assert list(res.flows["name"]) == ["flow1", "flow2"]
    assert list(res.flows["src"]) == ["s1", "s2"] and list(res.flows["algorithm"]) == ["newreno", "newreno"]
    assert list(res.links["name"])[:2] == ["r1-r2", "r2-r1"]
    assert len(res.files) == 0  # bulk flows


def test_physical_consistency(res):
    fl, lk = res.flows, res.links
    assert (lk["utilization"] >= 0).all() and (lk["utilization"] <= 1.0 + 1e-9).all()
    bott = lk.set_index("name").loc["r1-r2"]
    assert bott["utilization"] > 0.5
    assert bott["queue_max_packets"] <= 17 + 1e-9  # B = 1 BDP = 17 packets
    assert (lk.set_index("name").drop(index="r1-r2")["drops"] == 0).all()  # only the bottleneck drops
    # over the whole run the flows cannot receive more than the bottleneck carries
    # (over a window they can: a retransmission releases data buffered out of order)
    assert fl["bytes_delivered"].sum() * 8 <= 10e6 * 5.0
    assert (fl["goodput_bps"] > 0).all()
    # every data packet sent was received, dropped or is still in the network
    for i, f in fl.iterrows():
        assert f["data_packets_sent"] == f["data_packets_received"] + f["data_packets_dropped"] \
            + f["data_packets_in_network"]
        assert f["acks_sent"] == f["acks_received"] + f["acks_dropped"] + f["acks_lost"] + f["acks_in_network"]
        # at least the propagation round trip: 20 ms + 2 x (sender + receiver access delay)
        assert f["rtt_min"] >= res.scenario.path_rtt(i) - 1e-9
        assert f["rtt_min"] <= f["rtt_mean"] <= f["rtt_max"]
    assert fl["data_packets_dropped"].sum() == bott["drops"]


def test_time_series(res):
    ts = res.flow_ts
    for fid in (0, 1):
        d = ts.loc[ts["flow"] == fid].sort_values("time")
        assert np.all(np.diff(d["delivered_bytes"].to_numpy()) >= 0)
        assert d["time"].max() == pytest.approx(5.0, abs=0.011)
        assert np.allclose(np.diff(d["time"].to_numpy()), 0.01, atol=1e-9)
    q = res.queue_ts
    assert set(q["link_name"].unique()) == {"r1-r2"}  # default: links with a finite queue
    assert (q["packets"] <= 17).all() and (q["packets"] >= 0).all()
    # the sampled series reproduces the exact measurement-window goodput to within a sample
    g = res.goodput(1.0, 5.0)
    for fid in (0, 1):
        exact = res.flows.loc[fid, "goodput_bps"]
        assert g[fid] == pytest.approx(exact, rel=0.02)


def test_deterministic():
    a = tcplab.run(small(duration="2s"))
    b = tcplab.run(small(duration="2s"))
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.flow_ts, b.flow_ts)
    assert a.meta["events"] == b.meta["events"]


def test_dict_spec_and_spec_error():
    spec = small(duration="2s").to_spec()
    r = tcplab.run(spec)
    assert r.scenario is None and len(r.flows) == 2
    bad = json.loads(json.dumps(spec))
    bad["links"][0]["rate_bps"] = 0
    with pytest.raises(_core.SpecError, match=r"^links\[0\]\.rate_bps"):
        tcplab.run(bad)
    bad = json.loads(json.dumps(spec))
    bad["bogus"] = 1
    with pytest.raises(_core.SpecError):
        tcplab.run(bad)


def test_no_route_is_spec_error():
    sc = Scenario(duration="1s")
    for n in ("a", "b", "c"):
        sc.add_node(n)
    sc.add_link("a-b", "a", "b", "1Mbps", "1ms")
    sc.add_flow(Flow("a", "c"))
    with pytest.raises(tcplab.ScenarioError, match=r'^flows\[0\]: no route from "a" to "c"'):
        sc.to_spec()  # (the core's routing, asked by to_spec)


def test_files_table():
    sc = Scenario(duration="5s", sample_interval=0)
    sc.add_node("a")
    sc.add_node("b")
    sc.add_duplex_link("a", "b", "10Mbps", "5ms")
    sc.add_flow(Flow("a", "b", files=[("100KB", 0), ("1MB", "1s"), ("100MB", "2s")]))
    r = tcplab.run(sc)
    f = r.files
    assert list(f["index"]) == [0, 1, 2] and list(f["size"]) == [100_000, 1_000_000, 100_000_000]
    assert f.loc[0, "fct"] == pytest.approx(f.loc[0, "finish"] - f.loc[0, "start"])
    assert 0 < f.loc[0, "fct"] < 1 and f.loc[1, "finish"] > 1.0
    assert math.isnan(f.loc[2, "finish"]) and math.isnan(f.loc[2, "fct"])  # 100 MB cannot finish in 3 s
    assert len(r.flow_ts) == 0


def test_single_newreno_flow_matches_sawtooth_model():
    # C = 50 Mbit/s, bottleneck RTT 20 ms, access 2.5 ms each: T = 30 ms, pipe = 125 packets,
    # B = 0.1 BDP of the bottleneck = 8 packets: the queue empties each cycle.
    sc = Dumbbell(1, "50Mbps", "20ms", "0.1BDP", duration="60s", measure_start="20s", sample_interval=0)
    r = tcplab.run(sc)
    model = reno_sawtooth_utilization(50e6, sc.path_rtt(0), sc.buffer_packets, 1500)
    assert 0.75 < model < 0.9
    util = r.links.set_index("name").loc["r1-r2", "utilization"]
    assert util == pytest.approx(model, abs=0.03)
    assert r.flows.loc[0, "goodput_bps"] == pytest.approx(model * 50e6, rel=0.04)


def test_algorithm_params_checked_against_catalog():
    from tcplab.errors import ScenarioError

    names = {p["name"] for a in _core.algorithms() if a["name"] == "newreno" for p in a["params"]}
    assert "beta" in names
    spec = small(params={"beta": 0.5}).to_spec()
    assert spec["flows"][0]["cc"] == {"algorithm": "newreno", "params": {"beta": 0.5}}
    with pytest.raises(ScenarioError) as e:
        small(params={"bta": 0.5})
    assert e.value.field == "params.bta" and "did you mean 'beta'" in e.value.problem
