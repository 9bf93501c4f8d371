"""The access-delay jitter that breaks a dumbbell's phase lock, and the seeds and confidence intervals of
the paper reproductions (docs/experiments/mv-highspeed.md, "Seeds and phase effects")."""

import math

import numpy as np
import pytest

import tcplab
from tcplab.errors import ScenarioError
from tcplab.experiments import common
from tcplab.phaselock import phase_lock_reason
from tcplab.scenario import ACCESS_JITTER_STREAM


def _bell(**kw):
    return tcplab.Dumbbell(n_flows=kw.pop("n_flows", 3), bottleneck_rate="200Mbps", rtt="100ms", buffer="1BDP",
                           duration="10s", **kw)


def _access(spec):
    """{link name: delay} of the access links."""
    return {link["name"]: link["delay"] for link in spec["links"] if link["name"] not in ("r1-r2", "r2-r1")}


def test_no_jitter_by_default_leaves_the_spread_delays_exactly():
    sc = _bell(seed=7)
    assert sc.access_jitter == 0.0 and sc.access_jitters() == [0.0, 0.0, 0.0]
    delays = _access(sc.to_spec())
    for i in range(1, 4):
        d = 2.5e-3 * i / 3  # the "spread" rule, to the bit
        assert delays[f"s{i}-r1"] == delays[f"r1-s{i}"] == delays[f"r2-d{i}"] == delays[f"d{i}-r2"] == d
    # and the default is not written into a scenario file
    assert "access_jitter" not in sc.builder_params()


def test_jitter_is_drawn_per_seed_within_its_range_on_the_sender_side_only():
    jitter = 0.25e-3
    draws = {}
    for seed in range(1, 6):
        sc = _bell(seed=seed, access_jitter="0.25ms")
        j = sc.access_jitters()
        assert all(0.0 <= x < jitter for x in j)
        # the documented draw, from its own stream
        assert j == list(np.random.default_rng([seed, ACCESS_JITTER_STREAM]).uniform(0, jitter, size=3))
        delays = _access(sc.to_spec())
        for i in range(1, 4):
            base = 2.5e-3 * i / 3
            assert delays[f"s{i}-r1"] == delays[f"r1-s{i}"] == pytest.approx(base + j[i - 1], abs=1e-15)
            assert delays[f"r2-d{i}"] == delays[f"d{i}-r2"] == base  # receivers untouched
            assert sc.path_rtt(i - 1) == pytest.approx(0.1 + 4 * base + 2 * j[i - 1], abs=1e-15)
        draws[seed] = tuple(j)
    assert len(set(draws.values())) == 5  # every seed its own delays
    assert _bell(seed=3, access_jitter="0.25ms").access_jitters() == list(draws[3])  # deterministic per seed


def test_jitter_adds_to_uniform_delays_from_another_stream():
    plain = _bell(seed=4, access_delay="uniform").access_delays
    jit = _bell(seed=4, access_delay="uniform", access_jitter="1ms")
    for (s0, r0), (s1, r1), j in zip(plain, jit.access_delays, jit.access_jitters(), strict=True):
        assert r1 == r0 and s1 == pytest.approx(s0 + j, abs=1e-15)
    # not the "uniform" draws scaled: a different stream
    u = np.random.default_rng(4).uniform(0, 1e-3, size=3)
    assert not np.allclose(jit.access_jitters(), u)


def test_bad_jitter_is_named():
    for bad in ("-1ms", "fast", float("nan")):
        with pytest.raises((ScenarioError, ValueError), match="access_jitter"):
            _bell(access_jitter=bad)


def test_jitter_loads_from_a_scenario_file(tmp_path):
    path = tmp_path / "j.toml"
    path.write_text('[run]\nduration = "5s"\nseed = 2\n[dumbbell]\nn_flows = 2\nbottleneck_rate = "20Mbps"\n'
                    'rtt = "40ms"\nbuffer = 50\naccess_jitter = "0.25ms"\n')
    sc = tcplab.load_scenario(str(path))
    assert sc.access_jitter_s == 0.25e-3
    assert sc.access_jitters() == list(np.random.default_rng([2, ACCESS_JITTER_STREAM]).uniform(0, 0.25e-3, 2))


