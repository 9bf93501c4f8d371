"""ssm-interactions reproduction: the quick study in the default suite
(every item, structure and physics of the metrics), resuming from its
campaign (OUT/campaign), damaged files there never taken for results, and
the same results on a Dask LocalCluster as on the local pool."""

import os
import warnings

import numpy as np
import pandas as pd
import pytest

from tcplab.experiments import items, reproduce
from tcplab.experiments.ssm_interactions import PROTOCOLS, QUICK_PROTOCOLS, Setup
from tcplab.sweep import Campaign, CampaignWarning


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("ssm")
    made = reproduce("ssm-interactions", quick=True, out=str(out), verbose=False)
    return out, made


def test_items_and_protocols_are_registered():
    assert items("ssm-interactions") == ["fig3", "fig4", "fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "rtt-ratio"]
    assert set(PROTOCOLS.values()) == {"reno", "highspeed", "scalable", "bic", "cubic", "htcp", "compound", "vegas",
                                       "areno"}
    import tcplab

    names = {a["name"] for a in tcplab._core.algorithms()} | {x for a in tcplab._core.algorithms()
                                                             for x in a.get("aliases", [])}
    assert set(PROTOCOLS.values()) <= names


def test_every_item_is_written_and_marked_quick(quick):
    out, made = quick
    assert set(made) == set(items("ssm-interactions"))
    for m in made.values():
        for f in m["files"]:
            assert os.path.getsize(f) > 0, f
    assert "QUICK MODE" in (out / "index.md").read_text()
    # The frozen scenarios are saved next to the figures.
    assert (out / "scenario-L4-c1.json").exists()


def test_fig3_has_every_protocol_and_load_and_physical_utilization(quick):
    _, made = quick
    df = made["fig3"]["tables"]["fig3"]
    setup = Setup(True)
    assert set(df.protocol) == set(setup.protocols) and set(df.long_flows) == set(setup.longs)
    assert ((df.utilization > 0) & (df.utilization <= 1)).all()
    # More long-lived flows load the backbone more (same short traffic, same topology).
    for p, d in df.groupby("protocol"):
        d = d.sort_values("long_flows")
        assert d.utilization.iloc[-1] > d.utilization.iloc[0], p


def test_relative_throughput_and_degradation_compare_flows_with_themselves(quick):
    _, made = quick
    rel = made["fig4"]["tables"]["fig4"]
    assert (rel.algorithm_base == "newreno").all()
    assert (rel.cls == "long").all()
    np.testing.assert_allclose(rel.relative, rel.T_run / rel.T_base)
    deg = made["fig8"]["tables"]["fig8"]
    # Only Reno flows (group A in the reno+X mixes) are in the degradation figure.
    assert (deg.algorithm == "newreno").all() and (deg.group == "A").all()
    assert set(deg.coexisting) == set(Setup(True).hs)


def test_cdf_fractions_and_rtt_ratio(quick):
    _, made = quick
    t = made["fig7"]["tables"]["fig7"]
    below = [c for c in t.columns if c.startswith("below_")][0]
    above = [c for c in t.columns if c.startswith("above_")][0]
    assert ((t[below] >= 0) & (t[below] + t[above] <= 1)).all()
    r = made["rtt-ratio"]["tables"]["rtt-ratio"]
    assert np.isfinite(r.ratio_30ms_over_300ms).all()
    np.testing.assert_allclose(r.ratio_30ms_over_300ms, 10.0 ** r.rtt_exponent_k)


def test_transfer_time_grows_with_file_size(quick):
    _, made = quick
    df = made["fig9"]["tables"]["fig9"]
    for p, d in df[df.files >= 5].groupby("protocol"):
        d = d.sort_values("size_mid")
        # A bin two decades larger takes longer on average.
        assert d.mean_transfer_time.iloc[-1] > d.mean_transfer_time.iloc[0], p


def segment_ids(campaign) -> set:
    return {p.name for p in (campaign / "segments").iterdir()}


def test_runs_are_stored_in_the_campaign_and_a_rerun_recomputes_nothing(quick, faults):
    out, made = quick
    camp = Campaign(out / "campaign", create=False)
    df = camp.results()
    # Every run stored once (2 configurations x (all-X at L = 1 and 4, reno+X at L = 4)), labelled with
    # its experiment key.
    assert len(df) == 2 * (2 * len(QUICK_PROTOCOLS) + len(QUICK_PROTOCOLS) - 1) and (df.status == "ok").all()
    assert set(df.experiment) == {"ssm-interactions (quick)"} and df.job.is_unique
    assert {"L1/c1/all-reno", "L4/c2/all-reno"} <= set(df.job)
    camp.close()
    before = segment_ids(out / "campaign")
    faults("", "error:recomputed a stored run")  # every run fails (in forked pool workers too)
    again = reproduce("ssm-interactions", items=["fig3"], quick=True, out=str(out), verbose=False)
    assert segment_ids(out / "campaign") == before
    pd.testing.assert_frame_equal(again["fig3"]["tables"]["fig3"], made["fig3"]["tables"]["fig3"])


def test_damaged_and_foreign_files_in_the_campaign_are_never_taken_for_results(tmp_path):
    kw = dict(quick=True, configs=1, duration=3.0, protocols=["Reno", "CUBIC"], verbose=False)
    first = reproduce("ssm-interactions", items=["fig3"], out=str(tmp_path), **kw)
    camp = tmp_path / "campaign"
    seg = sorted((camp / "segments").iterdir())[0]
    table = seg / "files.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum can tell
    table.write_bytes(bytes(data))
    (camp / "segments" / "stray.json").write_text("{}")
    (camp / "notes.txt").write_text("mine")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        second = reproduce("ssm-interactions", items=["fig3"], out=str(tmp_path), **kw)
    said = [str(w.message) for w in caught if issubclass(w.category, CampaignWarning)]
    assert any("checksum mismatch" in m and "run again" in m for m in said), said
    assert any("stray.json" in m for m in said) and any("notes.txt" in m for m in said), said
    assert [p.name.split(".")[0] for p in (camp / "quarantine").iterdir()] == [seg.name]
    pd.testing.assert_frame_equal(first["fig3"]["tables"]["fig3"], second["fig3"]["tables"]["fig3"])


def test_unknown_option_and_protocol_are_named():
    with pytest.raises(ValueError, match="configs"):
        reproduce("mv-highspeed", quick=True, configs=2)
    with pytest.raises(ValueError, match="protocols"):
        reproduce("ssm-interactions", quick=True, protocols=["Reno", "TCP-X"])


def test_dask_local_cluster_gives_the_local_pool_results(tmp_path):
    import distributed
    kw = dict(items=["fig3", "fig8"], quick=True, configs=1, duration=3.0, protocols=["Reno", "CUBIC"],
              verbose=False, resume=False)
    local = reproduce("ssm-interactions", out=str(tmp_path / "local"), **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            remote = reproduce("ssm-interactions", out=str(tmp_path / "dask"), scheduler=client, **kw)
    for it in ("fig3", "fig8"):
        pd.testing.assert_frame_equal(local[it]["tables"][it], remote[it]["tables"][it])


def test_full_scale_scenario_is_the_papers():
    setup = Setup(False)
    assert setup.configs == 12 and setup.longs == (1, 10, 40) and setup.duration == 600.0
    assert setup.protocols == list(PROTOCOLS)
    fz = setup.frozen(40, 1)
    spec = fz.spec_base
    links = {ln["name"]: ln for ln in spec["links"]}
    assert len(fz.backbone) == 8
    for name in fz.backbone:
        assert links[name]["rate_bps"] == 1e9
    for ln in spec["links"]:  # 2 MB drop-tail buffers everywhere, in bytes
        assert ln["queue"] == {"limit_packets": None, "limit_bytes": 2_000_000}
    facts = fz.flow_frame()
    assert (facts.cls == "short").sum() == 100 and (facts.cls == "long").sum() == 40
    # Offered short-lived load: about 800 Mbit/s (100 flows x 1 MB/s).
    short_bits = facts[facts.cls == "short"].bytes_offered.sum() * 8 / 600
    assert 0.6e9 < short_bits < 1.0e9
    assert 1 <= facts.hops.min() and facts.hops.max() <= 4


def test_paper_variants_run_the_period_vegas_and_compound():
    from tcplab.generate import Mix

    setup = Setup(True)
    fz = setup.frozen(1, 1)
    spec = fz.spec(Mix.all(setup.cc("Vegas")))
    assert {f["cc"]["params"]["variant"] for f in spec["flows"]} == {"linux-2.6"}
    assert Setup(True, variants="linux").cc("Vegas") == "vegas"
    with pytest.raises(ValueError, match="variants"):
        Setup(True, variants="ns2")


def test_paper_variants_are_the_2007_tcp_linux_modules_and_areno_is_the_papers():
    # the period variants where tcplab has them (ns-2's TCP/Linux carries Linux 2.6.22's modules)
    paper, linux = Setup(True), Setup(True, variants="linux")
    assert paper.cc("STCP") == {"algorithm": "scalable", "params": {"variant": "linux-pre-2020"}}
    assert paper.cc("CUBIC") == {"algorithm": "cubic", "params": {"variant": "2005", "initial_ssthresh": 0}}
    assert paper.cc("HSTCP") == "highspeed" and paper.cc("BIC") == "bic" and paper.cc("H-TCP") == "htcp"
    assert linux.cc("STCP") == "scalable" and linux.cc("CUBIC") == "cubic"
    # AReno is the paper's modified AReno in both, not the 2005/2006 algorithm (areno's default variant)
    for s in (paper, linux):
        assert s.cc("AReno") == {"algorithm": "areno", "params": {"variant": "paper"}}


def test_the_setup_reaches_every_flow_of_the_frozen_scenarios():
    for setup, expect in (("paper", (2.0, 3.0, 120.0, "linux")), ("linux", (10.0, 1.0, 60.0, "linux"))):
        flows = Setup(True, setup=setup).frozen(1, 1).spec_base["flows"]
        assert {(f["init_cwnd"], f["init_rto"], f["max_rto"], f["rto_mode"]) for f in flows} == {expect}, setup


def test_index_names_the_setup_and_each_protocols_period_module(quick):
    out, _ = quick
    index = (out / "index.md").read_text()
    assert "| init_cwnd | 2 | ns-2 `windowInit_` = 2" in index and "| max_rto | 120 s | ns-2 Agent/TCP/Linux" in index
    for p in QUICK_PROTOCOLS:
        assert f"- **{p}**: `{PROTOCOLS[p]}`, loss recovery sack" in index, p
    assert "  - parameters: variant = paper\n  - why: the paper's modified AReno" in index


def test_fig6_summary_counts_flows_and_gives_mbit_per_s(quick):
    out, made = quick
    per_flow = made["fig6"]["tables"]["fig6"]
    rows = [line.split("|")[1:-1] for line in (out / "fig6.md").read_text().splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0]]
    assert header[1:3] == ["flows", "mean (Mbit/s)"]
    for r in rows[2:]:
        d = per_flow[per_flow.protocol == r[0].strip()]
        assert int(r[1]) == len(d)  # a count, not divided by 1e6
        assert float(r[2]) == pytest.approx(d.throughput_bps.mean() / 1e6, abs=1e-3)
