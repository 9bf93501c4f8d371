"""Issue 30 ("a newcomer's first hour"), the CLI side: random-loss losses in the terminal summary,
`tcplab algorithms` wrapped to the terminal, `--set` overrides on run and sweep, the phase-lock
warning. Tests that run simulations need the compiled core (tcplab._core)."""

import json
import os
import textwrap

import pytest

from tcplab.cli import main

LOSSY = """
    name = "lossy"
    [dumbbell]
    n_flows = 1
    bottleneck_rate = "10Mbps"
    rtt = "20ms"
    buffer = "1BDP"
    loss = 0.002
    [run]
    duration = "3s"
    sample_interval = "50ms"
"""


def write(tmp_path, text, name="sc.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def test_summary_shows_random_loss_apart_from_drops(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, LOSSY)
    assert main(["run", path, "-o", str(tmp_path / "o"), "--no-plot"]) == 0
    out = capsys.readouterr().out
    header = next(ln for ln in out.splitlines() if ln.startswith("name") and "utilization" in ln)
    assert header.split() == ["name", "utilization", "drops", "losses"]
    summ = json.loads((tmp_path / "o" / "summary.json").read_text())
    (bott,) = [ln for ln in summ["links"] if ln["name"] == "r1-r2"]
    assert bott["losses"] > 0  # 0.2 % of some 7,000 packets
    row = next(ln for ln in out.splitlines() if ln.startswith("r1-r2"))
    assert row.split()[2:] == [str(bott["drops"]), str(bott["losses"])]


def test_algorithms_wrapped_to_100_columns_when_piped(capsys):
    from tcplab import _core

    assert main(["algorithms"]) == 0
    out = capsys.readouterr().out
    assert max(len(ln) for ln in out.splitlines()) <= 100
    for a in _core.algorithms():  # nothing lost in the wrapping: every parameter is listed
        for p in a.get("params", []):
            assert f"      {p['name']} = " in out


def test_generate_defaults_under_out_and_makes_the_directory(tmp_path, monkeypatch, capsys):
    from tcplab import _core  # noqa: F401

    spec = write(tmp_path, open(os.path.join(os.path.dirname(__file__), "..", "examples",
                                             "generate-parking-lot.toml")).read(), "pl.toml")
    monkeypatch.chdir(tmp_path)
    assert main(["generate", spec, "--seed", "1"]) == 0  # no -o: out/pl.json, not ./pl.json
    assert (tmp_path / "out" / "pl.json").is_file() and not (tmp_path / "pl.json").exists()
    assert main(["generate", spec, "-o", "new/dir/x.json"]) == 0  # a missing parent directory is made
    assert (tmp_path / "new" / "dir" / "x.json").is_file()


def test_package_exports_its_api_only():
    import tcplab

    public = {n for n in dir(tcplab) if not n.startswith("_")}
    assert not public & {"Any", "Union", "Mapping", "Optional", "json", "annotations", "spec_to_json"}
    for name in tcplab.__all__:  # what `from tcplab import *` gives exists
        assert hasattr(tcplab, name), name
    assert {"run", "Dumbbell", "Results", "Sweep", "Campaign", "load_scenario"} <= set(tcplab.__all__)
    import types

    for name in public - set(tcplab.__all__):  # the rest are submodules (tcplab.units, tcplab.sweep, ...)
        assert isinstance(getattr(tcplab, name), types.ModuleType), name


# ---------------------------------------------------------------- --set KEY=VALUE

SMALL = """
    name = "small"
    [dumbbell]
    n_flows = 2
    bottleneck_rate = "10Mbps"
    rtt = "20ms"
    buffer = "1BDP"
    [run]
    duration = "2s"
    sample_interval = "50ms"
"""

GENERIC = """
    [run]
    duration = "1s"
    [[nodes]]
    name = "a"
    [[nodes]]
    name = "b"
    [[links]]
    name = "ab"
    src = "a"
    dst = "b"
    rate = "10Mbps"
    delay = "10ms"
    buffer = 20
    [[links]]
    name = "ba"
    src = "b"
    dst = "a"
    rate = "10Mbps"
    delay = "10ms"
    [[flows]]
    src = "a"
    dst = "b"
    [[flows]]
    src = "a"
    dst = "b"
"""


@pytest.mark.parametrize("text, value", [
    ("10", 10), ("0.5", 0.5), ("true", True), ("[1, 2]", [1, 2]), ("{discipline = 'codel'}", {"discipline": "codel"}),
    ('"50"', "50"), ("0.5BDP", "0.5BDP"), ("10s", "10s"), ("cubic", "cubic"), ("", ""), ("1\nx = 2", "1\nx = 2"),
])
def test_set_value_is_toml_when_it_parses_else_a_string(text, value):
    from tcplab.overrides import parse_value

    assert parse_value(text) == value and type(parse_value(text)) is type(value)


def test_set_on_run_changes_the_scenario_before_it_is_checked(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, SMALL)
    out = tmp_path / "o"
    assert main(["run", path, "-o", str(out), "--no-plot", "--set", "dumbbell.buffer=0.5BDP",
                 "--set", "run.duration=1s", "--set", "dumbbell.algorithm=[\"newreno\", \"cubic\"]",
                 "--set", "dumbbell.loss=0.001"]) == 0
    capsys.readouterr()
    saved = (out / "scenario.toml").read_text()  # the scenario that ran, overrides included
    assert 'buffer = "0.5BDP"' in saved and "loss = 0.001" in saved
    summ = json.loads((out / "summary.json").read_text())
    assert summ["meta"]["sim_time"] == pytest.approx(1.0)
    assert [f["algorithm"] for f in summ["flows"]] == ["newreno", "cubic"]


def test_set_indexes_arrays_of_tables(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, GENERIC)
    assert main(["run", path, "--json", "--set", "flows[1].algorithm=cubic", "--set", "links[0].loss=0.01"]) == 0
    summ = json.loads(capsys.readouterr().out)
    assert [f["algorithm"] for f in summ["flows"]] == ["newreno", "cubic"]
    assert summ["links"][0]["losses"] > 0


@pytest.mark.parametrize("override, message", [
    ("dumbbell.bufer=1", "error: dumbbell.bufer: unknown key (did you mean 'buffer'?)"),
    ("run.durration=1s", "error: run.durration: unknown key (did you mean 'duration'?)"),
    ("dumbbell.buffer.packets=3", "error: --set dumbbell.buffer.packets: dumbbell.buffer is not a table (a string)"),
    ("dumbbell.rtt=\"50\"", "error: dumbbell.rtt: '50' needs a unit, e.g. '50ms'"),
    ("dumbbell", "error: --set dumbbell: expected KEY=VALUE"),
    ("a b=1", "error: --set a b: not a key path"),
])
def test_set_errors_are_one_line_naming_the_key(tmp_path, capsys, override, message):
    path = write(tmp_path, SMALL)
    assert main(["run", path, "-o", str(tmp_path / "o"), "--set", override]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("override, message", [
    ("flows[2].algorithm=cubic", "error: --set flows[2].algorithm: flows has 2 element(s); [2] is not one of them"),
    ("flows.algorithm=cubic", "error: --set flows.algorithm: flows is not a table (an array: give an element, "
                              "e.g. flows[0].algorithm)"),
    ("run[0]=1", "error: --set run[0]: run is a table, not an array"),
])
def test_set_errors_on_arrays(tmp_path, capsys, override, message):
    path = write(tmp_path, GENERIC)
    assert main(["run", path, "--json", "--set", override]) == 2
    assert capsys.readouterr().err.startswith(message)


def test_set_on_sweep_sets_the_sweep_and_its_base(tmp_path, capsys):
    base = write(tmp_path, SMALL, "base.toml")
    sweep = write(tmp_path, """
        base = "base.toml"
        seeds = 3
        [grid]
        buffer = ["0.5BDP", "1BDP"]
    """, "sw.toml")
    from tcplab import load_sweep

    sw, _ = load_sweep(sweep, overrides=["seeds=2", "dumbbell.rtt=40ms", "grid.buffer=[10, 20, 30]"])
    assert len(sw) == 3 * 2 and sw.base.rtt == "40ms" and sw.base.name == "small"
    assert "rtt = \"20ms\"" in open(base).read()  # the base file itself is left alone
    assert main(["sweep", sweep, "-o", str(tmp_path / "c"), "--dry-run", "--set", "seeds=1",
                 "--set", "dumbbell.buffer=2BDP"]) == 0
    cap = capsys.readouterr()
    assert "2 to run" in cap.out
    assert "note: --set dumbbell.buffer: the sweep's parameter 'buffer' sets it at every point" in cap.err


# ---------------------------------------------------------------- phase lock

def _dumbbell(**kw):
    import tcplab

    args = dict(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", algorithm=["cubic", "newreno"],
                duration="4s", sample_interval="0s")
    args.update(kw)
    return tcplab.Dumbbell(**args)


@pytest.mark.parametrize("kw, warned", [
    ({}, True),                                        # the defaults: spread access delays, drop-tail, no loss
    ({"start": [0, "1.3s"]}, True),                     # staggered, but fixed, start times
    ({"access_delay": "uniform"}, False),
    ({"n_flows": 1, "algorithm": "cubic"}, False),
    ({"loss": 1e-4}, False),
    ({"loss": 0.0}, True),                              # a probability of 0 draws nothing that matters
    ({"loss": {"kind": "gilbert_elliott", "p_gb": 0.005, "p_bg": 0.2}}, False),  # loss_bad defaults to 1
    ({"reverse_loss": {"kind": "gilbert_elliott", "p_gb": 0.0, "p_bg": 0.2}}, True),  # never enters the bad state
    ({"queue": {"discipline": "red"}}, False),          # RED's coin uses the seed
    ({"queue": {"discipline": "codel"}}, True),
    ({"source": [None, {"kind": "cbr", "rate": "2Mbps"}], "algorithm": "cubic"}, False),  # one TCP flow
])
def test_phase_lock_test(kw, warned):
    from tcplab.phaselock import phase_lock_reason

    reason = phase_lock_reason(_dumbbell(**kw))
    assert (reason is not None) == warned, reason
    if warned:
        assert "phase effect" in reason and "--seed changes nothing" in reason and 'access_delay = "uniform"' in reason


def test_phase_lock_warning_tells_the_truth(monkeypatch):
    """Where it warns, another seed gives the very same run; with uniform access delays it does not."""
    import tcplab
    import tcplab.phaselock as pl

    def goodputs(**kw):
        return [tuple(tcplab.run(_dumbbell(seed=s, **kw)).flows["goodput_bps"]) for s in (1, 2)]

    monkeypatch.setattr(pl, "_warned", False)
    with pytest.warns(tcplab.PhaseLockWarning):
        a, b = goodputs()
    assert a == b
    a, b = goodputs(access_delay="uniform")
    assert a != b


def test_phase_lock_python_warning_once(monkeypatch, recwarn):
    import warnings

    import tcplab
    import tcplab.phaselock as pl

    monkeypatch.setattr(pl, "_warned", False)
    warnings.simplefilter("always")
    tcplab.run(_dumbbell(access_delay="uniform", duration="1s"))
    assert not [w for w in recwarn if w.category is tcplab.PhaseLockWarning]
    tcplab.run(_dumbbell(duration="1s"))
    tcplab.run(_dumbbell(duration="1s"))
    got = [w for w in recwarn if w.category is tcplab.PhaseLockWarning]
    assert len(got) == 1 and got[0].filename == __file__  # pointing at the caller's line
    assert "another seed changes nothing" in str(got[0].message)


def test_phase_lock_cli_run_and_sweep(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    sc = """
        [dumbbell]
        n_flows = 2
        bottleneck_rate = "10Mbps"
        rtt = "20ms"
        buffer = "1BDP"
        algorithm = ["cubic", "newreno"]
        [run]
        duration = "1s"
    """
    path = write(tmp_path, sc)
    assert main(["run", path, "--json"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: 2 long-lived flows and nothing random") and err.count("\n") == 1
    assert main(["run", path, "--json", "--set", "dumbbell.access_delay=uniform"]) == 0
    assert "warning" not in capsys.readouterr().err
    write(tmp_path, sc, "base.toml")
    sweep = write(tmp_path, 'base = "base.toml"\nseeds = 3\n[grid]\nbuffer = ["0.5BDP", "1BDP"]\n', "sw.toml")
    assert main(["sweep", sweep, "-o", str(tmp_path / "c"), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "warning: point (buffer='0.5BDP'): 2 long-lived flows and nothing random" in err
    assert "the 3 seeds of such a point give 3 identical runs" in err
    assert main(["sweep", sweep, "-o", str(tmp_path / "c"), "--dry-run", "--set", "dumbbell.access_delay=uniform"]) == 0
    assert "warning" not in capsys.readouterr().err


# ---------------------------------------------------------------- Jupyter

@pytest.fixture(scope="module")
def three_flows():
    import tcplab

    return tcplab.run(tcplab.Dumbbell(n_flows=3, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="3s",
                                      algorithm=["cubic", "newreno", "htcp"], access_delay="uniform", loss=0.001,
                                      sample_interval="10ms", name="nb<&>",
                                      trace_links=["r1-r2", "r2-r1"]))


def test_repr_html_has_the_flow_rows_and_the_bottleneck(three_flows):
    res = three_flows
    h = res._repr_html_()
    assert h.startswith('<div class="tcplab-results">') and "<b>nb&lt;&amp;&gt;</b>" in h  # escaped
    def row(*cells):
        return "\n      ".join(f"<td>{c}</td>" for c in cells)

    for _, f in res.flows.iterrows():
        assert row(f["name"], f["algorithm"], f"{f['goodput_bps'] / 1e6:.3f}", f["retransmits"], f["timeouts"]) in h
    (b,) = res.links[res.links["name"] == "r1-r2"].itertuples()
    assert b.losses > 0 and row("r1-r2", f"{b.utilization:.4f}", b.drops, b.losses) in h
    assert "s1-r1" not in h  # access links neither drop nor lose: not shown
    assert repr(res).startswith("<Results 'nb<&>': 3 flows")  # the terminal keeps its one line


def test_plot_methods_return_figures_with_a_line_per_flow_or_link(three_flows, tmp_path):
    from matplotlib.figure import Figure

    res = three_flows
    for fig, n in ((res.plot_cwnd(), 3), (res.plot_throughput(), 3), (res.plot_cwnd(flows=["flow2"]), 1),
                   (res.plot_throughput(flows=[0, 2], interval=0.1), 2), (res.plot_queue(), 1),
                   (res.plot_queue(links=["r1-r2", "r2-r1"]), 2)):
        assert isinstance(fig, Figure)
        lines = fig.axes[0].get_lines()
        assert len(lines) == n
        fig.savefig(tmp_path / "f.png")  # usable after the method returned: nothing closed it
    with pytest.raises(ValueError, match="link 's1-r1' has no queue samples: give it in the run's trace_links"):
        res.plot_queue(links=["s1-r1"])
    fig = res.plot_cwnd()
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert labels == ["flow 1 (cubic)", "flow 2 (newreno)", "flow 3 (htcp)"]  # plot.flow_label, as in every figure
    # the throughput line integrates to what the flow delivered
    import numpy as np

    ln = res.plot_throughput(flows=["flow1"], interval=0.5).axes[0].get_lines()[0]
    t, mbps = ln.get_xdata(), ln.get_ydata()
    ts = res.flow_ts[res.flow_ts["flow"] == 0]
    delivered = ts["delivered_bytes"].to_numpy()[::50][-1]
    assert np.sum(mbps * 0.5) * 1e6 / 8 == pytest.approx(delivered, rel=1e-9) and t[0] == pytest.approx(0.5)


def test_campaign_results_names_load_sweeps_pair(tmp_path):
    """Passing load_sweep()'s (sweep, options) pair to Campaign.results says what to pass
    (was: unhashable type: 'dict')."""
    from tcplab.sweep import Campaign, load_sweep

    (tmp_path / "s.toml").write_text('seeds = 1\n[base.dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\n'
                                     'rtt = "20ms"\nbuffer = "1BDP"\n[base.run]\nduration = "2s"\n'
                                     '[grid]\n"dumbbell.buffer" = ["1BDP"]\n')
    pair = load_sweep(tmp_path / "s.toml")
    camp = Campaign(tmp_path / "c")
    with pytest.raises(TypeError, match="pass the sweep"):
        camp.results(pair)
    with pytest.raises(TypeError, match="list of run keys"):
        camp.results([{"a": 1}])
    assert len(camp.results(pair[0])) == 0  # nothing run yet: an empty table, not an error
