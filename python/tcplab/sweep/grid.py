"""Sweeps: a base scenario, a grid of parameter values, zipped groups, seeds.

A :class:`Sweep` expands into points. Each point is a dict of the swept
parameters plus a seed, and turns into a :class:`~tcplab.scenario.Scenario`
by editing the base scenario's file form (``Scenario.to_toml_dict()``) and
building it again with :func:`~tcplab.scenario.scenario_from_dict`. So a
sweep parameter is anything a scenario file can say, and an invalid point
fails with the scenario's own field-naming error, prefixed by the point.

Parameter names:

- a bare key of the base's ``[dumbbell]`` table (``buffer``, ``rtt``,
  ``algorithm``, ``n_flows``, ``params``, ...) or of its ``[run]`` table
  (``duration``, ``measure_window``, ``sample_interval``, ...);
- a path into the scenario file for anything else:
  ``dumbbell.flow_options.delayed_ack``, ``flows[0].algorithm``,
  ``links[2].buffer``, ``dumbbell.params.beta``, ``links[0].queue.target``;
  in a dumbbell, a path may start at a key of its table (``params.beta``,
  ``queue.target`` for ``dumbbell.queue.target``).

The queue discipline is swept like any table: ``queue`` as a whole (a list
of tables, ``[{discipline = "codel"}, {discipline = "pie"}]``), or one of
its keys on a base that has a ``queue`` table (``queue.discipline``,
``queue.target = ["5ms", "10ms"]``; a key a discipline does not take fails
that point, naming it).

``seed`` is not a parameter: ``seeds`` is. An integer ``N`` means the base
scenario's seed and the ``N - 1`` after it; a list gives the seeds exactly.

Order: grid axes in the order given (the last varies fastest), then the zip
groups, then seeds; the order only affects scheduling and listing.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..errors import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Sweep", "SweepError", "load_sweep", "SWEEP_KEYS"]

#: Top-level keys of a sweep file.
SWEEP_KEYS = ["name", "description", "base", "grid", "zip", "seeds", "workers", "scheduler", "out"]

_PATH_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


#: The largest seed a campaign stores: its index keeps seeds as SQLite INTEGERs (signed 64 bits).
MAX_SEED = 2**63 - 1

#: The text whose digest names a configuration (``Sweep._validate_in_core`` checks each distinct one once):
#: sorted keys, no spaces, no NaN (the text run keys hashed before campaign format 4).
_DIGEST_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


class SweepError(ScenarioError):
    """A sweep description is invalid; ``field`` names where (``grid.buffer``, ``zip[0]``...)."""


def _parse_path(path: str, field: str) -> list[str | int]:
    out: list[str | int] = []
    pos = 0
    for part in path.split("."):
        if not part:
            raise SweepError(field, f"invalid parameter path {path!r}")
        i = 0
        while i < len(part):
            m = _PATH_TOKEN.match(part, i)
            if not m or (m.group(1) is not None and i != 0):
                raise SweepError(field, f"invalid parameter path {path!r}")
            out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
            i = m.end()
        pos += 1
    return out


def _set_path(doc: Any, tokens: Sequence[str | int], value: Any, field: str) -> None:
    cur = doc
    for j, t in enumerate(tokens[:-1]):
        nxt = tokens[j + 1]
        if isinstance(t, int):
            if not isinstance(cur, list) or t >= len(cur):
                raise SweepError(field, f"no element [{t}] in the base scenario")
            cur = cur[t]
        else:
            if not isinstance(cur, dict):
                raise SweepError(field, f"{t!r} is not inside a table of the base scenario")
            if t not in cur or cur[t] is None:
                if isinstance(nxt, int):
                    raise SweepError(field, f"the base scenario has no array {t!r}")
                cur[t] = {}
            cur = cur[t]
    last = tokens[-1]
    if isinstance(last, int):
        if not isinstance(cur, list) or last >= len(cur):
            raise SweepError(field, f"no element [{last}] in the base scenario")
        cur[last] = value
    else:
        if not isinstance(cur, dict):
            raise SweepError(field, f"cannot set {last!r}: not a table in the base scenario")
        cur[last] = value


def _dotted(tokens: Sequence[str | int]) -> str:
    """``["flows", 0, "start"]`` -> ``flows[0].start``."""
    out = ""
    for t in tokens:
        out += f"[{t}]" if isinstance(t, int) else (f".{t}" if out else t)
    return out


def _plain(v: Any) -> Any:
    """numpy scalars and tuples -> plain JSON-able Python values."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes, bool, int, float)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


