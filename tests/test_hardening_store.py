"""Issue 31, the campaign store: environment failures (item 5), checksums of every stored byte (item 6),
a stale index's message naming its fix (item 10), grid points validated by the core (item 11).

Disk full is made real without privileges: the sweep runs in a subprocess under RLIMIT_FSIZE (a write
past the limit fails with EFBIG; SIGXFSZ ignored); as root, also on a small tmpfs (ENOSPC). Read-only:
a read-only bind mount as root (root ignores permissions), chmod otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import warnings

import pytest

import tcplab
from tcplab.cli import main
from tcplab.sweep import Campaign, CampaignError, CampaignWarning, Sweep, SweepError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPATH = os.path.dirname(os.path.dirname(os.path.abspath(tcplab.__file__)))  # (subprocesses run this tcplab)

SWEEP = """seeds = 2
[base.dumbbell]
n_flows = 1
bottleneck_rate = "10Mbps"
rtt = "20ms"
buffer = 8
[base.run]
duration = "1s"
[grid]
buffer = [4, 8, 16]
"""

# runs whose tables are far larger than the file-size limit below (10 s sampled every millisecond),
# while the index stays well under it
BIG_SWEEP = """seeds = 2
[base.dumbbell]
n_flows = 2
bottleneck_rate = "10Mbps"
rtt = "20ms"
buffer = 8
[base.run]
duration = "10s"
sample_interval = "1ms"
[grid]
buffer = [4, 8]
"""


def tiny(**kw):
    args = dict(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=8, duration="1s", seed=1, name="tiny")
    args.update(kw)
    return tcplab.Dumbbell(**args)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def one_error_line(err: str) -> str:
    """stderr of a failed sweep: its error is one line, no traceback."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def files_of(path) -> dict:
    """{relative path: (size, sha256)} of every file under ``path``."""
    out = {}
    for d, _, names in os.walk(path):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = (os.path.getsize(p), hashlib.sha256(fh.read()).hexdigest())
    return out


def assert_nothing_partial(camp_dir):
    """No 0-byte file, nothing left in tmp/, every stored file matching its checksum, no failed run."""
    for rel, (size, _) in files_of(camp_dir).items():
        # (the sweep lock's file names its holder only while held: empty once released, by design)
        assert size > 0 or rel.startswith("index.sqlite") or rel == "lock", f"0-byte file left behind: {rel}"
    assert not os.listdir(os.path.join(camp_dir, "tmp"))
    with Campaign(camp_dir) as camp:
        assert camp.verify(fix=False) == []
        assert "failed" not in set(camp.status().values()), camp.failures()


def sweep_cli(args, env=None, preexec=None):
    return subprocess.run([sys.executable, "-m", "tcplab", "sweep", *args, "--no-progress"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=PYPATH, **(env or {})), preexec_fn=preexec,
                          timeout=300)


# ---------------------------------------------------------------- item 11: every point validated by the core

def test_an_invalid_congestion_control_parameter_is_refused_before_anything_runs(tmp_path, monkeypatch):
    from tcplab import _core

    calls = []
    real = _core.validate
    sw = Sweep(tiny(algorithm="cubic"), grid={"params.beta": [0.7, 5.0]}, seeds=3)
    monkeypatch.setattr(_core, "validate", lambda text, memory=True: (calls.append(memory), real(text, memory))[1])
    camp = Campaign(tmp_path / "c")
    with pytest.raises(SweepError, match=r"point \(params\.beta=5\.0, seed=1\): dumbbell\.params\.beta: "
                                         r"must be a fraction in \(0, 1\)"):
        camp.run(sw, workers=1, progress=False)
    assert len(camp) == 0  # nothing ran, nothing stored as failed
    # one seed of each configuration is checked: the first by its scenario (the rules) and by the sweep (its
    # memory estimate), the second refused by its scenario, not by the sweep's own check
    assert calls == [False, True, False]


