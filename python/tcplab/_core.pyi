"""Type stubs of the compiled core (crates/tcplab-py), checked against it by mypy's stubtest
(tests/test_core_stub.py). The TypedDicts (underscored) exist for type checkers only."""

from typing import Any, TypedDict, final

import numpy as np
import numpy.typing as npt

class SpecError(ValueError):
    """Invalid run description; ``str(e)`` starts with the field path."""

    field: str
    problem: str

class SimulationError(RuntimeError):
    """Internal failure (a panic) inside the core; the interpreter survives it."""

# The core's input limits (spec::limits in crates/tcplab-core/src/spec.rs; docs/limits.md).

MAX_PACKET_SIZE: int  # bytes: IP's largest packet; packets hold sizes in 16 bits
MAX_SPAN_S: float  # seconds: (2^61 - 1) ps, the longest span simulated time can hold
MAX_RATE_BPS: float  # bit/s: a byte per picosecond
MAX_LINKS: int  # links of a run: the event queue numbers them in 29 bits
DEFAULT_PCAP_LIMIT: int  # packets a capture records when the run gives no pcap_limit

class _ParamInfo(TypedDict):
    name: str
    default: str
    description: str
    source: str

class _AlgorithmInfo(TypedDict):
    name: str
    aliases: list[str]
    description: str
    params: list[_ParamInfo]

class _DisciplineInfo(TypedDict):
    name: str
    aliases: list[str]
    description: str
    params: list[_ParamInfo]  # times in seconds
    source: str  # the RFC or paper it implements

_Column = (npt.NDArray[np.float64] | npt.NDArray[np.uint64] | npt.NDArray[np.uint32] | npt.NDArray[np.uint16]
          | npt.NDArray[np.uint8] | npt.NDArray[np.bool_] | list[str])

class _RunTables(TypedDict):
    # The columns of flows ... qdisc_ts are declared once in crates/tcplab-store/src/columns.rs; columns() lists them.
    flows: dict[str, _Column]
    links: dict[str, _Column]
    files: dict[str, _Column]
    flow_ts: dict[str, _Column]
    queue_ts: dict[str, _Column]
    cc_ts: dict[str, _Column]  # time, flow, variable (codes), value; variable_names
    qdisc_ts: dict[str, _Column]  # time, link, variable (codes), value; variable_names
    meta: dict[str, Any]

class _RunOutput(_RunTables, total=False):
    # Only when the RunSpec had loss_trace: every drop/loss (time, link, flow, seq, ack, retransmit,
    # cause codes with cause_names, queue_packets) and every retransmission (time, flow, seq, cause
    # codes with cause_names, outstanding).
    drop_trace: dict[str, _Column]
    retransmit_trace: dict[str, _Column]
    # Only when the RunSpec had pcap: every packet starting onto a captured link's wire (time_ps, link,
    # flow, ack, seq, byte_seq, payload, size, retransmit, ecn, tcp_flags, sack_count; the SACK blocks
    # in sack_left/sack_right, sack_count of them per row in order; overflow and limit as ints).
    packet_trace: dict[str, Any]
    # Only from bench_run with a warm-up: seconds, events, and per-link packets_out and data_packets_out then.
    warmup: dict[str, Any]

def run(spec_json: str, progress: bool = False) -> _RunOutput:
    """Run the RunSpec given as JSON; releases the GIL while simulating."""

def validate(spec_json: str, memory: bool = True) -> None:
    """Raise SpecError if the RunSpec is invalid: every rule a run applies (routes, algorithms and queue
    disciplines with their parameters included) and, with ``memory``, its memory estimate."""

def paths(spec_json: str) -> list[tuple[list[str], list[str]]]:
    """Per flow, the (forward, reverse) link names the core routes it over."""

class _Estimate(TypedDict):
    memory_bytes: int       # bytes the run will allocate, about (docs/limits.md)
    memory_limit: int       # the RunSpec's memory_limit, or the default (4 GiB)
    series_bytes: int       # of which the sampled time series
    window_bytes: int       # of which the initial windows in flight
    samples: int            # sampling instants (0 without time series)
    packets: float          # data packets the flows can deliver, at most
    events: float           # events to simulate, about
    memory_driver: str      # the field whose cost is the largest part of memory_bytes
    over_limit: bool        # memory_bytes > memory_limit: run() and validate() refuse it