class Sweep:
    """A base scenario, a grid (dict of lists), zipped groups and seeds.

    ``base``: a :class:`~tcplab.scenario.Scenario`, a path to a scenario
    TOML file, or the dict of one. ``grid``: ``{param: [values]}``, every
    combination. ``zip``: one dict or a list of dicts ``{param: [values],
    other: [values]}`` whose lists have equal length and go together (value
    i of each). ``seeds``: a count (starting at the base's seed) or a list.
    """

    def __init__(self, base: Any, grid: Mapping[str, Sequence[Any]] | None = None,
                 zip: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]] | None = None,
                 seeds: int | Sequence[int] = 1, name: str | None = None,
                 description: str | None = None) -> None:
        from ..scenario import Scenario, load_scenario, scenario_from_dict

        if isinstance(base, (str, os.PathLike)):
            self.base_path: str | None = os.fspath(base)
            try:
                base = load_scenario(base)
            except ScenarioError as e:
                raise SweepError(f"base ({self.base_path})", str(e)) from None
        else:
            self.base_path = None
        if isinstance(base, Mapping):
            try:
                base = scenario_from_dict(base)
            except ScenarioError as e:
                raise e.with_prefix("base") from None
        if not isinstance(base, Scenario):
            raise SweepError("base", f"expected a Scenario, a scenario file or its table, got {type(base).__name__}")
        if getattr(base, "loss_trace", False):
            # Campaign segments store the tables of docs/campaigns.md; a
            # trace would be computed and silently lost.
            raise SweepError("base.run.loss_trace", "the drop and retransmission trace is for single runs "
                             "(tcplab run, tcplab.run); a campaign does not store it: remove it from the base")
        if getattr(base, "pcap", None):
            raise SweepError("base.run.pcap", "the packet capture is for single runs (tcplab run --pcap, "
                             "tcplab.run); a campaign does not store it: remove it from the base")
        self.base = base
        self._base_doc = base.to_toml_dict()
        self.name = name or base.name
        self.description = description
        #: every point checked (:meth:`validate`) since the sweep was made
        self.validated = False
        self.grid: dict[str, list] = {}
        for k, vals in dict(grid or {}).items():
            self.grid[str(k)] = self._values(vals, f"grid.{k}")
        if zip is None:
            groups: list = []
        elif isinstance(zip, Mapping):
            groups = [zip]
        else:
            groups = list(zip)
        self.zip: list[dict[str, list]] = []
        for gi, g in enumerate(groups):
            if not isinstance(g, Mapping) or not g:
                raise SweepError(f"zip[{gi}]", "expected a non-empty table of equal-length lists")
            group = {str(k): self._values(v, f"zip[{gi}].{k}") for k, v in g.items()}
            lens = {len(v) for v in group.values()}
            if len(lens) != 1:
                sizes = ", ".join(f"{k}: {len(v)}" for k, v in group.items())
                raise SweepError(f"zip[{gi}]", f"zipped lists must have equal lengths ({sizes})")
            self.zip.append(group)
        keys = list(self.grid) + [k for g in self.zip for k in g]
        seen: set[str] = set()
        for k in keys:
            if k in seen:
                raise SweepError(k, "swept twice (in the grid and a zip group, or in two zip groups)")
            seen.add(k)
            if k == "seed" or k.endswith(".seed"):
                raise SweepError(k, "the seed is not a grid parameter; use seeds = N or seeds = [..]")
            if k.split(".")[-1] == "loss_trace":
                raise SweepError(k, "the drop and retransmission trace is for single runs; "
                                    "a campaign does not store it")
            if k.split(".")[-1] in ("pcap", "pcap_limit"):
                raise SweepError(k, "the packet capture is for single runs; a campaign does not store it")
        self._check_distinct_fields(keys)
        self.seeds = self._seeds(seeds)

    # -- validation helpers -------------------------------------------------
    @staticmethod
    def _values(vals: Any, field: str) -> list:
        if isinstance(vals, (str, bytes, Mapping)) or not isinstance(vals, Iterable):
            raise SweepError(field, f"expected a list of values, got {vals!r}")
        out = [_plain(v) for v in vals]
        if not out:
            raise SweepError(field, "empty list: the sweep would have no runs")
        return out

    def _seeds(self, seeds: Any) -> list[int]:
        if isinstance(seeds, bool):
            raise SweepError("seeds", f"expected a count or a list of seeds, got {seeds!r}")
        if isinstance(seeds, int):
            if seeds < 1:
                raise SweepError("seeds", f"must be at least 1, got {seeds}")
            s0 = self.base._seed()
            if s0 + seeds - 1 > MAX_SEED:
                raise SweepError("seeds", f"{seeds} seeds from the base seed {s0} run past {MAX_SEED} (2^63 - 1, "
                                          "the campaign index's largest integer)")
            return [s0 + i for i in range(seeds)]
        if isinstance(seeds, Iterable) and not isinstance(seeds, (str, bytes)):
            out = []
            for i, s in enumerate(seeds):
                s = _plain(s)
                if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED:
                    raise SweepError(f"seeds[{i}]", f"expected an integer from 0 to {MAX_SEED} (2^63 - 1, the "
                                                    f"campaign index's largest integer), got {s!r}")
                out.append(s)
            if not out:
                raise SweepError("seeds", "empty list")
            if len(set(out)) != len(out):
                raise SweepError("seeds", "repeated seed")
            return out
        raise SweepError("seeds", f"expected a count or a list of seeds, got {seeds!r}")

    def _check_distinct_fields(self, keys: Sequence[str]) -> None:
        """Each parameter sets a field of its own: ``buffer`` and ``dumbbell.buffer`` are one field
        (the last would win at every point while both label it), ``queue`` holds ``queue.target``."""
        resolved: list[tuple[str, tuple]] = []
        for k in keys:
            r = tuple(self._resolve_key(k))
            for other, ro in resolved:
                if r == ro:
                    raise SweepError(k, f"sets the same field as the parameter {other!r} ({_dotted(r)}): sweep it once")
                if r[:len(ro)] == ro:
                    raise SweepError(k, f"sets a field inside {_dotted(ro)}, which the parameter {other!r} sets "
                                        "whole: sweep one of them")
                if ro[:len(r)] == r:
                    raise SweepError(k, f"sets {_dotted(r)} whole, which holds the field the parameter {other!r} "
                                        f"sets ({_dotted(ro)}): sweep one of them")
            resolved.append((k, r))

    def _resolve_key(self, key: str) -> list[str | int]:
        from ..scenario import DUMBBELL_KEYS, RUN_KEYS, _suggest

        doc = self._base_doc
        if "." not in key and "[" not in key:
            if "dumbbell" in doc and key in DUMBBELL_KEYS:
                return ["dumbbell", key]
            if key in RUN_KEYS:
                return ["run", key]
            if key in ("name", "description"):
                return [key]
            known = (list(DUMBBELL_KEYS) if "dumbbell" in doc else []) + list(RUN_KEYS)
            hint = "" if "dumbbell" in doc else "; for a generic scenario use a path such as flows[0].algorithm"
            raise SweepError(key, f"unknown sweep parameter{_suggest(key, known)}{hint}")
        tokens = _parse_path(key, key)
        if "dumbbell" in doc and isinstance(tokens[0], str) and tokens[0] in DUMBBELL_KEYS:
            return ["dumbbell", *tokens]  # queue.target = dumbbell.queue.target
        return tokens

    # -- expansion ----------------------------------------------------------
    def __len__(self) -> int:
        n = len(self.seeds)
        for v in self.grid.values():
            n *= len(v)
        for g in self.zip:
            n *= len(next(iter(g.values())))
        return n

    @property
    def parameters(self) -> list[str]:
        """The swept parameter names, in axis order."""
        return list(self.grid) + [k for g in self.zip for k in g]

    def points(self, seeds: Sequence[int] | None = None) -> Iterator[dict]:
        """Each point: ``{param: value, ..., "seed": s}`` (for each of ``seeds``, default the sweep's)."""
        axes: list[list[dict]] = [[{k: v} for v in vals] for k, vals in self.grid.items()]
        for g in self.zip:
            n = len(next(iter(g.values())))
            axes.append([{k: g[k][i] for k in g} for i in range(n)])
        for combo in itertools.product(*axes):
            params: dict = {}
            for part in combo:
                params.update(part)
            for s in self.seeds if seeds is None else seeds:
                yield {**params, "seed": s}

    def scenario(self, point: Mapping[str, Any]) -> Any:
        """The Scenario of one point (a dict of parameters, optionally with ``seed``)."""
        from ..scenario import scenario_from_dict

        doc = copy.deepcopy(self._base_doc)
        for k, v in point.items():
            if k == "seed":
                continue
            _set_path(doc, self._resolve_key(k), copy.deepcopy(v), k)
        doc.setdefault("run", {})
        doc["run"]["seed"] = int(point.get("seed", self.base._seed()))
        try:
            return scenario_from_dict(doc, name=self.base.name)
        except ScenarioError as e:
            where = ", ".join(f"{k}={v!r}" for k, v in point.items())
            raise SweepError(f"point ({where}): {e.field}" if e.field else f"point ({where})", e.problem) from None

    def jobs(self) -> list:
        """``[(params, RunSpec dict, bottleneck links)]`` for every point, validated: each point's scenario
        by Python, and each distinct run description by the core (:meth:`_validate_in_core`)."""
        out = list(self.iter_jobs())
        self._validate_in_core(out)
        return out

    def iter_jobs(self, points: Iterable[dict] | None = None) -> Iterator[tuple]:
        """As :meth:`jobs`, one at a time, each point's scenario validated by Python as it comes (of
        ``points``, default every point): a sweep of millions of runs is never held whole (about 12 KB a
        run). The core's check is :meth:`validate`'s."""
        for p in self.points() if points is None else points:
            sc = self.scenario(p)
            yield (p, sc._first_spec(), sc.bottleneck_links())

    def validate(self) -> None:
        """Raise :class:`SweepError` for the first invalid point, holding none of them: each combination
        of parameter values is built once, with the first seed (a seed changes no value that can be
        invalid; the seeds themselves were checked when the sweep was made), and checked by Python and
        by the core. What ``tcplab sweep`` checks before anything runs."""
        self._validate_in_core(self.iter_jobs(self.points(seeds=self.seeds[:1])))
        self.validated = True  # (Campaign.run does not check it again)

    @staticmethod
    def _validate_in_core(jobs: Iterable[tuple]) -> None:
        """Check every distinct run description as the core will run it, its memory estimate included
        (``_core.validate``; a point's scenario has had the core check every other rule when it was made),
        so that an invalid point is refused before anything runs instead of being stored as a failed run.

        Seeds do not change what is valid, so descriptions are compared without theirs: a grid of N
        configurations and S seeds costs N core validations, not N x S."""
        try:
            from tcplab import _core
        except ImportError:  # pragma: no cover - the core is not built: the runs will say it
            return
        seen: set = set()  # digests, not texts: a grid of millions of configurations stays small
        for params, spec, _ in jobs:
            config = _DIGEST_JSON.encode({k: v for k, v in spec.items() if k != "seed"})
            digest = hashlib.sha256(config.encode()).digest()
            if digest in seen:
                continue
            seen.add(digest)
            try:
                _core.validate(json.dumps(spec, allow_nan=False))
            except _core.SpecError as e:
                where = ", ".join(f"{k}={v!r}" for k, v in params.items())
                field = getattr(e, "field", None)
                problem = getattr(e, "problem", None) or str(e)
                raise SweepError(f"point ({where}): {field}" if field else f"point ({where})", problem) from None

    # -- description --------------------------------------------------------
    def to_dict(self) -> dict:
        """The sweep file's dict, with the base scenario inlined as ``[base]``."""
        doc: dict = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        doc["seeds"] = list(self.seeds)
        doc["base"] = copy.deepcopy(self._base_doc)
        if self.grid:
            doc["grid"] = copy.deepcopy(self.grid)
        if self.zip:
            doc["zip"] = copy.deepcopy(self.zip)
        return doc

    def to_toml(self) -> str:
        import tomli_w

        from ..scenario import _tomlable

        return tomli_w.dumps(_tomlable(self.to_dict()))

    def describe(self) -> str:
        axes = [f"{k} ({len(v)})" for k, v in self.grid.items()]
        axes += ["zip(" + ", ".join(g) + f") ({len(next(iter(g.values())))})" for g in self.zip]
        return (f"sweep {self.name!r}: {len(self)} runs = " + " x ".join(axes + [f"seeds ({len(self.seeds)})"]))

    def __repr__(self) -> str:
        return f"<Sweep {self.name!r}: {len(self)} runs over {self.parameters} x {len(self.seeds)} seeds>"


