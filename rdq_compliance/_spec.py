"""Where the contract's text lives: ``docs/spec/`` in a clone, ``rdq_compliance/_docs/spec``
in the wheel (pyproject.toml force-includes it), so every clause a failure cites can
be looked up from an installed kit alone.

The clause ids of the requirement registry and of ``CODE_CLAUSES`` map to anchors:
``C3`` -> ``clarifications.md#c3``, ``C8a`` -> ``clarifications.md#c8a``,
``WE:Field notes`` -> ``envelope.md#we-field-notes``.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["SPEC_FILES", "clause_anchor", "clause_target", "spec_dir"]

SPEC_FILES = ("envelope.md", "clarifications.md", "testee-protocol.md")
"""The documents of the contract, in reading order."""

_CLAUSE = re.compile(r"C[1-9][0-9]*[a-z]?")
_WE_PREFIX = "WE:"


def spec_dir() -> Path:
    """The folder holding :data:`SPEC_FILES`: the installed wheel's ``_docs/spec`` or the
    source tree's ``docs/spec``. ``FileNotFoundError`` names both when neither exists."""
    here = Path(__file__).resolve().parent
    shipped = here / "_docs" / "spec"
    if shipped.is_dir():
        return shipped
    source = here.parent / "docs" / "spec"
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"the spec documents are missing: neither {shipped} (installed wheel) nor {source} "
        "(source tree) exists; reinstall rdq-compliance"
    )


def clause_anchor(clause: str) -> str:
    """The HTML anchor of a clause id: ``"C13a"`` -> ``"c13a"``,
    ``"WE:The attempt record"`` -> ``"we-the-attempt-record"``.

    ``ValueError`` for text that is neither form."""
    if _CLAUSE.fullmatch(clause):
        return clause.lower()
    if clause.startswith(_WE_PREFIX) and clause[len(_WE_PREFIX):].strip():
        words = re.findall(r"[a-z0-9]+", clause[len(_WE_PREFIX):].lower())
        return "we-" + "-".join(words)
    raise ValueError(
        f"clause={clause!r}: expected C<n>[a-z] (clarifications.md) or WE:<section> "
        "(envelope.md)"
    )


def clause_target(clause: str) -> str:
    """The document and anchor of a clause id, relative to the spec folder:
    ``"C3"`` -> ``"clarifications.md#c3"``, ``"WE:Field notes"`` ->
    ``"envelope.md#we-field-notes"``."""
    anchor = clause_anchor(clause)
    page = "envelope.md" if clause.startswith(_WE_PREFIX) else "clarifications.md"
    return f"{page}#{anchor}"
