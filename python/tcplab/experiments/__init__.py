"""Paper reproductions: one module per paper of ../shared/spec/.

``tcplab reproduce PAPER [ITEM ...] [--quick] [--out DIR]`` runs them; from
Python, ``tcplab.experiments.reproduce("mv-highspeed", items=["table1"])``.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

PAPERS = {
    "mv-highspeed": "tcplab.experiments.mv_highspeed",
    "kk-westwood": "tcplab.experiments.kk_westwood",
    "mv-buffers": "tcplab.experiments.mv_buffers",
    "jm-knn": "tcplab.experiments.jm_knn",
    "ssm-interactions": "tcplab.experiments.ssm_interactions",
}


def _module(paper: str):
    import importlib

    if paper not in PAPERS:
        import difflib

        close = difflib.get_close_matches(paper, list(PAPERS), n=2)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f"; known: {', '.join(PAPERS)}"
        raise ValueError(f"paper: unknown paper {paper!r}{hint}")
    return importlib.import_module(PAPERS[paper])


def default_out(paper: str, quick: bool) -> str:
    return os.path.join("out", paper + ("-quick" if quick else ""))


def reproduce(paper: str, items: Optional[Sequence[str]] = None, quick: bool = False, out: Optional[str] = None,
              workers: Optional[int] = None, verbose: bool = True, scheduler: Any = None, resume: bool = True,
              **options: Any) -> dict:
    """Regenerate the tables and figures of ``paper`` into ``out``; returns
    ``{item: {"tables": {...DataFrames}, "files": [...]}}``.

    Every finished run's extract is kept in ``out/.runs/`` (atomic writes,
    keyed by a hash of the run description, the extract and the tcplab
    version), so rerunning an interrupted reproduction computes only the
    missing runs; ``resume=False`` empties that cache first. ``scheduler``:
    a Dask scheduler address or ``distributed.Client`` to run on a cluster.
    ``options``: the paper's own options (e.g. ``configs`` for
    ssm-interactions); an option the paper does not take is an error."""
    import inspect
    import shutil

    from .runner import execution

    mod = _module(paper)
    accepted = inspect.signature(mod.reproduce).parameters
    for k in options:
        if k not in accepted:
            raise ValueError(f"{k}: not an option of {paper}")
    out = out or default_out(paper, quick)
    cache = os.path.join(out, ".runs")
    if not resume and os.path.isdir(cache):
        shutil.rmtree(cache)
    with execution(cache=cache, scheduler=scheduler):
        return mod.reproduce(items=items, quick=quick, out=out, workers=workers, verbose=verbose, **options)


def items(paper: str) -> list[str]:
    return list(_module(paper).ITEMS)
