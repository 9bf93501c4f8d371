"""Issue 31, what ties the parts together: `tcplab run` says a run's cost up front (from the core's
estimate), and a scenario's ``memory_limit`` reaches the core, which refuses a run estimated above it."""

import os
import subprocess
import sys

import pytest

import tcplab
from tcplab import _core
from tcplab.cli import _run_cost
from tcplab.errors import ScenarioError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))



def test_a_long_run_says_its_cost_and_a_short_one_does_not():
    small = _run_cost(_core, tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="2s").to_spec())
    assert not small["long"]
    big = _run_cost(_core, tcplab.Dumbbell(1, "10Gbit/s", "50ms", "1BDP", duration="10000s",
                                           sample_interval=0).to_spec())
    assert big["long"] and big["events"] > 1e8
    assert "events" in big["text"] and "memory" in big["text"] and "Ctrl-C" in big["text"]


def test_memory_limit_from_a_scenario_reaches_the_core():
    sc = tcplab.Dumbbell(2, "10Mbit/s", "10ms", 10, duration="1s", memory_limit="1KB")
    assert sc.to_spec()["memory_limit"] == 1000
    with pytest.raises(tcplab.SpecError, match=r"over memory_limit \(1000 B"):
        tcplab.run(sc.to_spec())
    # without it the key is absent: runs keep their identity (store keys)
    assert "memory_limit" not in tcplab.Dumbbell(2, "10Mbit/s", "10ms", 10, duration="1s").to_spec()


@pytest.mark.parametrize("bad", ["-1KB", 0, "lots"])
def test_a_bad_memory_limit_names_the_field(bad):
    with pytest.raises(ScenarioError, match=r"^memory_limit"):
        tcplab.Dumbbell(2, "10Mbit/s", "10ms", 10, duration="1s", memory_limit=bad).to_spec()


