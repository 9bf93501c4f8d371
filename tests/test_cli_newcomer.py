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
