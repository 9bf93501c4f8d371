"""Figures and report pages a newcomer reads (issue 30): readable labels, the
reference lines at the path's RTT, no silent clipping, legends off the
data, reports in natural order with units. Fast: tiny runs or synthetic series."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import tcplab  # noqa: E402
from tcplab.analysis import path_rtt_s  # noqa: E402
from tcplab.plot import algorithm_label, cwnd_queue_figure, flow_label  # noqa: E402
from tcplab.report import report_html  # noqa: E402
from tcplab.report.format import format_cell, natural_key  # noqa: E402


def _hlines(ax) -> list[float]:
    """The y of every horizontal line drawn across an axis (axhline)."""
    ys = []
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        x = np.asarray(line.get_xdata(), dtype=float)
        if len(y) == 2 and y[0] == y[1] and list(x) == [0.0, 1.0]:
            ys.append(float(y[0]))
    return ys


# ---------------------------------------------------------------- labels

def test_algorithm_and_flow_labels_are_readable():
    assert algorithm_label("cubic", {"variant": "2005"}) == "cubic variant=2005"
    assert algorithm_label("scalable", {"variant": "paper", "low_window": 0}) == "scalable low_window=0, variant=paper"
    assert algorithm_label("newreno", {}) == "newreno"
    assert flow_label("flow1", "cubic") == "flow 1 (cubic)"
    assert flow_label("bulk", "newreno", {"beta": 0.5}) == "bulk (newreno beta=0.5)"


def test_run_plot_labels_flows_by_algorithm_and_draws_lines_at_path_rtt():
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="1s",
                         algorithm=["cubic", "reno"], params=[{"variant": "2005"}, {}], access_delay="5ms",
                         sample_interval="50ms", name="two")
    res = tcplab.run(sc)
    fig = cwnd_queue_figure(res)
    try:
        top = fig.axes[0]
        labels = [t.get_text() for t in top.get_legend().get_texts()]
        assert labels[:2] == ["flow 1 (cubic variant=2005)", "flow 2 (newreno)"]
        # Path RTT = 20 ms + 4 x 5 ms = 40 ms: C x RTT = 10e6 x 0.04 / 12000 = 33.3 packets, not the 16.7 of 20 ms.
        assert path_rtt_s(sc, 0) == pytest.approx(0.040)
        pipe = 10e6 * 0.040 / (8 * 1500)
        lines = _hlines(top)
        assert lines[0] == pytest.approx(pipe)
        assert lines[1] == pytest.approx(pipe + sc.buffer_packets)
        assert "path RTT 40 ms" in labels[2]
        # the legend sits beside the panel (anchored right of the axes), not over the data
        assert top.get_legend().get_bbox_to_anchor().x0 > top.get_window_extent().x1
    finally:
        plt.close(fig)


def test_path_rtt_follows_the_routes_of_a_dumbbell():
    sc = tcplab.Dumbbell(n_flows=3, bottleneck_rate="200Mbps", rtt="100ms", buffer="1BDP", access_delay="uniform",
                         seed=7)
    for i in range(3):
        assert path_rtt_s(sc, i) == pytest.approx(sc.path_rtt(i), abs=1e-12)
    assert path_rtt_s(tcplab.Dumbbell(n_flows=1, bottleneck_rate="200Mbps", rtt="100ms", buffer="1BDP")) == \
        pytest.approx(0.110)
    with pytest.raises(ValueError, match="flow"):
        path_rtt_s(sc, 3)


# ---------------------------------------------------------------- paper figures

def _panel(peak: float, **kw) -> dict:
    t = np.linspace(0, 10, 101)
    cw = np.full_like(t, 100.0)
    cw[5] = peak
    p = {"label": "(a) B = 1 BDP (1667 packets)", "time": t, "cwnd": cw, "queue_time": t, "queue": np.zeros_like(t),
         "capacity_bps": 200e6, "packet_bytes": 1500, "buffer_packets": 1667, "path_rtt_s": 0.110}
    p.update(kw)
    return p


def test_paper_cwnd_figure_reference_lines_are_b_plus_c_times_path_rtt():
    fig = cwnd_queue_figure_paper([_panel(3000.0)], "t")
    try:
        ax = fig.axes[0]
        # C x RTT with the path's 110 ms: 200e6 x 0.110 / 12000 = 1833 packets; B + C x RTT = 3500.
        assert sorted(_hlines(ax)) == [1833, 3500]
        assert "B + C x RTT = 3,500 packets (path RTT 110 ms)" in ax.get_title()
        assert ax.get_ylim()[1] >= 3500  # nothing cut
        assert not [t for t in ax.texts if "off scale" in t.get_text()]
        assert fig.legends and not ax.get_legend()  # one legend, below the panels
    finally:
        plt.close(fig)


def test_paper_cwnd_figure_says_when_the_peak_is_off_scale():
    fig = cwnd_queue_figure_paper([_panel(20000.0)], "t", clip=2.5)
    try:
        ax = fig.axes[0]
        assert ax.get_ylim()[1] == pytest.approx(2.5 * 3500)
        notes = [t.get_text() for t in ax.texts]
        assert notes == ["peak 20,000 packets at 0.5 s (off scale)"]
    finally:
        plt.close(fig)


def cwnd_queue_figure_paper(panels, title, clip=2.5):
    from tcplab.experiments.common import cwnd_queue_figure as paper_figure

    return paper_figure(panels, title, clip=clip)


def test_mv_highspeed_titles_have_no_raw_json(monkeypatch, tmp_path):
    from tcplab.experiments import mv_highspeed as mvh

    titles = []

    def keep(fig, out, name, dpi=110):
        titles.append(fig._suptitle.get_text())
        plt.close(fig)
        return str(tmp_path / name)

    monkeypatch.setattr(mvh, "save_figure", keep)
    series = {"trace_time": [0.0, 1.0], "cwnd": [[10.0, 20.0]], "queue_time": [0.0, 1.0], "queue": [0, 1]}
    res = {f"t1|{p}|100|{b}": series for p in mvh.PROTOCOLS for b in (1.0, 0.1)}
    mvh._figs2_8(mvh.Setup(quick=True), res, str(tmp_path))
    assert len(titles) == len(mvh.PROTOCOLS)
    assert not [t for t in titles if "{" in t or '"' in t]
    assert "Fig. 8: CUBIC (cubic variant=2005)" in titles[-1]
    assert "Fig. 3: STCP (scalable low_window=0, variant=paper)" in titles[1]


# ---------------------------------------------------------------- reports

def test_numbers_in_report_cells_carry_units_and_never_an_exponent():
    assert format_cell("total_goodput_bps", 2e8) == "200 Mbit/s"
    assert format_cell("total_goodput_bps.mean", 7.3312e6) == "7.331 Mbit/s"
    assert format_cell("delay", 0.05) == "50 ms"
    assert format_cell("wall_s", 1234.5) == "1,234 s"
    assert format_cell("goodput_kbps", 187634.1) == "187,634 kbit/s"
    assert format_cell("events", 2e8) == "200,000,000"
    assert format_cell("events", np.int64(110947107)) == "110,947,107"
    for v in (1e20, 123456789.123, 1.5e-9, -4.2e11, 0.1 + 0.2):
        assert "e" not in format_cell("x", v).lower()
    assert format_cell("x", float("nan")) == "–"
    assert format_cell("quick", True) == "True" and format_cell("protocol", "CUBIC") == "CUBIC"


def test_natural_order():
    names = ["fig13.png", "fig2_newreno.png", "fig10.png", "fig9.png", "figs11_12.csv", "figs9_10.csv"]
    assert sorted(names, key=natural_key) == ["fig2_newreno.png", "fig9.png", "fig10.png", "fig13.png",
                                               "figs9_10.csv", "figs11_12.csv"]


def _png(path, text):
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.set_title(text)
    fig.savefig(path)
    plt.close(fig)


def test_reproduction_report_orders_figures_first_naturally_and_folds_long_tables(tmp_path):
    out = tmp_path / "repro"
    out.mkdir()
    (out / "index.md").write_text("# a reproduction\n\nsome text\n")
    for n in (13, 2, 10, 9):
        _png(out / f"fig{n}.png", f"fig {n}")
    pd.DataFrame({"protocol": ["x"] * 63, "rate_bps": [2e8] * 63, "events": [123456789] * 63,
                  "utilization": np.linspace(0, 1, 63)}).to_csv(out / "fig13.csv", index=False)
    pd.DataFrame({"a": [1, 2]}).to_csv(out / "fig2.csv", index=False)
    (out / "fig13.md").write_text("# Fig. 13: a long table\n")
    page = report_html(out)
    figs = [page.index(f'alt="fig{n}.png"') for n in (2, 9, 10, 13)]
    assert figs == sorted(figs)  # natural order: fig2, fig9, fig10, fig13
    tables = page.index("<h2>Tables</h2>")
    assert figs[-1] < tables  # figures before tables
    assert page.index("<h3>fig2.csv") < page.index("<h3>fig13.csv: Fig. 13: a long table")
    long = page[page.index("<h3>fig13.csv"):]
    # the first rows shown, all 63 folded, with a link to the CSV
    assert '<details><summary>all 63 rows (<a href="fig13.csv">fig13.csv</a>)</summary>' in long
    assert long.index("<details>") > 0 and long[:long.index("<details>")].count("<tr>") == 1 + 12
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert "200 Mbit/s" in cells and "123,456,789" in cells
    assert not [c for c in cells if "e+" in c]


def test_report_links_the_csv_relative_to_where_the_page_is_written(tmp_path):
    out = tmp_path / "repro"
    out.mkdir()
    (out / "index.md").write_text("# r\n")
    pd.DataFrame({"a": range(40)}).to_csv(out / "t.csv", index=False)
    page = report_html(out, page_dir=tmp_path / "pages")
    assert 'href="../repro/t.csv"' in page


def test_sweep_category_ticks_are_thinned_and_slanted():
    from tcplab.report import _category_ticks

    fig, ax = plt.subplots()
    try:
        labels = [f"{0.05 * i:.2f}BDP" for i in range(1, 21)]
        _category_ticks(ax, np.arange(20), labels)
        shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert 0 < len(shown) <= 12 and shown[0] == labels[0]
        assert ax.get_xticklabels()[0].get_rotation() == 35
    finally:
        plt.close(fig)


def test_campaign_results_name_the_wall_time_wall_s(tmp_path):
    from tcplab.sweep import Campaign, Sweep

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="0.5s")
    camp = Campaign(tmp_path / "c")
    rep = camp.run(Sweep(base, grid={"buffer": ["1BDP"]}, seeds=1, name="s"), workers=1, progress=False)
    df = camp.results()
    camp.close()
    assert "wall_s" in df.columns and "sim_s" not in df.columns
    assert df["wall_s"].iloc[0] > 0
    assert rep.runs_wall_s == pytest.approx(df["wall_s"].sum()) and rep.sim_s == rep.runs_wall_s
    d = rep.as_dict()
    # sim_s stays in the JSON (deprecated, the same value) for readers of `tcplab sweep --json` written before
    assert d["wall_s"] == rep.wall_s and d["runs_wall_s"] == rep.runs_wall_s > 0 and d["sim_s"] == d["runs_wall_s"]


def test_reference_lines_route_the_scenario_once_whatever_the_number_of_flows(monkeypatch):
    """Drawing n flows routed the whole scenario n times (9.7 s at 400 flows): now once."""
    import types

    from tcplab import _core
    from tcplab.analysis import path_rtts_s
    from tcplab.plot import _reference_lines
    from tcplab.scenario import Scenario

    calls = {"paths": 0, "to_spec": 0}
    real_paths, real_to_spec = _core.paths, Scenario.to_spec

    def counting_paths(*a, **k):
        calls["paths"] += 1
        return real_paths(*a, **k)

    def counting_to_spec(self, *a, **k):
        calls["to_spec"] += 1
        return real_to_spec(self, *a, **k)

    monkeypatch.setattr(_core, "paths", counting_paths)
    monkeypatch.setattr(Scenario, "to_spec", counting_to_spec)
    seen = []
    for n in (2, 30):
        sc = tcplab.Dumbbell(n_flows=n, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP",
                             access_delay="uniform", seed=3)
        per_flow = [sc.path_rtt(i) for i in range(n)]
        calls.update(paths=0, to_spec=0)
        pipe, _, text = _reference_lines(types.SimpleNamespace(scenario=sc), list(range(n)))
        seen.append(dict(calls))
        assert pipe == pytest.approx(10e6 * (sum(per_flow) / n) / 12000)
        assert "mean path RTT" in text
        assert path_rtts_s(sc) == pytest.approx(per_flow, abs=1e-12)
        assert path_rtts_s(sc, [n - 1, 0]) == [path_rtt_s(sc, n - 1), path_rtt_s(sc, 0)]
    assert seen[0] == seen[1] == {"paths": 1, "to_spec": 1}
    with pytest.raises(ValueError, match="flow: no flow 30"):
        path_rtts_s(sc, [0, 30])