def test_phase_lock_warning_knows_the_jitter():
    assert phase_lock_reason(_bell(n_flows=2)) is not None
    assert phase_lock_reason(_bell(n_flows=2, access_jitter="0.25ms")) is None


def test_mean_ci_against_a_hand_computation():
    # values 1, 2, 3, 4: mean 2.5, s = sqrt(5/3); t(0.975, 3) = 3.182446 (Student-t table)
    mean, lo, hi, n = common.mean_ci([1.0, 2.0, 3.0, 4.0])
    half = 3.182446 * math.sqrt(5.0 / 3.0) / 2.0
    assert (mean, n) == (2.5, 4)
    assert lo == pytest.approx(2.5 - half, rel=1e-6) and hi == pytest.approx(2.5 + half, rel=1e-6)
    # two values: t(0.975, 1) = 12.7062
    mean, lo, hi, _ = common.mean_ci([10.0, 12.0])
    assert hi - mean == pytest.approx(12.7062 * math.sqrt(2.0) / math.sqrt(2.0), rel=1e-5)
    mean, lo, hi, n = common.mean_ci([5.0])
    assert mean == 5.0 and n == 1 and math.isnan(lo) and math.isnan(hi)


def test_seed_summary_and_the_phase_flag():
    import pandas as pd

    per = pd.DataFrame({"cell": ["x", "x", "x", "y", "y", "y"], "seed": [1, 2, 3] * 2,
                        "a": [3.0, 1.0, 2.0, 5.0, 6.0, 7.0], "b": [2.0, 2.0, 2.0, 1.0, 1.0, 1.0]})
    df = common.seed_summary(per, ["cell"], ["a"], diff=("a", "b"))
    assert list(df.cell) == ["x", "y"] and list(df.seeds) == [3, 3] and "seed" not in df.columns
    assert df.a.tolist() == [2.0, 6.0]
    assert df.a_ci_low[0] == pytest.approx(common.mean_ci([3.0, 1.0, 2.0])[1])
    assert df.phase_dependent.tolist() == [True, False]  # x: a > b, then a < b; y: always a > b
    assert common.winner_flips([1.0]) is None
    assert common.yes_no(None) == "-" and common.yes_no(True) == "yes"
    assert common.ci_text(2.0, float("nan"), float("nan")) == "2.0"
    assert common.ci_text(2.0, 1.0, 3.0) == "2.0 [1.0, 3.0]"


def test_bad_seed_count_is_named():
    with pytest.raises(ValueError, match="seeds"):
        common.seed_list(0)
    with pytest.raises(ValueError, match="seeds"):
        tcplab.experiments.reproduce("mv-highspeed", items=["table2"], quick=True, seeds=0, verbose=False)


def test_kk_westwood_fig5_over_two_seeds_flags_the_order_from_its_runs(tmp_path):
    from tcplab.experiments import kk_westwood as kk

    res = kk.reproduce(items=["fig5"], quick=True, seeds=2, out=str(tmp_path), workers=1, verbose=False)
    df = res["fig5"]["tables"]["fig5"]
    per = __import__("pandas").read_csv(tmp_path / "fig5_seeds.csv")
    assert (df.seeds == 2).all() and sorted(per.seed.unique()) == [1, 2]
    for (rate, n), g in per.groupby(["rate_mbps", "n"]):
        w = g[g["mix"] == "Reno + Westwood"].sort_values("seed").jain.to_numpy()
        p = g[g["mix"] == "Reno + Proposal"].sort_values("seed").jain.to_numpy()
        flips = bool((p - w > 0).any() and (p - w < 0).any())
        assert (df[(df.rate_mbps == rate) & (df.n == n)].phase_dependent == flips).all()
        row = df[(df.rate_mbps == rate) & (df.n == n) & (df["mix"] == "Reno only")].iloc[0]
        assert row.jain == pytest.approx(g[g["mix"] == "Reno only"].jain.mean())
    assert "Seeds and phase effects" in (tmp_path / "index.md").read_text()
