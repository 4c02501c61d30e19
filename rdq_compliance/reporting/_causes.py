"""Root causes: failures grouped by what actually differs (issue 14 §1).

A round-trip check that fails carries a :class:`Symptom`: the first difference
between what was written and what was read back, with array indexes and generated
key names generalised (``/attempts/*/error/detail``), the kind of difference and the
clause it breaks. One storage defect (timestamps kept to the second, say) fails
hundreds of tests across many requirements with the same symptom; grouping them
shows the one cause and the most specific requirement that names it.

Plain values only: the pytest layer builds the symptoms (it knows the envelope
core), this module groups them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from .._requirements import get_requirement

__all__ = [
    "SPEC_URL", "Symptom", "cause_line", "causes_headline", "clause_link", "group_causes",
]

SPEC_URL = "docs/spec/clarifications.md"
"""Where the clauses C1..C19 are written down (in the repository and the wheel);
every clause id the kit prints links to ``SPEC_URL#c<n>``."""


def clause_link(clause: str, base: str = SPEC_URL) -> str:
    """The address of ``clause`` (``C3`` -> ``docs/spec/clarifications.md#c3``)."""
    return f"{base}#{clause.strip().lower()}"


@dataclass(frozen=True, slots=True)
class Symptom:
    """The first difference a failed round trip found."""

    pointer: str
    """The JSON pointer as found (``/attempts/0/error/detail``)."""
    pattern: str
    """The pointer with array indexes and generated key names as ``*``."""
    kind: str
    """What differs, without the field: ``instant changed``, ``header missing``, ..."""
    clause: str
    """The clause(s) the difference breaks, space-separated (``C3``, ``C10 C5``)."""
    summary: str
    """One line for people: ``instant changed by -117 ms``."""
    diff: str
    """The first lines of the diff, as the failure message shows them."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Symptom | None:
        """The symptom in ``text``, or None when it is not one (never raises)."""
        try:
            doc = json.loads(text)
            return cls(**{f.name: str(doc[f.name]) for f in fields(cls)})
        except (ValueError, TypeError, KeyError):
            return None


def _place(pattern: str) -> str:
    """What tells causes of one clause and kind apart: nothing for a field the envelope
    defines (the timestamps at the top and in attempts are one cause), the object for a
    generated key (unknown fields lost at the top and in attempts are two)."""
    parent, _, leaf = pattern.rpartition("/")
    return parent if leaf == "*" else ""


def _specificity(rid: str, clause: str) -> tuple[int, int]:
    """Requirements citing the cause's first clause, then another of its clauses, then
    the others; among them those citing fewer clauses first."""
    try:
        clauses = get_requirement(rid).clauses
    except KeyError:
        return (3, 99)
    cited = clause.split()
    if cited and cited[0] in clauses:
        return (0, len(clauses))
    return (1 if set(cited) & set(clauses) else 2, len(clauses))


def group_causes(
    failures: Iterable[tuple[str, str, Symptom]], *, max_tests: int = 50
) -> list[dict[str, Any]]:
    """Group ``(nodeid, requirement id, symptom)`` triples into causes, largest first.

    One cause is one kind of difference at one place: the timestamp fields of the
    envelope, hit first by different tests, are one cause; for generated keys the
    parent object counts (unknown fields lost at the top level and in attempts are
    two causes). Its clause is its symptoms' most frequent clause (a detail lost to
    null is C10 when it held a value and C9 when it held ``{}``: one cause, C10).
    ``requirement`` is the most specific failing requirement: one citing the clause,
    with the fewest clauses (the targeted requirement, not the golden corpus), first
    among the group's, else among every failure's.
    """
    groups: dict[tuple[str, str], list[tuple[str, str, Symptom]]] = {}
    for nodeid, rid, s in failures:
        groups.setdefault((s.kind, _place(s.pattern)), []).append((nodeid, rid, s))
    everywhere = Counter(rid for members in groups.values() for _, rid, _ in members)
    out: list[dict[str, Any]] = []
    for (kind, _), members in groups.items():
        patterns = Counter(s.pattern for _, _, s in members)
        clause = Counter(s.clause for _, _, s in members).most_common(1)[0][0]
        reqs = Counter(rid for _, rid, _ in members)
        ordered = sorted(reqs, key=lambda r: (*_specificity(r, clause), -reqs[r], r))
        # The targeted requirement may have failed on this cause first at another place
        # (RDQ-RT-010's {} at the top, the golden corpus's in attempts): name it.
        best = min(everywhere, key=lambda r: (*_specificity(r, clause), -everywhere[r], r))
        if _specificity(best, clause) >= _specificity(ordered[0], clause):
            best = ordered[0]
        example = next(s for _, _, s in members if s.clause == clause)
        tests = sorted({n for n, _, _ in members})
        out.append({
            "pointer": patterns.most_common(1)[0][0],
            "pointers": [p for p, _ in patterns.most_common()],
            "kind": kind,
            "clause": clause,
            "summary": example.summary,
            "requirement": best,
            "requirements": ordered,
            "failures": len(members),
            "tests": tests[:max_tests],
            "example": example.diff,
        })
    out.sort(key=lambda c: (-c["failures"], c["pointer"], c["kind"]))
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def cause_line(cause: Mapping[str, Any], *, code: str = "`") -> str:
    """``/…/created_at`` instant changed by -117 ms [C3] -> RDQ-RT-007 (207 failures).

    ``code`` quotes the pointer (a backtick for Markdown, nothing for a terminal)."""
    others = len(cause["pointers"]) - 1
    more = f" (and {_plural(others, 'other field')})" if others > 0 else ""
    return (f"{code}{cause['pointer']}{code}{more} {cause['summary']} [{cause['clause']}] "
            f"\u2192 {cause['requirement']}")


def causes_headline(causes: Sequence[Mapping[str, Any]]) -> str:
    """``1 cause explains 207 failures``."""
    n = sum(c["failures"] for c in causes)
    verb = "explains" if len(causes) == 1 else "explain"
    return f"{_plural(len(causes), 'cause')} {verb} {_plural(n, 'failure')}"
