"""Hardening (issue 31): Ctrl-C, one sweep per campaign, dry runs and worker counts.

- Ctrl-C (SIGINT) stops `tcplab run`, a one-worker sweep and a pool sweep within about a second:
  exit code 130, one line on stderr, no traceback; a sweep keeps the runs it stored, stores nothing
  half-written, records no interrupted run as failed, and resumes. ``tcplab.run`` raises
  KeyboardInterrupt (it used to finish the run, then raise PanicException).
- A second sweep into a campaign that a sweep is running into refuses at once, naming the campaign
  and the holder's pid (or waits with ``--wait``); every key is stored once.
- ``--dry-run`` holds no per-run object (peak memory flat in the number of runs); workers are capped
  at the runs to do (and, on the command line, at the CPUs).

The sweeps that are interrupted run with --no-fsync: with it, a sweep flushes the filesystem
(syncfs) before indexing, which on a machine busy writing can take seconds, and Ctrl-C lets the
flush in progress finish (docs/campaigns.md). The signal tests start the CLI in a child that imports
tcplab, says "ready" and then calls ``tcplab.cli.main``: the signal is sent once the child is clearly
running (after "ready", or once runs are stored), never while Python is still starting. Time bounds
here are guards against a run that does not stop, not measurements.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: A stopped process must be gone this soon after SIGINT (the requirement is a second; this guards).
STOP_BOUND_S = 10.0

#: The child: imports tcplab (and the CLI) first, says so, then runs the command.
CHILD = textwrap.dedent("""
    import sys
    import tcplab, tcplab.cli, tcplab.sweep
    print("ready", flush=True)
    sys.exit(tcplab.cli.main(sys.argv[1:]))
""")


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def spawn(*args, cwd=None):
    """The CLI with ``args`` in a child whose SIGINT is Python's default (a test runner started in the
    background has SIGINT ignored, which children inherit); returns once the child says "ready"."""
    p = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env(), cwd=cwd,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline().strip() == "ready", p.communicate(timeout=60)
    return p


def interrupt(p):
    """SIGINT to ``p``; (exit code, stdout, stderr, seconds it took to end)."""
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        out, err = p.communicate(timeout=STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"still running {STOP_BOUND_S} s after SIGINT; stderr: {err[-2000:]}")
    return p.returncode, out, err, time.monotonic() - t0


def assert_one_line_interrupt(rc, err):
    assert rc == 130, err
    assert "Traceback" not in err and "Panic" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "interrupted" in lines[0], err


def stored(campaign):
    """Runs in the campaign's segments (each renamed into segments/ whole, so a manifest there is
    complete; the index may lag behind a flush of the filesystem); 0 before there is any."""
    try:
        return len(manifest_records(campaign))
    except FileNotFoundError:  # (no segments/ yet)
        return 0


def wait_for(cond, what, limit=120.0):
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


DUMBBELL = """
    [dumbbell]
    n_flows = 1
    bottleneck_rate = "200Mbps"
    rtt = "20ms"
    buffer = "1BDP"
    """


def sweep_file(tmp_path, durations, name="sw"):
    """A sweep over buffer sizes zipped with these run lengths (simulated seconds), in this order. At
    200 Mbit/s a simulated second costs about 7 ms here: 150 s is about a second, 20000 s minutes."""
    buffers = ", ".join(f'"{0.5 + 0.05 * i:.2f}BDP"' for i in range(len(durations)))
    text = textwrap.dedent(f"""
        name = "{name}"
        seeds = 1
        [base]
        name = "{name}"
        [base.dumbbell]
        n_flows = 1
        bottleneck_rate = "200Mbps"
        rtt = "20ms"
        buffer = "1BDP"
        [base.run]
        duration = "10s"
        seed = 1
        [[zip]]
        buffer = [{buffers}]
        duration = [{", ".join(f'"{d}s"' for d in durations)}]
        """)
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return str(p)


def manifest_records(campaign):
    """Every run record in the campaign's segments (a key computed twice appears twice)."""
    keys = []
    segs = os.path.join(campaign, "segments")
    for seg in os.listdir(segs):
        if not os.path.exists(os.path.join(segs, seg, "segment.json")):
            continue
        with open(os.path.join(segs, seg, "segment.json")) as fh:
            keys += [r["key"] for r in json.load(fh)["runs"]]
    return keys


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_stops_a_single_run(tmp_path):
    sc = tmp_path / "long.toml"
    sc.write_text(textwrap.dedent(DUMBBELL) + '[run]\nduration = "20000s"\n')  # minutes of work
    p = spawn("run", str(sc), "-o", str(tmp_path / "out"))
    time.sleep(1.0)  # (well into the run)
    rc, out, err, took = interrupt(p)
    assert_one_line_interrupt(rc, err)
    assert took < STOP_BOUND_S
    assert not (tmp_path / "out" / "summary.json").exists()


