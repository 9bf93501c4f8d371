"""A panic or an error in the core becomes a Python exception; the process lives on."""

import json
import subprocess
import sys

import pytest

import tcplab
from tcplab import _core


def test_a_panic_in_the_core_raises_simulation_error_and_python_continues():
    from conftest import require_test_hooks

    require_test_hooks("a panic on purpose")
    spec = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="1s").to_spec()
    # The hook panics inside the path every run takes (run_world in crates/tcplab-py/src/lib.rs).
    with pytest.raises(_core.SimulationError, match="internal error in the simulation core: deliberate test panic"):
        _core._panic_for_test(json.dumps(spec))
    # The interpreter and the core still work afterwards.
    assert _core.version() == tcplab.__version__
    assert _core.run(json.dumps(spec))["meta"]["events"] > 0


def test_simulation_error_is_a_runtime_error():
    assert issubclass(_core.SimulationError, RuntimeError)


def test_invalid_spec_raises_spec_error_naming_the_field():
    spec = tcplab.Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer=10, duration="1s").to_spec()
    spec["flows"][0]["init_cwnd"] = 0
    with pytest.raises(_core.SpecError) as e:
        _core.run(json.dumps(spec))
    assert str(e.value).startswith("flows[0].init_cwnd:")
    assert e.value.field == "flows[0].init_cwnd"


def test_run_compare_analytic_reports_the_model(tmp_path):
    toml = tmp_path / "s.toml"
    toml.write_text("""
[dumbbell]
n_flows = 1
bottleneck_rate = "20Mbps"
rtt = "40ms"
buffer = "0.2BDP"
algorithm = "newreno"
[run]
duration = "120s"
measure_window = "60s"
sample_interval = "100ms"
""")
    out = subprocess.run([sys.executable, "-m", "tcplab", "run", str(toml), "-o", str(tmp_path / "o"), "--json",
                          "--compare-analytic", "--no-plot"], capture_output=True, text=True, check=True).stdout
    a = json.loads(out)["analytic"]
    assert a["model"] == "reno_sawtooth_utilization"
    assert a["predicted_utilization"] < 1.0
    assert abs(a["relative_difference"]) < 0.03
