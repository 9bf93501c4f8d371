"""Progress of long commands, replay's group table, and a reproduction's index (issue 30).

Progress goes to stderr: present when forced (--progress), absent when stderr is not a terminal and nothing
forces it (here stderr is captured, so never a terminal). A run's progress is written by the core on file
descriptor 2 (capfd); a batch's progress bar by Python (capsys).
"""

from __future__ import annotations

import json
import os
import re

import pandas as pd
import pytest

from tcplab.cli import main

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "dumbbell-newreno-0.1bdp.toml")
SSM = ["--quick", "--configs", "1", "--duration", "3", "--protocols", "Reno,CUBIC"]  # 5 runs of 3 s: seconds


# ---------------------------------------------------------------- tcplab run

def test_run_is_silent_when_piped_and_shows_simulated_time_when_forced(tmp_path, capfd):
    argv = ["run", EXAMPLE, "--duration", "4s", "--no-plot"]
    assert main(argv + ["-o", str(tmp_path / "a")]) == 0
    assert "simulated" not in capfd.readouterr().err
    assert main(argv + ["-o", str(tmp_path / "b"), "--progress"]) == 0
    err = capfd.readouterr().err
    # off a terminal: one line per tenth of the run at most, the last one says done
    lines = [ln for ln in err.splitlines() if "simulated" in ln]
    assert 1 <= len(lines) <= 10 and "\r" not in err, err
    assert re.search(r"simulated 4\.00 of 4\.00 s \(100%\), \d+ s wall, done", lines[-1]), lines[-1]
    assert main(argv + ["-o", str(tmp_path / "c"), "--no-progress"]) == 0
    assert "simulated" not in capfd.readouterr().err


def test_run_progress_is_automatic_on_a_terminal_for_long_runs_only(monkeypatch):
    import sys

    from tcplab import cli

    long_run = {"events": cli.EVENTS_PER_S * 10}
    short_run = {"events": cli.EVENTS_PER_S * 0.5}
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert cli._show_progress(None, long_run) and not cli._show_progress(None, short_run)
    assert not cli._show_progress(False, long_run) and cli._show_progress(True, short_run)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not cli._show_progress(None, long_run)


# ---------------------------------------------------------------- batches: sweep and reproduce

def test_batch_progress_bar_counts_runs_and_failures_only_when_enabled(capsys):
    from tcplab.sweep.progress import Progress

    bar = Progress(3, None, "demo")  # stderr captured: not a terminal, so no bar
    bar.update(2)
    bar.close()
    assert capsys.readouterr().err == ""
    bar = Progress(3, True, "demo")
    bar.update(1)
    bar.update(0, 1)
    bar.update(1)
    bar.close()
    err = capsys.readouterr().err
    assert "demo" in err and "3/3 runs" in err and "1 failed" in err, err


