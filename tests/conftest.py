"""Test setup: make ``python/`` importable when tcplab is not installed."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, "python")
try:
    import tcplab  # noqa: F401  (installed, or on PYTHONPATH)
except ImportError:
    sys.path.insert(0, PY)

import pytest  # noqa: E402


@pytest.fixture
def faults():
    """The core's fault injection (``_core._inject_fault(pattern, action, once=None, unless=None)``),
    cleared after the test. Faults live in the core, so they hold wherever a campaign's runs execute
    (in this process or in forked pool workers): a run can fail (``error:<text>``), kill the process it
    runs in (``exit:<code>``) or kill it while its segment is stored (``exit-storing:<file>``)."""
    from tcplab import _core

    require_test_hooks("fault injection")
    _core._clear_faults()
    yield _core._inject_fault
    _core._clear_faults()


def require_test_hooks(what: str) -> None:
    """Skip (under ``CI=true``: fail) a test whose check needs the core's test hooks (``_inject_fault``,
    ``_panic_for_test``): they exist only in a core built with the cargo feature ``test-hooks``, which
    scripts/test.sh builds and no wheel has. Skipping says how to get them."""
    from tcplab import _core

    if hasattr(_core, "_inject_fault"):
        return
    msg = (f"{what} needs the core's test hooks, and this core was built without them: rebuild it with "
           "MATURIN_PEP517_ARGS='--features test-hooks' .venv/bin/pip install -e '.[test]' (scripts/test.sh does)")
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def require_program(names, package: str, what: str) -> str:
    """The path of the first of ``names`` on PATH. Missing, the test skips
    saying which Debian package provides it (``scripts/setup-system.sh``
    installs it where it can); under ``CI=true`` it fails instead, so CI
    never passes by skipping a check."""
    import shutil

    for n in [names] if isinstance(names, str) else names:
        path = shutil.which(n)
        if path:
            return path
    msg = f"{what} needs {package}, which is not installed: sudo apt-get install -y {package} " \
          f"(scripts/setup-system.sh does it as root)"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)
