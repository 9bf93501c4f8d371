r"""Analytical models and metrics used beside the simulations.

Reno saw-tooth with a drop-tail buffer
======================================

:func:`reno_sawtooth_utilization` is the fraction of the link capacity one
long-lived Reno/NewReno flow obtains through a drop-tail bottleneck. It is a
fluid model; its only modelling choices are (1) the window grows by one packet
per round trip in congestion avoidance and (2) where the loss happens.

Notation (all in packets and seconds): ``c = C / (8 S)`` the capacity in
packets/s (C in bit/s, S the packet size in bytes), ``T`` the round-trip
propagation delay of the flow's path (the bottleneck RTT plus the access
links: 110 ms for mv-highspeed's single flow with a 100 ms bottleneck),
``P = c T`` the pipe size, ``B`` the buffer.

* Loss point: the window overflows the buffer when it exceeds
  ``W_max = P + B + 1`` — the pipe, the B waiting packets, and the packet in
  service, which (as in ns-2 and tcplab's core) the queue limit B excludes.
  After the loss the window becomes ``W_0 = beta W_max`` (``beta = 1 - b``,
  0.5 for Reno).
* The round trip is ``RTT(W) = max(T, W / c)`` (the queue holds ``W - P``
  packets when ``W > P``), and ``dW/dt = 1 / RTT(W)``.

Phase 1, ``W_0 <= W < P`` (queue empty, the link is partly idle): RTT = T,
rate = W / T, ``dt = T dW``. It lasts ``T (P - W_0)`` and delivers
``int_{W_0}^{P} (W/T) T dW = (P^2 - W_0^2) / 2`` packets.

Phase 2, ``max(W_0, P) <= W < W_max`` (queue non-empty, link busy): rate = c,
``dt = (W / c) dW``. It lasts ``(W_max^2 - W_1^2) / (2c)`` with
``W_1 = max(W_0, P)`` and delivers ``(W_max^2 - W_1^2) / 2`` packets.

Utilization = packets per cycle / (c x cycle duration). If ``W_0 >= P``
phase 1 is empty and the utilization is exactly 1; for beta = 1/2 that is
``B + 1 >= P``, so ``B >= C T`` always suffices (the classic "buffer = BDP"
rule). Otherwise::

                  (W_max^2 - W_0^2) / 2
    U = ------------------------------------------
         P (P - W_0) + (W_max^2 - P^2) / 2

With no buffer (``B = 0``) and ignoring the +1, ``W_max = P``, ``W_0 = P/2``
and ``U = (3/8 P^2) / (1/2 P^2) = 3/4``: the classic result that Reno without
a buffer gets 75 % of the link.

Goodput (:func:`reno_sawtooth_goodput`) is ``U x C`` — bits of whole packets,
i.e. the ns-2 accounting the papers use; multiply by
``(S - header) / S`` for payload goodput.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .errors import UnitError
from .units import Quantity, parse_rate, parse_size, parse_time

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["bdp_packets", "path_rtt_s", "path_rtts_s", "jain_index", "reno_sawtooth_goodput",
           "reno_sawtooth_utilization", "reno_throughput_model", "westwood_throughput_model", "buffering_time",
           "friendliness_buffer",
           "westwood_reno_ratio", "westwood_reno_ratio_sync", "predicted_ratio_vs_buffer",
           "reno_full_utilization_buffer", "reno_idle_time", "westwood_idle_time", "utilization_from_idle_time",
           "reno_cycle_time", "westwood_cycle_time", "reno_idle_utilization", "westwood_idle_utilization",
           "utilization_from_window_spread", "reno_window_sum_sigma", "reno_desync_utilization_bound",
           "westwood_desync_utilization_bound"]


def bdp_packets(rate: Quantity, rtt: Quantity, packet_size: Quantity = 1500, exact: bool = False) -> int | float:
    """Bandwidth-delay product ``C x RTT / (8 x packet_size)`` in packets.

    Rounded to the nearest packet (at least 1) unless ``exact``:
    ``bdp_packets("200Mbps", "100ms", "1500B") == 1667``. Arguments accept
    numbers in SI units or strings with units.
    """
    c = parse_rate(rate, "rate")
    t = parse_time(rtt, "rtt")
    s = parse_size(packet_size, "packet_size")
    if s < 1:
        raise UnitError("packet_size", f"must be at least 1 byte to count packets, got {packet_size!r}")
    x = c * t / (8.0 * s)
    if exact:
        return x
    return max(1, int(math.floor(x + 0.5)))


def path_rtt_s(scenario: Any, flow: int = 0) -> float:
    """Round-trip propagation delay (seconds) of flow ``flow`` (0-based):
    the delays of every link on its data path plus every link on its ACK
    path, as the core routes them (explicit routes, else the shortest path
    by delay). ``scenario``: a :class:`~tcplab.scenario.Scenario` or its
    run description (``to_spec()``).

    This is the flow's base RTT ``T`` (the figures' ``C x RTT`` line), not
    a dumbbell's bottleneck ``rtt``: one mv-highspeed flow over a 100 ms
    bottleneck with 2.5 ms access links has ``T`` = 110 ms.

    For several flows use :func:`path_rtts_s`: each call here routes the
    whole scenario."""
    return path_rtts_s(scenario, [flow])[0]


def path_rtts_s(scenario: Any, flows: Sequence[int] | None = None) -> list[float]:
    """:func:`path_rtt_s` of each flow in ``flows`` (default: every flow),
    routing the scenario once, so asking for n flows costs one routing, not n."""
    import json

    from . import _core

    spec = scenario.to_spec() if hasattr(scenario, "to_spec") else scenario
    paths = _core.paths(json.dumps(spec))
    delay = {lk["name"]: float(lk["delay"]) for lk in spec["links"]}
    out = []
    for flow in (range(len(paths)) if flows is None else flows):
        if not 0 <= flow < len(paths):
            raise ValueError(f"flow: no flow {flow} (the scenario has {len(paths)})")
        fwd, rev = paths[flow]
        out.append(sum(delay[name] for name in fwd) + sum(delay[name] for name in rev))
    return out


def reno_sawtooth_utilization(
    capacity_bps: Quantity,
    rtt_s: Quantity,
    buffer_packets: float,
    packet_size_bytes: Quantity = 1500,
    beta: float = 0.5,
) -> float:
    """Fraction of capacity (0..1] one long-lived Reno/NewReno flow uses.

    ``rtt_s`` is the round-trip *propagation* delay ``T`` of the flow's whole
    path; ``buffer_packets`` the drop-tail limit B (waiting packets, excluding
    the one in service); ``beta`` the window kept after a loss (0.5 for Reno).
    See the module docstring for the derivation.
    """
    c_bps = parse_rate(capacity_bps, "capacity_bps")
    T = parse_time(rtt_s, "rtt_s")
    S = parse_size(packet_size_bytes, "packet_size_bytes")
    if not c_bps > 0:
        raise ValueError(f"capacity_bps must be positive, got {capacity_bps}")
    if not T > 0:
        raise ValueError(f"rtt_s must be positive, got {rtt_s}")
    if not buffer_packets >= 0:
        raise ValueError(f"buffer_packets must be >= 0, got {buffer_packets}")
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta}")
    c = c_bps / (8.0 * S)
    P = c * T
    w_max = P + buffer_packets + 1.0
    w0 = beta * w_max
    if w0 >= P:
        return 1.0
    packets = (w_max ** 2 - w0 ** 2) / 2.0
    time_c = P * (P - w0) + (w_max ** 2 - P ** 2) / 2.0  # c x cycle duration
    return packets / time_c


def reno_sawtooth_goodput(
    capacity_bps: Quantity,
    rtt_s: Quantity,
    buffer_packets: float,
    packet_size_bytes: Quantity = 1500,
    beta: float = 0.5,
) -> float:
    """Goodput in bit/s (ns-2 accounting: whole packets) of the saw-tooth model:
    ``reno_sawtooth_utilization(...) x capacity``."""
    return reno_sawtooth_utilization(capacity_bps, rtt_s, buffer_packets, packet_size_bytes, beta) * parse_rate(
        capacity_bps, "capacity_bps")


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``: 1 when all equal,
    ``1/n`` when one takes everything. NaN if all are zero; ValueError if empty
    or any value is negative."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("jain_index needs at least one value")
    if any(x < 0 or math.isnan(x) for x in xs):
        raise ValueError(f"jain_index needs non-negative values, got {xs}")
    sq = sum(x * x for x in xs)
    if sq == 0:
        return float("nan")
    return sum(xs) ** 2 / (len(xs) * sq)


# ---------------------------------------------------------------- Westwood / Reno throughput models
#
# Kaneko & Katto (ICAS-ICNS 2005, docs/papers/kk-westwood.md):
#
#   S_Reno = (1/RTT) sqrt(2 (1-p) / p)                       packets/s
#   S_West = 1 / (sqrt(RTT) sqrt(T_q)) sqrt((1-p) / p)       packets/s
#   T_q    = RTT - RTT_min = B x 8 x packet_size / C         (buffering time)
#
# For two flows that see the same RTT and loss probability p, p cancels:
#
#   S_West / S_Reno = sqrt(RTT / (2 T_q)),
#
# equal to 1 when RTT = 2 T_q, i.e. T_q = RTT_min, i.e. B = C RTT_min / (8 S)
# (the BDP): friendliness_buffer(). What RTT is depends on the reading:
#
# * "consistent" (default): RTT = RTT_min + T_q, the RTT of a full buffer:
#   ratio = sqrt((RTT_min + T_q) / (2 T_q)) = sqrt((1 + BDP/B) / 2):
#   1.22 at B = BDP/2, 0.87 at 2 BDP.
# * "fixed": RTT held at its value at the friendliness point, 2 RTT_min:
#   ratio = sqrt(RTT_min / T_q) = sqrt(BDP / B): 1.41 at BDP/2, 0.71 at
#   2 BDP - the numbers the spec quotes for the paper's prediction.
#
# westwood_reno_ratio_sync() is a third model, derived here (not from the
# paper): windows of two flows with the same RTT that lose together at every
# drop-tail overflow (synchronized losses), the window sum at overflow being
# P + B (P = BDP). Reno keeps W_R/2; Westwood keeps ERE x RTT_min with ERE its
# share of C at the overflow, W_W P / (P + B). Both then grow by the same
# amount per cycle, so in steady state each loses the same amount D:
# W_R / 2 = D and W_W B / (P + B) = D. The mean windows are W - D/2, so
#
#   ratio = (W_W - D/2) / (W_R - D/2) = (P/B + 1/2) / (3/2):
#
# 1 at B = P, 1.67 at P/2, 0.67 at 2P, 3 at P/4.


def reno_throughput_model(rtt_s: float, p: float) -> float:
    """Kaneko & Katto's Reno model ``(1/RTT) sqrt(2 (1-p)/p)``, packets per second."""
    if not rtt_s > 0:
        raise ValueError(f"rtt_s must be positive, got {rtt_s}")
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    return math.sqrt(2.0 * (1.0 - p) / p) / rtt_s


