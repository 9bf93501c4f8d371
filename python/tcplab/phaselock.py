"""A warning for runs whose outcome may be a phase effect.

Two long-lived TCP flows through a drop-tail bottleneck with fixed delays are a deterministic system:
which flow loses a packet at each overflow is decided by the exact timing of their packets, and this
timing can lock into a pattern that favours one flow for the whole run (Floyd & Jacobson, "On
traffic phase effects in packet-switched gateways", 1992). The share each flow gets then says more
about the phase than about the algorithms, and since nothing in the run is random, another seed
gives the very same result. tcplab keeps such runs deterministic (the papers' dumbbells are, and
their reproductions must stay bit for bit), but says so.

The test (:func:`phase_lock_reason`) is exact about the seed: a run's seed is used only by
random loss on links, by the queue disciplines that draw random numbers (RED, PIE, DualPI2's coins,
FQ-CoDel's hash salt), by on/off sources with exponential periods, and by a dumbbell's
``access_delay = "uniform"`` or nonzero ``access_jitter``. A scenario with none of these and two or more
long-lived (bulk) TCP flows gets the warning; ``tcplab run`` and ``tcplab sweep`` print it as one line on stderr,
:func:`tcplab.run` issues a :class:`PhaseLockWarning` (once per process).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["PhaseLockWarning", "phase_lock_reason", "warn_phase_lock"]

#: Queue disciplines that draw no random number (the others use the run's seed).
DETERMINISTIC_DISCIPLINES = {None, "droptail", "codel"}


class PhaseLockWarning(UserWarning):
    """Two or more long-lived flows and nothing random: the result may be a phase effect and the seed
    changes nothing (see :mod:`tcplab.phaselock`)."""


def _random_loss(loss: Any) -> bool:
    if not isinstance(loss, Mapping):
        return False
    if loss.get("kind") == "bernoulli":
        return (loss.get("p") or 0) > 0
    if loss.get("kind") == "gilbert_elliott":  # loss_good defaults to 0, loss_bad to 1 (spec.rs)
        bad = 1.0 if loss.get("loss_bad") is None else loss["loss_bad"]
        return (loss.get("loss_good") or 0) > 0 or (bad > 0 and (loss.get("p_gb") or 0) > 0)
    return True  # (a kind not known here: taken as random, so no warning it might not deserve)


def _randomness(scenario: Any, spec: Mapping[str, Any]) -> str | None:
    """What in the run draws from the seed, or None."""
    db = getattr(scenario, "dumbbell", None)
    if db is not None and isinstance(db.access_delay, str) and db.access_delay.strip().lower() == "uniform":
        return "uniform access delays"
    if db is not None and db.access_jitter_s > 0:
        return "access-delay jitter"
    for link in spec.get("links", []):
        if _random_loss(link.get("loss")):
            return f"random loss on {link.get('name')}"
        if (link.get("queue") or {}).get("discipline") not in DETERMINISTIC_DISCIPLINES:
            return f"{link['queue']['discipline']} on {link.get('name')}"
    for flow in spec.get("flows", []):
        app = flow.get("app") or {}
        if app.get("kind") == "on_off" and app.get("exponential"):
            return f"exponential on/off periods of {flow.get('name')}"
    return None


def long_lived_tcp_flows(spec: Mapping[str, Any]) -> int:
    """Flows that send without end (bulk TCP): not file transfers, not unresponsive sources."""
    return sum(1 for f in spec.get("flows", []) if (f.get("app") or {}).get("kind", "bulk") == "bulk")


def phase_lock_reason(scenario: Any, spec: Mapping[str, Any] | None = None,
                      seed_word: str = "--seed") -> str | None:
    """The warning's text (one line) when ``scenario`` has two or more long-lived TCP flows and nothing
    random; None otherwise. ``spec``: its run description if already built; ``seed_word``: what would
    change the seed where the text is shown (``--seed`` on the command line, ``another seed`` elsewhere)."""
    spec = scenario.to_spec() if spec is None else spec
    n = long_lived_tcp_flows(spec)
    if n < 2 or _randomness(scenario, spec) is not None:
        return None
    fix = ('access_delay = "uniform"' if getattr(scenario, "dumbbell", None) is not None
           else "access-link delays that differ per seed (as a dumbbell's access_delay = \"uniform\")")
    return (f"{n} long-lived flows and nothing random (fixed delays, no random loss, deterministic queues): the "
            f"outcome may be a phase effect and {seed_word} changes nothing; for a robust comparison use {fix} "
            f"and several seeds (docs: README, 'Phase effects')")


_warned = False


def warn_phase_lock(scenario: Any, spec: Mapping[str, Any] | None = None, stacklevel: int = 3) -> None:
    """Issue a :class:`PhaseLockWarning` for ``scenario`` if it needs one, once per process."""
    global _warned
    if _warned:
        return
    reason = phase_lock_reason(scenario, spec, seed_word="another seed")
    if reason is not None:
        _warned = True
        warnings.warn(PhaseLockWarning(reason), stacklevel=stacklevel)
