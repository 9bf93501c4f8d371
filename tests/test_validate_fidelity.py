"""`tcplab validate`: the fidelity comparison of a kernel run with tcplab's.

* The metric functions on synthetic inputs whose answers are known by
  construction (sawtooth period, first loss, start-up peak, goodput, the
  time-weighted mean, loss-event clustering, disturbances).
* The plumbing: a kernel-format directory written from a tcplab run
  (``_kernel_dir_from_result``) compared with that same run must give
  relative error 0 and every target met; perturbed (cwnd x 1.2, drops two
  round trips later) the matching rows must fail.
* The command: bad input exits 2 naming the field; a machine where the kernel
  side cannot run exits 3 with one line and no traceback; with a stand-in
  kernel side the whole command runs and writes its report.
* Where the real kernel side exists and its environment check passes: one
  short validation end to end (20 Mbit/s, 50 ms, reno, 20 s); the full grid
  of the issue is ``slow`` and writes its table to docs/validation-kernel-grid.csv.
"""

from __future__ import annotations

import json
import math
import os
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab.cli import EXIT_UNAVAILABLE, main
from tcplab.validate import compare as C
from tcplab.validate import fidelity as F
from tcplab.validate import fidelity_report as R
from tcplab.validate import metrics as M
from tcplab.validate import sides as S

ROOT = Path(__file__).resolve().parent.parent
GRID_CSV = Path(os.environ.get("TCPLAB_VALIDATE_GRID_CSV", ROOT / "docs" / "validation-kernel-grid.csv"))


# ---------------------------------------------------------------- helpers

def _kernel_dir_from_result(result, directory, *, cwnd_scale: float = 1.0, drop_shift: float = 0.0,
                            forwarder: dict | None = None) -> Path:
    """Write a tcplab run as a kernel directory (the schema kernel.py writes),
    on the kernel's time axis (t - sides.sim_t0 of the earliest flow).
    ``cwnd_scale`` and ``drop_shift`` perturb it; ``forwarder`` replaces the
    forwarder block. A one-flow run is written without the ``flow`` column
    (as directories from before multi-flow runs), several flows with it."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    sc = result.scenario
    n_flows = len(result.flows)
    t0 = min(S.sim_t0(result, i) for i in range(n_flows))
    mss = sc.packet_bytes - 52
    ti, rxs, drops = [], [], []
    total_retrans = 0
    for i in range(n_flows):
        fts = result.flow_ts[result.flow_ts["flow"] == i]
        t = fts["time"].to_numpy(float) - t0
        rtr = result.retransmit_trace
        rt = np.sort(rtr.loc[rtr["flow"] == i, "time"].to_numpy(float))
        retrans = np.searchsorted(rt, fts["time"].to_numpy(float), side="right").astype(float)
        retrans[-1] = float(result.flows["retransmits"].iloc[i])  # the total, as the kernel's last sample has it
        total_retrans += int(retrans[-1])
        n = len(t)
        zeros = np.zeros(n)
        ti.append(pd.DataFrame({
            "time": t, "cwnd": fts["cwnd"].to_numpy(float) * cwnd_scale, "ssthresh": fts["ssthresh"].to_numpy(float),
            "srtt_s": fts["srtt"].to_numpy(float), "rttvar_s": zeros, "rto_s": zeros + 0.2, "min_rtt_s": zeros,
            "ca_state": zeros, "retransmits": retrans, "lost": zeros, "retrans": zeros,
            "unacked": fts["in_flight"].to_numpy(float), "sacked": zeros, "bytes_acked": zeros, "bytes_sent": zeros,
            "bytes_retrans": zeros, "delivered": zeros, "delivery_rate_bps": zeros, "pacing_rate_bps": zeros,
            "flow": i}))
        rxs.append(pd.DataFrame({"time": t, "bytes": fts["delivered_bytes"].to_numpy(float), "flow": i}))
        dt = result.drop_trace
        dt = dt[(dt["flow"] == i) & (dt["link_name"] == "r1-r2") & (dt["packet"] == "data")]
        drops.append(pd.DataFrame({"time": dt["time"].to_numpy(float) - t0 + drop_shift,
                                   "seq": dt["seq"].to_numpy() * mss, "payload_bytes": mss,
                                   "queue_packets": dt["queue_packets"].to_numpy(), "flow": i}))
    tables = {"tcp_info.csv": ti, "rx.csv": rxs, "drops.csv": drops}
    for name, parts in tables.items():
        df = pd.concat(parts, ignore_index=True)
        if n_flows == 1:
            df = df.drop(columns=["flow"])
        elif name == "drops.csv":
            df = df.sort_values("time", kind="stable")
        df.to_csv(d / name, index=False)
    q = result.queue_ts[result.queue_ts["link_name"] == "r1-r2"]
    pd.DataFrame({"time": q["time"].to_numpy(float) - t0, "packets": q["packets"].to_numpy(),
                  "bytes": q["bytes"].to_numpy()}).to_csv(d / "queue.csv", index=False)
    alg = {"newreno": "reno"}.get(str(result.flows["algorithm"].iloc[0]), str(result.flows["algorithm"].iloc[0]))
    meta = {
        "kernel": "tcplab stand-in", "algorithm": alg, "rate_bps": sc.capacity_bps, "rtt_s": sc.rtt_s,
        "buffer_packets": int(sc.buffer_packets), "duration_s": float(result.duration), "mss": mss,
        "mtu": sc.packet_bytes, "sysctls": {"net.ipv4.tcp_sack": "1"}, "nstat": {"TcpRetransSegs": total_retrans},
        "forwarder": forwarder if forwarder is not None else {
            "late_mean_s": 2e-5, "late_p99_s": 1e-4, "late_max_s": 3e-4, "late_over_1ms": 0, "stalls": [],
            "packets_fwd": int(result.links["packets_out"].iloc[0]) if "packets_out" in result.links else 0,
            "packets_dropped": int(sum(len(x) for x in drops)), "bytes_fwd": 0},
        "t0_monotonic": 0.0,
    }
    if n_flows > 1:
        meta["n_flows"] = n_flows
    (d / "meta.json").write_text(json.dumps(meta, indent=1))
    return d


@pytest.fixture(scope="module")
def reno20():
    """tcplab's side of the default validation (20 Mbit/s, 50 ms, B = BDP, reno, 20 s)."""
    return S.simulate("reno", 20e6, 0.05, 83, 20.0)


