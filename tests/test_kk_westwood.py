"""kk-westwood: Westwood-RE, RCE, the buffer-estimating Westwood, the models, the reproduction."""

import math

import pytest

import tcplab
from tcplab import analysis as an
from tcplab.experiments import kk_westwood as kk


def test_algorithms_are_registered():
    names = {a["name"] for a in tcplab._core.algorithms()} if not isinstance(tcplab._core.algorithms(), str) else set()
    assert {"westwood-re", "westwood-bs"} <= names


def test_models():
    bdp = an.friendliness_buffer(50e6, 0.09, 1500)
    assert math.isclose(bdp, 375.0)
    # At B = BDP both readings give 1; the spec's 1.4 / 0.7 are the fixed-RTT reading.
    for mode in ("consistent", "fixed"):
        assert math.isclose(an.westwood_reno_ratio(375, 50e6, 0.09, 1500, mode), 1.0)
    assert math.isclose(an.westwood_reno_ratio(187.5, 50e6, 0.09, 1500, "fixed"), math.sqrt(2))
    assert math.isclose(an.westwood_reno_ratio(750, 50e6, 0.09, 1500, "fixed"), math.sqrt(0.5))
    assert math.isclose(an.westwood_reno_ratio(187.5, 50e6, 0.09, 1500), math.sqrt(1.5))
    # The ratio of the two throughput formulas themselves, p cancelling.
    tq = an.buffering_time(187.5, 50e6, 1500)
    assert math.isclose(tq, 0.045)
    r = an.westwood_throughput_model(0.09 + tq, 0.09, 0.01) / an.reno_throughput_model(0.09 + tq, 0.01)
    assert math.isclose(r, math.sqrt(1.5))
    assert math.isclose(an.westwood_reno_ratio_sync(187.5, 375), 5 / 3)
    df = an.predicted_ratio_vs_buffer([187.5, 375], 50e6, 0.09)
    assert list(df.columns) == ["buffer_packets", "buffer_bdp", "model_consistent", "model_fixed_rtt", "model_sync"]


def _pair(alg, buf, rec="newreno", dur="300s"):
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="50Mbps", rtt="70ms", buffer=buf, access_rate="100Mbps",
                         access_delay="5ms", algorithm=[alg, "newreno"], recovery=rec, duration=dur,
                         sample_interval="1s")
    g = tcplab.run(sc).flows.goodput_bps.values
    return g[0] / g[1]


def test_rce_single_flow_within_5_percent():
    # The algorithm's state comes back in the run's cc_ts series (sampled every
    # 10 ms); each completed RCE measurement shows as an increment of rce_count.
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="50Mbps", rtt="70ms", buffer=375, access_rate="100Mbps",
                         access_delay="5ms", algorithm="westwood-bs", duration="40s", sample_interval="10ms")
    v = tcplab.run(sc).cc_vars(0)
    assert {"rce_count", "rce_last_seg_s", "bs_estimate", "capacity_seg_s"} <= set(v.columns)
    new = v[(v.rce_count.diff() > 0) & (v.index > 5)]
    assert len(new) > 50
    ratio = new.rce_last_seg_s * 12000 / 50e6
    assert (ratio - 1).abs().max() < 0.05, ratio.describe()


def test_buffer_estimate_tracks_queue(tmp_path):
    out = tmp_path / "o"
    res = kk.reproduce(items=["bs-tracking"], quick=True, out=str(out), workers=1, verbose=False)
    df = res["bs-tracking"]["tables"]["bs_tracking"]
    assert (df.mean_abs_err_pct_of_buffer < 2.0).all(), df


def test_fig1_shape_quick():
    # Westwood-RE: more than legacy below the BDP, less above (not the magnitude).
    assert _pair("westwood-re", 188) > 1.2
    assert _pair("westwood-re", 750) < 0.9
    # The proposal stays near 1 below the BDP.
    assert 0.85 < _pair("westwood-bs", 188) < 1.15


def test_unknown_item_and_cli_flags(tmp_path):
    with pytest.raises(ValueError):
        kk.reproduce(items=["fig9"], out=str(tmp_path))
    with pytest.raises(ValueError):
        kk.reproduce(items=["fig1"], out=str(tmp_path), recovery="sack")
    from tcplab.experiments import PAPERS
    assert "kk-westwood" in PAPERS


@pytest.mark.slow
def test_reproduce_full(tmp_path):
    res = kk.reproduce(out=str(tmp_path), verbose=False)
    assert set(res) == set(kk.ITEMS)
    rce = res["rce"]["tables"]["rce"]
    single = rce[rce.competing_flows == 0]
    assert (single.median_C_over_true.sub(1).abs() < 0.05).all()


def test_every_items_runs_get_the_tcp_setup():
    # Each item builds its scenarios its own way (Fig. 1/4's pair, Fig. 3's trade-off maker, Fig. 5's RTT
    # spread): every flow of every one must carry the setup's values (the items' jobs, not run).
    for setup, expect in (("paper", (2.0, 6.0, 100000.0, "linux", True)), ("linux", (10.0, 1.0, 60.0, "linux", False))):
        s = kk.Setup(True, [1.0], setup=setup)
        for item in kk.PAPER.items:
            flows = [f for _, spec, _, _ in item.jobs(s, kk.ITEMS) for f in spec["flows"]]
            assert flows, item.name
            assert {(f["init_cwnd"], f["init_rto"], f["max_rto"], f["rto_mode"], f["limited_transmit"])
                    for f in flows} == {expect}, (setup, item.name)


def test_index_records_the_setup_the_rtt_assignment_and_the_rce_settings(tmp_path):
    # rce then bs-tracking into one directory: both stay listed; the page names the choices the paper leaves open
    out = tmp_path / "kk"
    kk.reproduce(items=["rce"], quick=True, buffers=[1.0], out=str(out), workers=1, verbose=False)
    kk.reproduce(items=["bs-tracking"], quick=True, buffers=[1.0], out=str(out), workers=1, verbose=False)
    index = (out / "index.md").read_text()
    assert "\n- rce: rce.csv" in index and "\n- bs-tracking: bs_tracking.csv" in index
    assert "| init_cwnd | 2 | ns-2 Agent/TCP `windowInit_` = 2" in index
    assert "Fig. 5: flow i (1..N) has RTT 10 + 240 i/N ms" in index and "even flows the new protocol" in index
    for param in ("rtt_sample = latest", "rce_interval = 0 (the RTO)", "rce_filter = last"):
        assert f"    - {param} (" in index, param
