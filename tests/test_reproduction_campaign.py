"""Paper reproductions are campaigns: every run is stored whole in OUT/campaign
and each experiment's extract is computed from the stored run.

- every extract gets from the stored run exactly what it got from the core;
- RunSpecs given as JSON text are keyed like the dict;
- a failed run stops the reproduction with its name and error, the others stay
  stored, and a rerun retries only it; --fresh starts over.
(Resume, damaged files and Dask through reproduce: tests/test_ssm_interactions.py.)
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pytest

import tcplab
from tcplab.experiments import jm_knn, mv_buffers, reproduce
from tcplab.experiments.runner import EXTRACTS, RunsFailed, run_all
from tcplab.sweep import Campaign, CampaignError, run_key
from tcplab.sweep.grid import canonical_json


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
        for i, (x, y) in enumerate(zip(a, b)):
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
    return jobs


def test_every_extract_gets_from_the_stored_run_what_it_got_from_the_core(tmp_path, monkeypatch):
    from tcplab import _core

    jobs = extract_jobs()
    assert {ex for _, _, ex, _ in jobs} == set(EXTRACTS)
    real, seen = _core.run, {}

    def keep(spec_json, *a, **k):  # the very dict the core returned, for the run the campaign stores
        raw = real(spec_json, *a, **k)
        seen[spec_json] = raw
        return raw

    monkeypatch.setattr(_core, "run", keep)
    camp = Campaign(tmp_path / "c")
    rep = camp.run([({"job": k}, spec) for k, spec, _, _ in jobs], workers=1, progress=False)
    assert not rep.failures
    monkeypatch.undo()
    # (the core runs the canonical JSON of each RunSpec)
    runs = {run_key(spec): seen[canonical_json(json.loads(spec) if isinstance(spec, str) else spec)]
            for _, spec, _, _ in jobs}
    assert set(runs) == set(rep.keys)
    # the core's raw dict, table by table: the stored run reads back the same (values, dtypes, cc variable names)
    stored = dict(camp.iter_raw(rep.keys))
    for key, core in runs.items():
        same(core, stored[key], key[:8])
        same(core, camp.load_raw(key), key[:8])
    tables = {t for raw in runs.values() for t, v in raw.items() if t != "meta" and len(next(iter(v.values())))}
    assert tables == {"flows", "links", "files", "flow_ts", "queue_ts", "cc_ts"}  # every table, non-empty
    assert any(len(raw["cc_ts"]["variable_names"]) for raw in runs.values())
    # and every extract computes the same from both
    for (name, spec, ex, args), key in zip(jobs, rep.keys):
        same(EXTRACTS[ex](runs[key], spec, args), EXTRACTS[ex](stored[key], spec, args), name)
    cc = EXTRACTS["cc_traces"](stored[rep.keys[2]], jobs[2][1], jobs[2][3])
    assert cc["cc"] and len(cc["cc_time"]) > 10
    # Results of a stored run have the cc_ts table too
    pd.testing.assert_frame_equal(camp.load(rep.keys[2]).cc_ts, tcplab.Results(runs[rep.keys[2]]).cc_ts)


def test_json_text_specs_are_keyed_like_dicts(tmp_path):
    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="2s")
    spec = sc.to_spec()
    text = json.dumps(spec, indent=1)  # not canonical: keyed by its canonical form all the same
    assert run_key(text) == run_key(spec)
    camp = Campaign(tmp_path / "c")
    assert camp.run([("a", spec)], workers=1, progress=False).ran == 1
    rep = camp.run([("b", text), ("c", json.dumps(spec))], workers=1, progress=False)
    assert rep.ran == 0 and rep.reused == 2 and rep.keys == [run_key(spec)] * 2
    with pytest.raises(ValueError, match=r"jobs\[0\].*not valid JSON"):
        camp.run([("d", "{broken")], workers=1, progress=False)


# ---------------------------------------------------------------- failures and --fresh

def small_jobs():
    base = dict(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", duration="2s")
    return [(f"b{b}", tcplab.Dumbbell(buffer=b, **base).to_spec(), "summary", {"bottleneck": "r1-r2"})
            for b in (5, 10, 20)]


def test_a_failed_run_is_named_the_others_stay_stored_and_a_rerun_retries_only_it(tmp_path, monkeypatch, capsys):
    from tcplab import _core

    jobs = small_jobs()
    real = _core.run

    def flaky(spec_json, *a, **k):
        if '"limit_packets":10' in spec_json:
            raise RuntimeError("disk on fire")
        return real(spec_json, *a, **k)

    monkeypatch.setattr(_core, "run", flaky)
    with pytest.raises(RunsFailed, match=r"(?s)1 of 3 run\(s\) failed.*stored in the campaign.*"
                                         r"b10 \(run [0-9a-f]{12}\): RuntimeError: disk on fire") as e:
        run_all(jobs, workers=2, label="demo", campaign=tmp_path / "c")
    assert [f["jobs"] for f in e.value.failures] == [["b10"]]
    monkeypatch.undo()
    capsys.readouterr()
    res = run_all(jobs, workers=2, label="demo", campaign=tmp_path / "c")  # after the fix
    assert "3 runs: 1 run now, 2 already stored, 0 failed" in capsys.readouterr().err
    assert list(res) == ["b5", "b10", "b20"] and all(r["goodput_bps"][0] > 0 for r in res.values())
    with Campaign(tmp_path / "c") as camp:
        df = camp.results()
        assert sorted(df.job) == ["b10", "b20", "b5"] and set(df.experiment) == {"demo"}


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
