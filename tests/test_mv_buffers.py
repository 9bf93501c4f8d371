"""mv-buffers reproduction: the quick items in the default suite (structure,
physics, determinism), the paper-scale Fig. 4 and Fig. 8 as slow tests
(NewReno against the saw-tooth model, Westwood+ near full utilization, the
200-flow bounds)."""

import math

import pandas as pd
import pytest

from tcplab import analysis as an
from tcplab.experiments import mv_buffers as mv
from tcplab.experiments import reproduce
from tcplab.experiments.runner import run_all


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("mvbq")
    made = reproduce("mv-buffers", quick=True, out=str(out), verbose=False)
    return out, made


def test_items_are_registered_and_unknown_items_named():
    from tcplab.experiments import items

    assert items("mv-buffers") == ["fig4", "fig5", "fig8", "real"]
    with pytest.raises(ValueError, match="did you mean 'fig8'"):
        reproduce("mv-buffers", items=["fig9"], quick=True)


def test_fig4_structure(quick):
    out, made = quick
    df = made["fig4"]["tables"]["fig4"]
    setup = mv.Setup(True)
    assert len(df) == 2 * 2 * len(setup.f4_buffers)
    assert set(df.protocol) == {"NewReno", "Westwood+"} and set(df.rtt_ms) == {100, 50}
    assert sorted(df[df.rtt_ms == 100].buffer_packets.unique()) == [33, 167, 333, 500]
    assert {"utilization", "analytic", "rel_error", "within_2pct", "sawtooth_reno", "idle_model_westwood"} <= set(
        df.columns)
    assert len(pd.read_csv(out / "fig4.csv")) == len(df)
    assert "QUICK MODE" in (out / "fig4.md").read_text()
    for f in ("fig4.png", "fig5_newreno.png", "fig5_westwood.png", "fig8.png", "real.png", "index.md"):
        assert (out / f).stat().st_size > 1000, f
    assert "QUICK MODE" in (out / "index.md").read_text()


def test_quick_runs_obey_physics(quick):
    _, made = quick
    f4 = made["fig4"]["tables"]["fig4"]
    assert ((f4.utilization_link > 0.5) & (f4.utilization_link <= 1 + 1e-9)).all()
    # Whole-cycle goodput is exact up to the 50 ms sampling at the cycle edges.
    assert (f4.utilization <= 1 + 1e-3).all()
    f8 = made["fig8"]["tables"]["fig8"]
    assert ((f8.utilization > 0) & (f8.utilization <= 1 + 1e-9)).all()
    # In-order goodput over a window exceeds C by the data the receivers held behind holes when it opened
    # (a recovery straddling the window's start); that data is inside the senders' flight, at most twice the
    # pipe plus the buffer (the flight at an overflow, doubled by at most one round of slow start before the
    # loss is seen). Seed 2 of the quick Fig. 8 reads 202.9 Mbit/s over its 15 s window so.
    setup = mv.Setup(True)
    held = 2 * (200e6 * f8.mean_path_rtt_ms / 1e3 / 12000 + f8.buffer_packets) * 12000
    assert (f8.total_goodput_mbps * 1e6 <= 200e6 + held / (setup.f8_duration - setup.f8_measure_start)).all()
    assert ((f8.jain_index > 0) & (f8.jain_index <= 1 + 1e-12)).all()
    real = made["real"]["tables"]["real"]
    assert {"flow1_mbps", "flow2_mbps", "flow3_mbps"} <= set(real.columns)
    held = 2 * (1e9 * 0.160 / 12000 + real.buffer_packets) * 12000  # path RTT at most 120 + 4 x 10 ms
    assert (real.total_goodput_mbps * 1e6 <= 1e9 + held / (setup.real_duration - setup.real_measure_start)).all()
    assert (real.seeds == 2).all() and (f8.seeds == 2).all()


def test_quick_newreno_already_follows_the_sawtooth(quick):
    """Even the shortened runs (whole cycles after 150 s) are within 2 % of
    the saw-tooth model; Westwood+ is near full utilization."""
    _, made = quick
    f4 = made["fig4"]["tables"]["fig4"]
    nr = f4[f4.protocol == "NewReno"]
    assert (nr.rel_error.abs() < 0.02).all(), nr[["rtt_ms", "buffer_bdp", "utilization", "analytic"]]
    ww = f4[f4.protocol == "Westwood+"]
    assert (ww.utilization > 0.99).all()


def test_fig8_bounds_columns(quick):
    _, made = quick
    f8 = made["fig8"]["tables"]["fig8"]
    nr = f8[f8.protocol == "NewReno"].sort_values(["rtt_ms", "buffer_bdp"])
    for rtt in (100, 300):
        b = nr[nr.rtt_ms == rtt].bound.tolist()
        assert b == sorted(b) and 0 < b[0] < 1
    ww = f8[f8.protocol == "Westwood+"]
    assert (ww.bound == 1.0).all() and (ww.westwood_bound_printed == 1.0).all()
    # the mean path RTT includes the uniform (0, 10 ms) access delays: 4 x 5 ms on average
    assert 105 < f8[f8.rtt_ms == 100].mean_path_rtt_ms.iloc[0] < 135


