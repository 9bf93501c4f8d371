"""jm-knn reproduction: the quick items in the default suite (structure,
physics, loss accounting, the guesser's counters, determinism), the full
reproduction as a slow test (the guesser raises CUBIC's throughput at every
loss rate)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from tcplab.experiments import jm_knn as jm
from tcplab.experiments import reproduce
from tcplab.experiments.runner import run_all

PAYLOAD_RATE = 100e6 * 1448 / 1488  # payload share of the 100 Mbit/s link


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("jmq")
    made = reproduce("jm-knn", quick=True, out=str(out), verbose=False)
    return out, made


def test_items_are_registered():
    from tcplab.experiments import items

    assert items("jm-knn") == ["throughput", "cost", "sensitivity"]
    with pytest.raises(ValueError, match="did you mean 'cost'"):
        reproduce("jm-knn", items=["cots"], quick=True)


def test_scenario_is_the_papers_two_node_link():
    sc = jm.scenario(0.01, [(jm.CUBIC, jm.KNN)])
    spec = sc.to_spec()
    assert [n["name"] for n in spec["nodes"]] == ["X", "Y"]
    xy = {ln["name"]: ln for ln in spec["links"]}
    assert xy["X-Y"]["rate_bps"] == 100e6 and xy["X-Y"]["delay"] == pytest.approx(0.064)
    assert xy["X-Y"]["queue"]["limit_packets"] == 220
    assert xy["X-Y"]["loss"] == {"kind": "bernoulli", "p": 0.01}
    assert xy["Y-X"]["loss"] is None  # data direction only
    f = spec["flows"][0]
    assert f["packet_size"] - f["header_size"] == 1448
    assert f["cc"]["algorithm"] == "cubic" and f["loss_classifier"] == {"kind": "knn", "params": {}}
    assert spec["duration"] == 50.0


def test_summary_has_every_loss_rate_and_case(quick):
    out, made = quick
    s = made["throughput"]["tables"]["summary"]
    assert len(s) == 2 + 3 * 3
    assert set(s.p) == {"none", "0.1", "0.01", "0.001"}
    assert set(s[s.p == "none"].case) == {"cubic_clean", "knn_clean"}
    assert set(s[s.p == "0.01"].case) == {"cubic_clean", "cubic_loss", "knn_loss"}
    # the paper's figure numbers: Figs. 1 and 4 are p = 0.001, Fig. 2 p = 0.1, Fig. 3 p = 0.01; the error-free
    # figure is tcplab's own
    for name in ("fig1_fig4_p0.001.png", "fig2_p0.1.png", "fig3_p0.01.png", "throughput_pnone.png"):
        assert (out / name).stat().st_size > 10_000, name
    assert not list(out.glob("throughput_p0*.png"))
    assert "QUICK MODE" in (out / "summary.md").read_text()
    assert "QUICK MODE" in (out / "index.md").read_text()
    assert len(pd.read_csv(out / "summary.csv")) == len(s)


def test_throughput_and_loss_accounting_obey_physics(quick):
    _, made = quick
    runs = made["throughput"]["tables"]["runs"]
    assert (runs.throughput_mbps > 0).all()
    assert (runs.throughput_mbps * 1e6 <= PAYLOAD_RATE * 1.001).all()
    clean = runs[runs.p == "none"]
    assert (clean.data_packets_lost == 0).all()
    for pk in ("0.1", "0.01", "0.001"):
        for _, r in runs[(runs.p == pk) & (runs.case != "cubic_clean")].iterrows():
            p, n = float(pk), r.data_packets_sent
            # every data packet that reaches the end of the lossy wire is lost with probability p
            assert abs(r.measured_loss_rate - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-3, (pk, r.case)
    # the error-free CUBIC run fills the link
    assert clean[clean.case == "cubic_clean"].throughput_mbps.iloc[0] > 85


def test_guesser_counters(quick):
    _, made = quick
    runs = made["throughput"]["tables"]["runs"]
    plain = runs[runs.case.isin(["cubic_clean", "cubic_loss"])]
    assert (plain.loss_events == 0).all()
    knn = runs[runs.case.isin(["knn_loss", "knn_clean"])]
    assert (knn.loss_events > 0).all()
    assert (knn.loss_events_ignored <= knn.loss_events).all()
    assert ((knn.ignored_fraction >= 0) & (knn.ignored_fraction <= 1)).all()


def test_guesser_raises_cubic_throughput_under_random_loss(quick):
    _, made = quick
    s = made["throughput"]["tables"]["summary"].set_index(["p", "case"])
    for pk in ("0.1", "0.01", "0.001"):
        assert s.loc[(pk, "knn_loss"), "throughput_mbps"] > 1.5 * s.loc[(pk, "cubic_loss"), "throughput_mbps"], pk
        # random loss hurts plain CUBIC
        assert s.loc[(pk, "cubic_loss"), "throughput_mbps"] < s.loc[(pk, "cubic_clean"), "throughput_mbps"]


def test_cost_item_two_flows_and_jain(quick):
    out, made = quick
    c = made["cost"]["tables"]["cost"]
    assert len(c) == 2 * len(jm.COST_BUFFERS)
    assert ((c.jain_index >= 0.5 - 1e-12) & (c.jain_index <= 1 + 1e-12)).all()
    assert (c.utilization <= 1 + 1e-9).all()
    # Every byte delivered crossed X-Y, so by any time t both flows together delivered at most its payload rate
    # x t (plus the segment on the wire); a window's throughput alone can read above it (data held behind a hole
    # at the window's start is delivered inside it). The runs are read back from the campaign.
    res = run_all(jm._cost_jobs(jm.Setup(True)), workers=1, verbose=False, campaign=str(out / "campaign"))
    for key, r in res.items():
        t = np.asarray(r["series_time"])
        delivered = np.cumsum(np.sum(r["series_bps"], axis=0) * np.diff(t, prepend=0.0))
        assert (delivered <= PAYLOAD_RATE * t + 1448 * 8).all(), key
    assert (c[~c.cubic_has_knn].cubic_loss_events == 0).all()
    assert (c[c.cubic_has_knn].cubic_loss_events > 0).all()
    assert (out / "cost.png").exists()


def test_sensitivity_table(quick):
    _, made = quick
    d = made["sensitivity"]["tables"]["sensitivity"]
    assert d.parameter.iloc[0] == "default"
    assert len(d) == 1 + 3  # quick grid: one non-default value per parameter
    assert {json.loads(p).get("max_size") for p in d.params} >= {50}
    assert (d["throughput_mbps_p0.01"] > 0).all()


def test_moving_average():
    ma = jm.moving_average([1, 2, 3, 4, 5, 6, 7])
    assert np.isnan(ma[:4]).all()
    assert ma[4:].tolist() == [3.0, 4.0, 5.0]


def test_runs_are_deterministic():
    jobs = [jm._job("a", jm.scenario(0.01, [(jm.CUBIC, jm.KNN)], seed=3)),
            jm._job("b", jm.scenario(0.01, [(jm.CUBIC, None)], seed=3))]
    r1 = run_all(jobs, workers=1, verbose=False)
    r2 = run_all(jobs, workers=2, verbose=False)
    for k in ("a", "b"):
        a, b = dict(r1[k]), dict(r2[k])
        a.pop("wall_s"), b.pop("wall_s")
        assert a == b
    # another seed draws other losses
    r3 = run_all([jm._job("a", jm.scenario(0.01, [(jm.CUBIC, None)], seed=4))], workers=1, verbose=False)
    assert r3["a"]["data_packets_lost"] != r1["b"]["data_packets_lost"] or \
        r3["a"]["goodput_bps"] != r1["b"]["goodput_bps"]


@pytest.mark.slow
def test_full_reproduction_guesser_gain_at_every_loss_rate(tmp_path):
    made = reproduce("jm-knn", items=["throughput"], out=str(tmp_path), verbose=False)
    s = made["throughput"]["tables"]["summary"].set_index(["p", "case"])
    for pk in ("0.1", "0.01", "0.001"):
        assert s.loc[(pk, "knn_loss"), "seeds"] == 10
        assert s.loc[(pk, "knn_loss"), "throughput_mbps"] > 2 * s.loc[(pk, "cubic_loss"), "throughput_mbps"], pk


def test_the_paper_setup_and_variants_reach_every_runs_spec():
    # the paper's ns-2 TCP/Linux: Agent/TCP/Linux's defaults and the CUBIC module it carries (v2.1)
    def flows(**kw):
        s = jm.Setup(True, **kw)
        jobs = jm._throughput_jobs(s) + jm._cost_jobs(s) + jm._sens_jobs(s)
        return [f for _, spec, _, _ in jobs for f in spec["flows"]]

    paper = flows()
    assert {(f["init_cwnd"], f["init_rto"], f["min_rto"], f["max_rto"], f["rto_mode"]) for f in paper} == \
        {(2.0, 3.0, 0.2, 120.0, "linux")}
    cubic = [f["cc"]["params"] for f in paper if f["cc"]["algorithm"] == "cubic"]
    assert cubic and all(p == {"variant": "2005", "initial_ssthresh": 0} for p in cubic)
    linux = flows(variants="linux", setup="linux")
    assert {(f["init_cwnd"], f["init_rto"], f["max_rto"], f["rto_mode"]) for f in linux} == {(10.0, 1.0, 60.0, "linux")}
    assert all(f["cc"]["params"] == {} for f in linux)


def test_index_names_the_tcp_linux_setup_with_its_sources(quick):
    out, _ = quick
    index = (out / "index.md").read_text()
    for row in ("| init_cwnd | 2 | ns-2 `windowInit_` = 2; Agent/TCP/Linux sets `delay_growth_` = false",
                "| init_rto | 3 s | ns-2 Agent/TCP/Linux `rtxcur_init_` = 3 s",
                "| max_rto | 120 s | ns-2 Agent/TCP/Linux `maxrto_` = 120 s",
                "| segment | 1448 B of payload + 40 B of headers | the paper"):
        assert row in index, row
    assert "- **CUBIC**: `cubic`, loss recovery sack\n  - parameters: initial_ssthresh = 0, variant = 2005" in index
    assert "tcp_cubic.c v2.1 of Linux 2.6.22.6" in index


def test_a_second_command_into_the_output_keeps_the_items_made_before(quick):
    out, _ = quick
    reproduce("jm-knn", items=["cost"], quick=True, out=str(out), verbose=False)  # its runs are stored
    index = (out / "index.md").read_text()
    for item in ("throughput", "cost", "sensitivity"):
        assert f"\n- {item}: " in index, item
