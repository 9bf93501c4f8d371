"""The package's import graph: the developer tooling (tcplab.devtools) stays apart and has no cycles.

Read from the sources with ``ast``, every import counted, at module level or
inside a function (a lazy import is still a dependency). An import names
the most specific module it reaches: ``from .sweep.worker import warm_up``
depends on ``tcplab.sweep.worker``; ``from . import _core`` on
``tcplab._core``; ``from .sweep import Campaign`` on ``tcplab.sweep``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "python" / "tcplab"
DEVTOOLS = "tcplab.devtools"


def _modules() -> dict[str, Path]:
    out = {}
    # (the compiled core counts by its stub, _core.pyi)
    for path in sorted(PKG.rglob("*.py")) + sorted(PKG.rglob("_core.pyi")):
        parts = ("tcplab",) + path.relative_to(PKG).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The longest prefix of dotted `name` that is a module of tcplab."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in mods:
            return ".".join(parts)
        parts.pop()
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the tcplab modules it imports, and the private names it imports from them (as 'mod:name')."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        if path.suffix == ".pyi":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                target = _resolve(t, mods)
                if target is not None and target != mod:
                    graph[mod].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_devtools_modules_import_each_other_without_a_cycle():
    graph = import_graph()
    assert any(m.startswith(DEVTOOLS + ".") for m in graph)
    bad = [c for c in cycles(graph) if any(m == DEVTOOLS or m.startswith(DEVTOOLS + ".") for m in c)]
    assert bad == []


def test_only_the_bench_command_reaches_into_devtools():
    # The user-facing package never depends on its developer tooling; `tcplab bench` is the one door.
    graph = import_graph()
    users = {m for m, deps in graph.items() if not m.startswith(DEVTOOLS)
             and any(d == DEVTOOLS or d.startswith(DEVTOOLS + ".") for d in deps)}
    assert users == {"tcplab.cli"}
    assert graph["tcplab.cli"] & {d for d in graph if d.startswith(DEVTOOLS)} == {DEVTOOLS + ".bench"}


def test_devtools_modules_share_public_names_only():
    # Shared helpers have one public home (tcplab.devtools.measure), not private names borrowed across files.
    for path in sorted((PKG / "devtools").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level:
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "_core"]
                assert private == [], f"{path.name} imports private {private} from {node.module}"
