"""`--set KEY=VALUE`: keys are TOML dotted keys (quoted parts too), `base.`-prefixed keys reach a
sweep's base given as a path, a sweep refuses two parameters that set one field, a bare number for a
time is warned of, and a time option without a unit is told what to write."""

import json
import textwrap

import pytest

from tcplab.overrides import OverrideError, parse_override
from tcplab.sweep.grid import SweepError, load_sweep, sweep_from_dict

SMALL = """
    name = "pl"
    [dumbbell]
    n_flows = 2
    bottleneck_rate = "10Mbps"
    rtt = "20ms"
    buffer = "1BDP"
    [run]
    duration = "2s"
    sample_interval = "50ms"
"""

SWEEP = """
    base = "pl.toml"
    [grid]
    "dumbbell.buffer" = ["0.5BDP", "1BDP"]
"""


def write(tmp_path, text, name):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


@pytest.fixture
def sweep_file(tmp_path):
    write(tmp_path, SMALL, "pl.toml")
    return write(tmp_path, SWEEP, "sw.toml")


@pytest.mark.parametrize("key, path", [
    ("dumbbell.buffer", ["dumbbell", "buffer"]),
    ("flows[1].algorithm", ["flows", 1, "algorithm"]),
    ("dumbbell.algorithm[0]", ["dumbbell", "algorithm", 0]),
    ('grid."dumbbell.buffer"', ["grid", "dumbbell.buffer"]),
    ("grid.'dumbbell.buffer'", ["grid", "dumbbell.buffer"]),
    ('grid . "a=b" . c', ["grid", "a=b", "c"]),
    ('"a\\"b"[2].c', ['a"b', 2, "c"]),
])
def test_keys_are_toml_dotted_keys_with_array_indices(key, path):
    assert parse_override(f"{key}=1")[1] == path


@pytest.mark.parametrize("key", ["a b", "x.", ".x", 'grid."open', "flows[x]", "a..b", ""])
def test_what_is_not_a_key_is_refused(key):
    with pytest.raises(OverrideError, match="not a key path"):
        parse_override(f"{key}=1")


def test_an_equals_sign_inside_a_quoted_key_part_is_part_of_the_key():
    assert parse_override("grid.'a=b'=[1]") == ("grid.'a=b'", ["grid", "a=b"], [1])


def test_a_quoted_grid_key_overrides_the_files_own_axis(sweep_file):
    sw, _ = load_sweep(sweep_file, overrides=['grid."dumbbell.buffer"=["2BDP", "3BDP"]'])
    assert sw.grid == {"dumbbell.buffer": ["2BDP", "3BDP"]}
    assert [sw.scenario(p).buffer for p in sw.points()] == ["2BDP", "3BDP"]


def test_a_second_axis_for_the_same_field_is_refused(sweep_file):
    # grid.buffer resolves to dumbbell.buffer, as the file's "dumbbell.buffer" does: every point would
    # run 2BDP while labelled 0.5BDP or 1BDP
    with pytest.raises(SweepError) as e:
        load_sweep(sweep_file, overrides=['grid.buffer=["2BDP"]'])
    msg = str(e.value)
    assert "\n" not in msg and "buffer" in msg and "'dumbbell.buffer'" in msg and "same field" in msg


@pytest.mark.parametrize("grid, zipped, words", [
    ({"buffer": [1, 2], "dumbbell.buffer": [3, 4]}, None, "same field"),
    ({"rtt": ["10ms"]}, {"dumbbell.rtt": ["20ms"]}, "same field"),
    ({"queue": [{"discipline": "codel"}], "queue.target": ["5ms"]}, None, "inside dumbbell.queue"),
    ({"dumbbell.queue.target": ["5ms"], "queue": [{"discipline": "codel"}]}, None, "whole"),
])
def test_sweep_files_refuse_parameters_of_one_field(tmp_path, grid, zipped, words):
    base = {"dumbbell": {"n_flows": 1, "bottleneck_rate": "10Mbps", "rtt": "20ms", "buffer": "1BDP"}}
    doc = {"base": base, "grid": grid, **({"zip": zipped} if zipped else {})}
    with pytest.raises(SweepError, match=words) as e:
        sweep_from_dict(doc, base_dir=str(tmp_path))
    assert "\n" not in str(e.value)


def test_distinct_fields_are_still_swept(tmp_path):
    base = {"dumbbell": {"n_flows": 1, "bottleneck_rate": "10Mbps", "rtt": "20ms", "buffer": "1BDP"}}
    sw, _ = sweep_from_dict({"base": base, "grid": {"buffer": [1, 2], "queue.target": ["5ms"], "rtt": ["5ms"]}},
                            base_dir=str(tmp_path))
    assert len(sw) == 2


