"""A Griffe extension for the API pages (mkdocs.yml, mkdocstrings' ``extensions``).

tcplab's docstrings are written in reStructuredText habits that markdown
would show as written. This rewrites them, for the site only:

- Sphinx cross-reference roles (``:class:`Results```, ``:meth:`to_spec```,
  ``:func:`~tcplab.units.parse_rate```) become code spans of the name (a
  leading ``~`` keeps the last component, as Sphinx does);
- a paragraph ending in ``::`` (reST's "a literal block follows") ends in
  ``:``; the indented block after it is a code block in markdown too;
- a nested list indented by two spaces (reST) is indented by four (markdown).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
BULLET = re.compile(r"^\s*[-*] ", re.M)


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx role as a markdown code span."""
    def one(m: re.Match) -> str:
        name = m.group(2)
        return f"`{name.rsplit('.', 1)[-1] if m.group(1) else name}`"

    return ROLE.sub(one, text)


def markdown_of(text: str) -> str:
    """A docstring's text with the reST habits above turned into markdown."""
    text = plain_roles(text)
    text = re.sub(r"(\S)::[ \t]*$", r"\1:", text, flags=re.M)
    text = re.sub(r"^[ \t]*::[ \t]*$\n?", "", text, flags=re.M)
    if BULLET.search(text):
        # (lines indented by 2 or 6 spaces are list items or their continuation lines)
        text = re.sub(r"^((?:    )*)  (?=\S)", r"\1    ", text, flags=re.M)
    return text


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: Any, loader: Any, **kwargs: Any) -> None:  # noqa: ARG002 (Griffe's signature)
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