def buffering_time(buffer_packets: float, capacity_bps: Quantity, packet_size_bytes: Quantity = 1500) -> float:
    """``T_q = B x 8 x packet_size / C``: the time a full buffer of B packets takes to drain, seconds."""
    c = parse_rate(capacity_bps, "capacity_bps")
    s = parse_size(packet_size_bytes, "packet_size_bytes")
    if not buffer_packets >= 0:
        raise ValueError(f"buffer_packets must be >= 0, got {buffer_packets}")
    return buffer_packets * 8.0 * s / c


def westwood_throughput_model(rtt_s: float, rtt_min_s: float, p: float) -> float:
    """Kaneko & Katto's Westwood model ``sqrt((1-p)/p) / (sqrt(RTT) sqrt(T_q))``
    with ``T_q = RTT - RTT_min``, packets per second."""
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    tq = rtt_s - rtt_min_s
    if not (rtt_s > 0 and tq > 0):
        raise ValueError(f"need RTT > RTT_min > 0 (a non-empty buffer), got {rtt_s}, {rtt_min_s}")
    return math.sqrt((1.0 - p) / p) / (math.sqrt(rtt_s) * math.sqrt(tq))


def friendliness_buffer(capacity_bps: Quantity, rtt_min_s: Quantity, packet_size_bytes: Quantity = 1500) -> float:
    """Buffer (packets) at which the models give Westwood and Reno equal
    throughput: ``C x RTT_min / (8 x packet_size)``, the BDP (not rounded)."""
    return float(bdp_packets(capacity_bps, rtt_min_s, packet_size_bytes, exact=True))