@pytest.mark.parametrize("key", ["dumbbell.rtt", "base.dumbbell.rtt"])
def test_base_keys_with_or_without_the_prefix_set_a_base_given_as_a_path(sweep_file, key):
    sw, _ = load_sweep(sweep_file, overrides=[f"{key}=40ms"])
    assert sw.base.rtt == "40ms" and sw.base.name == "pl"


def test_base_prefix_on_an_inline_base(tmp_path):
    path = write(tmp_path, """
        [grid]
        buffer = [1, 2]
        [base.dumbbell]
        n_flows = 1
        bottleneck_rate = "10Mbps"
        rtt = "20ms"
        buffer = "1BDP"
    """, "sw.toml")
    sw, _ = load_sweep(path, overrides=["base.dumbbell.rtt=30ms", "dumbbell.n_flows=2"])
    assert sw.base.rtt == "30ms" and sw.base.n_flows == 2


def test_a_whole_new_base_is_still_the_sweeps_own_key(tmp_path, sweep_file):
    write(tmp_path, SMALL.replace('"20ms"', '"70ms"').replace('"pl"', '"other"'), "other.toml")
    sw, _ = load_sweep(sweep_file, overrides=["base=other.toml"])
    assert sw.base.rtt == "70ms"


def test_shadow_note_names_base_prefixed_keys(sweep_file, tmp_path, capsys):
    from tcplab.cli import main

    assert main(["sweep", sweep_file, "-o", str(tmp_path / "c"), "--dry-run",
                 "--set", "base.dumbbell.buffer=2BDP"]) == 0
    err = capsys.readouterr().err
    assert "note: --set base.dumbbell.buffer: the sweep's parameter 'dumbbell.buffer' sets it" in err


# ---------------------------------------------------------------- times on the command line

@pytest.mark.parametrize("argv, message", [
    (["run", "SC", "--duration", "10"], "error: --duration: '10' needs a unit, e.g. '10ms' or '10s'\n"),
    (["validate", "--algorithm", "reno", "--rate", "20Mbps", "--rtt", "50"],
     "error: --rtt: '50' needs a unit, e.g. '50ms' or '50s'\n"),
])
def test_a_time_option_without_a_unit_is_not_told_about_unquoted_numbers(tmp_path, capsys, argv, message):
    from tcplab.cli import main

    sc = write(tmp_path, SMALL, "sc.toml")
    assert main([sc if a == "SC" else a for a in argv]) == 2
    assert capsys.readouterr().err == message  # (the command line has no unquoted numbers)


def test_a_time_in_a_file_without_a_unit_still_says_what_a_plain_number_is():
    from tcplab.units import UnitError, parse_time

    with pytest.raises(UnitError, match=r"'50' needs a unit, .*\(a plain number, without quotes, is seconds\)"):
        parse_time("50", "dumbbell.rtt")


def test_a_bare_number_for_a_time_is_warned_of_as_seconds(tmp_path, capsys):
    from tcplab.cli import main

    sc = write(tmp_path, SMALL, "sc.toml")
    assert main(["run", sc, "--json", "--set", "dumbbell.rtt=50", "--set", "run.duration=1",
                 "--set", "dumbbell.n_flows=1", "--set", "dumbbell.loss=0.001", "--set", "run.sample_interval=0",
                 "--set", "dumbbell.buffer=20", "--set", "run.measure_start=0.5s"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["meta"]["sim_time"] == pytest.approx(1.0)  # seconds, as in the file
    assert cap.err.splitlines() == ["warning: --set dumbbell.rtt=50 is 50 s; write 50ms if you meant milliseconds",
                                    "warning: --set run.duration=1 is 1 s; write 1ms if you meant milliseconds"]


def test_a_bare_number_for_a_time_of_a_sweeps_base_is_warned_of(sweep_file, tmp_path, capsys):
    from tcplab.cli import main

    assert main(["sweep", sweep_file, "-o", str(tmp_path / "c"), "--dry-run", "--set", "base.dumbbell.rtt=30",
                 "--set", "seeds=2", "--set", "dumbbell.n_flows=1", "--set", "dumbbell.access_delay=0.001",
                 "--set", "dumbbell.flow_options.min_rto=1"]) == 0
    err = capsys.readouterr().err
    warned = [ln for ln in err.splitlines() if ln.startswith("warning: --set")]
    assert warned == ["warning: --set base.dumbbell.rtt=30 is 30 s; write 30ms if you meant milliseconds",
                      "warning: --set dumbbell.access_delay=0.001 is 0.001 s; write 0.001ms if you meant milliseconds",
                      "warning: --set dumbbell.flow_options.min_rto=1 is 1 s; write 1ms if you meant milliseconds"]
