"""Campaigns: sweeps, the result store, local pool and Dask execution (issue 4).

The "what must hold" list of the issue, each protected by a test here:
kill-and-resume with SIGKILL, local pool == Dask LocalCluster, damaged and
foreign files handled. The overhead figure is measured by a benchmark that
prints it (`tcplab bench --campaign`, `python -m tcplab.devtools.overhead`), never
asserted here; test_overhead_benchmark_runs only checks that its figures are
consistent.
"""

from __future__ import annotations

import glob
import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcplab
from tcplab.sweep import (
    Campaign,
    CampaignError,
    CampaignWarning,
    Sweep,
    SweepError,
    aggregate,
    load_sweep,
    run_key,
    t_interval,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny(**kw):
    args = dict(n_flows=2, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="3s",
                sample_interval="50ms", access_delay="uniform", seed=1, name="tiny")
    args.update(kw)
    return tcplab.Dumbbell(**args)


def stored_hashes(camp: Campaign) -> dict:
    """{key: {table: content hash}}: what a run stored, value for value and dtype for dtype
    (segments group runs differently from one sweep to the next, so files are not compared)."""
    import hashlib

    import pandas as pd

    out = {}
    for key in camp.status():
        res = camp.load(key)
        out[key] = {}
        for t in ("flows", "links", "files", "flow_ts", "queue_ts", "qdisc_ts"):
            df = getattr(res, t)
            h = hashlib.sha256(repr([(c, str(df[c].dtype)) for c in df.columns]).encode())
            h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
            out[key][t] = h.hexdigest()
        out[key]["spec"] = json.dumps(res.spec, sort_keys=True)
    return out


def segments(out) -> dict:
    """{run key: (segment id, inode, mtime_ns of its segment.json)} read from the segments on disk."""
    found = {}
    for p in glob.glob(os.path.join(str(out), "segments", "*", "segment.json")):
        st = os.stat(p)
        with open(p) as fh:
            m = json.load(fh)
        for r in m["runs"]:
            found[r["key"]] = (m["id"], st.st_ino, st.st_mtime_ns)
    return found


def comparable(df):
    return df.drop(columns=["wall_s"]).sort_values("key").reset_index(drop=True)


# ---------------------------------------------------------------- sweeps

def test_grid_zip_and_seeds_expand_in_order():
    sw = Sweep(tiny(), grid={"buffer": ["0.5BDP", "1BDP"], "n_flows": [1, 2]},
               zip={"rtt": ["20ms", "40ms"], "duration": ["2s", "3s"]}, seeds=2)
    pts = list(sw.points())
    assert len(sw) == len(pts) == 2 * 2 * 2 * 2
    assert pts[0] == {"buffer": "0.5BDP", "n_flows": 1, "rtt": "20ms", "duration": "2s", "seed": 1}
    assert pts[1]["seed"] == 2 and pts[2]["rtt"] == "40ms" and pts[2]["duration"] == "3s"
    sc = sw.scenario(pts[-1])
    assert (sc.n_flows, sc.rtt, sc.duration, sc.seed) == (2, "40ms", "3s", 2)


def test_sweep_errors_name_the_parameter():
    with pytest.raises(SweepError, match="bufer.*did you mean 'buffer'"):
        Sweep(tiny(), grid={"bufer": [1]})
    with pytest.raises(SweepError, match=r"zip\[0\].*equal lengths"):
        Sweep(tiny(), zip={"rtt": ["1ms", "2ms"], "duration": ["1s"]})
    with pytest.raises(SweepError, match="seeds"):
        Sweep(tiny(), grid={"seed": [1, 2]})
    with pytest.raises(SweepError, match=r"point \(buffer=-1.*buffer"):
        Sweep(tiny(), grid={"buffer": [-1]}).jobs()


def test_generic_scenario_parameters_are_paths(tmp_path):
    sc = tiny(n_flows=1).to_generic()
    sw = Sweep(sc, grid={"flows[0].algorithm": ["newreno", "reno"], "links[0].buffer": [5, 10]})
    specs = [s for _, s, _ in sw.jobs()]
    assert [s["links"][0]["queue"]["limit_packets"] for s in specs] == [5, 10, 5, 10]
    with pytest.raises(SweepError, match="generic scenario use a path"):
        Sweep(sc, grid={"buffer": [1]})


def test_sweep_file_with_base_path_and_table(tmp_path):
    (tmp_path / "base.toml").write_text(tiny().to_toml())
    (tmp_path / "s.toml").write_text('seeds = [3, 5]\nbase = "base.toml"\nworkers = 1\n[grid]\nbuffer = [4, 8]\n')
    sw, opts = load_sweep(tmp_path / "s.toml")
    assert len(sw) == 4 and sw.seeds == [3, 5] and opts == {"workers": 1} and sw.name == "s"
    sw2, _ = load_sweep(os.path.join(ROOT, "examples", "sweep-buffers.toml"))
    assert len(sw2) == 4 * 3 * 2 * 3
    # the stored description reads back as the same sweep
    (tmp_path / "again.toml").write_text(sw2.to_toml())
    sw3, _ = load_sweep(tmp_path / "again.toml")
    assert [s for _, s, _ in sw3.jobs()] == [s for _, s, _ in sw2.jobs()]


# ---------------------------------------------------------------- store

def test_run_missing_extends_a_grid_and_queries(tmp_path):
    camp = Campaign(tmp_path / "c")
    small = Sweep(tiny(), grid={"buffer": [4, 8]}, seeds=2)
    r1 = camp.run(small, workers=1, progress=False)
    assert (r1.ran, r1.reused, r1.failures) == (4, 0, [])
    big = Sweep(tiny(), grid={"buffer": [4, 8, 16]}, seeds=2)
    r2 = camp.run(big, workers=2, progress=False)
    assert (r2.ran, r2.reused) == (2, 4)  # only the new grid point's two seeds ran
    df = camp.results(big)
    assert len(df) == 6 and list(df["buffer"]) == [4, 4, 8, 8, 16, 16] and list(df["seed"]) == [1, 2] * 3
    for col in ("total_goodput_bps", "utilization", "drops", "goodput_bps.flow1", "goodput_bps.flow2", "key"):
        assert col in df.columns
    assert df["total_goodput_bps"].gt(0).all()
    assert (df["goodput_bps.flow1"] + df["goodput_bps.flow2"] - df["total_goodput_bps"]).abs().max() < 1e-6
    # time series on demand, identical to a direct run
    import pandas.testing as pdt

    res = camp.load(df["key"][0])
    direct = tcplab.run(big.scenario({"buffer": 4, "seed": 1}))
    for t in ("flows", "links", "files", "flow_ts", "queue_ts", "cc_ts", "qdisc_ts"):  # every table, every dtype
        pdt.assert_frame_equal(getattr(res, t), getattr(direct, t))
    assert res.spec == big.scenario({"buffer": 4, "seed": 1}).to_spec() and res.meta["events"] == direct.meta["events"]
    assert camp.timeseries(df["key"][0], "flow_ts")["flow_name"].tolist() == direct.flow_ts["flow_name"].tolist()
    assert camp.timeseries(df["key"][0][:10], "queue_ts")["packets"].tolist() == direct.queue_ts["packets"].tolist()
    agg = camp.aggregate(big)
    assert list(agg["n"]) == [2, 2, 2] and {"total_goodput_bps.ci_low", "total_goodput_bps.ci_high"} <= set(agg)
    # reopening finds everything; nothing runs again
    camp.close()
    assert Campaign(tmp_path / "c").run(big, progress=False).ran == 0


def test_closing_leaves_the_index_log_and_a_lost_log_is_rebuilt_from_the_segments(tmp_path):
    """Closing does not checkpoint the index (its log stays, as after a crash); what a lost log held
    (a power failure takes commits that were never flushed) is adopted again from segments/."""
    d = tmp_path / "c"
    camp = Campaign(d)
    sw = Sweep(tiny(duration="1s"), grid={"buffer": [3, 5, 7]}, seeds=2)
    assert camp.run(sw, workers=2, progress=False).ran == 6
    before = comparable(camp.results(sw))
    camp.close()
    assert (d / "index.sqlite-wal").stat().st_size > 0  # the last commits are in the log, not the file
    camp = Campaign(d)  # the log is read back
    import pandas.testing as pdt

    pdt.assert_frame_equal(comparable(camp.results(sw)), before)
    assert camp.run(sw, workers=2, progress=False).ran == 0
    camp.close()
    for f in ("index.sqlite-wal", "index.sqlite-shm"):  # the log lost: the index file alone
        (d / f).unlink()
    import sqlite3

    with sqlite3.connect(d / "index.sqlite") as db:  # what the file holds without its log (here: not even the tables)
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        indexed = db.execute("SELECT count(*) FROM runs").fetchone()[0] if "runs" in tables else 0
    assert indexed < 6
    camp = Campaign(d)
    assert camp.run(sw, workers=2, progress=False).ran == 0  # every run adopted from its segment
    pdt.assert_frame_equal(comparable(camp.results(sw)), before)
    camp.close()


def test_t_interval_matches_the_t_table():
    mean, half, sd, n = t_interval([1.0, 2.0, 3.0, 4.0], 0.95)
    # t_{0.975, 3} = 3.182 (any t table); s = sqrt(5/3)
    assert (mean, n) == (2.5, 4) and abs(half - 3.182446 * (5 / 3) ** 0.5 / 2) < 1e-5
    import pandas as pd

    agg = aggregate(pd.DataFrame({"x": [1, 1, 2], "m": [1.0, 3.0, 5.0], "seed": [1, 2, 1]}), metrics=["m"])
    assert list(agg["x"]) == [1, 2] and list(agg["m.mean"]) == [2.0, 5.0]


def test_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    good = tiny().to_spec()
    bad = dict(good, flows=[dict(good["flows"][0], cc={"algorithm": "nosuchcc", "params": {}})])
    camp = Campaign(tmp_path / "c")
    rep = camp.run([("good", good), ({"case": "bad"}, bad)], workers=2, progress=False)
    assert rep.ran == 2 and len(rep.failures) == 1
    assert "nosuchcc" in rep.failures[0]["error"] and "FAILED" in rep.summary()
    assert len(camp.results()) == 1 and len(camp.results(include_failed=True)) == 2
    assert camp.failures()["case"].tolist() == ["bad"]
    # a failure is not rerun by default, and is listed again
    rep2 = camp.run([("good", good), ({"case": "bad"}, bad)], progress=False)
    assert rep2.ran == 0 and len(rep2.failures) == 1
    assert camp.run([({"case": "bad"}, bad)], retry_failed=True, progress=False).ran == 1


def test_campaign_refuses_foreign_directories(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CampaignError, match="not empty and is not a tcplab campaign"):
        Campaign(tmp_path)
    d = tmp_path / "x"
    d.mkdir()
    (d / "campaign.json").write_text('{"format": "something-else"}')
    with pytest.raises(CampaignError, match="not a tcplab campaign"):
        Campaign(d)
    (d / "campaign.json").write_text("{garbage")
    with pytest.raises(CampaignError, match="unreadable campaign marker"):
        Campaign(d)
    with pytest.raises(CampaignError, match="no campaign.json"):
        Campaign(tmp_path / "absent", create=False)


@pytest.mark.filterwarnings("ignore::tcplab.sweep.CampaignWarning")
def test_damaged_and_foreign_files_are_never_taken_for_results(tmp_path):
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16]})
    jobs = sw.jobs()
    camp = Campaign(tmp_path / "c")
    for job in jobs:  # one segment per run, to damage each its own way
        camp.run([job], workers=1, progress=False)
    keys = list(camp.results(sw)["key"])
    seg = {k: camp.manifest(k)["segment"] for k in keys}
    assert len(set(seg.values())) == 3
    camp.close()
    d = tmp_path / "c"
    # foreign files: warned about and ignored
    (d / "README.txt").write_text("notes")
    (d / "segments" / "zz").mkdir()
    (d / "segments" / "stray.csv").write_text("1,2")
    # a leftover of a killed writer in tmp/: never read
    (d / "tmp" / f"{seg[keys[0]]}.otherhost.1.abcd").mkdir()
    # damage: a flipped byte (same size), a truncated table, a lost manifest
    def sd(k):
        return d / "segments" / seg[k]
    p = sd(keys[0]) / "flow_ts.parquet"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
    (sd(keys[1]) / "flows.parquet").write_bytes(b"PAR1")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        camp = Campaign(d)
    msgs = " ".join(str(x.message) for x in w if issubclass(x.category, CampaignWarning))
    assert "README.txt" in msgs and "zz" in msgs and "stray.csv" in msgs
    with pytest.raises(CampaignError, match="checksum mismatch"):
        camp.load(keys[0])
    with pytest.raises(CampaignError, match="damaged"):
        camp.load(keys[1])
    with pytest.raises(CampaignError, match="checksum mismatch"):
        camp.timeseries(keys[0], "flow_ts")
    # verify moves the damaged segments aside and the next sweep computes their runs again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problems = camp.verify()
        assert len(problems) == 2
        rep = camp.run(sw, workers=1, progress=False)
    assert rep.ran == 2 and rep.reused == 1
    assert camp.load(keys[0]).flows["goodput_bps"].gt(0).all()
    # an index that is not a database: moved aside with a warning and rebuilt from the segments
    camp.close()
    (d / "index.sqlite").write_bytes(b"this is not sqlite" * 100)
    for f in ("index.sqlite-wal", "index.sqlite-shm"):
        if (d / f).exists():
            (d / f).unlink()
    with pytest.warns(CampaignWarning, match="unreadable index"):
        camp = Campaign(d)
    assert sorted(camp.results(sw)["key"]) == sorted(keys)
    # a segment without a manifest is quarantined, not adopted
    camp.close()
    (sd(keys[2]) / "segment.json").unlink()
    import sqlite3
    with sqlite3.connect(d / "index.sqlite") as db:
        db.execute("DELETE FROM runs WHERE segment = ?", (seg[keys[2]],))
        db.execute("DELETE FROM segments WHERE id = ?", (seg[keys[2]],))
    with pytest.warns(CampaignWarning, match="no segment.json"):
        camp = Campaign(d)
    assert keys[2] not in camp.status()
    assert camp.run(sw, workers=1, progress=False).ran == 1
    # a segment the index lost (killed between rename and index) is adopted after a full check
    camp.close()
    with sqlite3.connect(d / "index.sqlite") as db:
        db.execute("DELETE FROM runs")
        db.execute("DELETE FROM segments")
    camp = Campaign(d)
    assert sorted(camp.status()) == sorted(keys) and camp.run(sw, workers=1, progress=False).ran == 0
    # an old-format campaign is refused with a clear message
    camp.close()
    (d / "campaign.json").write_text('{"format": "tcplab-campaign", "format_version": 1}')
    with pytest.raises(CampaignError, match="version 1.*earlier tcplab"):
        Campaign(d)


