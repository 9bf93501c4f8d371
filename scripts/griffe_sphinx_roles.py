"""A Griffe extension for the API pages (mkdocs.yml, mkdocstrings' ``extensions``).

tcplab's docstrings use Sphinx cross-reference roles (``:class:`Results```,
``:meth:`to_spec```, ``:func:`~tcplab.units.parse_rate```), which markdown
would show as written. This turns each into a code span of the name
(``Results``, ``to_spec``, ``parse_rate``: a leading ``~`` keeps the last
component, as Sphinx does).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx role as a markdown code span."""
    def one(m: re.Match) -> str:
        name = m.group(2)
        return f"`{name.rsplit('.', 1)[-1] if m.group(1) else name}`"

    return ROLE.sub(one, text)


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: Any, loader: Any, **kwargs: Any) -> None:  # noqa: ARG002 (Griffe's signature)
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(obj.docstring.value)