def westwood_reno_ratio(buffer_packets: float, capacity_bps: Quantity, rtt_min_s: Quantity,
                        packet_size_bytes: Quantity = 1500, rtt: str = "consistent") -> float:
    """Predicted Westwood/Reno throughput ratio ``S_West / S_Reno`` for a
    drop-tail buffer of ``buffer_packets`` (p cancels). ``rtt="consistent"``
    uses RTT = RTT_min + T_q, ``rtt="fixed"`` RTT = 2 RTT_min (see the notes
    above). Infinite for an empty buffer."""
    t0 = parse_time(rtt_min_s, "rtt_min_s")
    tq = buffering_time(buffer_packets, capacity_bps, packet_size_bytes)
    if tq == 0:
        return math.inf
    if rtt == "consistent":
        r = t0 + tq
    elif rtt == "fixed":
        r = 2.0 * t0
    else:
        raise ValueError(f"rtt must be 'consistent' or 'fixed', got {rtt!r}")
    return math.sqrt(r / (2.0 * tq))


def westwood_reno_ratio_sync(buffer_packets: float, bdp: float) -> float:
    """Westwood/Reno throughput ratio of the synchronized-loss window model
    (derived in this module's notes, not from the paper):
    ``(BDP/B + 1/2) / (3/2)``. Both in packets."""
    if not buffer_packets > 0:
        return math.inf
    return (bdp / buffer_packets + 0.5) / 1.5