def test_cli_sweep_refuses_an_invalid_grid_point_with_exit_2(tmp_path, capsys):
    path = write(tmp_path, "cc.toml", SWEEP.replace("buffer = [4, 8, 16]", '"params.beta" = [0.7, 5.0]')
                 .replace("buffer = 8\n", 'buffer = 8\nalgorithm = "cubic"\n'))
    assert main(["sweep", path, "-o", str(tmp_path / "c"), "--workers", "1", "--no-progress"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "params.beta=5.0" in line and "dumbbell.params.beta: must be a fraction" in line
    assert not (tmp_path / "c").exists()


# ---------------------------------------------------------------- item 10: the stale index names its fix

def test_an_index_pointing_at_the_wrong_segment_names_the_command_that_fixes_it(tmp_path, capsys):
    d = tmp_path / "c"
    camp = Campaign(d)
    ka = camp.run([("a", tiny(buffer=4))], workers=1, progress=False).keys[0]
    kb = camp.run([("b", tiny(buffer=16))], workers=1, progress=False).keys[0]
    before = camp.load(ka).flows
    camp.close()
    with sqlite3.connect(d / "index.sqlite") as db:
        (seg_b,) = db.execute("SELECT segment FROM runs WHERE key = ?", (kb,)).fetchone()
        db.execute("UPDATE runs SET segment = ? WHERE key = ?", (seg_b, ka))
    db.close()
    camp = Campaign(d)
    with pytest.raises(CampaignError, match="the index says run") as e:
        camp.load(ka)
    camp.close()
    command = str(e.value).split("`")[1]  # the advice, as a shell command
    argv = shlex.split(command)
    assert argv[:3] == ["tcplab", "sweep", "--reindex"]
    assert main(argv[1:]) == 0
    with Campaign(d) as camp:  # following the advice fixed it
        assert camp.load(ka).flows.equals(before)


# ---------------------------------------------------------------- item 6: every stored byte checksummed

def only_segment(d):
    (seg,) = os.listdir(d / "segments")
    return d / "segments" / seg


def test_an_edited_metric_in_segment_json_is_reported_and_never_shown(tmp_path):
    d = tmp_path / "c"
    with Campaign(d) as camp:
        key = camp.run([("a", tiny())], workers=1, progress=False).keys[0]
        good = camp.results()["total_goodput_bps"].iloc[0]
    sd = only_segment(d)
    m = json.loads((sd / "segment.json").read_text())
    m["runs"][0]["metrics"]["total_goodput_bps"] = 1.25e9  # a quiet edit: valid JSON, plausible number
    (sd / "segment.json").write_text(json.dumps(m, separators=(",", ":")) + "\n")
    with Campaign(d) as camp:
        problems = camp.verify(fix=False)
        assert len(problems) == 1 and "segment.json" in problems[0] and "checksum mismatch" in problems[0]
        with pytest.raises(CampaignError, match="segment.json: checksum mismatch"):
            camp.load(key)
    # the index lost (it is a cache): the edited segment is not adopted, its metric never shown
    for f in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
        if (d / f).exists():
            (d / f).unlink()
    with pytest.warns(CampaignWarning, match="segment.json: checksum mismatch"):
        camp = Campaign(d)
    df = camp.results()
    assert 1.25e9 not in set(df.get("total_goodput_bps", []))
    assert key not in camp.status()  # moved to quarantine/: run again by the next sweep
    assert camp.run([("a", tiny())], workers=1, progress=False).ran == 1
    assert camp.results()["total_goodput_bps"].iloc[0] == good
    camp.close()


def test_python_and_core_write_the_same_manifest_checksum(tmp_path):
    """Segments are stored by the core (local workers, Dask store_on=worker) and by Python (store_on=client,
    records of runs whose worker died): both write segment.sha256 the same way, and both pass verify."""
    from tcplab.sweep.worker import commit_segment, execute_chunk

    with Campaign(tmp_path / "c") as camp:
        jobs = camp._normalize([("a", tiny()), ("b", tiny(buffer=4))])
        core = execute_chunk(jobs[:1], camp.path, fsync=False)
        shipped = execute_chunk(jobs[1:], None, fsync=False)
        commit_segment(camp.path, shipped["manifest"], shipped["files"], fsync=False)
        for m in (core, shipped["manifest"]):
            sd = os.path.join(camp.path, "segments", m["id"])
            with open(os.path.join(sd, "segment.json"), "rb") as fh:
                want = hashlib.sha256(fh.read()).hexdigest() + "\n"
            with open(os.path.join(sd, "segment.sha256")) as fh:
                assert fh.read() == want
        assert camp.verify(fix=False) == []


def test_edited_sweep_and_marker_files_are_reported_by_verify(tmp_path, capsys):
    path = write(tmp_path, "s.toml", SWEEP)
    out = tmp_path / "c"
    assert main(["sweep", path, "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    (out / "sweeps" / "s.toml").write_text((out / "sweeps" / "s.toml").read_text().replace("4", "5"))
    doc = json.loads((out / "campaign.json").read_text())
    (out / "campaign.json").write_text(json.dumps(dict(doc, created_by="someone else")))
    capsys.readouterr()
    with Campaign(out) as camp:
        problems = camp.verify(fix=False)
    assert any("sweeps/s.toml: checksum mismatch" in p for p in problems)
    assert any("campaign.json: checksum mismatch" in p for p in problems)


@pytest.mark.parametrize("version", [2, 3])
def test_an_earlier_campaign_is_refused_naming_its_directory(tmp_path, capsys, version):
    """Formats 2 and 3 keyed runs by Python's JSON text (format 2 also lacked checksums): none of their runs
    would be found again, so the campaign is refused, saying where and what to do, and left as it is."""
    path = write(tmp_path, "s.toml", SWEEP)
    out = tmp_path / "c"
    assert main(["sweep", path, "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    doc = json.loads((out / "campaign.json").read_text())
    (out / "campaign.json").write_text(json.dumps(dict(doc, format_version=version)))
    files = sorted(p for p in out.rglob("*") if p.name != "index.sqlite-shm")
    with pytest.raises(CampaignError, match=rf"^{out / 'campaign.json'}: campaign format version {version}; this "
                       r"tcplab reads version 4; .*earlier tcplab.*run the sweep into a new directory \(a "
                       r"reproduction: with --fresh"):
        Campaign(out)
    capsys.readouterr()
    assert main(["sweep", path, "-o", str(out), "--workers", "1", "--no-progress"]) == 2
    assert f"error: {out / 'campaign.json'}: campaign format version {version};" in capsys.readouterr().err
    assert sorted(p for p in out.rglob("*") if p.name != "index.sqlite-shm") == files


# ---------------------------------------------------------------- item 5: environment failures

def _limit_file_size(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@pytest.mark.parametrize("workers", [1, 2])
def test_disk_full_file_size_limit_is_one_line_and_stores_no_failure(tmp_path, workers):
    path = write(tmp_path, "big.toml", BIG_SWEEP)
    out = str(tmp_path / "c")
    Campaign(out).close()  # (the index is created before the limit, so the limit hits the tables first)
    r = sweep_cli([path, "-o", out, "--workers", str(workers)], preexec=_limit_file_size(64 * 1024))
    assert r.returncode == 1, r.stderr
    line = one_error_line(r.stderr)
    assert "file-size limit" in line and "run the sweep again" in line
    assert_nothing_partial(out)
    # space again: the sweep finishes, nothing to retry
    r = sweep_cli([path, "-o", out, "--workers", str(workers)])
    assert r.returncode == 0, r.stderr
    with Campaign(out) as camp:
        assert sorted(set(camp.status().values())) == ["ok"] and len(camp) == 4


@pytest.fixture
def mount_point(tmp_path):
    """A directory to mount on (root only), unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("a small tmpfs needs root (the file-size-limit test covers a full disk without it)")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mounted = []

    def mount(*args):
        r = subprocess.run(["mount", *args], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount here: {r.stderr.strip()}")
        mounted.append(args[-1])

    yield mnt, mount
    for m in reversed(mounted):
        subprocess.run(["umount", "-l", m], capture_output=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_disk_full_on_a_small_tmpfs_is_one_line_and_stores_no_failure(tmp_path, mount_point, workers):
    mnt, mount = mount_point
    mount("-t", "tmpfs", "-o", "size=150k", "tmpfs", str(mnt))
    path = write(tmp_path, "big.toml", BIG_SWEEP)
    out = str(mnt / "c")
    r = sweep_cli([path, "-o", out, "--workers", str(workers)])
    assert r.returncode == 1, r.stderr
    line = one_error_line(r.stderr)
    assert "no space left" in line and "free space" in line
    assert_nothing_partial(out)


def make_read_only(path, mount):
    if os.geteuid() == 0:  # root ignores permissions: a read-only bind mount
        mount("--bind", str(path), str(path))
        mount("-o", "remount,ro,bind", str(path))
    else:
        subprocess.run(["chmod", "-R", "a-w", str(path)], check=True)


@pytest.fixture
def read_only(tmp_path):
    mounted = []

    def mount(*args):
        r = subprocess.run(["mount", *args], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"running as root, a read-only campaign needs a read-only bind mount: {r.stderr.strip()}")
        if args[0] == "--bind":
            mounted.append(args[-1])

    yield lambda p: make_read_only(p, mount)
    for m in mounted:
        subprocess.run(["umount", "-l", m], capture_output=True)
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "u+w", str(tmp_path)])


@pytest.mark.parametrize("index", ["kept", "lost"])
def test_a_read_only_campaign_with_every_run_stored_still_answers_without_writing(tmp_path, read_only, index):
    path = write(tmp_path, "s.toml", SWEEP)
    out = tmp_path / "c"
    assert sweep_cli([path, "-o", str(out), "--workers", "1"]).returncode == 0
    with Campaign(out) as camp:
        want = camp.results().sort_values("key").reset_index(drop=True)
    if index == "lost":  # (rebuilt in memory: nothing can be written)
        for f in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
            if (out / f).exists():
                (out / f).unlink()
    read_only(out)
    before = files_of(out)
    r = sweep_cli([path, "-o", str(out), "--workers", "1"])
    assert r.returncode == 0, r.stderr
    assert "0 run now, 6 already stored" in r.stdout
    with Campaign(out) as camp:
        got = camp.results().sort_values("key").reset_index(drop=True)
        assert got.drop(columns=["wall_s"]).equals(want.drop(columns=["wall_s"]))
        assert camp.verify() == []
    rr = subprocess.run([sys.executable, "-m", "tcplab", "report", str(out), "-o", str(tmp_path / "r.html")],
                        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PYPATH), timeout=300)
    assert rr.returncode == 0, rr.stderr
    assert files_of(out) == before  # nothing written
    # a sweep with runs to do says what is wrong in one line
    path2 = write(tmp_path, "s2.toml", SWEEP.replace("[4, 8, 16]", "[4, 32]"))
    r = sweep_cli([path2, "-o", str(out), "--workers", "2"])
    assert r.returncode == 1
    assert "not writable" in one_error_line(r.stderr)
    assert files_of(out) == before


def test_an_unreachable_dask_scheduler_is_one_line(tmp_path, capsys):
    pytest.importorskip("distributed")
    import dask

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write(tmp_path, "s.toml", SWEEP)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        rc = main(["sweep", path, "-o", str(tmp_path / "c"), "--scheduler", f"tcp://127.0.0.1:{port}",
                   "--no-progress"])
    assert rc == 1
    line = one_error_line(capsys.readouterr().err)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in line and "--scheduler" in line
    with Campaign(tmp_path / "c") as camp:
        assert len(camp) == 0


def test_a_campaign_name_too_long_is_one_line(tmp_path, capsys):
    path = write(tmp_path, "s.toml", SWEEP)
    assert main(["sweep", path, "-o", str(tmp_path / ("x" * 300)), "--workers", "1", "--no-progress"]) == 1
    assert "file name too long; give a campaign directory with a shorter name" in \
        one_error_line(capsys.readouterr().err)


def test_segments_replaced_by_a_file_is_one_line(tmp_path, capsys):
    path = write(tmp_path, "s.toml", SWEEP)
    out = tmp_path / "c"
    assert main(["sweep", path, "-o", str(out), "--workers", "1", "--no-progress"]) == 0
    import shutil

    shutil.rmtree(out / "segments")
    (out / "segments").write_text("not a directory")
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["sweep", path, "-o", str(out), "--workers", "1", "--no-progress"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert f"{out / 'segments'}: a file is where the campaign's segments/ directory belongs" in line