def test_chunks_adapt_and_a_worker_hands_back_what_it_did_not_run(tmp_path):
    from tcplab.sweep.execute import Chunker
    from tcplab.sweep.worker import execute_chunk

    jobs = [{"key": f"{i:032x}"} for i in range(1000)]
    ch = Chunker(jobs, workers=2, target_s=0.1, min_s=0.02, first=2)
    assert len(ch.next()) == 2  # nothing measured yet: small
    ch.measured(2, 0.002)  # 1 ms per run
    assert len(ch.next()) == 100  # 0.1 s of work
    ch.measured(10, 1.0)  # 100 ms per run: one run per chunk
    assert len(ch.next()) == 1
    ch.per_run = 0.001
    ch.queue = ch.queue.__class__(jobs[:30])
    sizes = []
    while ch:
        sizes.append(len(ch.next()))
    assert sizes == [20, 10]  # never below min_s of work, except what is left
    camp = Campaign(tmp_path / "c")
    _, todo = camp.plan(Sweep(tiny(), grid={"buffer": [4, 8, 16]}).jobs())
    m = execute_chunk(todo, camp.path, fsync=False, budget_s=0.0)  # over budget at once: one run, the rest handed back
    assert [r["key"] for r in m["runs"]] == [todo[0]["key"]]
    camp.close()
    camp = Campaign(tmp_path / "c")  # the segment was not indexed: adopted on open
    assert list(camp.status()) == [todo[0]["key"]]
    rep = camp.run([(j["params"], j["spec_json"]) for j in todo], workers=2, progress=False)
    assert (rep.ran, rep.reused) == (2, 1)