def test_cli_run_refuses_a_run_over_its_memory_limit_before_running(tmp_path):
    f = tmp_path / "big.toml"
    f.write_text('[dumbbell]\nn_flows = 100000\nbottleneck_rate = "10Gbit/s"\nrtt = "50ms"\nbuffer = "1BDP"\n'
                 '[run]\nduration = "100s"\n')
    p = subprocess.run([sys.executable, "-m", "tcplab", "run", str(f), "-o", str(tmp_path / "o")],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 2, p.stderr
    # one line: the refusal says the cost (no "running ..." line for a run that does not start)
    assert p.stderr.startswith("error: run.sample_interval: the run would need about "), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_cli_run_says_the_cost_up_front_with_progress(tmp_path):
    f = tmp_path / "small.toml"
    f.write_text('[dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbit/s"\nrtt = "20ms"\nbuffer = 10\n'
                 '[run]\nduration = "1s"\n')
    p = subprocess.run([sys.executable, "-m", "tcplab", "run", str(f), "--progress", "-o", str(tmp_path / "o")],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("running small (1 s simulated): about "), p.stderr


DUMBBELL = ('[dumbbell]\nn_flows = 2\nbottleneck_rate = "10Mbit/s"\nrtt = "20ms"\nbuffer = 10\n{}\n'
            '[run]\nduration = "1s"\n')


@pytest.mark.parametrize("line, error", [
    ('bottleneck_rate = 1e-5', "dumbbell.bottleneck_rate: must be a rate from 0.2274 bit/s"),
    ('rtt = 4e7', "dumbbell.rtt: must be a time from 0 to 2.305843e6 s"),
    ('access_rate = 1e30', "dumbbell.access_rate: must be a rate from"),
    ('algorithm = "cubic"\nparams = { beta = 5 }', "dumbbell.params.beta: must be a fraction"),
    ('queue = { discipline = "pie", tupdate = "1ns" }', "dumbbell.queue.tupdate:"),
    # (the memory estimate is checked when the run starts: the core's path follows the key)
    ('flow_options = { init_cwnd = 1e12 }', "dumbbell.flow_options.init_cwnd (flows[0].init_cwnd): the run would need"),
])
def test_a_core_error_names_the_dumbbell_key_of_the_file(tmp_path, line, error):
    """The core names the run description's fields; a dumbbell file has no links or flows lists, so the
    error leads with the key the user wrote."""
    text = DUMBBELL.format(line)
    for key in ("bottleneck_rate", "rtt"):  # a line that sets them replaces the default
        if line.startswith(key):
            text = text.replace(f'{key} = "10Mbit/s"\n' if key == "bottleneck_rate" else f'{key} = "20ms"\n', "", 1)
    f = tmp_path / "d.toml"
    f.write_text(text)
    p = subprocess.run([sys.executable, "-m", "tcplab", "run", str(f), "-o", str(tmp_path / "o")],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 2 and p.stderr.startswith("error: " + error), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_a_hand_built_job_with_nan_names_its_key_path(tmp_path):
    """Campaign.run([...]) with a RunSpec dict JSON cannot carry: the job and key are named (it was a bare
    `ValueError: Out of range float values are not JSON compliant`)."""
    from tcplab.sweep import Campaign

    spec = tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s").to_spec()
    spec["flows"][0]["init_cwnd"] = float("nan")
    with Campaign(str(tmp_path / "c")) as camp:
        with pytest.raises(tcplab.SpecError, match=r"^jobs\[1\]\.flows\[0\]\.init_cwnd: must be a finite number"):
            camp.run([("ok", tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s").to_spec()), ("bad", spec)],
                     workers=1, progress=False)


def test_a_terabit_bottleneck_is_not_refused_for_its_default_access_rate():
    """The default access rate is 10 x C, at most the core's fastest link (8 Tbit/s): a 1 Tbit/s
    bottleneck was refused naming access_rate, a key the user never set."""
    sc = tcplab.Dumbbell(1, "1Tbit/s", "1ms", "1BDP", duration="0.002s", sample_interval=0)
    assert sc.access_rate_bps == 8e12
    r = tcplab.run(sc.to_spec())
    assert 0 <= r.links["utilization"].max() <= 1


def test_field_of_names_the_dumbbell_key_a_core_field_comes_from():
    sc = tcplab.Dumbbell(2, "10Mbit/s", "20ms", 10, duration="1s", algorithm=["cubic", "reno"],
                         access_delay=["1ms", "2ms"],
                         flow_options={"files": [{"size": 1000, "start": 0}], "rwnd": 20})
    assert sc.field_of("flows[0].app.files[0].size") == "flow_options.files[0].size"
    assert sc.field_of("flows[0].rwnd_packets") == "flow_options.rwnd"
    assert sc.field_of("flows[1].cc.algorithm") == "algorithm[1]"  # (given as a list, one per flow)
    assert sc.field_of("flows[1].cc.params.beta") == "params.beta"
    assert sc.field_of("links[0].queue.limit_packets") == "buffer"
    assert sc.field_of("links[1].delay") == "rtt"  # (r2-r1)
    assert sc.field_of("links[2].rate_bps") == "access_rate"
    assert sc.field_of("links[9].delay") == "access_delay[1]"  # (flow 1's d2-r2)
    assert sc.field_of("flows") == "n_flows"
    cbr = tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s", source={"kind": "cbr", "rate": "1Mbit/s"})
    assert cbr.field_of("flows[0].app.rate_bps") == "source.rate"


# ---------------------------------------------------------------- found by review after the merge

def test_seeds_beyond_the_index_are_refused_before_anything_runs(tmp_path):
    """Seeds are stored as SQLite INTEGERs (signed 64 bits): a seed of 2^63 ran, then broke every later
    open of the campaign with an OverflowError; a sweep's later seeds were checked only while it ran."""
    from tcplab.sweep import Campaign, CampaignError, Sweep, SweepError

    base = tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s")
    with pytest.raises(SweepError, match=r"^seeds\[1\]: expected an integer from 0 to 9223372036854775807"):
        Sweep(base, grid={"buffer": [5, 10]}, seeds=[1, 2**63])
    spec = base.to_spec()
    spec["seed"] = 2**63
    with Campaign(str(tmp_path / "c")) as camp:
        with pytest.raises(CampaignError, match=r"^jobs\[0\]\.seed: must be 0 to 9223372036854775807"):
            camp.run([("a", spec)], workers=1, progress=False)
        assert len(camp) == 0


def test_reindex_waits_for_no_sweep_it_would_race(tmp_path):
    """A reindex while a sweep holds the campaign emptied the index the sweep was using and said
    "0 run(s) indexed"; it now refuses naming the holder."""
    from tcplab.sweep import Campaign, CampaignError

    d = str(tmp_path / "c")
    with Campaign(d) as camp:
        camp.run([("a", tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s").to_spec())], workers=1,
                 progress=False)
        camp.lock()  # as a running sweep holds it
        with Campaign(d) as other:
            with pytest.raises(CampaignError, match="another sweep is running into this campaign"):
                other.reindex()
        assert len(camp) == 1


def test_a_directory_where_the_lock_file_belongs_is_one_line(tmp_path):
    from tcplab.sweep import Campaign

    d = tmp_path / "c"
    with Campaign(str(d)):
        pass
    if (d / "lock").exists():
        (d / "lock").unlink()
    (d / "lock").mkdir()
    sweep = tmp_path / "s.toml"
    sweep.write_text('name = "s"\n[base]\nname = "s"\n[base.dumbbell]\nn_flows = 1\nbottleneck_rate = "10Mbps"\n'
                     'rtt = "20ms"\nbuffer = 10\n[base.run]\nduration = "1s"\n[grid]\nbuffer = [5, 10]\n')
    p = subprocess.run([sys.executable, "-m", "tcplab", "sweep", str(sweep), "-o", str(d)], capture_output=True,
                       text=True, env=ENV, timeout=300)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip() == (f"error: {d}/lock: a directory is where a file belongs; move that directory out of "
                                "the campaign directory (it is not part of a campaign), then run again")


@pytest.mark.skipif(os.geteuid() != 0, reason="a read-only bind mount needs root (chmod does not bind root)")
def test_reindex_of_a_read_only_campaign_is_one_line(tmp_path):
    from tcplab.sweep import Campaign

    d, mnt = tmp_path / "c", tmp_path / "ro"
    with Campaign(str(d)) as camp:
        camp.run([("a", tcplab.Dumbbell(1, "10Mbit/s", "20ms", 10, duration="1s").to_spec())], workers=1,
                 progress=False)
    mnt.mkdir()
    if subprocess.run(["mount", "--bind", str(d), str(mnt)]).returncode != 0:
        pytest.skip("mount --bind failed (no mount namespace permission here)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], check=True)
        p = subprocess.run([sys.executable, "-m", "tcplab", "sweep", "--reindex", str(mnt)], capture_output=True,
                           text=True, env=ENV, timeout=300)
    finally:
        subprocess.run(["umount", str(mnt)])
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith(f"error: {mnt}: cannot write the campaign's index: read-only file system")
    assert len(p.stderr.strip().splitlines()) == 1