def estimate(spec_json: str) -> _Estimate:
    """What the RunSpec will cost (memory, packets, events), from its description
    alone: cheap, no simulation is built. Raises SpecError if it is invalid; an
    estimate over the memory limit is returned with over_limit = True."""

def algorithms() -> list[_AlgorithmInfo]:
    """The congestion-control algorithms of the core and their parameters."""

def disciplines() -> list[_DisciplineInfo]:
    """The queue disciplines of the core (a link's ``queue.discipline``) and their parameters."""

def version() -> str:
    """Version of the core."""

def build() -> str:
    """How the core was compiled: "release" or "debug", and ", pgo optimized" (or
    ", pgo instrumented") when scripts/pgo.sh built it."""

# ---- developer tooling (tcplab.devtools): the cargo feature "bench", in the default build
# (crates/tcplab-py/src/bench.rs); absent from a build with --no-default-features.

class _BenchScenario(TypedDict):
    name: str
    description: str
    spec_json: str | None
    skip: str | None
    bottleneck: str
    axis_value: float | None
    warmup: float

def bench_suite(quick: bool = False, seconds: float | None = None) -> list[_BenchScenario]:
    """The standard benchmark scenarios S1-S6 (the definitions cargo bench uses)."""

def bench_scaling(axis: str, quick: bool = False) -> list[_BenchScenario]:
    """The points of a scaling curve: axis "flows", "rate", "window" or "algorithm"."""

def bench_run(spec_json: str, warmup: float = 0.0) -> _RunOutput:
    """As run(), the first `warmup` simulated seconds untimed (meta's wall_s is
    the rest's); with a warm-up the output gets a "warmup" key: seconds,
    events, and per-link packets_out and data_packets_out then."""

# Test hooks: _panic_for_test, _inject_fault and _clear_faults exist only in a core built with the cargo
# feature test-hooks (scripts/test.sh builds it; no wheel has them; tests/conftest.py require_test_hooks).

def _panic_for_test(spec_json: str) -> None:
    """Test hook: run spec_json through the path of every run with a panic where the run would start
    (tests/test_robustness.py checks that it becomes SimulationError and Python lives on)."""

# ---- campaigns (crates/tcplab-py/src/store.rs; crates/tcplab-store)

SHARED_HEADER_WORDS: int

@final
class Segment:
    """Runs jobs (JSON lines written by ``plan_job``) and stores them as one segment."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def run(self, job_json: str) -> bool:
        """Run one job and keep its record; True if it succeeded (the GIL is released)."""
    def commit(self, root: str, fsync: bool) -> str:
        """Encode and atomically store the segment in the campaign at ``root``; its summary (JSON)."""
    def finish(self) -> tuple[str, dict[str, bytes]]:
        """The segment's manifest (JSON) and files, for the caller to store."""

def columns() -> list[tuple[str, str, str]]:
    """The result tables' columns as declared once (crates/tcplab-store/src/columns.rs): (table, column,
    kind) in order; kind is "num", "opt" (float64, NaN for none), "text" (list of str) or "series"."""

def fork_worker(cmd_fd: int, report_fd: int, shared_addr: int, shared_len: int, slot: int, close: list[int]) -> int:
    """Fork a local pool worker that runs only the core's worker loop (no Python); its pid."""

def run_key(spec_json: str, version: str) -> str:
    """The run key of a RunSpec (JSON text) for a tcplab version: the hash of the spec as the core reads and
    writes it back, and the version (crates/tcplab-store/src/key.rs). SpecError if the core cannot read it."""

def plan_job(spec_json: str, version: str, params_json: str, bottleneck: list[str]) -> tuple[str, str, int, str]:
    """(run key, the spec's JSON as stored, the run's seed, the job's line) of a run; SpecError if the core cannot
    read the spec."""

def _inject_fault(pattern: str, action: str, once: str | None = None, unless: str | None = None) -> None:
    """Test hook: make runs whose RunSpec contains ``pattern`` fail, or kill their process."""

def _clear_faults() -> None:
    """Test hook: remove injected faults."""

def netem_run(config_json: str) -> str:
    """Run the kernel path's TUN forwarder (netem.rs) until stopped; the summary JSON it also writes."""
