"""Loading scenario files (TOML): :func:`load_scenario` reads one, :func:`scenario_from_dict` builds the
:class:`~tcplab.scenario.Scenario` of its dict (the format: the package's docstring and
docs/reference/scenario-file.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ScenarioError, shown
from .checks import _check_keys, _suggest
from .dumbbell import DUMBBELL_KEYS, FLOW_OPTION_KEYS, dumbbell
from .model import Flow, Link, Node, Route, _coerce
from .scenario import RUN_KEYS, Scenario

#: Top-level keys of a scenario file.
TOP_KEYS = ["name", "description", "bottleneck", "run", "dumbbell", "nodes", "links", "routes", "flows"]


def scenario_from_dict(doc: Mapping[str, Any], name: str | None = None) -> Scenario:
    """Build a Scenario from the dict of a scenario file (see module doc).

    Errors name the field with its table path (``dumbbell.buffer``,
    ``run.duration``, ``links[1].rate``).
    """
    _check_keys(doc, TOP_KEYS, "")
    sname = doc.get("name", name or "scenario")
    if not isinstance(sname, str):
        raise ScenarioError("name", f"expected a string, got {shown(sname)}")
    desc = doc.get("description")
    run = doc.get("run", {})
    _check_keys(run, RUN_KEYS, "run")
    generic = [k for k in ("nodes", "links", "routes", "flows") if k in doc]
    if "dumbbell" in doc:
        if generic:
            raise ScenarioError(generic[0], "a scenario has either a [dumbbell] table or nodes/links/flows, not both")
        if "bottleneck" in doc:
            raise ScenarioError("bottleneck", "only for the generic form (the dumbbell's bottleneck is r1-r2)")
        db = doc["dumbbell"]
        _check_keys(db, DUMBBELL_KEYS, "dumbbell")
        for k in ("n_flows", "bottleneck_rate", "rtt", "buffer"):
            if k not in db:
                raise ScenarioError(f"dumbbell.{k}", "missing (required)")
        fo = db.get("flow_options")
        if fo is not None:
            _check_keys(fo, FLOW_OPTION_KEYS, "dumbbell.flow_options")
        kwargs = dict(db)
        kwargs.update({k: v for k, v in run.items()})
        try:
            return dumbbell(**kwargs, name=sname, description=desc)
        except ScenarioError as e:
            raise e.with_prefix("run" if e.field.split(".")[0].split("[")[0] in RUN_KEYS else "dumbbell") from None
    if not generic:
        raise ScenarioError("", "a scenario file needs a [dumbbell] table or [[nodes]], [[links]] and [[flows]]")
    if "duration" not in run:
        raise ScenarioError("run.duration", "missing (required): how long to simulate, e.g. '100s'")
    lists = {}
    for key, cls in (("nodes", Node), ("links", Link), ("routes", Route), ("flows", Flow)):
        items = doc.get(key, [])
        if not isinstance(items, list):
            raise ScenarioError(key, f"expected an array of tables ([[{key}]]), got {type(items).__name__}")
        lists[key] = [_coerce(x, cls, f"{key}[{i}]") for i, x in enumerate(items)]
    bottleneck = doc.get("bottleneck")
    if bottleneck is not None and (not isinstance(bottleneck, list) or not all(isinstance(b, str) for b in bottleneck)):
        raise ScenarioError("bottleneck", "expected a list of link names")
    sc = Scenario(lists["nodes"], lists["links"], lists["flows"], lists["routes"], name=sname, description=desc,
                  bottleneck=bottleneck, **run)
    try:
        sc.validate()
    except ScenarioError as e:
        if e.field.split(".")[0].split("[")[0] in RUN_KEYS:
            raise e.with_prefix("run") from None
        raise
    if bottleneck:
        names = {ln.name for ln in lists["links"]}
        for b in bottleneck:
            if b not in names:
                raise ScenarioError("bottleneck", f"unknown link {shown(b)}{_suggest(b, names)}")
    return sc


def load_scenario(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Scenario:
    """Read a scenario file (TOML; every key in docs/reference/scenario-file.md).

    ``overrides``: ``"KEY=VALUE"`` strings applied to the file's values first, as
    ``tcplab run --set`` does (:mod:`tcplab.overrides`: ``"dumbbell.buffer=0.5BDP"``).
    The scenario's name defaults to the file's stem. Raises
    ``FileNotFoundError``, ``tomllib.TOMLDecodeError`` for syntax errors and
    :class:`ScenarioError` naming the field for everything else.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    if overrides:
        from ..overrides import apply_overrides

        apply_overrides(doc, overrides)
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return scenario_from_dict(doc, name=stem)