def predicted_ratio_vs_buffer(buffers_packets: Iterable[float], capacity_bps: Quantity, rtt_min_s: Quantity,
                              packet_size_bytes: Quantity = 1500) -> pd.DataFrame:
    """Table of the three predictions for each buffer: columns ``buffer_packets``,
    ``buffer_bdp`` (B / BDP), ``model_consistent``, ``model_fixed_rtt``, ``model_sync``."""
    import pandas as pd

    bdp = friendliness_buffer(capacity_bps, rtt_min_s, packet_size_bytes)
    rows = []
    for b in buffers_packets:
        rows.append({
            "buffer_packets": float(b), "buffer_bdp": float(b) / bdp,
            "model_consistent": westwood_reno_ratio(b, capacity_bps, rtt_min_s, packet_size_bytes, "consistent"),
            "model_fixed_rtt": westwood_reno_ratio(b, capacity_bps, rtt_min_s, packet_size_bytes, "fixed"),
            "model_sync": westwood_reno_ratio_sync(b, bdp),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- buffer sizing (mv-buffers)
#
# Mascolo & Vacirca, "Congestion control and sizing router buffers in the
# Internet" (docs/papers/mv-buffers.md). The functions below are the paper's
# single-flow rule and idle times, a cycle model that turns an idle time into a
# utilization, and the desynchronized-flows erf bounds. Every quantity is in
# packets and seconds: ``c = C / (8 S)`` packets/s, ``P = c RTT_m`` the pipe,
# ``B`` the drop-tail buffer, ``eps`` the packets lost per congestion event.

def _pps(capacity_bps: Quantity, packet_size_bytes: Quantity) -> float:
    c_bps = parse_rate(capacity_bps, "capacity_bps")
    s = parse_size(packet_size_bytes, "packet_size_bytes")
    if not c_bps > 0:
        raise ValueError(f"capacity_bps must be positive, got {capacity_bps}")
    return c_bps / (8.0 * s)


def _check_buffer_eps(buffer_packets: float, epsilon: float) -> None:
    if not buffer_packets >= 0:
        raise ValueError(f"buffer_packets must be >= 0, got {buffer_packets}")
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")


def reno_full_utilization_buffer(capacity_bps: Quantity, rtt_min_s: Quantity, epsilon: float = 1.0,
                                 packet_size_bytes: Quantity = 1500) -> float:
    r"""Smallest buffer (packets) with which one Reno flow keeps the link busy:
    ``B >= C RTT_m + eps``.

    Derivation. Drop-tail overflows when the window reaches the pipe plus the
    full buffer plus the ``eps`` packets that overflow it:
    ``W = c RTT_m + B + eps``. The third duplicate ACK halves it; Reno's
    fast recovery keeps new data back until ``W/2`` duplicate ACKs have
    arrived, which (the lost packets being the last ones of the window, the
    ACK stream arriving at rate c) takes ``W / (2c)``. Meanwhile the
    bottleneck drains its B packets in ``B / c`` and then idles for
    ``idT = W/(2c) - B/c = RTT_m/2 + eps/(2c) - B/(2c)`` (see
    :func:`reno_idle_time`). ``idT <= 0`` iff ``B >= c RTT_m + eps``:
    the BDP plus the losses of one event.
    """
    t = parse_time(rtt_min_s, "rtt_min_s")
    _check_buffer_eps(0.0, epsilon)
    return _pps(capacity_bps, packet_size_bytes) * t + epsilon


def reno_idle_time(capacity_bps: Quantity, rtt_min_s: Quantity, buffer_packets: float, epsilon: float = 1.0,
                   packet_size_bytes: Quantity = 1500) -> float:
    r"""Link idle time (s) after one Reno congestion event (single flow):
    ``idT_Reno = [RTT_m/2 + eps/(2C) - B/(2C)]^+`` (C in packets/s).

    Derived in :func:`reno_full_utilization_buffer`: the sender is silent
    for ``W/(2C)`` with ``W = C RTT_m + B + eps``; the buffer covers
    ``B/C`` of that silence, the rest is idle. This is the *first* gap only:
    with ``W/2 < C RTT_m`` the window that resumes is short of the pipe by
    ``g = C idT`` packets, and the gap recurs in each following round trip,
    one packet shorter per round, until the window fills the pipe (see
    :func:`reno_idle_utilization`).
    """
    t = parse_time(rtt_min_s, "rtt_min_s")
    _check_buffer_eps(buffer_packets, epsilon)
    c = _pps(capacity_bps, packet_size_bytes)
    return max(0.0, t / 2.0 + epsilon / (2.0 * c) - buffer_packets / (2.0 * c))


def westwood_idle_time(capacity_bps: Quantity, epsilon: float = 1.0, packet_size_bytes: Quantity = 1500) -> float:
    r"""Link idle time (s) after one Westwood+ congestion event (single flow):
    ``idT_West = eps / C``, independent of the buffer.

    Derivation. At the third duplicate ACK Westwood+ sets
    ``cwnd = ssthresh = BWE x RTT_m``; with an exact estimate ``BWE = C`` that
    is the pipe ``C RTT_m``. The window at overflow was ``C RTT_m + B + eps``,
    so the sender is silent until ``B + eps`` duplicate ACKs have arrived,
    ``(B + eps)/C``. The buffer covers ``B/C`` of it; the idle time is
    ``eps/C``. Since the new window equals the pipe, no gap recurs.
    """
    _check_buffer_eps(0.0, epsilon)
    return epsilon / _pps(capacity_bps, packet_size_bytes)


def utilization_from_idle_time(idle_s: float, cycle_s: float) -> float:
    """``U = 1 - idle / cycle``: the link is busy except ``idle_s`` seconds per
    congestion cycle of ``cycle_s`` seconds (the cycle includes the idle
    time). Clamped to [0, 1]."""
    if not cycle_s > 0:
        raise ValueError(f"cycle_s must be positive, got {cycle_s}")
    if not idle_s >= 0:
        raise ValueError(f"idle_s must be >= 0, got {idle_s}")
    return min(1.0, max(0.0, 1.0 - idle_s / cycle_s))


def reno_cycle_time(capacity_bps: Quantity, rtt_min_s: Quantity, buffer_packets: float, epsilon: float = 1.0,
                    packet_size_bytes: Quantity = 1500) -> float:
    r"""Duration (s) of one Reno congestion cycle (single flow), fluid model:
    the window grows by one packet per round trip from ``W_0 = W_max/2`` to
    ``W_max = P + B + eps`` with ``RTT(W) = max(RTT_m, W/c)``:
    ``RTT_m (P - W_0)^+ + (W_max^2 - max(W_0, P)^2) / (2c)`` (phase 1, queue
    empty, round trips of RTT_m; phase 2, queue building, ``dt = W dW / c``).
    With ``eps = 1`` it is the cycle of :func:`reno_sawtooth_utilization`.
    """
    t = parse_time(rtt_min_s, "rtt_min_s")
    _check_buffer_eps(buffer_packets, epsilon)
    c = _pps(capacity_bps, packet_size_bytes)
    p = c * t
    w_max = p + buffer_packets + epsilon
    w0 = w_max / 2.0
    w1 = max(w0, p)
    return t * max(0.0, p - w0) + (w_max ** 2 - w1 ** 2) / (2.0 * c)


def westwood_cycle_time(capacity_bps: Quantity, rtt_min_s: Quantity, buffer_packets: float, epsilon: float = 1.0,
                        packet_size_bytes: Quantity = 1500) -> float:
    r"""Duration (s) of one Westwood+ congestion cycle (single flow), fluid
    model: after the loss ``cwnd = BWE x RTT_m = P`` (exact estimate); it
    grows by one packet per round trip to ``P + B + eps`` with the queue
    building, ``dt = W dW / c``: ``((P + B + eps)^2 - P^2) / (2c)``, plus the
    idle time ``eps/c``."""
    t = parse_time(rtt_min_s, "rtt_min_s")
    _check_buffer_eps(buffer_packets, epsilon)
    c = _pps(capacity_bps, packet_size_bytes)
    p = c * t
    return ((p + buffer_packets + epsilon) ** 2 - p ** 2) / (2.0 * c) + epsilon / c


def reno_idle_utilization(capacity_bps: Quantity, rtt_min_s: Quantity, buffer_packets: float, epsilon: float = 1.0,
                          packet_size_bytes: Quantity = 1500, recurring: bool = True) -> float:
    r"""Single-flow Reno utilization from the paper's idle time and a cycle model.

    Cycle model: one congestion event per cycle of :func:`reno_cycle_time`.

    * ``recurring=True`` (default, the packet-level picture): the first gap
      ``idT`` (:func:`reno_idle_time`) means the resumed window is short of
      the pipe by ``g = c idT`` packets; the ACK clock carries the gap into
      every following round trip, one packet shorter per round (the window
      grows by one per round), so the idle time per cycle is
      ``g/c + (g-1)/c + ... = idT (c idT + 1) / 2``. ``U = 1 - that / cycle``.
      With ``eps = 1`` this equals :func:`reno_sawtooth_utilization` up to
      the discreteness (``g(g+1)/2`` against the fluid ``g^2/2``).
    * ``recurring=False``: only the first gap counts, ``U = 1 - idT / cycle``
      (the paper's reading "idle time per congestion event"). It is an upper
      bound and overestimates the utilization of small buffers (it gives
      ``1 - 1/P`` at B = 0, where the saw-tooth gives 3/4).
    """
    c = _pps(capacity_bps, packet_size_bytes)
    idt = reno_idle_time(capacity_bps, rtt_min_s, buffer_packets, epsilon, packet_size_bytes)
    cycle = reno_cycle_time(capacity_bps, rtt_min_s, buffer_packets, epsilon, packet_size_bytes)
    idle = idt * (c * idt + 1.0) / 2.0 if recurring else idt
    return utilization_from_idle_time(idle, cycle)


def westwood_idle_utilization(capacity_bps: Quantity, rtt_min_s: Quantity, buffer_packets: float,
                              epsilon: float = 1.0, packet_size_bytes: Quantity = 1500) -> float:
    r"""Single-flow Westwood+ utilization: ``1 - idT_West / cycle`` with
    :func:`westwood_idle_time` and :func:`westwood_cycle_time` (one gap of
    ``eps/c`` per cycle, none recurring because the new window equals the
    pipe). Near 1 at every buffer: about ``1 - 1/(P (B + eps) + 1)``, e.g.
    0.997 with P = 333 and B = 0 (eps = 1). Assumes an exact bandwidth
    estimate, ``BWE = C``."""
    idt = westwood_idle_time(capacity_bps, epsilon, packet_size_bytes)
    cycle = westwood_cycle_time(capacity_bps, rtt_min_s, buffer_packets, epsilon, packet_size_bytes)
    return utilization_from_idle_time(idt, cycle)


def utilization_from_window_spread(buffer_packets: float, sigma_w_packets: float) -> float:
    r"""``U = erf(B / (2 sqrt(2) sigma_W))``: the link is busy while the sum of
    the windows, Gaussian with standard deviation ``sigma_W``, stays within
    ``B/2`` of its mean (a buffer B centred on the mean queue absorbs
    deviations of +-B/2): ``P(|X| < B/2) = erf((B/2) / (sqrt(2) sigma_W))``.
    1 when ``sigma_W = 0`` and B > 0."""
    if not buffer_packets >= 0:
        raise ValueError(f"buffer_packets must be >= 0, got {buffer_packets}")
    if not sigma_w_packets >= 0:
        raise ValueError(f"sigma_w_packets must be >= 0, got {sigma_w_packets}")
    if sigma_w_packets == 0:
        return 1.0 if buffer_packets > 0 else 0.0
    return math.erf(buffer_packets / (2.0 * math.sqrt(2.0) * sigma_w_packets))


def reno_window_sum_sigma(n_flows: int, buffer_packets: float, bdp_packets_: float) -> float:
    r"""Upper bound on the standard deviation of the sum of n desynchronized
    Reno windows: ``(B + C RTT_m) / (3 sqrt(3) sqrt(n))``.

    Each window is uniform between 2/3 and 4/3 of its mean ``m_i`` (a
    saw-tooth between ``W_i/2`` and ``W_i``, mean ``3 W_i / 4``), so its
    standard deviation is ``(2 m_i / 3) / sqrt(12) = m_i / (3 sqrt(3))``. With
    independent windows of equal mean ``m = M/n`` the sum has
    ``sigma = sqrt(n) m / (3 sqrt(3)) = M / (3 sqrt(3) sqrt(n))``, and the total
    mean window M is at most the pipe plus the buffer, ``C RTT_m + B``.
    (The paper's eqs. 7-8 print n where sqrt(n) is meant; eq. 9 has it right.)
    """
    if not n_flows >= 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows}")
    return (buffer_packets + bdp_packets_) / (3.0 * math.sqrt(3.0) * math.sqrt(n_flows))


def reno_desync_utilization_bound(n_flows: int, buffer_packets: float, bdp_packets_: float) -> float:
    r"""Lower bound on the utilization with n desynchronized Reno flows, the
    paper's eq. 9:

    ``U_Reno >= erf( 3 sqrt(3) B / (2 sqrt(2) (B + C RTT_m) / sqrt(n)) )``

    :func:`utilization_from_window_spread` with the sigma bound of
    :func:`reno_window_sum_sigma` (a larger sigma gives a smaller erf, hence a
    lower bound). Example: n = 200, B = 0.05 BDP gives erf(1.237) = 0.919.
    """
    return utilization_from_window_spread(buffer_packets, reno_window_sum_sigma(n_flows, buffer_packets,
                                                                                  bdp_packets_))


def westwood_desync_utilization_bound(n_flows: int, form: str = "derived") -> float:
    r"""Lower bound on the utilization with n desynchronized Westwood+ flows.

    Each Westwood+ window is uniform between ``C_i RTT_i`` (its share of the
    pipe, where the loss leaves it) and ``C_i RTT_i + B/n`` (its share of the
    buffer), so ``sigma_Wi = (B/n) / sqrt(12)``. The sum of n independent
    windows has ``sigma_W = sqrt(n) B / (n sqrt(12)) = B / sqrt(12 n)``, and
    :func:`utilization_from_window_spread` gives

    ``U_West >= erf( B sqrt(12 n) / (2 sqrt(2) B) ) = erf( sqrt(3 n / 2) )``,

    independent of B. ``form="derived"`` (default, the one tcplab plots)
    returns that; ``form="printed"`` the paper's printed ``erf(sqrt(3/2) n)``.
    The two agree at n = 1 and both are 1 within 1e-14 for n >= 20
    (erf(sqrt(30)) = 1 - 9e-15), so they coincide in Fig. 8 (n = 200).
    """
    if not n_flows >= 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows}")
    if form == "derived":
        return math.erf(math.sqrt(1.5 * n_flows))
    if form == "printed":
        return math.erf(math.sqrt(1.5) * n_flows)
    raise ValueError(f"form must be 'derived' or 'printed', got {form!r}")
