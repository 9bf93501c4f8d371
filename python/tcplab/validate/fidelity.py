"""Fidelity of tcplab against the Linux kernel: the same dumbbell on both, compared metric by metric.

The kernel side (:mod:`tcplab.validate.kernel`) leaves a *kernel directory*;
:func:`simulate` runs the same path in tcplab; :func:`compare` puts both into
one common per-side form (:class:`Side`) and applies *the same* metric
functions to each, so a difference in the table is a difference in the runs,
not in how they were measured. :func:`write_report` writes ``fidelity.csv``,
the overlay figures (PNG) and a self-contained ``report.html``.

Kernel directory (times in s relative to t0 = the first data packet with
payload reaching the bottleneck)::

    meta.json      kernel, algorithm, rate_bps, rtt_s, buffer_packets, duration_s, mss, mtu,
                   sysctls, nstat, forwarder {late_mean_s, late_p99_s, late_max_s, late_over_1ms,
                   stalls [[t, length_s], ...], packets_fwd, packets_dropped, bytes_fwd}, t0_monotonic
    tcp_info.csv   time, cwnd, ssthresh, srtt_s, ..., retransmits (total), ...   (every 10 ms)
    rx.csv         time, bytes (cumulative payload bytes read by the receiver)
    drops.csv      time, seq, payload_bytes, queue_packets
    queue.csv      time, packets, bytes                                         (every 10 ms)

tcplab's times are shifted to the same origin: t0 = the flow's start plus
the first packet's trip over the sender's access link (:func:`sim_t0`).

The parts: :mod:`tcplab.validate.sides` (tcplab's side, :func:`simulate`;
the common per-side form :class:`Side`), :mod:`tcplab.validate.metrics` (the metric
functions), :mod:`tcplab.validate.compare` (the table, several flows, the
disturbances) and :mod:`tcplab.validate.fidelity_report` (:func:`write_report`);
this module holds what is validated (:class:`Case`, from a scenario file or the
command line's flags) and names the functions the CLI uses.

Metrics (docs/validation.md, "tcplab validate", defines them exactly):
steady-state goodput, cwnd min/mean/max and srtt mean over the steady-state
window (:func:`steady_window`), sawtooth period (mean interval between loss
events, :func:`loss_events`), drops, retransmissions, first-loss time, peak
cwnd in start-up. A bbr run has its own rows (:data:`BBR_METRICS`: no
sawtooth period or slow-start exit; mean srtt, the retransmission rate and
the ProbeRTT episodes, :func:`probe_rtt_episodes`, judged against
:data:`BBR_TARGETS` and :func:`probe_rtt_cadence`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# MAX_FLOWS, PACKET_SIZE and kernel_algorithm are used here; the rest is what the CLI (cli/validate.py)
# calls as fidelity.X, imported from the modules that define it.
from .compare import disturbances
from .fidelity_report import table_text, targets_summary, write_report
from .sides import (
    MAX_FLOWS,
    PACKET_SIZE,
    KernelDirError,
    kernel_algorithm,
    kernel_cc_params,
    read_meta,
    sim_scenario,
    simulate,
)

__all__ = [
    "Case",
    "KernelDirError",
    "case_from_dict",
    "case_from_file",
    "case_from_flags",
    "disturbances",
    "kernel_cc_params",
    "read_meta",
    "sim_scenario",
    "simulate",
    "table_text",
    "targets_summary",
    "write_report",
]


# ---------------------------------------------------------------- what is validated

@dataclass(frozen=True)
class Case:
    """One validation: ``n_flows`` bulk flows (1 to :data:`MAX_FLOWS`) of
    ``algorithm`` (kernel name), all starting together, over a bottleneck of
    ``rate_bps`` with round-trip propagation delay ``rtt_s`` and a drop-tail
    buffer of ``buffer_packets``, for ``duration_s``."""

    algorithm: str
    rate_bps: float
    rtt_s: float
    buffer_packets: int
    duration_s: float
    seed: int = 0
    name: str = "validate"
    n_flows: int = 1

    @property
    def bdp_packets(self) -> float:
        return self.rate_bps * self.rtt_s / (8 * PACKET_SIZE)

    def describe(self) -> str:
        flows = f"{self.n_flows} flows of " if self.n_flows > 1 else ""
        return (f"{flows}{self.algorithm}, {self.rate_bps / 1e6:g} Mbit/s, RTT {self.rtt_s * 1e3:g} ms, "
                f"B = {self.buffer_packets} packets ({self.buffer_packets / self.bdp_packets:.2g} BDP), "
                f"{self.duration_s:g} s")


# ---------------------------------------------------------------- what the command line asks for

#: Default length of a validation (s) when the scenario or flags give none.
DEFAULT_DURATION = 60.0

#: Keys a validation scenario may set; everything else of a scenario file is
#: refused with the reason the kernel path cannot do it.
_ALLOWED = {"": {"name", "description", "dumbbell", "run"},
            "dumbbell": {"n_flows", "bottleneck_rate", "rtt", "buffer", "algorithm", "recovery", "packet_size"},
            "run": {"duration", "seed"}}
_NO_ACCESS = "the kernel path has no access links: rtt is the whole path's round-trip propagation delay"
_SET_HERE = "set by tcplab validate to the kernel's (52-byte headers with timestamps, payload accounting)"
_REFUSED = {
    "dumbbell.params": "the kernel runs reno, cubic and bbr with their default parameters",
    "dumbbell.loss": "the kernel path has no random loss, only the bottleneck's drop-tail queue",
    "dumbbell.reverse_loss": "the kernel path has no random loss, only the bottleneck's drop-tail queue",
    "dumbbell.start": "the kernel side starts its flow at t0",
    "dumbbell.access_rate": _NO_ACCESS,
    "dumbbell.access_delay": _NO_ACCESS,
    "dumbbell.header_size": _SET_HERE,
    "dumbbell.ack_size": _SET_HERE,
    "dumbbell.accounting": _SET_HERE,
    "dumbbell.flow_options": "tcplab's side uses the Linux profile (linux_flow_options), not per-scenario options",
    "run.measure_window": "validate measures over its own steady-state window ([30 s, end], or the last half)",
    "run.measure_start": "validate measures over its own steady-state window ([30 s, end], or the last half)",
    "run.sample_interval": "set by tcplab validate (10 ms, as the kernel side samples)",
    "run.trace_links": "set by tcplab validate (the bottleneck's queue)",
    "run.loss_trace": "set by tcplab validate (always on)",
}


def _case_checks(rate: float, rtt: float, buffer_packets: float | None, duration: float,
                 fields: Mapping[str, str]) -> int:
    """Check what both forms share; the buffer in whole packets."""
    from ..errors import ScenarioError

    if buffer_packets is None:
        raise ScenarioError(fields["buffer"], "the kernel's bottleneck needs a finite buffer")
    b = int(round(buffer_packets))
    if b < 1:
        raise ScenarioError(fields["buffer"], f"must be at least 1 packet, got {buffer_packets:g}")
    if not (math.isfinite(duration) and duration >= 2 * rtt and duration > 0):
        raise ScenarioError(fields["duration"], f"must be positive and at least two round trips, got {duration:g} s")
    return b


def case_from_dict(doc: Mapping[str, Any], name: str = "validate") -> Case:
    """A :class:`Case` from a parsed scenario file: a ``[dumbbell]`` with one
    flow of reno or cubic (SACK recovery, 1500-byte packets) and ``[run]``
    ``duration`` (default 60 s) and ``seed``. The file is first checked as
    any scenario (unknown keys, units); then every key the kernel path cannot
    honour is refused with a :class:`~tcplab.errors.ScenarioError` naming it
    and saying why."""
    from ..errors import ScenarioError
    from ..scenario import scenario_from_dict

    sc = scenario_from_dict(doc, name=name)
    if sc.dumbbell is None:
        raise ScenarioError("", "tcplab validate needs a [dumbbell] scenario (one flow over one bottleneck)")
    for table, allowed in _ALLOWED.items():
        keys = doc if table == "" else doc.get(table, {})
        for k in keys:
            path = f"{table}.{k}" if table else k
            if k not in allowed:
                raise ScenarioError(path, "not supported by tcplab validate: "
                                          + _REFUSED.get(path, "the kernel path cannot do it"))
    db = doc["dumbbell"]
    n_flows = _check_flows(db.get("n_flows", 1), "dumbbell.n_flows")
    if isinstance(db.get("algorithm"), (list, tuple)):
        raise ScenarioError("dumbbell.algorithm", "expected one algorithm name")
    alg = kernel_algorithm(db.get("algorithm", "reno"), "dumbbell.algorithm")
    _check_bbr_flows(alg, n_flows, "dumbbell.n_flows")
    rec = db.get("recovery", "sack")
    if not isinstance(rec, str) or rec.lower() != "sack":
        raise ScenarioError("dumbbell.recovery",
                            f"the kernel recovers with SACK; set \"sack\" or leave it out, got {rec!r}")
    if sc.packet_bytes != PACKET_SIZE:
        raise ScenarioError("dumbbell.packet_size",
                            f"the kernel path's MTU is {PACKET_SIZE} B, got {sc.packet_bytes} B")
    run = doc.get("run", {})
    duration = float(sc._run_settings()["duration"]) if "duration" in run else DEFAULT_DURATION
    fields = {"buffer": "dumbbell.buffer", "duration": "run.duration"}
    b = _case_checks(sc.capacity_bps, sc.rtt_s, sc.buffer_packets, duration, fields)
    return Case(alg, sc.capacity_bps, sc.rtt_s, b, duration, seed=int(run.get("seed", 0)), name=name,
                n_flows=n_flows)


def _check_flows(n: Any, field_path: str) -> int:
    """The number of flows, an integer from 1 to :data:`MAX_FLOWS`; a
    :class:`~tcplab.errors.ScenarioError` naming ``field_path`` otherwise."""
    from ..errors import ScenarioError

    if isinstance(n, str) and n.strip().isdigit():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int):
        raise ScenarioError(field_path, f"must be an integer from 1 to {MAX_FLOWS}, got {n!r}")
    if not 1 <= n <= MAX_FLOWS:
        raise ScenarioError(field_path, f"tcplab validate runs 1 to {MAX_FLOWS} flows (each kernel flow is two "
                                        f"real-time processes on this host), got {n}")
    return n


def _check_bbr_flows(alg: str, n: int, field_path: str) -> None:
    """bbr is validated one flow at a time: its comparison (ProbeRTT episodes,
    retransmission rate) is defined per flow, not for an aggregate."""
    from ..errors import ScenarioError

    if alg == "bbr" and n != 1:
        raise ScenarioError(field_path, f"bbr is validated with one flow (its ProbeRTT cadence and retransmission "
                                        f"rate are per flow), got {n}")


def case_from_file(path: str | os.PathLike) -> Case:
    """:func:`case_from_dict` of a TOML file (named after its stem)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    return case_from_dict(doc, name=os.path.splitext(os.path.basename(os.fspath(path)))[0])


