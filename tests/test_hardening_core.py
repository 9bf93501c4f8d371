"""Issue 31, core part: inputs that wrapped time, sized memory or crashed the
process are refused with the field named; ``_core.estimate`` says a run's cost."""

import json
import math
import subprocess
import sys

import pytest

import tcplab
from tcplab import _core


def _spec(**run):
    d = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="0.1s")
    spec = d.to_spec()
    spec["measure_start"] = 0.0
    spec.update(run)
    return spec


def _run_in_child(spec):
    """tcplab.run(spec) in a fresh interpreter: (returncode, the SpecError's field or None)."""
    code = (
        "import json, sys, tcplab\n"
        "spec = json.loads(sys.stdin.read())\n"
        "try:\n"
        "    tcplab.run(spec)\n"
        "    print('RAN')\n"
        "except tcplab.SpecError as e:\n"
        "    print('FIELD', e.field)\n"
        "    print('MESSAGE', e)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(spec), capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout


def test_a_picosecond_sample_interval_is_a_spec_error_not_an_abort():
    # On main: "memory allocation of 800000000008 bytes failed", SIGABRT.
    rc, out = _run_in_child(_spec(sample_interval=1e-12))
    assert rc == 0, out
    assert "FIELD sample_interval" in out
    assert "memory_limit" in out


def test_a_huge_initial_window_is_a_spec_error_not_an_abort():
    spec = _spec()
    spec["flows"][0]["init_cwnd"] = 1e12
    rc, out = _run_in_child(spec)
    assert rc == 0, out
    assert "FIELD flows[0].init_cwnd" in out


def test_an_rtt_beyond_simulated_time_is_refused_naming_the_delay():
    # On main a 10 Mbit/s dumbbell with rtt = 4e7 s reported 9.996 Mbit/s.
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt=4e7, buffer=10, duration="2s")
    assert e.value.field == "rtt"  # (the core's links[0].delay, named as the dumbbell's key)
    assert "2^61 ps" in str(e.value)
    spec = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="2s").to_spec()
    spec["links"][0]["delay"] = 2e7
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "links[0].delay" and "2^61 ps" in str(e.value)


@pytest.mark.parametrize("rate", [1e-5, 1e-6, 1e30])
def test_rates_picoseconds_cannot_represent_are_refused(rate):
    spec = _spec()
    spec["links"][0]["rate_bps"] = rate
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "links[0].rate_bps"
    assert "8e12 bit/s" in str(e.value)


def test_estimate_says_the_cost_up_front():
    spec = _spec(sample_interval=1e-12)
    est = _core.estimate(json.dumps(spec))
    assert est["samples"] == 100_000_000_001
    assert est["memory_driver"] == "sample_interval"
    assert est["over_limit"] is True
    assert est["memory_bytes"] > est["memory_limit"] == 4 << 30
    ok = _core.estimate(json.dumps(_spec(sample_interval=0.01)))
    assert ok["over_limit"] is False
    assert ok["samples"] == 11
    # 10 Mbit/s for 0.1 s in 1500-byte packets, at most.
    assert math.isclose(ok["packets"], 10e6 * 0.1 / 12_000)
    assert ok["events"] > ok["packets"]
    with pytest.raises(tcplab.SpecError) as e:
        _core.estimate(json.dumps(_spec(duration=-1)))
    assert e.value.field == "duration"


def test_memory_limit_is_part_of_the_run_spec():
    spec = _spec(sample_interval=1e-6, memory_limit=1_000_000)
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "sample_interval"
    spec["memory_limit"] = 1 << 30
    tcplab.run(spec)


def test_nan_and_infinity_in_a_spec_dict_name_the_key():
    # On main json.dumps wrote NaN and the core said "spec: ... expected value at line 1 column N".
    for bad in (float("nan"), float("inf"), -float("inf")):
        spec = _spec()
        spec["flows"][0]["init_cwnd"] = bad
        with pytest.raises(tcplab.SpecError) as e:
            tcplab.run(spec)
        assert e.value.field == "flows[0].init_cwnd"
        assert "finite" in str(e.value)


def test_a_lone_surrogate_names_the_key():
    spec = _spec()
    spec["flows"][0]["name"] = "f\ud800"
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "flows[0].name"
    assert "surrogate" in str(e.value)
    spec = _spec()
    spec["flows"][0]["cc"]["params"]["x\udfff"] = 1
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "flows[0].cc.params.x\\udfff"
    # A surrogate pair is fine (it is one character).
    spec = _spec()
    spec["flows"][0]["name"] = "f\U0001F600"
    tcplab.run(spec)


def test_core_type_errors_name_the_field():
    # On main: "spec: invalid run description: invalid type: floating point 1e+300, expected u32 at line 1 column 1834".
    spec = _spec()
    spec["flows"][0]["dupthresh"] = 1e300
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field == "flows[0].dupthresh"
    spec = _spec()
    spec["flows"][0]["app"] = {"kind": "files", "files": [{"size": 1e30, "start": 0.0}]}
    with pytest.raises(tcplab.SpecError) as e:
        tcplab.run(spec)
    assert e.value.field.startswith("flows[0].app")
