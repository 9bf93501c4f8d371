"""mv-highspeed reproduction: the quick items in the default suite (structure,
physics, determinism), full Table I as a slow test (NewReno against the
analysis)."""


import numpy as np
import pandas as pd
import pytest

from tcplab.experiments import mv_highspeed as mv
from tcplab.experiments import reproduce

C = 200e6


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("mvq")
    made = reproduce("mv-highspeed", items=["table1", "figs2-8", "table2", "figs9-10"], quick=True, out=str(out),
                     verbose=False)
    return out, made


def test_table1_has_one_row_per_protocol_rtt_and_buffer(quick):
    out, made = quick
    df = made["table1"]["tables"]["table1"]
    assert len(df) == 7 * 2 * 2
    assert {"algorithm", "rtt_ms", "buffer_bdp", "goodput_kbps"} <= set(df.columns)
    assert set(df.protocol) == set(mv.PROTOCOLS)
    assert sorted(df.buffer_packets.unique()) == [167, 500, 1667, 5000]
    disk = pd.read_csv(out / "table1.csv")
    assert len(disk) == len(df)
    md = (out / "table1.md").read_text()
    assert "QUICK MODE" in md


def test_table1_columns_are_in_the_papers_order(quick):
    # The paper: B = 0.1 BDP first, then B = BDP, each at RTT 100 and 300 ms; each cell its run's goodput.
    out, made = quick
    df = made["table1"]["tables"]["table1"]
    rows = [line.split("|")[1:-1] for line in (out / "table1.md").read_text().splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0]]
    assert header[1:] == ["B = 0.1 BDP, RTT 100 ms", "B = 0.1 BDP, RTT 300 ms", "B = 1 BDP, RTT 100 ms",
                          "B = 1 BDP, RTT 300 ms"]
    for r in rows[2:]:
        p = r[0].strip()
        for col, (b, rtt) in zip(r[1:], [(0.1, 100), (0.1, 300), (1.0, 100), (1.0, 300)], strict=True):
            cell = df[(df.protocol == p) & (df.buffer_bdp == b) & (df.rtt_ms == rtt)].goodput_kbps.iloc[0]
            assert float(col) == round(cell), (p, b, rtt)


def test_table2_is_in_kbit_per_s_as_the_paper(quick):
    out, made = quick
    t2 = made["table2"]["tables"]["table2"]
    assert {"goodput_a_kbps", "goodput_b_kbps", "new_protocol_kbps", "newreno_kbps"} <= set(t2.columns)
    # two flows share 200 Mbit/s = 200,000 kbit/s: in Mbit/s the sum could never pass 200
    assert ((t2.goodput_a_kbps + t2.goodput_b_kbps) > 1000).all()
    assert "kbit/s" in (out / "table2.md").read_text()


def test_quick_runs_obey_physics(quick):
    _, made = quick
    for key in ("table1", "figs9-10", "table2"):
        df = made[key]["tables"][key]
        assert (df.utilization <= 1.0 + 1e-9).all() and (df.utilization > 0).all()
    f9 = made["figs9-10"]["tables"]["figs9-10"]
    assert ((f9.jain_index >= 0.5 - 1e-12) & (f9.jain_index <= 1 + 1e-12)).all()
    # In-order goodput over a window exceeds C by the data the receivers held behind holes when it opened
    # (a recovery straddling the window's start); that data is inside the senders' flight, at most twice the
    # pipe (C x path RTT, at most 110.5 ms with the jitter) plus the buffer (the flight at an overflow, doubled
    # by at most one round of slow start before the loss is seen).
    held_bits = 2 * (C * 0.1105 / 12000 + f9.buffer_bdp * 1667) * 12000
    assert (f9.total_mbps * 1e6 <= C + held_bits / 30.0).all()


def _delivered(run, args):
    """A run's in-order delivered bytes, all flows together, at each sample time (ns-2 accounting: whole
    packets, the bytes the bottleneck carried)."""
    from tcplab.experiments.runner import flow_series

    series = [flow_series(run, i, "delivered_bytes") for i in range(len(run.spec["flows"]))]
    return {"time": series[0][0].tolist(), "bytes": sum(d.astype(float) for _, d in series).tolist()}


def test_no_run_delivers_more_than_the_bottleneck_carried(quick, monkeypatch):
    # Every byte delivered crossed the bottleneck, so by any time t the flows together have delivered at most
    # C t (plus the packet on the wire). (A window's goodput can read above C: data held behind a hole at the
    # window's start is delivered inside it; table1.md's note.) The runs are read back from the campaign.
    from tcplab.experiments import runner

    out, _ = quick
    monkeypatch.setitem(runner.EXTRACTS, "test_delivered", _delivered)  # (this test's only)
    s = mv.Setup(True)
    jobs = [(k, spec, "test_delivered", a) for k, spec, _, a in
            mv._table1_jobs(s, traces=True) + mv._pairs_jobs(s) + mv._table2_jobs(s)]
    res = runner.run_all(jobs, workers=1, verbose=False, campaign=str(out / "campaign"))
    for key, r in res.items():
        t, d = np.asarray(r["time"]), np.asarray(r["bytes"])
        assert (d * 8 <= C * t + 1500 * 8).all(), key