def case_from_flags(algorithm: Any, rate: Any, rtt: Any, buffer: Any = "1BDP", duration: Any = DEFAULT_DURATION,
                    seed: int = 0, flows: Any = 1) -> Case:
    """A :class:`Case` from the command line's flags (units as in scenario
    files: ``20Mbps``, ``50ms``, ``1BDP``/``83``, ``20s``); errors name the flag."""
    from ..errors import ScenarioError
    from ..units import parse_buffer, parse_rate, parse_time

    if algorithm is None:
        raise ScenarioError("--algorithm", "missing: reno, cubic or bbr (or give a scenario file)")
    alg = kernel_algorithm(algorithm, "--algorithm")
    for flag, v in (("--rate", rate), ("--rtt", rtt)):
        if v is None:
            raise ScenarioError(flag, "missing (or give a scenario file)")
    r = parse_rate(rate, "--rate")
    if not (math.isfinite(r) and r > 0):
        raise ScenarioError("--rate", f"must be a positive rate, got {rate!r}")
    t = parse_time(rtt, "--rtt")
    if not (math.isfinite(t) and t > 0):
        raise ScenarioError("--rtt", f"must be a positive time, got {rtt!r}")
    d = parse_time(duration, "--duration")
    bp = parse_buffer(buffer, "--buffer").packets_for(r, t, PACKET_SIZE)
    b = _case_checks(r, t, bp, d, {"buffer": "--buffer", "duration": "--duration"})
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScenarioError("--seed", f"must be a non-negative integer, got {seed!r}")
    n = _check_flows(flows, "--flows")
    _check_bbr_flows(alg, n, "--flows")
    name = f"{alg}-{r / 1e6:g}Mbps-{t * 1e3:g}ms-{b}p-{d:g}s" + (f"-{n}flows" if n > 1 else "")
    return Case(alg, r, t, b, d, seed=seed, name=name, n_flows=n)