# ---------------------------------------------------------------- metric functions, known answers

def test_goodput_of_a_constant_rate_with_irregular_samples():
    rng = np.random.default_rng(1)
    t = np.sort(np.concatenate([[0.0, 20.0], rng.uniform(0, 20, 300)]))
    rate = 12.5e6  # bit/s
    b = t * rate / 8
    assert M.goodput_bps(t, b, 10.0, 20.0) == pytest.approx(rate, rel=1e-12)
    # a stall halves the second half's bytes: the window sees exactly that
    b2 = np.where(t > 15, 15 * rate / 8 + (t - 15) * rate / 16, b)
    assert M.goodput_bps(t, b2, 10.0, 20.0) == pytest.approx(0.75 * rate, rel=1e-12)


def test_time_weighted_mean_is_not_biased_by_dense_sampling():
    # 10 for [0, 1) sampled 100 times, 20 for [1, 2) sampled once: the mean over [0, 2] is 15
    t = np.concatenate([np.linspace(0, 0.99, 100), [1.0]])
    v = np.concatenate([np.full(100, 10.0), [20.0]])
    mn, mean, mx = M.time_weighted_stats(t, v, 0.0, 2.0)
    assert (mn, mx) == (10.0, 20.0) and mean == pytest.approx(15.0)
    # the value holding at the window's start counts from the start
    assert M.time_weighted_stats(t, v, 0.5, 1.5)[1] == pytest.approx(15.0)