def test_the_python_api_raises_keyboard_interrupt():
    """``tcplab.run`` in the main thread: Ctrl-C raises KeyboardInterrupt (not PanicException) and the
    run stops instead of simulating to its end."""
    import tcplab

    sc = tcplab.Dumbbell(n_flows=1, bottleneck_rate="200Mbps", rtt="20ms", buffer="1BDP", duration="20000s")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # (whatever the runner set)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            tcplab.run(sc)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert time.monotonic() - t0 < STOP_BOUND_S
    # the core is usable afterwards
    res = tcplab.run(tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="2s"))
    assert res.flows["goodput_bps"].iloc[0] > 0


def check_campaign(campaign, expect_keys):
    """The stored runs: exactly ``expect_keys`` (when given), all ok, none failed, every checksum good."""
    from tcplab.sweep import Campaign

    with Campaign(campaign) as c:
        st = c.status()
        assert set(st.values()) <= {"ok"}, st  # an interrupted run is not a failure
        if expect_keys is not None:
            assert len(st) == expect_keys, st
        assert c.verify(fix=False) == []
        return st


def test_ctrl_c_stops_a_one_worker_sweep_in_the_middle_of_a_run(tmp_path):
    """Three short runs, then one of minutes: Ctrl-C during the long one ends the sweep at once (it used
    to wait for the run), keeps the three and records nothing for the long one. (Each short run takes
    several times a segment's time budget, LOCAL_CHUNK_S = 0.25 s, however fast the machine: 18 M
    events, about a second at the fastest, so each is stored before the next starts.)"""
    path = sweep_file(tmp_path, [200, 200, 200, 20000])
    camp = str(tmp_path / "camp")
    p = spawn("sweep", path, "-o", camp, "--workers", "1", "--no-fsync")
    wait_for(lambda: stored(camp) >= 3 or p.poll() is not None, "the short runs to be stored")
    time.sleep(0.5)  # (into the long run)
    rc, out, err, took = interrupt(p)
    assert_one_line_interrupt(rc, err)
    assert "run the same command again" in err and camp in err
    check_campaign(camp, 3)
    assert not os.listdir(os.path.join(camp, "tmp")) or all(
        not e.startswith(f"{p.pid}") for e in os.listdir(os.path.join(camp, "tmp")))


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_sweep_keeps_its_runs_and_resumes(tmp_path, workers):
    path = sweep_file(tmp_path, [150] * 8)
    camp = str(tmp_path / "camp")
    p = spawn("sweep", path, "-o", camp, "--workers", str(workers), "--no-fsync")
    wait_for(lambda: stored(camp) >= 2 or p.poll() is not None, "two runs to be stored")
    rc, out, err, took = interrupt(p)
    assert_one_line_interrupt(rc, err)
    kept = check_campaign(camp, None)
    assert 2 <= len(kept) < 8
    # resumed: the rest runs, what was kept is reused, every run stored once
    r = subprocess.run([sys.executable, "-m", "tcplab", "sweep", path, "-o", camp, "--workers", str(workers),
                        "--json", "--verify"], capture_output=True, text=True, env=env(), timeout=300)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert (rep["total"], rep["reused"], rep["ran"], rep["failed"]) == (8, len(kept), 8 - len(kept), 0)
    check_campaign(camp, 8)
    assert sorted(manifest_records(camp)) == sorted(set(manifest_records(camp)))


def test_an_interrupted_chunk_stores_the_runs_done_before(tmp_path):
    """In this process (one worker), Ctrl-C during a chunk's third run: the chunk's first two runs are
    stored in its segment (they used to be lost with the chunk), the third leaves no record, and the
    result says it was interrupted."""
    import tcplab
    from tcplab.sweep import Campaign, Sweep
    from tcplab.sweep.worker import execute_chunk

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="200Mbps", rtt="20ms", buffer="1BDP", duration="1s")
    sw = Sweep(base, zip=[{"buffer": ["0.5BDP", "0.6BDP", "0.7BDP"], "duration": ["1s", "1s", "20000s"]}])
    camp = str(tmp_path / "camp")
    with Campaign(camp) as c:
        jobs = c._normalize(sw.jobs())
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        try:
            m = execute_chunk(jobs, camp, False, budget_s=100.0)
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C was raised from the chunk: the runs it had done were not stored")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert m.pop("interrupted") is True
    assert [r["key"] for r in m["runs"]] == [j["key"] for j in jobs[:2]]
    assert [r["status"] for r in m["runs"]] == ["ok", "ok"]
    with Campaign(camp) as c:  # (the segment, not indexed by anyone, is adopted when the campaign opens)
        assert c.status() == {jobs[0]["key"]: "ok", jobs[1]["key"]: "ok"}
        assert c.verify(fix=False) == []