def test_single_flow_run_is_deterministic():
    jobs = mv._fig4_jobs(mv.Setup(True))[:1]
    a = run_all(jobs, workers=1, verbose=False)
    b = run_all(jobs, workers=1, verbose=False)
    (ka, ra), (kb, rb) = next(iter(a.items())), next(iter(b.items()))
    ra, rb = dict(ra), dict(rb)
    ra.pop("wall_s"), rb.pop("wall_s")
    assert ka == kb and ra == rb


def test_buffer_rounding():
    assert mv.buffer_packets(0.05, 333) == 17
    assert mv.buffer_packets(0.001, 167) == 1


@pytest.mark.slow
def test_full_fig4_newreno_within_2pct_and_westwood_near_full(tmp_path):
    made = reproduce("mv-buffers", items=["fig4"], out=str(tmp_path), verbose=False)
    df = made["fig4"]["tables"]["fig4"]
    assert len(df) == 2 * 2 * 14
    nr = df[df.protocol == "NewReno"]
    assert (nr.measured_over == "cycles").all() and (nr.cycles >= 10).all()
    assert nr.within_2pct.all(), nr[["rtt_ms", "buffer_bdp", "utilization", "analytic", "rel_error"]]
    ww = df[df.protocol == "Westwood+"]
    assert (ww.utilization > 0.998).all()
    # its window after a loss is the pipe: BWE x RTT_min = C x RTT_m
    assert ((ww.ssthresh_after_loss_over_bdp - 1).abs() < 0.02).all()


@pytest.mark.slow
def test_full_fig8_reno_within_one_percent_of_its_bound_and_westwood_above_reno_at_small_buffers(tmp_path):
    """Eq. 9 holds for NewReno at every buffer up to 1 % (it fails by up to
    0.9 % around 0.1-0.2 BDP, where timeouts the model ignores leave the link
    idle; see docs/experiments/mv-buffers.md). Westwood+'s bound (1.0) fails
    below 0.2-0.5 BDP, but Westwood+ stays above NewReno there."""
    made = reproduce("mv-buffers", items=["fig8"], out=str(tmp_path), verbose=False)
    df = made["fig8"]["tables"]["fig8"]
    nr = df[df.protocol == "NewReno"]
    assert (nr.utilization >= nr.bound - 0.01).all(), nr[["rtt_ms", "buffer_bdp", "utilization", "bound"]]
    assert (nr[nr.buffer_bdp <= 0.05].utilization > nr[nr.buffer_bdp <= 0.05].bound).all()
    piv = df.pivot_table(index=["rtt_ms", "buffer_bdp"], columns="protocol", values="utilization")
    small = piv[piv.index.get_level_values("buffer_bdp") <= 0.05]
    assert (small["Westwood+"] > small["NewReno"]).all()
    assert math.isclose(an.westwood_desync_utilization_bound(200), 1.0)


def test_the_setup_reaches_every_runs_spec():
    # --setup paper: ns-2's defaults in the simulations, Linux 2.6's in the real-experiment analog; --setup linux:
    # tcplab's in both
    def flows(setup, gen):
        return [f for _, spec, _, _ in gen(mv.Setup(True, setup=setup)) for f in spec["flows"]]

    key = lambda f: (f["init_cwnd"], f["init_rto"], f["max_rto"], f["rto_mode"], f["limited_transmit"])  # noqa: E731
    for gen in (mv._fig4_jobs, mv._fig5_jobs, mv._fig8_jobs):
        assert {key(f) for f in flows("paper", gen)} == {(2.0, 6.0, 100000.0, "linux", True)}, gen
        assert {key(f) for f in flows("linux", gen)} == {(10.0, 1.0, 60.0, "linux", False)}, gen
    assert {key(f) for f in flows("paper", mv._real_jobs)} == {(3.0, 3.0, 120.0, "linux", False)}
    assert {key(f) for f in flows("linux", mv._real_jobs)} == {(10.0, 1.0, 60.0, "linux", False)}


def test_index_gives_each_items_setup_with_its_sources(quick):
    out, _ = quick
    index = (out / "index.md").read_text()
    sim, real = index.split("#### Figs. 4, 5 and 8 (the ns-2 simulations)", 1)[1].split("#### real", 1)
    assert "| init_cwnd | 2 | ns-2 Agent/TCP `windowInit_` = 2" in sim
    assert "| init_cwnd | 3 | Linux 2.6 `tcp_init_cwnd` (RFC 3390)" in real.split("### Protocols", 1)[0]


def test_a_second_command_into_the_output_keeps_the_items_made_before(quick):
    out, _ = quick
    reproduce("mv-buffers", items=["real"], quick=True, out=str(out), verbose=False)  # its runs are stored
    index = (out / "index.md").read_text()
    for item in mv.ITEMS:
        assert f"\n- {item}: " in index, item
