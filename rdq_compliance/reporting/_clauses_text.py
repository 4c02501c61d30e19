"""The text of the clauses C1..C19, read from the spec the kit ships.

A summary read in another repository cannot follow a relative link into the kit's
``docs/spec/clarifications.md``: without a published spec URL it shows the clause's
one-line statement instead, and the HTML report embeds the whole rule. Both come from
here: the rule sections of ``clarifications.md``, found by their ``<a id="cN">`` anchors.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .._spec import spec_dir

__all__ = ["ClauseText", "clause_footer", "clause_texts", "is_absolute_url", "spec_link"]

CLARIFICATIONS = "clarifications.md"

_ANCHOR = re.compile(r'^<a id="(c[0-9]+[a-z]?)"></a>\s*$')
_HEADING = re.compile(r"^#{3,6}\s+C[0-9]+[a-z]?\s+[\u2014-]+\s+(.*)$")  # C13a is a ####
_CLAUSE_ID = re.compile(r"C[0-9]+[a-z]?")
_URL = re.compile(r"^https?://[^\s/]+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ClauseText:
    id: str
    """``C3``, ``C8a``."""
    title: str
    """The heading: ``Timestamps``."""
    body: str
    """The rule's paragraphs, as written (Markdown)."""

    @property
    def statement(self) -> str:
        """One line for a summary: ``C3 Timestamps``."""
        return f"{self.id} {self.title}"


def _plain(markdown: str) -> str:
    """Markdown inline markup removed: ``[text](link)`` -> text, `code` -> code."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return text.replace("`", "").replace("*", "")


def parse_clauses(text: str) -> dict[str, ClauseText]:
    """The rule sections of ``clarifications.md`` by clause id (``C8a``)."""
    found: dict[str, ClauseText] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _ANCHOR.match(lines[i])
        i += 1
        if m is None:
            continue
        cid = "C" + m.group(1)[1:]
        title = ""
        body: list[str] = []
        while i < len(lines) and not _ANCHOR.match(lines[i]) and not lines[i].startswith("## "):
            h = _HEADING.match(lines[i])
            if h is not None and not title:
                title = _plain(h.group(1)).strip()
            else:
                body.append(lines[i])
            i += 1
        found[cid] = ClauseText(cid, title, "\n".join(body).strip())
    return found


@functools.cache
def clause_texts() -> dict[str, ClauseText]:
    """Every clause of the shipped spec; empty when the spec cannot be read (a summary
    then shows the bare ids, never fails)."""
    try:
        text = (spec_dir() / CLARIFICATIONS).read_text(encoding="utf-8")
    except OSError:
        return {}
    return parse_clauses(text)


def is_absolute_url(base: str | None) -> bool:
    """An ``http(s)://host...`` address: one that resolves wherever it is read."""
    return bool(base) and _URL.match(str(base)) is not None


def spec_link(base: str | None, clause: str) -> str | None:
    """The address of ``clause`` under a published spec ``base``
    (``https://x/clarifications.md`` -> ``…#c3``), or None without an absolute base:
    a relative link would break wherever the summary is read."""
    if not is_absolute_url(base):
        return None
    return f"{base}#{clause.strip().lower()}"


def _clause_order(c: str) -> tuple[int, str]:
    return (int(re.sub("[a-z]", "", c[1:])), c)


def clause_footer(clauses: Iterable[str], base: str | None) -> list[str]:
    """The end of a Markdown summary citing ``clauses`` as ``[C3]``: with a published
    spec ``base``, the link reference definitions (``[C3]: https://…#c3``); without one,
    each clause's one-line statement (a relative link would break in another repository,
    and ``[C3]`` without a definition stays plain text)."""
    found = sorted({c for c in clauses if _CLAUSE_ID.fullmatch(c)}, key=_clause_order)
    if not found:
        return []
    if is_absolute_url(base):
        return ["", *(f"[{c}]: {spec_link(base, c)}" for c in found)]
    texts = clause_texts()
    lines = ["", "Clauses cited (rdq envelope v1, clarifications.md):", ""]
    lines += [f"- **{c}** {texts[c].title}" if c in texts else f"- **{c}**" for c in found]
    return lines