def test_a_stopped_chunk_hands_back_the_runs_it_did_not_start(tmp_path):
    from tcplab.sweep.worker import execute_chunk

    camp = Campaign(tmp_path / "c")
    _, todo = camp.plan(Sweep(tiny(), grid={"buffer": [4, 8, 16]}).jobs())
    seen = []
    m = execute_chunk(todo, camp.path, fsync=False, should_stop=lambda: True, progress=seen.append)
    assert [r["key"] for r in m["runs"]] == [todo[0]["key"]]  # at least one run, then it stops
    assert seen == [1, -1]  # run 0 started, then one run stored


def test_a_local_chunk_is_stored_in_several_segments_when_it_takes_long(tmp_path, monkeypatch):
    from tcplab.sweep import execute

    monkeypatch.setattr(execute, "LOCAL_CHUNK_S", 0.0)  # a segment after every run
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16]}, seeds=3)
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=2, progress=False)
    assert rep.ran == len(sw) and not rep.failures
    segment_files = glob.glob(str(tmp_path / "c" / "segments" / "*" / "segment.json"))
    runs_per_segment = [len(json.load(open(p))["runs"]) for p in segment_files]
    assert runs_per_segment == [1] * len(sw)


def test_a_run_that_kills_its_worker_is_run_again_then_recorded_as_failed(tmp_path, faults):
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16]}, seeds=4)  # seeds 1..4
    faults('"seed":3,', "exit:3")  # a pool worker dies inside every run of seed 3
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=2, progress=False)
    crashing = {k for k, p in zip(rep.keys, rep.params, strict=True) if p["seed"] == 3}
    assert rep.ran == len(sw) and {f["key"] for f in rep.failures} == crashing
    assert all("worker process died (exit code 3)" in f["error"] for f in rep.failures)
    stored = segments(tmp_path / "c")
    assert sorted(stored) == sorted(rep.keys)  # every run once: the others of a dead worker ran again
    segment_files = glob.glob(str(tmp_path / "c" / "segments" / "*" / "segment.json"))
    n_records = sum(len(json.load(open(p))["runs"]) for p in segment_files)
    assert n_records == len(sw)
    from tcplab import _core

    _core._clear_faults()
    rep = camp.run(sw, workers=2, progress=False, retry_failed=True)
    assert rep.ran == len(crashing) and not rep.failures


