"""Paper reproductions are campaigns: every run is stored whole in OUT/campaign
and each experiment's extract is computed from the stored run.

- every extract gets from the stored run exactly what it got from the core;
- RunSpecs given as JSON text are keyed like the dict;
- a failed run stops the reproduction with its name and error, the others stay
  stored, and a rerun retries only it; --fresh starts over;
- a reproduction killed with SIGKILL resumes without recomputing a stored run
  and gives the tables of an uninterrupted one.
(Resume, damaged files and Dask through reproduce: tests/test_ssm_interactions.py.)
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab.experiments import bbr_coexistence, jm_knn, mv_buffers, reproduce
from tcplab.experiments.runner import EXTRACTS, RunsFailed, as_results, run_all
from tcplab.sweep import Campaign, CampaignError, run_key

# ---------------------------------------------------------------- extract(core raw) == extract(stored run)

def same(a, b, where="") -> None:
    """Equal values of equal types, NaN equal to NaN, numpy arrays by dtype and value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
        return
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b), (where, list(a), list(b))
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, (where, a, b)


def extract_jobs() -> list:
    """Jobs for every extract, between them exercising every table (files, cc_ts included)."""
    from tcplab.experiments.ssm_interactions import Setup, _mix_jobs

    ww = tcplab.Dumbbell(n_flows=2, bottleneck_rate="10Mbps", rtt="40ms", buffer="1BDP", duration="8s",
                         sample_interval="50ms", algorithm=["westwood-bs", "newreno"], seed=2, name="ww")
    args = {"bottleneck": ww.bottleneck_links()[0]}
    jobs = [("summary", ww.to_spec(), "summary", dict(args, windows=[(1.0, 4.0), (2.5, 8.0)])),
            ("traces", ww.to_spec(), "traces", args),
            ("cc_traces", ww.to_spec(), "cc_traces", args)]
    # generated parking lot with files (the spec as JSON text, as ssm-interactions passes it)
    ssm = _mix_jobs(Setup(True, configs=1, duration=5.0, protocols=["Reno", "CUBIC"]))
    jobs += [(f"flows_files {k}", spec, ex, a) for k, spec, ex, a in ssm[:3]]
    jobs.append(jm_knn._job("jm_knn", jm_knn.scenario(0.01, [(jm_knn.CUBIC, jm_knn.KNN)], seed=3, duration=10.0)))
    setup = mv_buffers.Setup(True)
    for key, spec, ex, a in mv_buffers._fig4_jobs(setup)[:1] + mv_buffers._fig5_jobs(setup)[:1] + \
            mv_buffers._real_jobs(setup)[:1]:
        jobs.append((f"mv_buffers {key}", spec, ex, a))
    # one short BBR-against-CUBIC point of the bbr-coexistence study
    coex = bbr_coexistence.Setup(True, protocols=["bbr"], duration=4.0)
    key, spec, ex, a = bbr_coexistence._jobs(coex)[0]
    jobs.append((f"bbr_coexistence {key}", spec, ex, a))
    return jobs


def test_every_extract_gets_from_the_stored_run_what_it_got_from_the_core(tmp_path):
    from tcplab import _core

    jobs = extract_jobs()
    assert {ex for _, _, ex, _ in jobs} == set(EXTRACTS)
    camp = Campaign(tmp_path / "c")
    rep = camp.run([({"job": k}, spec) for k, spec, _, _ in jobs], workers=1, progress=False)
    assert not rep.failures
    # the core's own dict for each run (the campaign's worker runs the RunSpec's JSON as it was given; runs
    # are deterministic, so running it again here gives what the campaign's worker got)
    runs = {run_key(spec): _core.run(spec if isinstance(spec, str) else json.dumps(spec)) for _, spec, _, _ in jobs}
    assert set(runs) == set(rep.keys)
    # the core's raw dict, table by table: the stored run reads back the same (values, dtypes, cc variable
    # names); the run's own wall time (meta.wall_s) is the one measure that differs between two runs
    stored = dict(camp.iter_raw(rep.keys))
    for key, raw in runs.items():
        assert 0 < stored[key]["meta"]["wall_s"] < 60
        raw["meta"]["wall_s"] = stored[key]["meta"]["wall_s"]
    for key, core in runs.items():
        same(core, stored[key], key[:8])
        same(core, camp.load_raw(key), key[:8])
    tables = {t for raw in runs.values() for t, v in raw.items() if t != "meta" and len(next(iter(v.values())))}
    assert tables == {"flows", "links", "files", "flow_ts", "queue_ts", "cc_ts"}  # every table, non-empty
    assert any(len(raw["cc_ts"]["variable_names"]) for raw in runs.values())
    # and every extract computes the same from both
    # (each from the run as Results, as run_all gives it)
    for (name, spec, ex, args), key in zip(jobs, rep.keys, strict=True):
        same(EXTRACTS[ex](as_results(runs[key], spec), args), EXTRACTS[ex](as_results(stored[key], spec), args), name)
    cc = EXTRACTS["cc_traces"](as_results(stored[rep.keys[2]], jobs[2][1]), jobs[2][3])
    assert cc["cc"] and len(cc["cc_time"]) > 10
    # Results of a stored run have the cc_ts table too
    pd.testing.assert_frame_equal(camp.load(rep.keys[2]).cc_ts, tcplab.Results(runs[rep.keys[2]]).cc_ts)


