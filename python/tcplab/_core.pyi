"""Type stubs of the compiled core (crates/tcplab-py)."""

from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

class SpecError(ValueError):
    """Invalid run description; ``str(e)`` starts with the field path."""

    field: str
    problem: str

class SimulationError(RuntimeError):
    """Internal failure (a panic) inside the core; the interpreter survives it."""

class ParamInfo(TypedDict):
    name: str
    default: str
    description: str
    source: str

class AlgorithmInfo(TypedDict):
    name: str
    aliases: list[str]
    description: str
    params: list[ParamInfo]

Column = npt.NDArray[np.float64] | npt.NDArray[np.uint64] | npt.NDArray[np.uint32] | list[str]

class RunOutput(TypedDict):
    flows: dict[str, Column]
    links: dict[str, Column]
    files: dict[str, Column]
    flow_ts: dict[str, Column]
    queue_ts: dict[str, Column]
    meta: dict[str, Any]

def run(spec_json: str, progress: bool = False) -> RunOutput:
    """Run the RunSpec given as JSON; releases the GIL while simulating."""

def validate(spec_json: str) -> None:
    """Raise SpecError if the RunSpec is invalid (routes and algorithms included)."""

def paths(spec_json: str) -> list[tuple[list[str], list[str]]]:
    """Per flow, the (forward, reverse) link names the core routes it over."""

def algorithms() -> list[AlgorithmInfo]:
    """The congestion-control algorithms of the core and their parameters."""

def version() -> str:
    """Version of the core."""

class BenchScenario(TypedDict):
    name: str
    description: str
    spec_json: str | None
    skip: str | None
    bottleneck: str
    axis_value: float | None

def bench_suite(quick: bool = False, seconds: float | None = None) -> list[BenchScenario]:
    """The standard benchmark scenarios S1-S5 (the definitions cargo bench uses)."""

def bench_scaling(axis: str, quick: bool = False) -> list[BenchScenario]:
    """The points of a scaling curve: axis "flows", "rate" or "window"."""

def _panic_for_test() -> None:
    """Panic inside the core (tests use it to check panics become SimulationError)."""
