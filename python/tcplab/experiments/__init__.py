"""Paper reproductions: one module per paper of ../shared/spec/.

``tcplab reproduce PAPER [ITEM ...] [--quick] [--out DIR]`` runs them; from
Python, ``tcplab.experiments.reproduce("mv-highspeed", items=["table1"])``.
"""

from __future__ import annotations

from typing import Optional, Sequence

PAPERS = {
    "mv-highspeed": "tcplab.experiments.mv_highspeed",
    "kk-westwood": "tcplab.experiments.kk_westwood",
    "mv-buffers": "tcplab.experiments.mv_buffers",
    "jm-knn": "tcplab.experiments.jm_knn",
}


def _module(paper: str):
    import importlib

    if paper not in PAPERS:
        import difflib

        close = difflib.get_close_matches(paper, list(PAPERS), n=2)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f"; known: {', '.join(PAPERS)}"
        raise ValueError(f"paper: unknown paper {paper!r}{hint}")
    return importlib.import_module(PAPERS[paper])


def reproduce(paper: str, items: Optional[Sequence[str]] = None, quick: bool = False, out: Optional[str] = None,
              workers: Optional[int] = None, verbose: bool = True) -> dict:
    """Regenerate the tables and figures of ``paper`` into ``out``; returns
    ``{item: {"tables": {...DataFrames}, "files": [...]}}``."""
    return _module(paper).reproduce(items=items, quick=quick, out=out, workers=workers, verbose=verbose)


def items(paper: str) -> list[str]:
    return list(_module(paper).ITEMS)