def test_every_figure_is_written_and_says_quick(quick):
    out, made = quick
    for p, n in mv.FIG_OF.items():
        algo = mv.PROTOCOLS[p][0]
        assert (out / f"fig{n}_{algo}.png").stat().st_size > 10_000
    assert (out / "fig9.png").exists() and (out / "fig10.png").exists()
    index = (out / "index.md").read_text()
    assert "QUICK MODE" in index and "seed 1" in index
    for p in mv.PROTOCOLS:
        assert f"- **{p}**: `{mv.PROTOCOLS[p][0]}`" in index


def test_index_gives_the_ns2_setup_with_its_sources(quick):
    out, _ = quick
    index = (out / "index.md").read_text()
    assert "`--setup paper`" in index and "ns-2.28" in index
    for row in ("| init_cwnd | 2 | ns-2 Agent/TCP `windowInit_` = 2",
                "| init_rto | 6 s | ns-2 Agent/TCP `rtxcur_init_` = 6 s until 2006/01/21",
                "| max_rto | 100000 s | ns-2 Agent/TCP `maxrto_` = 100000 s until 2007/03/28",
                "| rto_mode | linux | choice: ns-2's `rtt_timeout()`",
                "| limited_transmit | on | ns-2 Agent/TCP `singledup_`",
                "| rwnd | unlimited | ns-2's `window_` = 20 caps the window at 20 packets"):
        assert row in index, row
    assert "`tcpTick_` = 0.01 s" in index  # what tcplab does not model of ns-2, on the page


def test_the_setup_reaches_every_runs_spec():
    # --setup paper: ns-2.28's defaults; --setup linux: the specs the reproduction ran before it had a profile
    def flows(setup):
        s = mv.Setup(True, setup=setup)
        jobs = mv._table1_jobs(s, False) + mv._table2_jobs(s) + mv._fig13_jobs(s)
        return [f for _, spec, _, _ in jobs for f in spec["flows"]]

    paper = flows("paper")
    assert {(f["init_cwnd"], f["init_rto"], f["min_rto"], f["max_rto"], f["rto_mode"], f["limited_transmit"],
             f["init_ssthresh"], f["rwnd_packets"]) for f in paper} == {(2.0, 6.0, 0.2, 100000.0, "linux", True,
                                                                         None, None)}
    linux = flows("linux")
    assert {(f["init_cwnd"], f["init_rto"], f["max_rto"], f["rto_mode"], f["limited_transmit"]) for f in linux} \
        == {(10.0, 1.0, 60.0, "linux", False)}
    import tcplab

    s = mv.Setup(True, setup="linux")
    before = tcplab.Dumbbell(n_flows=2, bottleneck_rate=C, rtt="100ms", buffer="1.0BDP",
                             algorithm=["scalable", "newreno"],
                             params=[{"variant": "paper", "low_window": 0}, {}], recovery=["sack", "newreno"],
                             duration=f"{s.duration}s", measure_window=f"{s.window}s", sample_interval="1s",
                             packet_size="1500B", accounting="ns2", seed=mv.SEED)
    assert mv._dumbbell(s, ["STCP", "NewReno"], C, 100, 1.0, s.duration, s.window, "1s").to_spec() == before.to_spec()


def test_table1_is_deterministic(tmp_path):
    a = reproduce("mv-highspeed", items=["table1"], quick=True, out=str(tmp_path / "a"), verbose=False, workers=2)
    b = reproduce("mv-highspeed", items=["table1"], quick=True, out=str(tmp_path / "b"), verbose=False, workers=1)
    cols = ["protocol", "rtt_ms", "buffer_bdp", "goodput_kbps", "retransmits", "timeouts", "drops"]
    pd.testing.assert_frame_equal(a["table1"]["tables"]["table1"][cols], b["table1"]["tables"]["table1"][cols])


def test_unknown_item_is_named():
    with pytest.raises(ValueError, match=r"item: unknown item 'tabel1'.*did you mean 'table1'"):
        reproduce("mv-highspeed", items=["tabel1"], quick=True, out="/tmp/never", verbose=False)


@pytest.mark.slow
def test_full_table1_newreno_agrees_with_the_analysis_at_rtt_100ms(tmp_path):
    # At RTT 100 ms the 2000-s run reaches the sawtooth's steady state long
    # before the measurement window [1000, 2000] s.
    made = reproduce("mv-highspeed", items=["table1"], out=str(tmp_path), verbose=False)
    df = made["table1"]["tables"]["table1"]
    nr = df[(df.algorithm == "newreno") & (df.rtt_ms == 100)]
    assert len(nr) == 2
    for _, r in nr.iterrows():
        if r.buffer_bdp == 1.0:
            assert r.goodput_kbps * 1e3 >= 0.99 * C, r
        else:
            assert abs(r.goodput_kbps - r.analytic_goodput_kbps) / r.analytic_goodput_kbps < 0.02, r