def test_reproduce_progress_when_forced_and_index_keeps_earlier_items(tmp_path, capsys):
    out = str(tmp_path / "ssm")
    assert main(["reproduce", "ssm-interactions", "fig3", *SSM, "-o", out]) == 0
    err = capsys.readouterr().err
    assert "runs [" not in err  # no bar when piped
    first = json.loads(open(os.path.join(out, "index.json")).read())["items"]["fig3"]
    # a second item: the first stays listed; the runs are stored, so nothing runs again
    assert main(["reproduce", "ssm-interactions", "fig6", *SSM, "-o", out, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "5 runs: 0 run now, 5 already stored" in err
    index = open(os.path.join(out, "index.md")).read()
    assert re.search(r"^- fig3: fig3\.csv, fig3\.md, fig3\.png; made ", index, re.M), index
    assert re.search(r"^- fig6: fig6\.csv, fig6\.md, fig6\.png; made ", index, re.M), index
    assert "scenario-L1-c1.json" in index and "not made by the items above" not in index
    assert "**QUICK MODE" in index
    # the first item made again: its entry is replaced, the other kept as it was
    before = json.loads(open(os.path.join(out, "index.json")).read())["items"]
    assert main(["reproduce", "ssm-interactions", "fig3", *SSM, "-o", out]) == 0
    items = json.loads(open(os.path.join(out, "index.json")).read())["items"]
    assert list(items) == ["fig3", "fig6"] and items["fig6"] == before["fig6"]
    assert items["fig3"]["made"] >= first["made"] and items["fig3"]["files"] == first["files"]


def test_reproduce_progress_bar_when_forced_shows_runs_done_of_total(tmp_path, capsys):
    out = str(tmp_path / "ssm")
    assert main(["reproduce", "ssm-interactions", "fig3", *SSM, "-o", out, "--progress"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"ssm-interactions \(quick\):.*5/5 runs.*0 failed", err), err


def test_kk_westwood_writes_index_md_like_the_other_papers(tmp_path):
    from tcplab.experiments import reproduce

    out = tmp_path / "kk"
    reproduce("kk-westwood", items=["rce"], quick=True, buffers=[1.0], out=str(out), verbose=False)
    assert not (out / "setup.md").exists()
    index = (out / "index.md").read_text()
    assert index.startswith("# kk-westwood reproduction") and "**QUICK MODE" in index
    assert re.search(r"^- rce: rce\.csv, rce\.md, rce\.png; made ", index, re.M), index
    assert "## Settings" in index and "Fig. 1/4 buffers" in index


# ---------------------------------------------------------------- the index itself (no simulation)

def _made(out, *names):
    for n in names:
        (out / n).write_text("x")
    return {"files": [str(out / n) for n in names]}


def test_index_accumulates_replaces_and_drops_items_whose_files_are_gone(tmp_path):
    from tcplab.experiments.index import read_index, update_index

    order = ["a", "b"]
    update_index(str(tmp_path), "T", "scen", {"b": _made(tmp_path, "b.csv")}, "setup 1", None, 3, 100, 1.0, order)
    update_index(str(tmp_path), "T", "scen", {"a": _made(tmp_path, "a.csv", "a.png")}, "setup 1", None, 2, 50, 2.0,
                 order)
    rec = read_index(str(tmp_path))
    assert list(rec["items"]) == ["a", "b"] and rec["items"]["a"]["files"] == ["a.csv", "a.png"]
    md = (tmp_path / "index.md").read_text()
    assert "- a: a.csv, a.png; made " in md and "- b: b.csv; made " in md and "(2 runs; 50 bottleneck" in md
    assert md.rsplit("\n<!--", 1)[0].count("setup 1") == 1  # one shared settings section (and the record line)
    update_index(str(tmp_path), "T", "scen", {"a": _made(tmp_path, "a.csv")}, "setup 2", "QUICK MODE: short",
                 1, 1, 0.5, order)
    md = (tmp_path / "index.md").read_text()
    assert "- a (QUICK): a.csv; made " in md and "setup 1" in md and "setup 2" in md
    assert "Some items below are QUICK MODE" in md
    assert "not made by the items above (an earlier tcplab, or another program): a.png" in md
    os.remove(tmp_path / "b.csv")
    update_index(str(tmp_path), "T", "scen", {"a": _made(tmp_path, "a.csv")}, "setup 2", None, 1, 1, 0.5, order)
    assert list(read_index(str(tmp_path))["items"]) == ["a"]


def test_index_of_an_earlier_tcplab_is_read_once(tmp_path):
    from tcplab.experiments.index import update_index

    (tmp_path / "t1.csv").write_text("x")
    (tmp_path / "index.md").write_text("# old\n\n## Scenario\n\ns\n\n## Outputs\n\n- table1: t1.csv\n")
    update_index(str(tmp_path), "T", "scen", {"fig13": _made(tmp_path, "f.png")}, "s", None, 1, 1, 1.0,
                 ["table1", "fig13"])
    md = (tmp_path / "index.md").read_text()
    assert "- table1: t1.csv; made by an earlier tcplab; its settings were not recorded" in md
    assert "- fig13: f.png; made " in md


# ---------------------------------------------------------------- replay's group table

def test_replay_ends_with_a_table_per_group_that_matches_its_flows(tmp_path, capsys):
    spec = tmp_path / "g.toml"
    spec.write_text("""
duration = "3s"
seed = 2
[topology]
kind = "parking_lot"
n_routers = 3
rate = "20Mbps"
buffer = "50KB"
delay = "5ms"
[[traffic]]
name = "short"
count = 4
workload = { kind = "short", interarrival = "0.5s", sizes = { kind = "pareto", mean_size = "50KB", shape = 1.5 } }
[[traffic]]
name = "long"
count = 2
workload = { kind = "long" }
""")
    frozen = tmp_path / "f.json"
    assert main(["generate", str(spec), "-o", str(frozen)]) == 0
    out = tmp_path / "r"
    assert main(["replay", str(frozen), "--mix", "reno+cubic", "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert "simulated" not in cap.err
    text = cap.out
    assert "groups of mix reno+cubic" in text
    rows = {(m.group(1), m.group(2)): m for m in
            re.finditer(r"^(A|B)\s+(short|long|all)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", text, re.M)}
    assert set(rows) == {(g, c) for g in "AB" for c in ("short", "long", "all")}, text
    assert rows[("A", "long")].group(3) == "newreno" and rows[("B", "long")].group(3) == "cubic"
    from tcplab.generate import load_frozen

    facts = load_frozen(frozen).flow_frame()
    flows = pd.read_parquet(out / "flows.parquet")
    for (g, c), m in rows.items():
        sel = (facts["group"] == g) & ((facts["cls"] == c) if c != "all" else True)
        assert int(m.group(4)) == int(sel.sum())
        assert float(m.group(5)) == pytest.approx(flows["goodput_bps"][sel.to_numpy()].mean() / 1e6, abs=5e-4)
    assert main(["replay", str(frozen), "--mix", "reno+cubic", "-o", str(out), "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert [(g["group"], g["class"]) for g in groups][:3] == [("A", "short"), ("A", "long"), ("A", "all")]
