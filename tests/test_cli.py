"""The tcplab command: input errors exit 2 with one line naming the field and
no traceback; `run` writes Parquet tables, summary.json, scenario.toml and a
PNG; `--json` prints the summary; `algorithms` lists the core's algorithms.
Tests that run simulations need the compiled core (tcplab._core)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tcplab.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMALL = """
    name = "small"
    [dumbbell]
    n_flows = 2
    bottleneck_rate = "10Mbps"
    rtt = "20ms"
    buffer = "1BDP"
    [run]
    duration = "3s"
    measure_window = "2s"
    sample_interval = "50ms"
    seed = 3
"""


def write(tmp_path, text, name="sc.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    return e


@pytest.mark.parametrize(
    "text, expect",
    [
        (SMALL.replace('buffer = "1BDP"', 'bufer = "1BDP"'),
         "error: dumbbell.bufer: unknown key (did you mean 'buffer'?)"),
        (SMALL.replace('"10Mbps"', '"10Mbsp"'), "error: dumbbell.bottleneck_rate: cannot parse '10Mbsp' as a rate"),
        (SMALL.replace('seed = 3', 'sed = 3'), "error: run.sed: unknown key"),
        (SMALL.replace('n_flows = 2', 'n_flows = 2\nalgorithm = "newrneo"'),
         "error: dumbbell.algorithm: unknown algorithm 'newrneo' (did you mean 'newreno'"),
        ("[dumbbell\n", "error: {path}: invalid TOML: "),
    ],
)
def test_bad_scenario_exit_2(tmp_path, capsys, text, expect):
    path = write(tmp_path, text)
    assert main(["run", path, "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(expect.format(path=path)), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_missing_file_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'none.toml'}: no such file\n"


def test_bad_seed_and_duration(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    assert main(["run", path, "--duration", "3 parsecs"]) == 2
    assert capsys.readouterr().err.startswith("error: --duration: cannot parse '3 parsecs' as a time")
    assert main(["run", path, "--seed", "-1"]) == 2
    assert capsys.readouterr().err.startswith("error: --seed: must be a non-negative integer")


def test_subprocess_error_has_no_traceback(tmp_path):
    path = write(tmp_path, SMALL.replace('rtt = "20ms"', 'rtt = "-20ms"'))
    p = subprocess.run([sys.executable, "-m", "tcplab", "run", path], capture_output=True, text=True, env=env(),
                       timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == "error: dumbbell.rtt: must be positive, got '-20ms'"
    assert p.stdout == ""


def test_cli_import_is_light():
    code = "import sys, tcplab.cli; print(sorted(m for m in ('pandas', 'matplotlib', 'pyarrow') if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


# ---------------------------------------------------------------- needs the core


def test_run_writes_results(tmp_path, capsys):
    from tcplab import _core  # noqa: F401  (the compiled core must exist)

    path = write(tmp_path, SMALL, "small.toml")
    out = tmp_path / "res"
    assert main(["run", path, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "flow1" in text and "flow2" in text and "r1-r2" in text and "goodput (Mbit/s)" in text
    names = {p.name for p in out.iterdir()}
    assert {"flows.parquet", "links.parquet", "files.parquet", "flow_ts.parquet", "queue_ts.parquet",
            "summary.json", "scenario.toml", "cwnd_queue.png"} <= names
    assert (out / "cwnd_queue.png").read_bytes()[:4] == b"\x89PNG"
    summ = json.loads((out / "summary.json").read_text())
    assert summ["scenario"] == "small" and len(summ["flows"]) == 2

    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows["name"]) == ["flow1", "flow2"]


def test_run_loss_trace(tmp_path, capsys):
    """`--loss-trace` writes the trace tables, keeps the setting in the saved scenario and prints the
    accounting of retransmissions; without it no trace files appear."""
    import pandas as pd

    path = write(tmp_path, SMALL.replace('buffer = "1BDP"', "buffer = 4"), "small.toml")
    out = tmp_path / "res"
    assert main(["run", path, "-o", str(out), "--loss-trace", "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "retransmissions (loss trace)" in text and "0 needless by duplicate ACKs" in text
    drops = pd.read_parquet(out / "drop_trace.parquet")
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(drops) == flows["data_packets_dropped"].sum() + flows["acks_dropped"].sum() > 0
    assert len(pd.read_parquet(out / "retransmit_trace.parquet")) == flows["retransmits"].sum()
    assert "loss_trace = true" in (out / "scenario.toml").read_text()
    assert main(["run", path, "-o", str(tmp_path / "plain"), "--no-plot"]) == 0
    assert "retransmissions (loss trace)" not in capsys.readouterr().out
    assert not (tmp_path / "plain" / "drop_trace.parquet").exists()


def test_run_json(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, SMALL, "small.toml")
    assert main(["run", path, "-o", str(tmp_path / "o"), "--json", "--seed", "5", "--duration", "2.5s"]) == 0
    summ = json.loads(capsys.readouterr().out)
    assert set(summ) >= {"scenario", "flows", "links", "meta"}
    for f in summ["flows"]:
        assert set(f) >= {"id", "name", "algorithm", "goodput_bps", "retransmits", "timeouts"}
        assert 0 < f["goodput_bps"] <= 10e6
    bott = [ln for ln in summ["links"] if ln["name"] == "r1-r2"][0]
    assert set(bott) >= {"name", "utilization", "drops"} and 0 < bott["utilization"] <= 1.0
    assert summ["meta"]["seed"] == 5
    assert summ["meta"]["sim_time"] == pytest.approx(2.5)


def test_default_outdir(tmp_path, monkeypatch, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, SMALL, "mysc.toml")
    monkeypatch.chdir(tmp_path)
    assert main(["run", path, "--no-plot"]) == 0
    assert (tmp_path / "out" / "mysc" / "summary.json").exists()


def test_json_without_out_writes_nothing(tmp_path, monkeypatch, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, SMALL, "mysc.toml")
    monkeypatch.chdir(tmp_path)
    before = sorted(os.listdir(tmp_path))
    assert main(["run", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"] == "small"
    assert sorted(os.listdir(tmp_path)) == before  # no out/ folder: the summary went to stdout only
    assert main(["run", path, "--json", "-o", "given"]) == 0  # -o still writes
    assert (tmp_path / "given" / "summary.json").exists()


def test_core_spec_error_exit_2(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    # a generic scenario whose flow has no route: only the core can tell
    text = """
        [run]
        duration = "1s"
        [[nodes]]
        name = "a"
        [[nodes]]
        name = "b"
        [[nodes]]
        name = "c"
        [[links]]
        name = "a-b"
        src = "a"
        dst = "b"
        rate = "1Mbps"
        delay = "1ms"
        [[flows]]
        src = "a"
        dst = "c"
    """
    assert main(["run", write(tmp_path, text), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "route" in err and "Traceback" not in err


def test_algorithms(capsys):
    from tcplab import _core

    assert main(["algorithms", "--json"]) == 0
    algos = json.loads(capsys.readouterr().out)
    names = {a["name"] for a in algos}
    assert "newreno" in names or "reno" in names
    assert [a["name"] for a in algos] == [a["name"] for a in _core.algorithms()]
    assert main(["algorithms"]) == 0
    assert "newreno" in capsys.readouterr().out


def test_duration_override_keeps_window_fraction(tmp_path, capsys):
    from tcplab import _core  # noqa: F401

    path = write(tmp_path, SMALL, "small.toml")  # 3 s run measured over the last 2 s
    assert main(["run", path, "-o", str(tmp_path / "o"), "--duration", "1.5s"]) == 0
    cap = capsys.readouterr()
    assert "note: the measurement window does not fit in 1.5 s; measuring over [0.5, 1.5] s" in cap.err
    assert "goodput over [0.5, 1.5] s" in cap.out