def test_json_text_specs_are_keyed_like_dicts(tmp_path):
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="2s")
    spec = sc.to_spec()
    text = json.dumps(spec, indent=1)  # another layout: keyed by the RunSpec the core reads all the same
    assert run_key(text) == run_key(spec)
    camp = Campaign(tmp_path / "c")
    assert camp.run([("a", spec)], workers=1, progress=False).ran == 1
    rep = camp.run([("b", text), ("c", json.dumps(spec))], workers=1, progress=False)
    assert rep.ran == 0 and rep.reused == 2 and rep.keys == [run_key(spec)] * 2
    with pytest.raises(tcplab.SpecError, match=r"^jobs\[0\]: invalid run description: key must be a string"):
        camp.run([("d", "{broken")], workers=1, progress=False)


# ---------------------------------------------------------------- failures and --fresh

def small_jobs():
    base = dict(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", duration="2s")
    return [(f"b{b}", tcplab.Dumbbell(buffer=b, **base).to_spec(), "summary", {"bottleneck": "r1-r2"})
            for b in (5, 10, 20)]


def test_a_failed_run_is_named_the_others_stay_stored_and_a_rerun_retries_only_it(tmp_path, faults, capsys):
    from tcplab import _core

    jobs = small_jobs()
    faults('"limit_packets":10', "error:RuntimeError: disk on fire")
    with pytest.raises(RunsFailed, match=r"(?s)1 of 3 run\(s\) failed.*stored in the campaign.*"
                                         r"b10 \(run [0-9a-f]{12}\): RuntimeError: disk on fire") as e:
        run_all(jobs, workers=2, label="demo", campaign=tmp_path / "c")
    assert [f["jobs"] for f in e.value.failures] == [["b10"]]
    _core._clear_faults()
    capsys.readouterr()
    res = run_all(jobs, workers=2, label="demo", campaign=tmp_path / "c")  # after the fix
    assert "3 runs: 1 run now, 2 already stored, 0 failed" in capsys.readouterr().err
    assert list(res) == ["b5", "b10", "b20"] and all(r["goodput_bps"][0] > 0 for r in res.values())
    with Campaign(tmp_path / "c") as camp:
        df = camp.results()
        assert sorted(df.job) == ["b10", "b20", "b5"] and set(df.experiment) == {"demo"}


def test_cli_names_the_failed_run_and_exits_1_then_resumes(tmp_path, faults, capsys):
    from tcplab import _core
    from tcplab.cli import main

    argv = ["reproduce", "ssm-interactions", "fig3", "--quick", "--configs", "1", "--duration", "3",
            "--protocols", "Reno,CUBIC", "-o", str(tmp_path)]
    faults('"algorithm":"cubic"', "error:RuntimeError: cubic is broken today", unless='"algorithm":"reno"')
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert re.search(r"error: ssm-interactions \(quick\): 2 of 5 run\(s\) failed", err), err
    assert "L1/c1/all-cubic (run " in err and "L4/c1/all-cubic (run " in err and "cubic is broken today" in err
    assert not (tmp_path / "index.md").exists()
    _core._clear_faults()
    assert main(argv) == 0
    assert "5 runs: 2 run now, 3 already stored, 0 failed" in capsys.readouterr().err


def test_fresh_starts_a_new_campaign(tmp_path, capsys):
    kw = dict(items=["fig3"], quick=True, configs=1, duration=3.0, protocols=["Reno", "CUBIC"], out=str(tmp_path))
    reproduce("ssm-interactions", **kw)
    assert "5 run now, 0 already stored" in capsys.readouterr().err
    first = set(os.listdir(tmp_path / "campaign" / "segments"))
    reproduce("ssm-interactions", **kw)
    assert "0 run now, 5 already stored" in capsys.readouterr().err
    reproduce("ssm-interactions", resume=False, **kw)
    assert "5 run now, 0 already stored" in capsys.readouterr().err
    assert not first & set(os.listdir(tmp_path / "campaign" / "segments"))
    # a directory that is not a campaign is never deleted
    (tmp_path / "other" / "campaign").mkdir(parents=True)
    (tmp_path / "other" / "campaign" / "mine.txt").write_text("keep")
    with pytest.raises(CampaignError, match="not a tcplab campaign"):
        reproduce("ssm-interactions", resume=False, **dict(kw, out=str(tmp_path / "other")))
    assert (tmp_path / "other" / "campaign" / "mine.txt").exists()


# ---------------------------------------------------------------- kill -9 and resume

#: A quick ssm-interactions reproduction of 16 runs of about 0.1 s each (2 configurations, L in {1, 4}).
KILL_ARGS = ["ssm-interactions", "fig3", "fig9", "--quick", "--configs", "2", "--duration", "40",
             "--protocols", "Reno,CUBIC,H-TCP"]
KILL_TOTAL = 2 * (2 * 3 + 2)


def stored_runs(out) -> dict:
    """{run key: [segment ids]} from the segments on disk (a segment appears whole, by one rename)."""
    found: dict = {}
    for p in glob.glob(os.path.join(str(out), "campaign", "segments", "*", "segment.json")):
        with open(p) as fh:
            m = json.load(fh)
        for r in m["runs"]:
            found.setdefault(r["key"], []).append(m["id"])
    return found


def children(pid: int) -> list[int]:
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.split("/")[2]))
    return out


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_reproduction_killed_with_sigkill_resumes_and_recomputes_no_stored_run(tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "tcplab", "reproduce", *KILL_ARGS, "-o", str(out)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(tcplab.__file__)),
                                                                   os.environ.get("PYTHONPATH")] if p))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(stored_runs(out)) < 4:
            assert proc.poll() is None, f"finished before it could be killed: {proc.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        workers = children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    deadline = time.monotonic() + 10
    while not all(gone(p) for p in workers):  # pool workers exit when their parent dies
        assert time.monotonic() < deadline, "pool workers outlived their parent"
        time.sleep(0.02)
    before = stored_runs(out)
    print(f"killed with {len(before)} of {KILL_TOTAL} runs stored")
    assert 4 <= len(before) < KILL_TOTAL, f"{len(before)} of {KILL_TOTAL} runs stored when killed"
    assert not os.path.exists(out / "index.md")

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    m = re.search(r"(\d+) runs: (\d+) run now, (\d+) already stored, 0 failed", again.stderr)
    assert m and [int(x) for x in m.groups()] == [KILL_TOTAL, KILL_TOTAL - len(before), len(before)], again.stderr
    after = stored_runs(out)
    assert len(after) == KILL_TOTAL
    for key, segs in before.items():  # nothing stored was run again: same segment, stored once
        assert after[key] == segs
    assert all(len(s) == 1 for s in after.values())

    # the same tables as an uninterrupted reproduction
    ref = tmp_path / "ref"
    reproduce("ssm-interactions", items=["fig3", "fig9"], quick=True, configs=2, duration=40.0,
              protocols=["Reno", "CUBIC", "H-TCP"], out=str(ref), verbose=False)
    csvs = sorted(os.path.basename(p) for p in glob.glob(str(ref / "*.csv")))
    assert csvs == ["fig3.csv", "fig9.csv"]
    assert sorted(os.path.basename(p) for p in glob.glob(str(out / "*.csv"))) == csvs
    for name in csvs:
        pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(ref / name))

    # `tcplab report OUT` shows the campaign's runs
    from tcplab.cli import main

    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert f"{KILL_TOTAL} runs, {KILL_TOTAL} ok" in page and "L4/c2/reno+htcp" in page and "fig3.csv" in page
