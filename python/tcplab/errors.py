"""Exceptions raised by the tcplab front end.

Every error that a user can cause by writing a scenario names the field it is
about, so the command line can print one line ``error: <field>: <problem>``::

    >>> raise UnitError("bottleneck_rate", "cannot parse '200Mbsp' as a rate")
    Traceback (most recent call last):
    ...
    tcplab.errors.UnitError: bottleneck_rate: cannot parse '200Mbsp' as a rate

The Rust core raises its own :class:`tcplab._core.SpecError` (a ``ValueError``
whose message starts with the field path of the run description) and
:class:`tcplab._core.SimulationError` (a ``RuntimeError``); both are
re-exported from :mod:`tcplab` when the core extension is importable.
"""

from __future__ import annotations

__all__ = ["ScenarioError", "UnitError", "shown"]


class ScenarioError(ValueError):
    """A scenario is invalid; ``field`` names the offending field.

    ``field`` is a dotted/indexed path such as ``"bottleneck_rate"``,
    ``"dumbbell.buffer"`` or ``"flows[2].algorithm"`` (``""`` when the
    problem is not about one field). ``problem`` is the bare description.
    ``str(err)`` is ``"<field>: <problem>"``.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)

    def with_prefix(self, prefix: str) -> ScenarioError:
        """A copy of this error (same class) whose field is ``prefix.field``."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        if self.field.startswith("["):
            field = f"{prefix}{self.field}"
        err = type(self)(field, self.problem)
        err.__cause__ = self.__cause__
        return err


class UnitError(ScenarioError):
    """A value with units (rate, time, size, buffer) could not be parsed."""


def shown(value: object) -> str:
    """``repr(value)`` for an error message, kept printable and short.

    An integer too large for ``repr`` (Python refuses beyond 4300 digits)
    is shown by its size, a container holding one by its type, and a long
    text is cut: an error about a value must never fail to print it."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except Exception:  # (a huge integer inside a container, a broken __repr__)
        return f"<a {type(value).__name__}>"
    return text if len(text) <= 200 else text[:197] + "..."