def _single(algo, params, recovery, rtt_ms, buffer, duration, measure):
    import tcplab

    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="200Mbps", rtt=f"{rtt_ms}ms", buffer=buffer, algorithm=algo,
                         params=params, recovery=recovery, duration=f"{duration}s", measure_window=f"{measure}s",
                         sample_interval="10s", accounting="ns2")
    return sc, tcplab.run(sc)


@pytest.mark.slow
def test_newreno_at_rtt_300ms_agrees_with_the_analysis_in_steady_state():
    # At RTT 300 ms the start-up (slow-start overshoot to ~20000 segments,
    # recovery ending in timeouts, ssthresh ~635) leaves NewReno growing one
    # segment per 0.31-s RTT until ~1450 s, inside Table I's window; and one
    # sawtooth cycle at B = 0.1 BDP lasts ~950 s. The steady state, measured
    # over several cycles, is what the analysis describes.
    from tcplab.analysis import reno_sawtooth_goodput

    sc, res = _single("newreno", {}, "newreno", 300, "1BDP", 6000, 4000)
    assert res.flows.goodput_bps.iloc[0] >= 0.99 * C
    sc, res = _single("newreno", {}, "newreno", 300, "0.1BDP", 6000, 4000)
    predicted = reno_sawtooth_goodput(C, sc.path_rtt(0), sc.buffer_packets, 1500)
    assert abs(res.flows.goodput_bps.iloc[0] - predicted) / predicted < 0.02


@pytest.mark.slow
def test_westwood_plus_fills_the_link_once_its_estimate_has_converged():
    # mv-buffers' analysis: after a loss Westwood+ sets cwnd = BWE x RTTmin,
    # about C x RTTmin, so the link stays busy at any buffer. Table I's RTT
    # 300 ms cells fall short only because the first loss (end of slow start)
    # comes while the filtered estimate still lags the exponentially growing
    # rate (ssthresh 264 / 36 segments); the window then refills at one
    # segment per RTT. After the next loss the steady state is full.
    for buffer in ("1BDP", "0.1BDP"):
        _, res = _single("westwood", {"variant": "paper"}, "sack", 300, buffer, 5000, 2000)
        assert res.flows.goodput_bps.iloc[0] >= 0.99 * C, buffer


def test_cli_reproduce_lists_items_and_runs_a_quick_item(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "tcplab", "reproduce", "mv-highspeed", "--list"], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == mv.ITEMS
    d = tmp_path / "t2"
    subprocess.run([sys.executable, "-m", "tcplab", "reproduce", "mv-highspeed", "table2", "--quick", "--seeds", "2",
                    "--setup", "linux", "--out", str(d)], capture_output=True, text=True, check=True)
    t2 = pd.read_csv(d / "table2.csv")
    assert len(t2) == 12 and set(t2.host_a) | set(t2.host_b) == set(mv.PROTOCOLS)
    # two seeds: each cell the mean over them, with its 95 % interval and the phase flag
    assert (t2.seeds == 2).all() and t2.phase_dependent.isin([True, False]).all()
    assert (t2.goodput_a_kbps_ci_low <= t2.goodput_a_kbps).all()
    assert (t2.goodput_a_kbps <= t2.goodput_a_kbps_ci_high).all()
    per = pd.read_csv(d / "table2_seeds.csv")
    assert sorted(per.seed.unique()) == [1, 2] and len(per) == 24
    first = per[(per.host_a == t2.host_a[0]) & (per.host_b == t2.host_b[0])].goodput_a_kbps
    assert t2.goodput_a_kbps[0] == pytest.approx(first.mean())
    assert "95 % Student-t interval" in (d / "table2.md").read_text()
    index = (d / "index.md").read_text()
    assert "table2 N = 2" in index
    assert "`--setup linux`" in index and "| init_cwnd | 10 | RFC 6928" in index
    bad = subprocess.run([sys.executable, "-m", "tcplab", "reproduce", "mv-highspeeed", "--quick"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "did you mean 'mv-highspeed'" in bad.stderr


def test_a_second_command_into_the_output_keeps_the_items_made_before(quick):
    # table2 again (its runs are stored: nothing runs): the fixture's four items stay listed
    out, _ = quick
    reproduce("mv-highspeed", items=["table2"], quick=True, out=str(out), verbose=False)
    index = (out / "index.md").read_text()
    for item in ("table1", "figs2-8", "figs9-10", "table2"):
        assert f"\n- {item}: " in index, item