def _sawtooth(period: float, w: float, duration: float, dt: float = 0.01, rtt: float = 0.1, seed: int = 0):
    """A Reno-like sawtooth of cwnd between w/2 and w with a known period, and
    its drops: at each peak a burst of drops over one RTT, then a second burst
    one RTT later (the overflow before the sender has reduced), plus jitter."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, dt)
    phase = (t % period) / period
    cwnd = w / 2 + (w / 2) * phase
    drops = []
    for k in range(1, int(duration / period) + 1):
        peak = k * period + rng.uniform(-0.02, 0.02)
        drops += list(peak + np.sort(rng.uniform(0, 0.3 * rtt, 6)))
        drops += list(peak + rtt + np.sort(rng.uniform(0, 0.2 * rtt, 3)))
    return t, cwnd, np.array(drops)


def test_sawtooth_period_of_a_synthetic_sawtooth():
    t, cwnd, drops = _sawtooth(period=3.7, w=160, duration=60)
    gap = 2 * 0.1  # two of the largest round trips
    period, n = M.sawtooth_period(drops, gap, 30.0, 60.0)
    assert n == 8  # peaks at 8 x 3.7 = 29.6 (outside), 33.3, ..., 59.2
    assert period == pytest.approx(3.7, abs=0.02)
    # a gap shorter than the overflow's second burst splits every event in two and halves the "period"
    half, n2 = M.sawtooth_period(drops, 0.5 * 0.1, 30.0, 60.0)
    assert n2 == 2 * n and half < 2.0
    # fewer than two events in the window: not measurable, and the count says why
    p1, n1 = M.sawtooth_period(drops, gap, 56.0, 60.0)
    assert math.isnan(p1) and n1 == 1


def test_cwnd_mean_of_a_linear_sawtooth_is_three_quarters_of_the_peak():
    t, cwnd, _ = _sawtooth(period=2.0, w=200, duration=60, dt=0.001)
    assert M.time_weighted_stats(t, cwnd, 30.0, 60.0)[1] == pytest.approx(150.0, rel=2e-3)


def test_loss_events_cluster_by_gap():
    ev = M.loss_events(np.array([5.0, 1.0, 1.05, 1.3, 5.01, 9.0]), gap=0.25)
    assert list(ev) == [1.0, 1.3, 5.0, 9.0]
    assert len(M.loss_events(np.zeros(0), 0.1)) == 0


def test_first_loss():
    assert M.first_loss(np.array([3.2, 0.75, 1.0])) == 0.75
    assert math.isnan(M.first_loss(np.zeros(0)))


def test_startup_peak_is_before_the_first_reduction_after_the_first_drop():
    t = np.arange(0, 10, 0.01)
    cwnd = np.minimum(10 * 2 ** (t / 0.1), 320.0)  # slow start, capped at 320 from t ~ 0.5 s
    cwnd[t >= 1.05] = 160 + (t[t >= 1.05] - 1.05) * 40  # the reduction at 1.05 s, then growth to ~516
    cwnd[t < 0.3] = np.minimum(cwnd[t < 0.3], 60)  # a dip before the first drop does not count
    cwnd[(t > 0.2) & (t < 0.25)] = 30
    assert cwnd.max() > 400
    assert M.startup_peak(t, cwnd, first_drop=1.0) == 320.0
    # no drops: the run's largest cwnd
    assert M.startup_peak(t, cwnd, first_drop=math.nan) == pytest.approx(cwnd.max())


def test_steady_window():
    assert M.steady_window(60.0) == (30.0, 60.0)
    assert M.steady_window(20.0) == (10.0, 20.0)
    assert M.steady_window(100.0) == (30.0, 100.0)


def test_disturbances_name_lateness_and_stalls():
    quiet = {"forwarder": {"late_p99_s": 2e-4, "late_max_s": 4e-3, "stalls": [[3.0, 0.009]]}}
    assert C.disturbances(quiet) == []
    loud = {"forwarder": {"late_p99_s": 1.5e-3, "late_max_s": 7e-3, "stalls": [[3.0, 0.009], [12.5, 0.025]]}}
    d = C.disturbances(loud)
    assert len(d) == 3
    assert "p99 1.5 ms" in d[0] and "max 7 ms" in d[1] and "25 ms at 12.5 s" in d[2]
    assert "forwarder" in C.disturbances({})[0]


# ---------------------------------------------------------------- the plumbing: identity and perturbation

def test_linux_flow_options():
    import tcplab

    opts = S.linux_flow_options()
    if "profile" in tcplab.Flow.__dataclass_fields__:
        assert opts == {"profile": "linux"}
    else:
        assert opts == {"init_cwnd": 10, "delayed_ack": True, "min_rto": 0.2, "rto_mode": "linux"}


def test_simulate_builds_the_kernel_path(reno20):
    sc = reno20.scenario
    f = sc.dumbbell.flow(0)
    assert (sc.n_flows, sc.capacity_bps, sc.rtt_s, sc.buffer_packets) == (1, 20e6, 0.05, 83)
    assert sc.access_delays == [(0.0, 0.0)] and sc.access_rate_bps == 100 * 20e6
    assert (f.algorithm, f.params, f.recovery, f.packet_size, f.header_size, f.ack_size, f.accounting) == (
        "newreno", {"mode": "linux"}, "sack", 1500, 52, 52, "payload")
    cub = S.simulate("cubic", 20e6, 0.05, 8, 2.0).scenario.dumbbell.flow(0)
    assert (cub.algorithm, cub.params) == ("cubic", {"variant": "linux", "hystart": True})
    # the run itself: one flow, drops traced, every ~10 ms sampled
    assert len(reno20.drop_trace) > 0 and np.diff(reno20.flow_ts["time"][:3]).round(6).tolist() == [0.01, 0.01]


def test_kernel_cc_params():
    hz = S.kernel_hz()
    assert hz is None or 24 <= hz <= 10000
    assert S.kernel_cc_params("reno") == {}
    assert S.kernel_cc_params("cubic") == ({"hz": hz} if hz else {})
    if hz:
        f = S.simulate("cubic", 20e6, 0.05, 8, 1.0, cc_params=S.kernel_cc_params("cubic")).scenario.dumbbell.flow(0)
        assert f.params == {"variant": "linux", "hystart": True, "hz": hz}


def test_identical_inputs_give_zero_error(reno20, tmp_path):
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel")
    df = C.compare(kdir, reno20)
    assert list(df["metric"]) == [m for m, _ in M.METRICS]
    finite = df[np.isfinite(df["kernel"].astype(float))]
    # The 20 s run's window may hold a single loss event, and Reno leaves slow start by a loss (no HyStart).
    assert len(finite) >= len(df) - 2
    assert math.isnan(df.set_index("metric").loc["slowstart_exit_cwnd", "kernel"])
    assert (finite["rel_error"].abs() < 1e-12).all(), df
    assert (df["kernel"].astype(float).fillna(-1) == df["tcplab"].astype(float).fillna(-1)).all()
    judged = df[df["ok"].notna()]
    assert len(judged) >= 4 and judged["ok"].all(), df
    # the values themselves are those of the run
    goodput = df.set_index("metric").loc["goodput_bps", "tcplab"]
    assert goodput == pytest.approx(reno20.goodput(10.0, 20.0).iloc[0], rel=2e-3)
    assert df.set_index("metric").loc["drops", "tcplab"] == len(reno20.drop_trace)


def test_scaled_cwnd_fails_the_cwnd_mean_row(reno20, tmp_path):
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel", cwnd_scale=1.2)
    df = C.compare(kdir, reno20).set_index("metric")
    assert df.loc["cwnd_mean", "ok"] == False  # noqa: E712  (20 % > 5 %)
    assert df.loc["cwnd_mean", "rel_error"] == pytest.approx(1 / 1.2 - 1, rel=1e-9)
    assert df.loc["startup_peak_cwnd", "ok"] == False  # noqa: E712  (20 % > 10 %)
    assert df.loc["goodput_bps", "ok"] == True  # noqa: E712  (untouched)


def test_later_drops_fail_the_first_loss_row(reno20, tmp_path):
    within = C.compare(_kernel_dir_from_result(reno20, tmp_path / "k1", drop_shift=0.9 * 0.05), reno20)
    beyond = C.compare(_kernel_dir_from_result(reno20, tmp_path / "k2", drop_shift=2 * 0.05), reno20)
    assert within.set_index("metric").loc["first_loss_s", "ok"] == True  # noqa: E712
    assert beyond.set_index("metric").loc["first_loss_s", "ok"] == False  # noqa: E712


def test_report_files_and_page(reno20, tmp_path):
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel", forwarder={
        "late_mean_s": 1e-4, "late_p99_s": 2.5e-3, "late_max_s": 9e-3, "late_over_1ms": 40,
        "stalls": [[4.2, 0.031]], "packets_fwd": 1, "packets_dropped": 0, "bytes_fwd": 0})
    out = tmp_path / "report"
    df = R.write_report(out, kdir, reno20, "reno, 20 Mbit/s, RTT 50 ms, B = 83 packets, 20 s")
    for name in ("fidelity.csv", "report.html", "cwnd.png", "queue.png", "srtt.png", "goodput.png", "startup.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    csv = pd.read_csv(out / "fidelity.csv")
    assert list(csv["metric"]) == list(df["metric"]) and np.allclose(csv["kernel"], df["kernel"], equal_nan=True)
    page = (out / "report.html").read_text()
    assert "The kernel run was disturbed" in page and "p99 2.5 ms" in page and "31 ms at 4.2 s" in page
    assert page.count("data:image/png;base64,") == 5
    for m, _ in M.METRICS:
        assert f">{m}<" in page


def test_report_page_in_chromium(reno20, tmp_path):
    from test_report import check_page

    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel")
    R.write_report(tmp_path / "r", kdir, reno20, "reno 20 s")
    dom = check_page(str(tmp_path / "r" / "report.html"), tmp_path, min_images=5)
    assert "Kernel run undisturbed" in dom


def test_kernel_dir_errors_name_the_file(reno20, tmp_path):
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel")
    (kdir / "rx.csv").unlink()
    with pytest.raises(S.KernelDirError, match="rx.csv: missing"):
        C.compare(kdir, reno20)
    pd.DataFrame({"time": [0.0]}).to_csv(kdir / "rx.csv", index=False)
    with pytest.raises(S.KernelDirError, match="rx.csv: missing column.*bytes"):
        C.compare(kdir, reno20)


# ---------------------------------------------------------------- several flows

@pytest.fixture(scope="module")
def reno20x2():
    """tcplab's side of a two-flow validation (20 Mbit/s, 50 ms, B = BDP, reno, 20 s)."""
    return S.simulate("reno", 20e6, 0.05, 83, 20.0, n_flows=2)