# ---------------------------------------------------------------- one sweep per campaign


def test_a_second_sweep_into_a_busy_campaign_refuses_at_once(tmp_path):
    """The first sweep is in a run of minutes when the second starts: the second refuses at once and
    computes nothing; the first, stopped with Ctrl-C then, stored each of its runs once (two sweeps
    used to compute every run each: 120 records for 60 keys)."""
    path = sweep_file(tmp_path, [150, 150, 20000])
    camp = str(tmp_path / "camp")
    first = spawn("sweep", path, "-o", camp, "--workers", "1", "--no-fsync")
    wait_for(lambda: stored(camp) >= 2 or first.poll() is not None, "the first sweep to store two runs")
    second = subprocess.run([sys.executable, "-m", "tcplab", "sweep", path, "-o", camp, "--workers", "1"],
                            capture_output=True, text=True, env=env(), timeout=120)
    assert second.returncode == 1, second.stderr
    assert "Traceback" not in second.stderr
    msg = second.stderr.strip().splitlines()[-1]
    assert msg.startswith(f"error: {os.path.abspath(camp)}: another sweep is running") and f"pid {first.pid}" in msg
    assert "--wait" in msg
    rc, out, err, took = interrupt(first)
    assert_one_line_interrupt(rc, err)
    keys = manifest_records(camp)
    assert len(keys) == 2 and len(set(keys)) == 2  # each key computed and stored once


def test_a_second_sweep_with_wait_runs_what_the_first_leaves(tmp_path):
    """(The first sweep's last run lasts several seconds: the second is waiting by then.)"""
    path = sweep_file(tmp_path, [150, 150, 150, 1500])
    camp = str(tmp_path / "camp")
    first = spawn("sweep", path, "-o", camp, "--workers", "1")
    wait_for(lambda: stored(camp) >= 1 or first.poll() is not None, "the first sweep to store a run")
    second = subprocess.run([sys.executable, "-m", "tcplab", "sweep", path, "-o", camp, "--workers", "1", "--wait",
                             "--json"], capture_output=True, text=True, env=env(), timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"waiting for the sweep running into it (pid {first.pid}" in second.stderr
    rep = json.loads(second.stdout)
    assert (rep["ran"], rep["reused"]) == (0, 4)
    first.communicate(timeout=300)
    keys = manifest_records(camp)
    assert len(keys) == 4 and len(set(keys)) == 4


def test_the_lock_is_free_again_after_a_sweep_and_after_its_process_dies(tmp_path):
    """Campaign.run releases the lock (a second run in the same process is not refused), and a sweep
    killed outright leaves no stale lock (the kernel drops it with the process)."""
    import tcplab
    from tcplab.sweep import Campaign, Sweep

    sw = Sweep(tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="1s"),
               grid={"buffer": [4, 8]})
    camp = str(tmp_path / "camp")
    with Campaign(camp) as c:
        assert c.run(sw, workers=2).ran == 2
        assert c.run(sw, workers=2).reused == 2
    path = sweep_file(tmp_path, [20000])
    p = spawn("sweep", path, "-o", camp, "--workers", "1", "--no-fsync")
    wait_for(lambda: os.path.getsize(os.path.join(camp, "lock")) > 0, "the sweep to take the lock")
    p.kill()
    p.communicate()
    with Campaign(camp) as c:
        c.lock()  # (would raise CampaignError naming the dead process if the lock were stale)


# ---------------------------------------------------------------- dry runs and worker counts

#: What the dry-run child reports: its own peak RSS (so other children of the test runner do not count).
# The child's own peak (VmHWM of its address space), not getrusage's ru_maxrss: Linux carries
# ru_maxrss over exec from the parent's address space, so a test process that once held a large
# scenario would make every child it starts look as large.
DRY = textwrap.dedent("""
    import sys
    import tcplab.cli
    rc = tcplab.cli.main(sys.argv[1:])
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
    print("maxrss_kb", hwm, flush=True)
    sys.exit(rc)
""")


