"""The core's verdict on a run description, in the scenario's words.

The core owns every semantic rule of a run: ranges, names and references, the rules between fields,
algorithm and discipline parameters and routing (``World::check`` in crates/tcplab-core/src/world/build.rs,
called here through ``_core.validate`` without the memory estimate, which a run checks). Python parses units
and types and builds the description; this module hands it to the core and turns the field path of a
refusal back into the scenario's: a generic scenario's ``links[0].rate`` is the core's
``links[0].rate_bps``, a dumbbell's ``bottleneck_rate`` its ``links[0].rate_bps``. An unknown node
or link name gets a "did you mean".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .._specjson import spec_to_json
from ..errors import ScenarioError
from .checks import _close, _core

#: Keys of the run description a generic scenario spells otherwise: (the core's path, the scenario's),
#: the first that matches wins.
GENERIC_RENAMES: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p), r) for p, r in (
    (r"^(links\[\d+\])\.rate_bps\b", r"\1.rate"),
    (r"^(links\[\d+\]\.queue)\.params\b", r"\1"),  # (a queue table holds its discipline's parameters)
    (r"^(flows\[\d+\])\.rwnd_packets\b", r"\1.rwnd"),
    (r"^(flows\[\d+\])\.app\.rate_bps\b", r"\1.source.rate"),
    (r"^(flows\[\d+\])\.app\.files\b", r"\1.files"),
    (r"^(flows\[\d+\])\.app\b", r"\1.source"),
    (r"^(flows\[\d+\])\.cc\.params\b", r"\1.params"),
    (r"^(flows\[\d+\])\.cc\b(\.algorithm)?", r"\1.algorithm"),
))

_UNKNOWN_NAME = re.compile(r'^unknown (node|link) "((?:[^"\\]|\\.)*)"$')
#: The integer types of the core's fields, as serde names them when a count does not fit ("expected u32").
_INTEGER_TYPES = {f"u{b}": f"a whole number from 0 to {2**b - 1}" for b in (8, 16, 32, 64)}


def _readable(problem: str) -> str:
    """serde's refusal of a field without where the parser was in the JSON text (a text the user never
    wrote): ``invalid run description: invalid value: integer `-3`, expected u64 at line 1 column 1286`` is
    ``invalid value: integer `-3`, expected a whole number from 0 to 18446744073709551615``."""
    problem = re.sub(r" at line \d+ column \d+$", "", problem.removeprefix("invalid run description: "))
    return re.sub(r"expected (u8|u16|u32|u64)$", lambda m: "expected " + _INTEGER_TYPES[m.group(1)], problem)


def generic_field(path: str) -> str:
    """The generic scenario's field for the core's ``path``: ``links[2].rate_bps`` is ``links[2].rate``,
    ``flows[0].app.files[1].size`` is ``flows[0].files[1].size``; other paths are the same in both."""
    for pattern, scenario in GENERIC_RENAMES:
        out, n = pattern.subn(scenario, path, count=1)
        if n:
            return out
    return path


def _hint(problem: str, spec: Mapping[str, Any]) -> str:
    """A "did you mean" for the core's ``unknown node "x"`` and ``unknown link "x"``."""
    m = _UNKNOWN_NAME.match(problem)
    if m is None:
        return ""
    table = "nodes" if m.group(1) == "node" else "links"
    names = [x.get("name") for x in spec.get(table, ()) if isinstance(x.get("name"), str)]
    close = _close(m.group(2), names)
    return " (did you mean " + " or ".join(f'"{x}"' for x in close) + "?)" if close else ""


def in_generic_words(path: str, problem: str) -> tuple[str, str]:
    """The field and problem of a generic scenario for the core's refusal of ``path``."""
    return generic_field(path), problem


def check_in_core(spec: Mapping[str, Any],
                  in_scenario_words: Callable[[str, str], tuple[str, str]] = in_generic_words) -> None:
    """Have the core check ``spec`` (a RunSpec dict) as it would before a run, but for the memory estimate
    (a run's, against its ``memory_limit``: about this machine, checked when it runs); raise
    :class:`ScenarioError` with the field and problem ``in_scenario_words(<the core's path>, <its
    problem>)`` gives. Without a compiled core nothing is checked: nothing can run."""
    core = _core()
    if core is None:
        return

    def refuse(path: str, problem: str) -> ScenarioError:
        return ScenarioError(*in_scenario_words(path, problem))

    text = spec_to_json(spec, refuse, compact=True)
    try:
        core.validate(text, memory=False)  # (the memory estimate is the machine's: run and sweep check it)
    except core.SpecError as e:
        path = getattr(e, "field", "") or ""
        problem = _readable(getattr(e, "problem", None) or str(e))
        field, problem = in_scenario_words(path, problem + _hint(problem, spec)) if path != "spec" else ("", problem)
        raise ScenarioError(field, problem) from None
