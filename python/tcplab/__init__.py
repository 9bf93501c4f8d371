"""tcplab: packet-level TCP congestion-control simulator (Rust core, Python front end).

Typical use::

    import tcplab
    sc = tcplab.Dumbbell(n_flows=2, bottleneck_rate="200Mbps", rtt="100ms",
                         buffer="0.1BDP", algorithm="newreno", duration="100s")
    res = tcplab.run(sc)
    res.flows[["name", "goodput_bps", "retransmits"]]

The compiled core is ``tcplab._core``; when it is importable its
``SpecError`` (ValueError) and ``SimulationError`` (RuntimeError) are
re-exported here.
"""

# (No `from __future__ import annotations`: it would leave a name `annotations` in the package. The
# package's namespace is its API, __all__; helpers are imported under private names.)
from collections.abc import Mapping as _Mapping
from types import ModuleType as _ModuleType
from typing import Any as _Any

from ._specjson import spec_to_json as _spec_to_json
from .errors import ScenarioError, UnitError
from .phaselock import PhaseLockWarning
from .phaselock import warn_phase_lock as _warn_phase_lock
from .results import Results
from .scenario import Dumbbell, File, Flow, Link, Node, Route, Scenario, load_scenario
from .sweep import Campaign, Sweep, load_sweep

# The compiled core may not be built yet. Keep it under a private name so that
# `from tcplab import _core` still fails (ImportError) when it is missing.
_CORE: _ModuleType | None
try:
    from . import _core as _CORE
except ImportError:  # pragma: no cover - depends on the build
    _CORE = None

if _CORE is not None:
    SpecError = _CORE.SpecError
    SimulationError = _CORE.SimulationError
    __version__: str = _CORE.version()
else:  # pragma: no cover
    __version__ = "0.0.0"

__all__ = [
    "Campaign",
    "Dumbbell",
    "File",
    "Flow",
    "Link",
    "Node",
    "PhaseLockWarning",
    "Results",
    "Route",
    "Scenario",
    "ScenarioError",
    "Sweep",
    "UnitError",
    "__version__",
    "load_scenario",
    "load_sweep",
    "run",
]
if _CORE is not None:
    __all__ += ["SpecError", "SimulationError"]


def _require_core():
    if _CORE is None:
        raise ImportError(
            "tcplab's compiled core (tcplab._core) is not available; build it with `maturin develop`"
        )
    return _CORE


def _spec_error(field: str, problem: str) -> Exception:
    """The core's SpecError for a RunSpec dict refused before it reaches the core."""
    err = _require_core().SpecError(f"{field}: {problem}")
    err.field, err.problem = field, problem
    return err


def run(scenario: Scenario | _Mapping[str, _Any], progress: bool = False) -> Results:
    """Simulate one run and return its :class:`Results`.

    ``scenario`` is a :class:`Scenario` (validated, then serialized with
    ``to_spec()``) or a dict that already is a core ``RunSpec`` (passed
    through unchanged; the core validates it). Raises
    :class:`ScenarioError` for an invalid scenario, ``SpecError`` for what
    the core rejects, ``SimulationError`` for an internal failure.
    The GIL is released while the core runs. ``progress``: the simulated
    time done, the wall time and the time left on stderr (one line redrawn
    on a terminal, one line per tenth of the run elsewhere).

    A Scenario with two or more long-lived flows and nothing random gets a
    :class:`PhaseLockWarning` (once per process): its outcome may be a phase
    effect, and another seed gives the same result (:mod:`tcplab.phaselock`).
    """
    core = _require_core()
    if isinstance(scenario, Scenario):
        spec = scenario.to_spec()
        sc = scenario
        _warn_phase_lock(sc, spec)
    elif isinstance(scenario, _Mapping):
        spec = dict(scenario)
        sc = None
    else:
        raise TypeError(f"run() takes a Scenario or a RunSpec dict, got {type(scenario).__name__}")
    raw = core.run(_spec_to_json(spec, _spec_error), progress=progress)
    return Results(raw, scenario=sc, spec=spec)