def test_jain_index_known_values():
    assert C.jain_index([5.0, 5.0]) == 1.0
    assert C.jain_index([1.0, 0.0, 0.0, 0.0]) == 0.25
    assert C.jain_index([3.0, 1.0]) == pytest.approx(16 / 20)
    assert math.isnan(C.jain_index([])) and math.isnan(C.jain_index([0.0, 0.0]))
    assert math.isnan(C.jain_index([1.0, math.nan]))


def test_two_flows_identical_inputs_give_zero_error(reno20x2, tmp_path):
    kdir = _kernel_dir_from_result(reno20x2, tmp_path / "kernel")
    df = C.compare_flows(kdir, reno20x2)
    assert list(df["flow"].unique()) == ["all", "0", "1"]
    agg = df[df["flow"] == "all"].set_index("metric")
    assert "jain_index" in agg.index and "goodput_bps" in agg.index
    finite = df[np.isfinite(df["kernel"].astype(float))]
    assert (finite["rel_error"].abs() < 1e-12).all(), df
    # Only the aggregate rows are judged, and with identical inputs every judged one holds.
    judged = df[df["ok"].notna()]
    assert set(judged["flow"]) == {"all"} and "goodput_bps" in set(judged["metric"]) and judged["ok"].all(), df
    # The aggregate is the sum of the flows, and Jain's index is of the flows' goodputs.
    per = df[df["metric"] == "goodput_bps"].set_index("flow")["tcplab"]
    assert per["all"] == pytest.approx(per["0"] + per["1"], rel=1e-9)
    assert per["0"] > 0 and per["1"] > 0
    assert agg.loc["jain_index", "tcplab"] == pytest.approx(C.jain_index([per["0"], per["1"]]))
    assert 0.5 < agg.loc["jain_index", "kernel"] <= 1.0
    drops = df[df["metric"] == "drops"].set_index("flow")["kernel"]
    assert drops["all"] == drops["0"] + drops["1"] == len(reno20x2.drop_trace[reno20x2.drop_trace["packet"] == "data"])


def test_flow_rows_are_the_flows_own(reno20x2, tmp_path):
    kdir = _kernel_dir_from_result(reno20x2, tmp_path / "kernel")
    for i in range(2):
        k, s = S.kernel_side(kdir, i), S.sim_side(reno20x2, i)
        assert np.array_equal(k.drops, s.drops) and np.allclose(k.rx["bytes"], s.rx["bytes"])
    assert not np.array_equal(S.kernel_side(kdir, 0).drops, S.kernel_side(kdir, 1).drops)
    with pytest.raises(S.KernelDirError, match="no flow 2"):
        S.kernel_side(kdir, 2)
    # A drop of no flow (an unattributed packet) belongs to neither flow of a multi-flow run.
    drops = pd.read_csv(kdir / "drops.csv")
    extra = pd.DataFrame({"time": [1.0], "seq": [""], "payload_bytes": [1448], "queue_packets": [83], "flow": [None]})
    pd.concat([drops, extra]).to_csv(kdir / "drops.csv", index=False)
    assert len(S.kernel_side(kdir, 0).drops) + len(S.kernel_side(kdir, 1).drops) == len(drops)


def test_two_flow_report(reno20x2, tmp_path):
    kdir = _kernel_dir_from_result(reno20x2, tmp_path / "kernel")
    out = tmp_path / "report"
    df = R.write_report(out, kdir, reno20x2, "2 flows of reno, 20 s")
    csv = pd.read_csv(out / "fidelity.csv", dtype={"flow": str})
    assert list(csv["flow"]) == list(df["flow"]) and list(csv["metric"]) == list(df["metric"])
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 6 and ">jain_index<" in page
    assert (out / "cwnd_flows.png").stat().st_size > 0
    text = R.table_text(df)
    assert text.splitlines()[0].split()[:2] == ["flow", "metric"]


# ---------------------------------------------------------------- the command

def _toml(tmp_path, body: str) -> str:
    p = tmp_path / "case.toml"
    p.write_text(textwrap.dedent(body))
    return str(p)


GOOD = """
    [dumbbell]
    n_flows = 1
    bottleneck_rate = "20Mbps"
    rtt = "50ms"
    buffer = "1BDP"
    algorithm = "reno"
    [run]
    duration = "20s"
"""


