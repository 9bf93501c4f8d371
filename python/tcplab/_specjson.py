"""A RunSpec dict to the JSON the core reads, refusing what JSON cannot carry.

``json.dumps`` writes NaN and infinities as the bare words ``NaN`` and
``Infinity`` (not JSON: the core's parser then reports a syntax error at a
column) and passes lone surrogates through as ``\\ud800`` escapes. Both are
refused here with the key path of the offending value
(``flows[0].init_cwnd``), as the core names the fields it refuses.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    # A key that is not valid text is shown escaped, so the message prints.
    key = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
    return f"{path}.{key}" if path else key


def _walk(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every value and dict key in ``obj`` with its path (keys as themselves)."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield _join(path, k), k
            yield from _walk(v, _join(path, k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, _join(path, i))


def _problem(value: Any) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value!r} (JSON has no NaN or infinity)"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"is not valid Unicode text: a lone surrogate {value[e.start]!r} at index {e.start}"
    return None


def spec_to_json(spec: Any, error: Callable[[str, str], Exception], compact: bool = False) -> str:
    """``spec`` as JSON for the core (with ``compact``, without spaces);
    ``error(field, problem)`` is raised for a non-finite number or a string
    with a lone surrogate (the first found)."""
    encoder = _COMPACT if compact else _PLAIN
    try:
        text = encoder.encode(spec)
    except ValueError:
        text = None
    # Fast path: valid JSON without surrogate escapes (a pair, which is
    # fine, also shows as escapes: the walk then finds nothing).
    if text is not None and not _SURROGATE_ESCAPE.search(text):
        return text
    for path, value in _walk(spec, ""):
        problem = _problem(value)
        if problem is not None:
            raise error(path or "spec", problem)
    if text is None:  # pragma: no cover - json.dumps refused something else
        return encoder.encode(spec)
    return text


#: The encoders (json.dumps makes a new one per call when given options).
_PLAIN = json.JSONEncoder(allow_nan=False)
_COMPACT = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
