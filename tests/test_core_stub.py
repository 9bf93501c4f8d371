"""The compiled core against its stub and its one column declaration."""

import importlib.util
import os
import subprocess
import sys

import pytest

from tcplab import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_core_stub_matches_the_compiled_core():
    """python/tcplab/_core.pyi declares every function and class of the core with its signature
    (mypy's stubtest; the allowlist says why each entry is there)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it): _core.pyi is not checked")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(_core.__file__)),
                                                        os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tcplab._core", "--ignore-unused-allowlist",
                          "--allowlist", os.path.join(ROOT, "tests", "core_stubtest_allowlist.txt")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def test_run_tables_are_the_declared_columns(tmp_path):
    """_core.run's tables have exactly the declared columns, in order (plus the variable names of the
    long-format series)."""
    from tcplab.scenario import load_scenario

    spec = load_scenario(os.path.join(ROOT, "examples", "dumbbell-fq_codel-ecn.toml")).to_json()
    r = _core.run(spec)
    declared: dict[str, list[str]] = {}
    for table, column, kind in _core.columns():
        assert kind in ("num", "opt", "text", "series")
        declared.setdefault(table, []).append(column)
    assert list(declared) == ["flows", "links", "files", "flow_ts", "queue_ts", "cc_ts", "qdisc_ts"]
    for table, cols in declared.items():
        extra = ["variable_names"] if table in ("cc_ts", "qdisc_ts") else []
        assert list(r[table]) == cols + extra, table
