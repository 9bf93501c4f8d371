"""``--set KEY=VALUE``: values of a scenario or sweep file overridden from the command line.

``tcplab run`` and ``tcplab sweep`` take ``--set`` any number of times. Each one sets a key of the
file's TOML document before the file is read as a scenario (or sweep), so the override is checked
exactly as if it had been written in the file::

    tcplab run sc.toml --set dumbbell.buffer=0.5BDP --set run.duration=10s
    tcplab run generic.toml --set 'flows[1].algorithm=cubic' --set 'links[0].loss=0.001'
    tcplab sweep study.toml --set seeds=5 --set dumbbell.access_delay=uniform

KEY is a dotted path as the TOML file writes it: tables by name (``dumbbell.flow_options.delayed_ack``),
an element of an array by index (``flows[1].algorithm``, ``dumbbell.algorithm[0]`` when the file gives
a list). A table on the way that the file leaves out is made (``dumbbell.queue.discipline=codel``); a
key the schema does not know is refused by the scenario's own check, naming it (``dumbbell.bufer:
unknown key (did you mean 'buffer'?)``).

VALUE is read as a TOML value when it is one (``10``, ``0.5``, ``true``, ``[1, 2]``, ``{discipline =
"codel"}``, ``"50ms"`` in quotes) and as a string otherwise (``0.5BDP``, ``10s``, ``cubic``). So
``--set dumbbell.rtt=50`` is the number 50, seconds, as ``rtt = 50`` in the file would be; ``tcplab run``
and ``tcplab sweep`` warn when a bare number sets a time (:func:`seconds_warnings`).

In a sweep file, a key that starts with one of the sweep file's own keys (``seeds``, ``grid``, ``zip``,
``name``, ``workers``, ...) sets that; any other key sets the base scenario (``dumbbell.buffer`` is
``base.dumbbell.buffer``, and both spellings work; a base given as a path is read and overridden in
memory, the file is left alone). A grid or zip parameter still wins over the base at every point of
the sweep. A grid key with a dot in it is quoted, as in the file: ``grid."dumbbell.buffer"=["2BDP"]``
replaces that axis, where ``grid.buffer=[...]`` would add a second one for the same field (refused).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .errors import ScenarioError

__all__ = ["OverrideError", "apply_overrides", "parse_override", "seconds_warnings", "split_sweep_overrides"]

_TOKEN = re.compile(r"([A-Za-z0-9_-]+)((?:\[\d+\])*)$")


class OverrideError(ScenarioError):
    """A ``--set`` that cannot be applied; ``field`` is ``--set KEY``."""


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return type(v).__name__


def parse_value(text: str) -> Any:
    """``text`` as a TOML value when it is one, else the string itself."""
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if list(doc) != ["v"]:  # e.g. "1\nx = 2": more than one value
        return text
    return doc["v"]


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_INDEX = re.compile(r"\[\s*(\d+)\s*\]")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')  # "..." with backslash escapes, as TOML writes a basic string
_LITERAL = re.compile(r"'[^'\n]*'")


def _toml_key_part(quoted: str) -> str | None:
    """A quoted key part (``"dumbbell.buffer"``, ``'a b'``) as TOML reads it, or None if TOML would not."""
    try:
        doc = tomllib.loads(f"{quoted} = 0")
    except tomllib.TOMLDecodeError:
        return None
    return next(iter(doc)) if len(doc) == 1 and not isinstance(next(iter(doc.values())), dict) else None


def _scan_key(text: str) -> tuple[list[str | int] | None, int]:
    """Read a dotted key from the start of ``text``: (its path, the index where it ends), or (None, i)
    where it is not one. Bare parts, quoted parts as TOML reads them, and ``[N]`` after a part."""
    path: list[str | int] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        m = _BARE.match(text, i) or _BASIC.match(text, i) or _LITERAL.match(text, i)
        part = None if m is None else m.group(0) if m.re is _BARE else _toml_key_part(m.group(0))
        if part is None:
            return None, i
        path.append(part)
        i = m.end()  # type: ignore[union-attr]
        while (mi := _INDEX.match(text, i)) is not None:
            path.append(int(mi.group(1)))
            i = mi.end()
        while i < n and text[i] in " \t":
            i += 1
        if i == n or text[i] != ".":
            return path, i
        i += 1


def _not_a_key(key: str) -> OverrideError:
    return OverrideError(f"--set {key}", "not a key path: names of letters, digits, '_' or '-' joined by dots "
                                         "(a name with other characters in quotes: grid.\"dumbbell.buffer\"), an "
                                         "array element as name[0] (e.g. flows[1].algorithm)")


def parse_key(key: str) -> list[str | int]:
    """A ``--set`` KEY as a path: a TOML dotted key (bare parts, or quoted ones such as
    ``grid."dumbbell.buffer"``), each part optionally followed by array indices (``flows[1]``)."""
    path, end = _scan_key(key)
    if path is None or end != len(key):
        raise _not_a_key(key.strip())
    return path


def parse_override(text: str) -> tuple[str, list[str | int], Any]:
    """``"flows[1].algorithm=cubic"`` -> ``("flows[1].algorithm", ["flows", 1, "algorithm"], "cubic")``;
    ``'grid."dumbbell.buffer"=["2BDP"]'`` -> ``(..., ["grid", "dumbbell.buffer"], ["2BDP"])``."""
    if "=" not in text:
        raise OverrideError(f"--set {text}", "expected KEY=VALUE, e.g. dumbbell.buffer=0.5BDP")
    path, end = _scan_key(text)
    if path is None or end == len(text) or text[end] != "=":
        raise _not_a_key(text.split("=", 1)[0].strip())
    return text[:end].strip(), path, parse_value(text[end + 1:])


def _shown(path: Sequence[str | int]) -> str:
    out = ""
    for p in path:
        if not isinstance(p, int) and not _BARE.fullmatch(p):
            p = json.dumps(p)  # a part with a dot or a space is quoted, as TOML writes it
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _set(doc: dict, key: str, path: Sequence[str | int], value: Any) -> None:
    cur: Any = doc
    for j, step in enumerate(path):
        last = j == len(path) - 1
        where = _shown(path[:j])
        if isinstance(step, int):
            if not isinstance(cur, list):
                raise OverrideError(f"--set {key}", f"{where} is {_kind(cur)}, not an array: no element [{step}]")
            if step >= len(cur):
                raise OverrideError(f"--set {key}", f"{where} has {len(cur)} element(s); [{step}] is not one of them")
            if last:
                cur[step] = value
            else:
                cur = cur[step]
            continue
        if not isinstance(cur, dict):
            hint = (f" (an array: give an element, e.g. {where}[0].{step})" if isinstance(cur, list)
                    else f" ({_kind(cur)})")
            raise OverrideError(f"--set {key}", f"{where} is not a table{hint}, so it has no key {step!r}")
        if last:
            cur[step] = value
        else:
            if step not in cur:  # as a dotted key in TOML makes the table
                if isinstance(path[j + 1], int):
                    raise OverrideError(f"--set {key}", f"{_shown(path[:j + 1])} is not in the file: no array to "
                                                        "index")
                cur[step] = {}
            cur = cur[step]


def apply_overrides(doc: dict, overrides: Sequence[str]) -> dict:
    """Apply ``KEY=VALUE`` strings to a TOML document (in place; also returned). Raises
    :class:`OverrideError` (a ScenarioError) naming ``--set KEY`` for a path that cannot be set."""
    for text in overrides:
        key, path, value = parse_override(text)
        _set(doc, key, path, value)
    return doc


Parsed = tuple[str, list[str | int], Any]


def split_sweep_overrides(overrides: Sequence[str]) -> tuple[list[Parsed], list[Parsed]]:
    """The ``--set`` strings of a sweep, parsed: (those of the sweep file's own keys, those of its
    base scenario). A base override's path is within the base scenario: ``dumbbell.rtt`` and
    ``base.dumbbell.rtt`` both give ``["dumbbell", "rtt"]``; ``base=...`` itself is the sweep's own."""
    from .sweep.grid import SWEEP_KEYS

    own: list[Parsed] = []
    base: list[Parsed] = []
    for text in overrides:
        key, path, value = parse_override(text)
        if path[0] == "base" and len(path) > 1:
            base.append((key, path[1:], value))
        else:
            (own if path[0] in SWEEP_KEYS else base).append((key, path, value))
    return own, base