def test_a_run_that_kills_its_worker_once_is_stored_like_the_others(tmp_path, faults):
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16]}, seeds=3)
    flag = tmp_path / "died-once"
    faults('"seed":2,', "exit:9", once=str(flag))
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=2, progress=False)
    assert flag.exists() and rep.ran == len(sw) and not rep.failures
    ref = Campaign(tmp_path / "ref")
    ref.run(sw, workers=1, progress=False)
    assert stored_hashes(camp) == stored_hashes(ref)


def test_a_worker_killed_while_storing_leaves_nothing_partial(tmp_path, faults):
    """A worker dies halfway through writing a segment (some of its files written, not renamed into
    segments/): none of it is taken for a result, its runs run again, and the campaign stores exactly
    what an uninterrupted sweep stores."""
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16]}, seeds=2)
    flag = tmp_path / "died-once"
    faults('"seed":', "exit-storing:links.parquet", once=str(flag))  # the first segment stored, whichever
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=2, progress=False)
    assert flag.exists() and rep.ran == len(sw) and not rep.failures
    camp.close()
    from tcplab import _core

    _core._clear_faults()
    assert os.listdir(tmp_path / "c" / "tmp")  # the dead writer's half-written segment
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: tmp/ is never read
        camp = Campaign(tmp_path / "c")
    assert not os.listdir(tmp_path / "c" / "tmp")  # its writer is dead: cleaned up
    assert sorted(segments(tmp_path / "c")) == sorted(camp.status())
    ref = Campaign(tmp_path / "ref")
    ref.run(sw, workers=2, progress=False)
    assert stored_hashes(camp) == stored_hashes(ref)
    assert camp.run(sw, workers=2, progress=False).ran == 0