def sweep_from_dict(doc: Mapping[str, Any], base_dir: str = ".", name: str | None = None) -> tuple[Sweep, dict]:
    """Build a Sweep from a sweep file's dict; returns (sweep, run options
    ``{"workers", "scheduler", "out"}`` as given, or absent)."""
    from ..scenario import _check_keys

    _check_keys(doc, SWEEP_KEYS, "")
    if "base" not in doc:
        raise SweepError("base", "missing (required): a scenario file path or a [base] table")
    base = doc["base"]
    if isinstance(base, str):
        path = base if os.path.isabs(base) else os.path.join(base_dir, base)
        if not os.path.exists(path):
            raise SweepError("base", f"scenario file {path!r} not found (a path is relative to the sweep file)")
        base = path
    elif not isinstance(base, Mapping):
        raise SweepError("base", f"expected a scenario file path or a [base] table, got {base!r}")
    grid = doc.get("grid", {})
    if not isinstance(grid, Mapping):
        raise SweepError("grid", "expected a table of lists")
    zipped = doc.get("zip")
    sw = Sweep(base, grid=grid, zip=zipped, seeds=doc.get("seeds", 1), name=doc.get("name", name),
               description=doc.get("description"))
    opts: dict = {}
    if "workers" in doc:
        w = doc["workers"]
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise SweepError("workers", f"expected a positive integer, got {w!r}")
        opts["workers"] = w
    for k in ("scheduler", "out"):
        if k in doc:
            if not isinstance(doc[k], str) or not doc[k]:
                raise SweepError(k, f"expected a string, got {doc[k]!r}")
            opts[k] = doc[k] if k != "out" or os.path.isabs(doc[k]) else os.path.join(base_dir, doc[k])
    return sw, opts


def load_sweep(path: str | os.PathLike, overrides: Sequence[str] = ()) -> tuple[Sweep, dict]:
    """Read a sweep file (TOML; see docs/campaigns.md). Returns (sweep, options). ``overrides``:
    ``"KEY=VALUE"`` strings applied first, as ``tcplab sweep --set`` does (:mod:`tcplab.overrides`)."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    stem = os.path.splitext(os.path.basename(path))[0]
    base_dir = os.path.dirname(os.path.abspath(path))
    if overrides:
        from ..overrides import apply_sweep_overrides

        apply_sweep_overrides(doc, overrides, base_dir)
    return sweep_from_dict(doc, base_dir=base_dir, name=stem)