def apply_sweep_overrides(doc: dict, overrides: Sequence[str], base_dir: str) -> dict:
    """A sweep file's document with ``--set`` applied: its own keys, and the others on its base
    scenario (a base given as a path is read, relative to ``base_dir``, and inlined)."""
    own, base = split_sweep_overrides(overrides)
    for key, path, value in own:
        _set(doc, key, path, value)
    if base:
        b = doc.get("base")
        if isinstance(b, str):
            b = _read_base(b, base_dir)
            if b is None:  # (no such file: the sweep's own check names it)
                return doc
        if not isinstance(b, dict):
            raise OverrideError(f"--set {base[0][0]}", "the sweep file has no base scenario to set it in")
        for key, path, value in base:
            _set(b, key, path, value)
        doc["base"] = b
    return doc


def _read_base(path: str, base_dir: str) -> dict | None:
    full = path if os.path.isabs(path) else os.path.join(base_dir, path)
    if not os.path.isfile(full):
        return None  # (the sweep's own check names the missing file)
    with open(full, "rb") as fh:
        b = tomllib.load(fh)
    b.setdefault("name", os.path.splitext(os.path.basename(full))[0])  # as load_scenario names it
    return b


#: A number no one writes, put in place of an override's value to see whether parse_time reads it.
_SENTINEL = 0.012345678901234567


def seconds_warnings(overrides: Sequence[str], check: Callable[[list[str]], Any]) -> list[str]:
    """A warning for each ``--set`` whose value is a bare number (not 0) for a key that takes a
    time: TOML's ``50`` is 50 s, which someone who meant 50 ms would not notice. ``check(overrides)``
    builds and checks the scenario (or sweep) with those overrides.

    Which keys take a time is found out, not listed: the check is run once more with the value
    replaced by :data:`_SENTINEL`, and the override is warned of when the time parser then reads
    that number (:func:`tcplab.units.plain_times_read`), whatever else the check says after it."""
    from .units import plain_times_read

    out = []
    for i, text in enumerate(overrides):
        key, _, value = parse_override(text)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0:
            continue
        trial = list(overrides)
        trial[i] = f"{key}={_SENTINEL!r}"
        with plain_times_read() as seen:
            try:
                check(trial)
            except Exception:  # noqa: BLE001 - a check that fails later still shows what it read
                pass
        if any(isinstance(x, float) and x == _SENTINEL for x in seen):
            v = f"{value:g}" if isinstance(value, float) else str(value)
            out.append(f"warning: --set {key}={v} is {v} s; write {v}ms if you meant milliseconds")
    return out