# ---------------------------------------------------------------- must hold 1: kill and resume

KILL_SWEEP = """
name = "kill"
seeds = [1, 2, 3, 4]
workers = 2
[base]
name = "kill"
[base.dumbbell]
n_flows = 1
bottleneck_rate = "10Mbps"
rtt = "20ms"
buffer = "1BDP"
access_delay = "uniform"
[base.run]
duration = "300s"
sample_interval = "1s"
[grid]
buffer = ["0.25BDP", "0.5BDP", "1BDP", "2BDP", "4BDP", "8BDP"]
"""


def _sweep_cmd(path, out):
    return [sys.executable, "-m", "tcplab", "sweep", str(path), "-o", str(out), "--json", "--no-progress"]


def _stored(out):
    return segments(out)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def test_kill_with_sigkill_and_resume(tmp_path):
    path = tmp_path / "kill.toml"
    path.write_text(KILL_SWEEP)
    sw, _ = load_sweep(path)
    n = len(sw)
    assert n >= 20
    out = tmp_path / "killed"
    proc = subprocess.Popen(_sweep_cmd(path, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and len(_stored(out)) < 3 and proc.poll() is None:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)  # the sweep's own process, mid-run; its pool workers are orphaned
    proc.wait()
    time.sleep(1.0)  # orphaned workers notice and exit
    before = _stored(out)
    assert 0 < len(before) < n, f"kill came too late or too early: {len(before)} of {n} stored"

    done = subprocess.run(_sweep_cmd(path, out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rep = json.loads(done.stdout)
    assert rep["reused"] == len(before) and rep["ran"] == n - len(before) and rep["failed"] == 0
    after = _stored(out)
    assert len(after) == n
    for key, stored in before.items():  # no finished run was recomputed or rewritten: same segment, untouched
        assert after[key] == stored
    # what a killed worker was writing is removed when the campaign is next opened, once the writer is
    # gone (a worker killed while a thread of its waits in a flush lives until the flush returns)
    writers = {int(e.split(".")[-2]) for e in os.listdir(out / "tmp")}
    deadline = time.time() + 60
    while writers and time.time() < deadline:
        writers = {pid for pid in writers if _alive(pid)}
        time.sleep(0.05)
    assert not writers, f"writers of {os.listdir(out / 'tmp')} still alive after 60 s"
    Campaign(out).close()
    assert os.listdir(out / "tmp") == []

    ref = Campaign(tmp_path / "uninterrupted")
    ref.run(sw, workers=2, progress=False)
    killed = Campaign(out)
    assert stored_hashes(killed) == stored_hashes(ref)
    import pandas.testing as pdt
    pdt.assert_frame_equal(comparable(killed.results(sw)), comparable(ref.results(sw)))


# ---------------------------------------------------------------- must hold 2: local pool == Dask

def test_local_pool_and_dask_localcluster_store_identical_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    import pandas.testing as pdt

    sw = Sweep(tiny(), grid={"buffer": ["0.5BDP", "2BDP"], "recovery": ["newreno", "sack"]}, seeds=2)
    local = Campaign(tmp_path / "local")
    local.run(sw, workers=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        dask_w = Campaign(tmp_path / "dask-worker")
        rep = dask_w.run(sw, client=client, progress=False)
        assert rep.ran == len(sw) and not rep.failures and rep.workers == 2
        dask_c = Campaign(tmp_path / "dask-client")
        dask_c.run(sw, scheduler=cl.scheduler_address, store_on="client", progress=False)
    for other in (dask_w, dask_c):
        assert stored_hashes(other) == stored_hashes(local)
        pdt.assert_frame_equal(comparable(other.results(sw)), comparable(local.results(sw)))


# ---------------------------------------------------------------- CLI

def test_cli_sweep_dry_run_failures_and_exit_codes(tmp_path):
    from tcplab.cli import main

    (tmp_path / "s.toml").write_text(
        'seeds = 1\n[base.dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\nrtt = "20ms"\nbuffer = 8\n'
        '[base.run]\nduration = "2s"\n[grid]\nbuffer = [4, 8]\n')
    out = tmp_path / "c"
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(out), "--dry-run"]) == 0
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    assert len(Campaign(out)) == 2
    (tmp_path / "bad.toml").write_text('[base.dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\nrtt = "20ms"\n'
                                       'buffer = 8\n[grid]\nbufer = [1]\n')
    assert main(["sweep", str(tmp_path / "bad.toml"), "-o", str(tmp_path / "c2")]) == 2
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


# ---------------------------------------------------------------- must hold 4: overhead (a benchmark)

def test_overhead_benchmark_runs_and_its_figures_are_consistent(capsys):
    """The figure itself is printed by `tcplab bench --campaign`; here only its consistency."""
    from tcplab.devtools.bench import main as bench_main

    assert bench_main(["--campaign", "--runs", "12", "--repeat", "1", "--workers", "2", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["runs"] == 12 and res["workers"] == 2 and len(res["repeats"]) == 1
    r = res["repeats"][0]
    assert r["runs"] == 12 and r["core_s"] > 0 and r["wall_s"] > 0
    assert r["core_s"] <= r["wall_s"] * r["workers"] * 1.05  # the workers cannot simulate longer than they exist
    assert 0 <= r["overhead"] < 1 and 0 <= r["overhead_with_expand"] < 1
    assert r["overhead_with_expand"] >= r["overhead"]
    assert abs(r["per_run_overhead_ms"] - 1e3 * (r["wall_s"] * r["workers"] - r["core_s"]) / 12) < 0.01
    assert bench_main(["--campaign", "--runs", "4", "--repeat", "1", "--workers", "1"]) == 0
    assert "overhead" in capsys.readouterr().out


def test_the_index_keeps_the_cores_metrics_of_each_run(tmp_path):
    """The index's metrics come from the core alone (crates/tcplab-store/src/metrics.rs, whose unit tests
    check each rule); here, through a real campaign: the named bottleneck or else the busiest link,
    per-flow goodput in flow order, totals that are the stored flows' sums."""
    scs = [tcplab.Dumbbell(n_flows=3, bottleneck_rate="20Mbps", rtt="30ms", buffer="0.5BDP", duration="4s",
                           algorithm=["newreno", "cubic", "htcp"]),
           tcplab.Dumbbell(n_flows=12, bottleneck_rate="50Mbps", rtt="20ms", buffer="0.1BDP", duration="3s")]
    jobs = [({"i": 0}, scs[0]), ({"i": 1}, scs[1].to_spec()), ({"i": 2}, dict(scs[1].to_spec(), seed=7), ["r2-r1"])]
    camp = Campaign(tmp_path / "c")
    rep = camp.run(jobs, workers=2, progress=False)
    assert not rep.failures
    got = {k: json.loads(m) for k, m in camp._db.execute("SELECT key, metrics FROM runs")}
    for key in rep.keys:
        flows = camp.load(key).flows
        m = got[key]
        assert list(m["flow_goodput_bps"]) == list(flows["name"])  # flow order kept
        assert list(m["flow_goodput_bps"].values()) == list(flows["goodput_bps"])
        assert m["total_goodput_bps"] == pytest.approx(flows["goodput_bps"].sum(), rel=1e-12)
        assert m["retransmits"] == flows["retransmits"].sum() and m["timeouts"] == flows["timeouts"].sum()
        assert 0 < m["jain_index"] <= 1
    assert got[rep.keys[2]]["bottleneck"] == "r2-r1" and got[rep.keys[1]]["bottleneck"] == "r1-r2"
    assert len(got[rep.keys[1]]["flow_goodput_bps"]) == 12


# ---------------------------------------------------------------- run keys: the core's, of the RunSpec it reads

def _shuffled(v, rng):
    """``v`` with every dict's keys in a random order."""
    if isinstance(v, dict):
        items = list(v.items())
        rng.shuffle(items)
        return {k: _shuffled(x, rng) for k, x in items}
    if isinstance(v, list):
        return [_shuffled(x, rng) for x in v]
    return v


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from([None, 0, 2]), st.booleans())
def test_a_run_key_does_not_depend_on_how_the_spec_is_written(rng, indent, compact):
    """Any key order, any layout, the dict or its text: one RunSpec, one key (the core reads the spec and
    hashes it as it writes it back: crates/tcplab-store/src/key.rs)."""
    spec = tiny(algorithm=["cubic", "vegas"]).to_spec()
    text = json.dumps(_shuffled(spec, rng), indent=indent, separators=(",", ":") if compact else None)
    assert run_key(text, "9.9") == run_key(spec, "9.9") == run_key(_shuffled(spec, rng), "9.9")


def test_a_changed_field_or_version_changes_the_run_key():
    spec = tiny().to_spec()
    key = run_key(spec, "9.9")
    assert len(key) == 32 and int(key, 16) >= 0
    # the same values written otherwise (an integer for a float, a default written out or left out)
    assert run_key(dict(spec, duration=int(spec["duration"])), "9.9") == key
    assert run_key(dict(spec, routes=[]), "9.9") == run_key({k: v for k, v in spec.items() if k != "routes"}, "9.9")
    # a different run, or another tcplab
    assert run_key(dict(spec, seed=2), "9.9") != key
    assert run_key(dict(spec, duration=spec["duration"] + 1e-9), "9.9") != key
    flows = [dict(spec["flows"][0], cc={"algorithm": "cubic", "params": {}})] + spec["flows"][1:]
    assert run_key(dict(spec, flows=flows), "9.9") != key
    assert run_key(spec, "9.10") != key
    assert run_key(spec) == run_key(spec, tcplab.__version__)


def test_a_spec_the_core_refuses_has_no_key_and_the_error_names_the_problem(tmp_path):
    spec = tiny().to_spec()
    with pytest.raises(tcplab.SpecError, match=r"^flows\[1\]\.colour: invalid run description: unknown field "
                                               r"`colour`") as e:
        run_key(dict(spec, flows=[spec["flows"][0], dict(spec["flows"][1], colour="red")]))
    assert e.value.field == "flows[1].colour"
    with pytest.raises(tcplab.SpecError, match=r"^duration: .*missing field `duration`"):
        run_key({k: v for k, v in spec.items() if k != "duration"})
    with pytest.raises(tcplab.SpecError, match=r"^flows\[0\]\.init_cwnd: must be a finite number"):
        run_key(dict(spec, flows=[dict(spec["flows"][0], init_cwnd=math.nan)] + spec["flows"][1:]))
    camp = Campaign(tmp_path / "c")
    with pytest.raises(tcplab.SpecError, match=r"^jobs\[1\]\.links\[0\]\.rate_bps: invalid run description: "
                                               r"invalid type: string"):
        camp.run([("a", spec), ("b", dict(spec, links=[dict(spec["links"][0], rate_bps="fast")]))], workers=1,
                 progress=False)
    with pytest.raises(ValueError, match=r"^jobs\[0\]: parameters .* are not JSON values"):
        camp.run([({"x": math.inf}, spec)], workers=1, progress=False)
    assert len(camp) == 0  # (refused while planning: nothing ran)


def test_a_campaign_stores_and_runs_the_spec_as_given(tmp_path):
    """The core hashes the spec as it writes it back, but runs and stores the text it was given: a float
    read back from its shortest digits can differ in the last place (serde_json reads floats fast, not
    exactly), so running the rewritten text would not be running the caller's spec."""
    import random

    import numpy as np

    from tcplab import _core

    rng = random.Random(3)
    spec = tiny(n_flows=6).to_spec()
    spec["flows"] = [dict(f, start=rng.random() * 0.1) for f in spec["flows"]]  # (17-digit floats)
    camp = Campaign(tmp_path / "c")
    rep = camp.run([("a", spec)], workers=1, progress=False)
    key = rep.keys[0]
    assert camp.spec(key) == spec  # every float as it was
    stored, direct = camp.load_raw(key), _core.run(json.dumps(spec))
    for col, v in direct["flows"].items():
        a, b = np.asarray(stored["flows"][col]), np.asarray(v)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), col
    (job,) = camp._normalize([("a", json.dumps(spec, indent=2))])
    assert job["key"] == key and "\n" not in job["line"] and json.loads(job["line"])["spec"] == spec


def test_the_seeds_of_a_sweep_are_the_ones_main_gave(tmp_path):
    """Run keys changed in campaign format 4; the seeds runs use did not (values printed by the campaign of
    format 3, main before the change): a seed count starts at the base's seed, a list is taken as it is."""
    from tcplab.sweep.grid import _DIGEST_JSON

    base = tiny(seed=5, duration="1s")
    camp = Campaign(tmp_path / "c")
    norm, _ = camp.plan(Sweep(base, grid={"buffer": [4, 8], "algorithm": ["cubic", "reno"]}, seeds=3))
    assert [j["seed"] for j in norm] == [5, 6, 7] * 4
    assert [json.loads(j["line"])["seed"] for j in norm] == [5, 6, 7] * 4
    norm, _ = camp.plan(Sweep(base, grid={"buffer": [4]}, seeds=[2**63 - 1, 0, 17]))
    assert [j["seed"] for j in norm] == [2**63 - 1, 0, 17]
    # configurations are told apart (each validated once) by the text keys hashed before format 4
    spec = base.to_spec()
    assert _DIGEST_JSON.encode(spec) == json.dumps(spec, sort_keys=True, separators=(",", ":"))


def test_runspecs_are_stored_compressed_beside_the_tables_and_read_back(tmp_path, faults):
    """Segments the core writes (format 2) keep every run's RunSpec in specs.parquet, zstd-compressed,
    not in the manifest; a record Python writes (a run whose worker died, format 1) keeps it inline.
    Both read back as the RunSpec that ran."""
    sw = Sweep(tiny(), grid={"buffer": [4, 8, 16, 32]}, seeds=2)
    faults('"seed":2,', "exit:3")  # seed 2 kills its worker every time: recorded by Python, format 1
    camp = Campaign(tmp_path / "c")
    rep = camp.run(sw, workers=2, progress=False)
    assert {f["key"] for f in rep.failures} == {k for k, p in zip(rep.keys, rep.params, strict=True) if p["seed"] == 2}
    specs = {run_key(spec): spec for _, spec, _ in sw.jobs()}
    versions = set()
    for p in glob.glob(str(tmp_path / "c" / "segments" / "*" / "segment.json")):
        m = json.load(open(p))
        versions.add(m["format_version"])
        if m["format_version"] == 2:
            assert "specs.parquet" in m["files"] and all("spec_json" not in r for r in m["runs"])
            size = m["files"]["specs.parquet"]["size"]
            assert size < sum(len(json.dumps(specs[r["key"]])) for r in m["runs"])
        else:
            assert all(json.loads(r["spec_json"]) == specs[r["key"]] for r in m["runs"])
    assert versions == {1, 2}
    for key in rep.keys:
        assert camp.spec(key) == specs[key]
    ok = [k for k, p in zip(rep.keys, rep.params, strict=True) if p["seed"] == 1]
    assert camp.load(ok[0]).spec == specs[ok[0]]