def peak_rss_mb(*args):
    r = subprocess.run([sys.executable, "-c", DRY, *args], capture_output=True, text=True, env=env(), timeout=600)
    assert r.returncode == 0, r.stderr
    kb = int(r.stdout.split("maxrss_kb")[-1])
    return kb / 1024, r.stdout


def test_a_dry_run_holds_no_run(tmp_path):
    """A 40,000-run dry run stays near the interpreter's own footprint: it held ~7-12 KB a run (about
    120 GB for ten million runs). The bound leaves room for the interpreter, NumPy and pandas; a dry run
    holding every run needs ~300 MB more than it."""
    n_buf, n_rtt, seeds = 200, 100, 2
    buffers = ", ".join(str(10 + i) for i in range(n_buf))
    rtts = ", ".join(f'"{10 + i}ms"' for i in range(n_rtt))
    p = tmp_path / "big.toml"
    p.write_text(textwrap.dedent(f"""
        name = "big"
        seeds = {seeds}
        [base]
        name = "big"
        [base.dumbbell]
        n_flows = 1
        bottleneck_rate = "10Mbps"
        rtt = "20ms"
        buffer = "1BDP"
        [base.run]
        duration = "5s"
        seed = 1
        [grid]
        buffer = [{buffers}]
        rtt = [{rtts}]
        """))
    mb, out = peak_rss_mb("sweep", str(p), "-o", str(tmp_path / "camp"), "--dry-run")
    total = n_buf * n_rtt * seeds
    assert f"{total} runs" in out and f"{total} to run, 0 stored" in out
    assert mb < 200, f"peak RSS {mb:.0f} MB for a {total}-run dry run"


def test_dry_run_counts_stored_failed_and_repeated_runs(tmp_path, faults):
    """The counting dry run agrees with Campaign.plan: stored runs, failed ones (run again only with
    --retry-failed) and points that give the same run (one key) count as plan counts them."""
    import tcplab
    from tcplab.sweep import Campaign, Sweep

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="1s")
    with Campaign(str(tmp_path / "camp")) as c:
        faults('"limit_packets":8,', "error:injected")
        first = c.run(Sweep(base, grid={"buffer": [4, 8]}, seeds=[1]), workers=1)
        assert (first.ran, len(first.failures)) == (2, 1)
        sw = Sweep(base, grid={"buffer": [4, 8, 16, 16]}, seeds=[1, 2])
        for retry in (False, True):
            norm, todo = c.plan(sw.jobs(), retry)
            assert c.count_plan(sw.iter_jobs(), retry) == (len(norm), len(todo))
        assert c.count_plan(sw.iter_jobs(), False) == (8, 4)  # 6 distinct runs, 2 stored (one failed)
        assert c.count_plan(sw.iter_jobs(), True) == (8, 5)


def test_workers_are_capped_at_the_runs_to_do(tmp_path, monkeypatch):
    """Two runs to do with 500 workers asked for: two pool workers are forked and the report says 2
    (it forked one per job of the sweep and said 500)."""
    import tcplab
    from tcplab import _core
    from tcplab.sweep import Campaign, Sweep

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="1s")
    forks = []
    real = _core.fork_worker
    monkeypatch.setattr(_core, "fork_worker", lambda *a: forks.append(a) or real(*a))
    with Campaign(str(tmp_path / "camp")) as c:
        c.run(Sweep(base, grid={"buffer": [4, 8, 16, 32]}), workers=2)
        forks.clear()
        rep = c.run(Sweep(base, grid={"buffer": [4, 8, 16, 32, 64, 128]}), workers=500)
    assert (rep.ran, rep.workers, len(forks)) == (2, 2, 2)
    assert "on 2 worker(s)" in rep.summary()


def test_the_cli_caps_workers_at_the_cpus_and_says_so(tmp_path):
    path = sweep_file(tmp_path, [1] * 12)
    r = subprocess.run([sys.executable, "-m", "tcplab", "sweep", path, "-o", str(tmp_path / "camp"),
                        "--workers", "500", "--json"], capture_output=True, text=True, env=env(), timeout=300)
    assert r.returncode == 0, r.stderr
    cpus = len(os.sched_getaffinity(0))
    assert json.loads(r.stdout)["workers"] <= min(cpus, 12)
    assert f"workers: 500 asked for, {cpus} used (the CPUs this process may use" in r.stderr