def test_case_from_toml_and_flags_agree(tmp_path):
    a = F.case_from_file(_toml(tmp_path, GOOD))
    b = F.case_from_flags("reno", "20Mbps", "50ms", "1BDP", "20s")
    assert (a.algorithm, a.rate_bps, a.rtt_s, a.buffer_packets, a.duration_s) == \
           (b.algorithm, b.rate_bps, b.rtt_s, b.buffer_packets, b.duration_s) == ("reno", 20e6, 0.05, 83, 20.0)
    assert F.case_from_flags("cubic", "50Mbps", "100ms", "0.1BDP").buffer_packets == 42
    assert F.case_from_flags("cubic", "50Mbps", "100ms").duration_s == 60.0
    two = F.case_from_file(_toml(tmp_path, GOOD.replace("n_flows = 1", "n_flows = 2")))
    assert two.n_flows == 2 == F.case_from_flags("reno", "20Mbps", "50ms", flows="2").n_flows
    assert a.n_flows == b.n_flows == 1 and "2 flows of reno" in two.describe()


@pytest.mark.parametrize("edit, field, words", [
    ('loss = 0.01', "dumbbell.loss", "no random loss"),
    ('access_delay = "5ms"', "dumbbell.access_delay", "no access links"),
    ('bufer = 10', "dumbbell.bufer", "did you mean 'buffer'"),
    ('recovery = "newreno"', "dumbbell.recovery", "SACK"),
    ('packet_size = 9000', "dumbbell.packet_size", "MTU is 1500"),
    ('[dumbbell.flow_options]\ndelayed_ack = false', "dumbbell.flow_options", "Linux profile"),
])
def test_validate_rejects_what_the_kernel_path_cannot_do(tmp_path, capsys, edit, field, words):
    body = GOOD.replace('algorithm = "reno"', 'algorithm = "reno"\n' + edit)
    rc = main(["validate", _toml(tmp_path, textwrap.dedent(body))])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith(f"error: {field}: ") and words in err and "Traceback" not in err


@pytest.mark.parametrize("args, words", [
    (["--algorithm", "vegas", "--rate", "20Mbps", "--rtt", "50ms"],
     "error: --algorithm: the kernel side runs only reno, cubic and bbr"),
    (["--algorithm", "bbr", "--rate", "20Mbps", "--rtt", "50ms", "--flows", "2"], "error: --flows: bbr is validated"),
    (["--algorithm", "reno", "--rate", "20Mbsp", "--rtt", "50ms"], "error: --rate: cannot parse"),
    (["--algorithm", "reno", "--rtt", "50ms"], "error: --rate: missing"),
    (["--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--buffer", "0"], "error: --buffer:"),
    (["--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--duration", "0.05s"], "error: --duration:"),
    ([], "give a scenario file or --algorithm"),
])
def test_validate_flag_errors(capsys, args, words):
    rc = main(["validate", *args])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and "Traceback" not in err, err


def test_validate_n_flows_and_file_plus_flags(tmp_path, capsys):
    rc = main(["validate", _toml(tmp_path, GOOD.replace("n_flows = 1", "n_flows = 5"))])
    err = capsys.readouterr().err
    assert rc == 2 and "error: dumbbell.n_flows: tcplab validate runs 1 to 4 flows" in err and "got 5" in err, err
    assert "Traceback" not in err
    rc = main(["validate", _toml(tmp_path, GOOD), "--rate", "10Mbps"])
    assert rc == 2 and "either a scenario file or the flags" in capsys.readouterr().err


def _fake_kernel(monkeypatch, check=None, run=None):
    """Install a stand-in tcplab.validate.kernel."""
    import tcplab.validate

    mod = types.ModuleType("tcplab.validate.kernel")
    mod.check_environment = lambda algorithm=None: (check or (lambda: None))()  # validate names the algorithm
    mod.run_kernel = run or (lambda *a, **k: (_ for _ in ()).throw(AssertionError("not expected")))
    monkeypatch.setitem(sys.modules, "tcplab.validate.kernel", mod)
    monkeypatch.setattr(tcplab.validate, "kernel", mod, raising=False)
    return mod


def test_validate_without_the_environment_stops_cleanly(monkeypatch, tmp_path, capsys):
    _fake_kernel(monkeypatch, check=lambda: "needs root (running as uid 1000)")
    rc = main(["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--out", str(tmp_path / "o")])
    cap = capsys.readouterr()
    assert rc == EXIT_UNAVAILABLE == 3
    assert cap.err.strip() == "tcplab validate: cannot run the kernel side: needs root (running as uid 1000)"
    assert not (tmp_path / "o").exists()


