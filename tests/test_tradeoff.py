"""The efficiency/friendliness trade-off tool: L and G against hand computations."""

import math

import pytest

import tcplab
from tcplab import tradeoff as to


def test_lg_by_hand_synthetic():
    s1 = {"goodput_bps": [4.0, 6.0, 5.0, 5.0], "utilization": 0.90}
    s2 = {"goodput_bps": [3.0, 8.0, 4.0, 6.0], "utilization": 0.95}
    rep = to.replaced_indices(4)
    assert rep == [1, 3]
    p = to.point_from_summaries(s1, s2, rep, "x")
    # t1 = mean(4,6,5,5) = 5; t2 = mean of flows 0 and 2 in run 2 = 3.5.
    assert p.t1 == 5.0 and p.t2 == 3.5 and p.new_mean == 7.0
    assert math.isclose(p.L, 0.7) and math.isclose(p.G, 0.95 / 0.90)
    assert p.region == "probable trade-off"
    pg = to.point_from_summaries(s1, s2, rep, utilization="goodput", capacity_bps=25.0)
    assert math.isclose(pg.G, (21.0 / 25.0) / (20.0 / 25.0))


def test_regions_and_replacement():
    assert to.region(0.9, 0.9) == "negative impact"
    assert to.region(1.1, 1.1) == "unlikely"
    assert to.region(0.9, 1.1) == "probable trade-off"
    assert to.region(1.1, 0.9) == "improbable trade-off"
    assert to.region(1.005, 0.9, tol=0.01) == "boundary"
    assert to.replaced_indices(2) == [1]
    assert to.replaced_indices(5) == [0, 1, 3]  # round(2.5) up: 3 replaced
    assert to.replaced_indices(6, pattern="last") == [3, 4, 5]
    with pytest.raises(ValueError):
        to.replaced_indices(1)


def test_points_from_stored_runs_match_hand_computation(tmp_path):
    """Two short real runs, saved and reloaded; L and G computed by hand from the stored tables."""
    make = to.dumbbell_maker("5Mbps", "40ms", 10, duration="20s", measure_window="10s", sample_interval="1s")
    base = to.Protocol("newreno", {}, "newreno", "Reno")
    new = to.Protocol("westwood-re", {}, "newreno", "Westwood")
    rep = to.replaced_indices(4)
    r1 = tcplab.run(make([base] * 4))
    r2 = tcplab.run(make([new if i in rep else base for i in range(4)]))
    r1.save(tmp_path / "run1")
    r2.save(tmp_path / "run2")
    s1 = tcplab.Results.load(tmp_path / "run1")
    s2 = tcplab.Results.load(tmp_path / "run2")
    g1 = list(s1.flows["goodput_bps"])
    g2 = list(s2.flows["goodput_bps"])
    u1 = float(s1.links.set_index("name").loc["r1-r2", "utilization"])
    u2 = float(s2.links.set_index("name").loc["r1-r2", "utilization"])
    L_hand = ((g2[0] + g2[2]) / 2) / (sum(g1) / 4)
    G_hand = u2 / u1
    p = to.point_from_results(s1, s2, rep, "r1-r2")
    assert math.isclose(p.L, L_hand, rel_tol=1e-12)
    assert math.isclose(p.G, G_hand, rel_tol=1e-12)
    # The runner path (process pool, summary extract) gives the same point.
    df = to.run_tradeoff(make, base, new, [4], workers=1)
    assert math.isclose(df.L[0], L_hand, rel_tol=1e-12) and math.isclose(df.G[0], G_hand, rel_tol=1e-12)


def test_plot(tmp_path):
    pts = [{"L": 0.8, "G": 1.05, "label": "A", "n": 2}, {"L": 1.2, "G": 0.97, "label": "B", "n": 4}]
    path = tmp_path / "t.png"
    to.plot_tradeoff(pts, path=str(path), title="demo")
    assert path.stat().st_size > 1000