def test_validate_end_to_end_with_a_stand_in_kernel(monkeypatch, tmp_path, capsys):
    calls = []

    def run_kernel(algorithm, rate_bps, rtt_s, buffer_packets, duration_s, out_dir, *, mss=1448,
                   sample_interval=0.01, n_flows=1):
        calls.append((algorithm, rate_bps, rtt_s, buffer_packets, duration_s))
        stand_in = S.simulate(algorithm, rate_bps, rtt_s, buffer_packets, duration_s, n_flows=n_flows)
        return _kernel_dir_from_result(stand_in, out_dir)

    _fake_kernel(monkeypatch, run=run_kernel)
    out = tmp_path / "o"
    rc = main(["validate", _toml(tmp_path, GOOD), "--out", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert calls == [("reno", 20e6, 0.05, 83, 20.0)]
    for m, _ in M.METRICS:
        assert m in cap.out
    assert "FAIL" not in cap.out and "targets met" in cap.out
    assert (out / "report.html").is_file() and (out / "fidelity.csv").is_file()


@pytest.mark.parametrize("flows, words", [
    ("5", "error: --flows: tcplab validate runs 1 to 4 flows"),
    ("0", "error: --flows: tcplab validate runs 1 to 4 flows"),
    ("two", "error: --flows: must be an integer from 1 to 4"),
])
def test_validate_refuses_bad_flow_counts(capsys, flows, words):
    rc = main(["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--flows", flows])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and "Traceback" not in err, err


def test_validate_two_flows_with_a_stand_in_kernel(monkeypatch, tmp_path, capsys):
    calls = []

    def run_kernel(algorithm, rate_bps, rtt_s, buffer_packets, duration_s, out_dir, *, n_flows=1, **kw):
        calls.append(n_flows)
        return _kernel_dir_from_result(S.simulate(algorithm, rate_bps, rtt_s, buffer_packets, duration_s,
                                                  n_flows=n_flows), out_dir)

    _fake_kernel(monkeypatch, run=run_kernel)
    out = tmp_path / "o"
    rc = main(["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--duration", "10s",
               "--flows", "2", "--out", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert calls == [2]
    assert "2 flows of reno" in cap.out and "jain_index" in cap.out and "FAIL" not in cap.out
    csv = pd.read_csv(out / "fidelity.csv", dtype={"flow": str})
    assert sorted(set(csv["flow"])) == ["0", "1", "all"]
    assert (out / "cwnd_flows.png").is_file()


def test_validate_kernel_failure_is_one_line(monkeypatch, tmp_path, capsys):
    def run_kernel(*a, **k):
        raise RuntimeError("forwarder exited with status 1")

    _fake_kernel(monkeypatch, run=run_kernel)
    rc = main(["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and "error: tcplab validate: the kernel run failed: forwarder exited with status 1" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- the real kernel

def _kernel_or_skip():
    try:
        from tcplab.validate import kernel
    except ImportError as e:
        pytest.skip(f"the kernel side (tcplab.validate.kernel) is not in this build: {e}")
    if not hasattr(kernel, "check_environment"):
        pytest.skip("tcplab.validate.kernel has no check_environment()")
    reason = kernel.check_environment()
    if reason:
        pytest.skip(f"the kernel side cannot run here: {reason}")
    return kernel


def test_short_validation_on_the_kernel(tmp_path, capsys):
    _kernel_or_skip()
    out = tmp_path / "v"
    rc = main(["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50ms", "--buffer", "1BDP",
               "--duration", "20s", "--out", str(out)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    df = pd.read_csv(out / "fidelity.csv")
    assert list(df["metric"]) == [m for m, _ in M.METRICS]
    # NaN only where a 20 s Reno run has nothing to measure: one loss event in the window, no HyStart exit.
    for side in ("kernel", "tcplab"):
        assert set(df.loc[df[side].isna(), "metric"]) <= {"sawtooth_period_s", "slowstart_exit_cwnd"}, df
    # The two steadiest of the issue's targets hold even in a run the host disturbed (measured here
    # while other builds ran: goodput within 0.2 %, cwnd mean within 1.5 %).
    rows = df.set_index("metric")
    assert rows.loc["goodput_bps", "ok"] and rows.loc["cwnd_mean", "ok"], df
    for name in ("report.html", "cwnd.png", "queue.png", "kernel/meta.json"):
        assert (out / name).is_file(), name


def _tcplab_has(algorithm: str) -> bool:
    """Whether this tcplab runs ``algorithm`` (bbr joined after reno and cubic)."""
    from tcplab.errors import ScenarioError

    try:
        S.sim_scenario(algorithm, 20e6, 0.05, 83, 1.0)
    except ScenarioError:
        return False
    return True


#: The issue's grid; bbr's four cases join where this tcplab has bbr.
#: TCPLAB_VALIDATE_GRID_ALGORITHMS=bbr (comma-separated) runs those algorithms'
#: cases only and replaces only their rows of the CSV.
GRID_ALGORITHMS = [a for a in os.environ.get("TCPLAB_VALIDATE_GRID_ALGORITHMS", "reno,cubic,bbr").split(",")
                   if a and (a != "bbr" or _tcplab_has("bbr"))]
GRID = [(alg, rate, rtt, frac) for rate, rtt in ((20e6, 0.05), (50e6, 0.1)) for frac in (1.0, 0.1)
        for alg in GRID_ALGORITHMS]


@pytest.mark.slow
def test_kernel_grid_meets_the_targets(tmp_path):
    """The issue's grid, 60 s each; the table goes to docs/validation-kernel-grid.csv."""
    kernel = _kernel_or_skip()
    rows, failures = [], []
    for alg, rate, rtt, frac in GRID:
        b = max(1, int(round(frac * rate * rtt / (8 * 1500))))
        case = F.Case(alg, rate, rtt, b, 60.0)
        where = tmp_path / f"{alg}-{rate / 1e6:g}-{rtt * 1e3:g}-{b}"
        kdir = Path(kernel.run_kernel(alg, rate, rtt, b, 60.0, where / "kernel"))
        dist = C.disturbances(S.read_meta(kdir))
        print(f"{alg} {rate / 1e6:g} Mbit/s {rtt * 1e3:g} ms B = {b}: {'; '.join(dist) or 'undisturbed'}")
        if dist:  # one retry: a disturbed kernel run measures the machine, not the model
            kdir = Path(kernel.run_kernel(alg, rate, rtt, b, 60.0, where / "kernel-retry"))
            dist = C.disturbances(S.read_meta(kdir))
        res = S.simulate(alg, rate, rtt, b, 60.0, cc_params=S.kernel_cc_params(alg))
        df = R.write_report(where, kdir, res, case.describe())
        df.insert(0, "case", f"{alg} {rate / 1e6:g}Mbps {rtt * 1e3:g}ms {frac:g}BDP")
        df["disturbed"] = "; ".join(dist)
        rows.append(df)
        for _, r in df.iterrows():
            if r["ok"] is False or r["ok"] == False:  # noqa: E712
                failures.append(f"{r['case']}: {r['metric']} kernel {r['kernel']:.6g} tcplab {r['tcplab']:.6g} "
                                f"({r['rel_error'] * 100:+.2f} %){' [disturbed]' if dist else ''}")
    GRID_CSV.parent.mkdir(parents=True, exist_ok=True)
    table = pd.concat(rows)
    if GRID_CSV.is_file():  # keep the rows of the cases not run now
        old = pd.read_csv(GRID_CSV)
        table = pd.concat([old[~old["case"].isin(set(table["case"]))], table])
    table.to_csv(GRID_CSV, index=False)
    assert not failures, "\n".join(failures)


def test_window_ends_where_the_kernel_samples_end(reno20, tmp_path):
    """The kernel's clock starts at t0, after the handshake, so its samples may
    stop before the nominal duration: the window must not reach past them."""
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel")
    rx = pd.read_csv(kdir / "rx.csv")
    rx[rx["time"] <= 18.0].to_csv(kdir / "rx.csv", index=False)
    df = C.compare(kdir, reno20)
    start, end = df.attrs["window"]
    assert end == pytest.approx(18.0, abs=0.011) and start == pytest.approx(end / 2)
    assert abs(df.set_index("metric").loc["goodput_bps", "rel_error"]) < 1e-12


def test_slowstart_exit_is_the_ssthresh_hystart_set_before_any_loss():
    t = np.arange(0.0, 2.0, 0.01)
    inf = float(M.INFINITE_SSTHRESH)
    ss = np.where(t < 0.66, inf, 532.0)
    assert M.slowstart_exit(t, ss, first_drop=2.1) == 532.0
    assert math.isnan(M.slowstart_exit(t, ss, first_drop=0.5))  # the loss came first
    assert math.isnan(M.slowstart_exit(t, np.full_like(t, inf), first_drop=math.nan))
    meta = {"nstat": {"TcpExtTCPHystartTrainDetect": 1, "TcpExtTCPHystartTrainCwnd": 533,
                      "TcpExtTCPHystartDelayDetect": 0}}
    assert M.hystart_note(meta) == "kernel: ACK train at cwnd 533"
    assert M.hystart_note({"nstat": {"TcpExtTCPHystartTrainDetect": 0}}) == "kernel: no HyStart exit"
    assert M.hystart_note({"algorithm": "reno", "nstat": {"TcpExtTCPHystartTrainDetect": 0}}) == ""


# ---------------------------------------------------------------- bbr

def _bbr_series(starts, *, end=60.0, dt=0.01, dur=0.25, mode=True, first_sample_mode3=False):
    """A sampled BBR-like run: cwnd 180 with dips to 4 of ``dur`` s at ``starts``;
    the mode (2, 3 in the dips) when ``mode``, else NaN."""
    t = np.round(np.arange(0.0, end, dt), 6)
    inside = np.zeros(len(t), bool)
    for a in starts:
        inside |= (t >= a) & (t < a + dur)
    cwnd = np.where(inside, 4.0, 180.0)
    m = np.where(inside, 3.0, 2.0) if mode else np.full(len(t), math.nan)
    if first_sample_mode3:  # the kernel's first sample, before bbr set its gains: mode 3, cwnd 10
        m[0], cwnd[0] = 3.0, 10.0
    return t, cwnd, m


def test_probe_rtt_episodes_from_the_mode_or_the_cwnd():
    starts = [10.0, 20.3, 30.6]
    t, c, m = _bbr_series(starts, first_sample_mode3=True)
    eps = M.probe_rtt_episodes(t, c, m)
    assert [round(a, 2) for a, _ in eps] == starts  # the first sample (mode 3, cwnd 10) is not an episode
    st = M.probe_rtt_stats(eps)
    assert st["probe_rtt_episodes"] == 3 and st["probe_rtt_interval_s"] == pytest.approx(10.3)
    assert st["probe_rtt_duration_s"] == pytest.approx(0.25)
    # No mode recorded: cwnd <= 4 alone finds the same episodes.
    t2, c2, m2 = _bbr_series(starts, mode=False)
    assert [round(a, 2) for a, _ in M.probe_rtt_episodes(t2, c2, m2)] == starts
    # A sample missed by the sampler inside an episode does not split it.
    keep = ~np.isclose(t, 20.4)
    assert len(M.probe_rtt_episodes(t[keep], c[keep], m[keep])) == 3
    # Fewer than two episodes: no interval.
    assert math.isnan(M.probe_rtt_stats(eps[:1])["probe_rtt_interval_s"])
    assert M.probe_rtt_stats([])["probe_rtt_episodes"] == 0


def test_probe_rtt_cadence_verdicts():
    k = [(10.0, 10.2), (20.2, 20.4), (30.4, 30.6)]
    near = [(10.5, 10.7), (21.0, 21.2), (31.5, 31.7)]  # intervals 10.5 s against 10.2 s
    far = [(10.0, 10.2), (22.0, 22.2), (34.0, 34.2)]  # 12.0 s
    assert M.probe_rtt_cadence(k, near)[0] is True
    ok, note = M.probe_rtt_cadence(k, far)
    assert ok is False and "mean intervals |diff| 1.80 s" in note and "10.00, 20.20, 30.40" in note
    assert M.probe_rtt_cadence(k, [])[0] is False
    assert "no ProbeRTT on the tcplab side" in M.probe_rtt_cadence(k, [])[1]
    # One episode on a side: the starts must pair within 1 s.
    assert M.probe_rtt_cadence([(10.0, 10.2)], [(10.8, 11.0)])[0] is True
    assert M.probe_rtt_cadence([(10.0, 10.2)], [(11.5, 11.7)])[0] is False
    pairs, unpaired = M.match_starts([10.0, 20.0], [20.4, 10.3, 40.0], 1.0)
    assert pairs == [(10.0, 10.3), (20.0, 20.4)] and unpaired == 1


def _bbr_sides(k_starts, s_starts, *, buffer_packets=8, s_srtt=0.055, s_rate=19e6, s_retrans=(50, 10000)):
    """A kernel and a tcplab :class:`Side` of BBR-like runs (60 s, 20 Mbit/s, 50 ms)."""
    meta = {"algorithm": "bbr", "rate_bps": 20e6, "rtt_s": 0.05, "buffer_packets": buffer_packets,
            "duration_s": 60.0, "mtu": 1500, "forwarder": {}}

    def side(label, starts, srtt, rate, retrans):
        t, c, m = _bbr_series(starts)
        ts = pd.DataFrame({"time": t, "cwnd": c, "srtt": np.full(len(t), srtt), "ssthresh": np.full(len(t), 2**31 - 1),
                           "mode": m})
        rx = pd.DataFrame({"time": t, "bytes": t * rate / 8})
        q = pd.DataFrame({"time": t, "packets": np.zeros(len(t))})
        return S.Side(label, ts, rx, np.array([0.3, 0.31, 40.0]), q, float(retrans[0]), 60.0,
                      {"meta": meta, "data_segments_sent": float(retrans[1])})

    return side("kernel", k_starts, 0.055, 19e6, (50, 10000)), side("tcplab", s_starts, s_srtt, s_rate, s_retrans)


def test_bbr_rows_identical_sides_meet_every_target():
    k, s = _bbr_sides([10.0, 20.3, 30.6, 40.9, 51.2], [10.0, 20.3, 30.6, 40.9, 51.2])
    df = C._compare_sides(k, s).set_index("metric")
    assert list(df.index) == [m for m, _ in M.BBR_METRICS]
    assert "sawtooth_period_s" not in df.index and "slowstart_exit_cwnd" not in df.index
    judged = df[df["ok"].notna()]
    assert sorted(judged.index) == ["goodput_bps", "probe_rtt_interval_s", "retrans_rate", "srtt_mean_s"]
    assert judged["ok"].all(), df
    assert df.loc["retrans_rate", "kernel"] == pytest.approx(0.005)
    assert df.loc["probe_rtt_episodes", "kernel"] == 5
    assert df.loc["probe_rtt_interval_s", "kernel"] == pytest.approx(10.3)
    assert df.loc["goodput_bps", "kernel"] == pytest.approx(19e6, rel=1e-3)


def test_bbr_rows_fail_where_the_issue_says():
    k, s = _bbr_sides([10.0, 20.3, 30.6], [10.0, 22.0, 34.0], s_srtt=0.062, s_rate=18.2e6, s_retrans=(70, 10000))
    df = C._compare_sides(k, s).set_index("metric")
    assert not df.loc["srtt_mean_s", "ok"]  # +12.7 %
    assert not df.loc["goodput_bps", "ok"]  # -4.2 %
    assert not df.loc["probe_rtt_interval_s", "ok"]  # 12.0 s against 10.3 s
    assert not df.loc["retrans_rate", "ok"]  # +40 %
    # At B = BDP the retransmission rate is reported, not judged.
    k, s = _bbr_sides([10.0], [10.2], buffer_packets=83, s_retrans=(70, 10000))
    df = C._compare_sides(k, s).set_index("metric")
    assert df.loc["retrans_rate", "ok"] is None and "judged only at B <= 0.5 BDP" in df.loc["retrans_rate", "note"]
    assert df.loc["probe_rtt_interval_s", "ok"]  # one episode each, starts 0.2 s apart


def test_bbr_kernel_dir_is_read_with_its_mode_and_segments(reno20, tmp_path):
    """A kernel directory of a bbr run (written from a tcplab run, bbr's columns added):
    the mode and data_segs_out columns reach the Side, and the rows are bbr's."""
    kdir = _kernel_dir_from_result(reno20, tmp_path / "kernel")
    ti = pd.read_csv(kdir / "tcp_info.csv")
    ti["bbr_mode"] = 2
    dip = (ti["time"] >= 10.0) & (ti["time"] < 10.25)
    ti.loc[dip, "bbr_mode"], ti.loc[dip, "cwnd"] = 3, 4
    ti["data_segs_out"] = np.linspace(0, 30000, len(ti)).round()
    ti.to_csv(kdir / "tcp_info.csv", index=False)
    meta = json.loads((kdir / "meta.json").read_text())
    meta["algorithm"] = "bbr"
    (kdir / "meta.json").write_text(json.dumps(meta))
    k = S.kernel_side(kdir)
    assert k.extra["data_segments_sent"] == 30000 and set(k.ts["mode"].unique()) == {2.0, 3.0}
    assert [round(a, 2) for a, _ in M.side_episodes(k)] == [round(float(ti.loc[dip, "time"].iloc[0]), 2)]
    df = C.compare(kdir, reno20)  # tcplab's reno has no ProbeRTT: the cadence fails, naming the side
    rows = df.set_index("metric")
    assert list(df["metric"]) == [m for m, _ in M.BBR_METRICS]
    assert rows.loc["probe_rtt_interval_s", "ok"] is False or rows.loc["probe_rtt_interval_s", "ok"] == False  # noqa: E712
    assert "no ProbeRTT on the tcplab side" in rows.loc["probe_rtt_interval_s", "note"]
    assert rows.loc["retrans_rate", "kernel"] == pytest.approx(reno20.flows["retransmits"].iloc[0] / 30000)


def test_bbr_kernel_columns():
    from tcplab.validate import endpoints, kernel

    assert [endpoints.bbr_mode(p, c) for p, c in ((739, 739), (88, 739), (320, 512), (192, 512), (256, 512),
                                                   (256, 256))] == [0, 1, 2, 2, 2, 3]
    import struct
    raw = struct.pack("=5I", 2_500_000, 0, 50_123, 320, 512)
    assert endpoints.parse_bbr_info(raw) == {"bbr_bw": 2_500_000, "bbr_min_rtt_us": 50_123, "bbr_pacing_gain": 320,
                                             "bbr_cwnd_gain": 512, "bbr_mode": 2}
    assert endpoints.parse_bbr_info(b"") is None
    q = "qdisc pfifo_fast 0: root refcnt 2 bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
    assert kernel.pacing_info("bbr", q) == {"qdisc": q, "fq": False,
                                            "paced_by": "TCP's internal pacing (no fq on the sender's device)"}
    assert kernel.pacing_info("bbr", "qdisc fq 8001: root refcnt 2 limit 10000p")["fq"] is True
