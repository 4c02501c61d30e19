"""Root causes: every failure grouped by what actually went wrong (issues 14 §1, 21 §1-2).

A failed kit test carries a :class:`~rdq_compliance.reporting._symptom.Symptom`: its
first difference, refusal or exception. One storage defect fails hundreds of tests
across many requirements, at many places and in many strings; grouping them by the
table's row and the nature of the change (``_symptom.cause_key``), then joining the
keys the run shows to be one defect (``_cause_joins``), shows the one cause.

The requirement of a cause comes from the one table (:data:`DEFECT_RULES`, kept in the
envelope core beside the diff it tags): the defect's nature decides, not which test
saw it first. A cause the table does not name (a namespace a drop took with it) is
the requirement of its failing tests.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._requirements import get_requirement
from ..envelope._diagnosis import find_rule
from ..envelope._triggers import TRIGGERS
from ._cause_joins import (
    Groups,
    join_losses,
    join_names,
    join_natures,
    join_omitted_nulls,
    join_wider,
)
from ._symptom import NULL_OMITTED, Symptom, cause_key, cause_signature

__all__ = [
    "SPEC_URL",
    "cause_line",
    "causes_headline",
    "causes_of",
    "clause_link",
    "diagnose",
    "explained_by",
    "group_causes",
    "short_pointer",
]

SPEC_URL = "docs/spec/clarifications.md"
"""Where the clauses C1..C20 are written down (in the repository and the wheel);
every clause id the kit prints links to ``SPEC_URL#c<n>``."""


def clause_link(clause: str, base: str = SPEC_URL) -> str:
    """The address of ``clause`` (``C3`` -> ``docs/spec/clarifications.md#c3``)."""
    return f"{base}#{clause.strip().lower()}"


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


def _shared_triggers(members: Sequence[Symptom]) -> list[str]:
    """The value classes every refused envelope of a cause held, in table order."""
    sets = [set(s.triggers.split()) for s in members]
    common = set.intersection(*sets) if sets else set()
    return [t for t in TRIGGERS if t in common]


def diagnose(symptom: Symptom) -> list[str]:
    """The requirements the table may give one symptom, most likely first: for a refusal
    or an exception whose envelope held several triggers (U+0000 and a non-UTF-8 payload),
    one per trigger, since one envelope cannot tell which of them the store refused;
    empty when no row names it."""
    if not symptom.difference:
        return []
    triggers = [t for t in TRIGGERS if t in symptom.triggers.split()]
    found: list[str] = []
    subsets: list[list[str]] = [triggers, *([t] for t in triggers)]
    for subset in subsets:
        rule = find_rule(symptom.pattern, symptom.difference, subset)
        if rule is not None and rule.requirement not in found:
            found.append(rule.requirement)
    return found


_DEEP = re.compile(r"(?:/\*){6,}")


def short_pointer(pointer: str) -> str:
    """``pointer`` with a deeply nested run of ``/*`` (hundreds of levels, from the deep
    values the kit writes) cut to a few, so that a cause line stays readable."""
    def cut(m: re.Match[str]) -> str:
        return f"/*/*/…{len(m.group()) // 2 - 4} more levels…/*/*"

    return _DEEP.sub(cut, pointer)


def group_causes(
    failures: Iterable[tuple[str, str, Symptom]], *, max_tests: int = 50
) -> list[dict[str, Any]]:
    """Group ``(nodeid, requirement id, symptom)`` triples into causes, largest first
    (see :func:`causes_of`, which also says which test is in which cause)."""
    return causes_of(failures, max_tests=max_tests)[0]


def causes_of(
    failures: Iterable[tuple[str, str, Symptom]], *, max_tests: int = 50
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The causes (:func:`group_causes`) and node id -> index of its cause.

    Group ``(nodeid, requirement id, symptom)`` triples into causes, largest first.

    One cause is one defect (:func:`cause_key`): the timestamp fields of the envelope,
    hit first by different tests, are one cause, and so is U+0000 stripped from any
    string; unknown fields lost at the top level and in attempts are two (two rows of
    the table); refusals and exceptions are one cause per operation, exception (or C17
    code) and masked message. The requirement and clauses come from the first
    row of the table that matches the cause (its pattern and class of difference, or
    the value class all its refused envelopes share: ``trigger``); without one, the
    most specific failing requirement of the group.
    """
    groups: Groups = {}
    # By node id, not by arrival: every tie below (the pattern named, the example shown)
    # is then the same however the tests were ordered, dealt to xdist workers or shards.
    for nodeid, rid, s in sorted(failures, key=lambda f: f[0]):
        groups.setdefault(cause_key(s), []).append((nodeid, rid, s))
    join_losses(groups)
    joined = (join_wider(groups) | join_omitted_nulls(groups) | join_natures(groups)
              | join_names(groups))
    everywhere = Counter(rid for members in groups.values() for _, rid, _ in members)
    out: list[dict[str, Any]] = []
    members_of: list[list[str]] = []
    for key, members in groups.items():
        symptoms = [s for _, _, s in members]
        own = [s for n, _, s in members if n not in joined] or symptoms
        kind = Counter(s.kind for s in own).most_common(1)[0][0]
        patterns = Counter(s.pattern for s in symptoms)
        pattern = Counter(s.pattern for s in own).most_common(1)[0][0]
        difference = Counter(s.difference for s in own).most_common(1)[0][0]
        shared = _shared_triggers(symptoms) if difference in ("refused", "raised") else []
        rule = find_rule(pattern, difference, shared) if difference else None
        if rule is not None and rule.requirement not in everywhere:
            # Every envelope held several classes (a dotted header key in each of the
            # kit's, an attempt without error): the one whose requirement failed names it.
            rule = next((r for t in shared if (r := find_rule(pattern, difference, [t]))
                         is not None and r.requirement in everywhere), rule)
        reqs = Counter(rid for _, rid, _ in members)
        found_clause = Counter(s.clause for s in own).most_common(1)[0][0]
        clause = " ".join(rule.clauses) if rule is not None else found_clause
        ordered = sorted(reqs, key=lambda r: (*_specificity(r, clause), -reqs[r], r))
        if rule is not None and rule.requirement not in everywhere:
            # The table's requirement did not fail in this run (not selected, or its tests
            # passed: a cache hid the loss from them): the defect is what the failing tests
            # check (durability, eviction, aliasing), so the group's requirement is named.
            rule = None
            clause = found_clause
        if rule is not None:
            best = rule.requirement
        else:
            # No row names it: the most specific failing requirement citing the clause,
            # of this group, else of the run (RDQ-RT-010 shows at the top level what the
            # golden corpus shows in attempts).
            best = min(everywhere,
                       key=lambda r: (*_specificity(r, clause), -everywhere[r], r))
            if not clause or _specificity(best, clause) >= _specificity(ordered[0], clause):
                best = ordered[0]
        if not clause:
            try:
                clause = " ".join(get_requirement(best).clauses)
            except KeyError:
                clause = ""
        example = next((s for s in own if s.clause == found_clause), own[0])
        summary = example.summary
        trigger = next((t for t in shared if rule is not None and t == rule.trigger), None)
        if trigger is None and shared:
            trigger = shared[0]
        if trigger is not None:
            summary = f"{summary} (trigger: {TRIGGERS[trigger]})"
        if all(s.change == NULL_OMITTED for s in symptoms):
            summary = f"{summary} (every field lost held null)"
        tests = sorted({n for n, _, _ in members})
        cause = {
            "pointer": pattern,
            "pointers": sorted(patterns, key=lambda p: (-patterns[p], p)),
            "kind": kind,
            "clause": clause,
            "summary": summary,
            "requirement": best,
            "requirements": ordered,
            "failures": len(members),
            "tests": tests[:max_tests],
            "example": example.diff,
            "trigger": None if trigger is None else TRIGGERS[trigger],
        }
        cause["signature"] = cause_signature(key)
        out.append(cause)
        members_of.append([n for n, _, _ in members])
    order = sorted(range(len(out)),
                   key=lambda i: (-out[i]["failures"], out[i]["pointer"], out[i]["kind"]))
    index = {n: rank for rank, i in enumerate(order) for n in members_of[i]}
    return [out[i] for i in order], index


def explained_by(
    causes: Sequence[Mapping[str, Any]], index: Mapping[str, int],
    failed_tests: Mapping[str, Sequence[str]],
) -> dict[str, int]:
    """Requirement id -> the number (1-based) of the cause that explains it, for failed
    requirements every failed test of which is in causes that name another requirement:
    such a requirement fails only because of a defect already named (``failed —
    explained by cause 1``). ``index`` maps node ids to their cause's index
    (:func:`causes_of`); ``failed_tests`` requirement ids to their failed node ids."""
    where = {n: i + 1 for n, i in index.items()}
    out: dict[str, int] = {}
    for rid, tests in failed_tests.items():
        numbers = {where.get(t) for t in tests}
        if not tests or None in numbers:
            continue
        found = sorted(n for n in numbers if n is not None)
        if any(causes[n - 1]["requirement"] == rid for n in found):
            continue  # one of its own failures is a cause that names it
        out[rid] = found[0]
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def cause_line(cause: Mapping[str, Any], *, code: str = "`") -> str:
    """``/…/created_at`` instant changed by -117 ms [C3] -> RDQ-RT-007 (207 failures).

    ``code`` quotes the pointer (a backtick for Markdown, nothing for a terminal)."""
    others = len(cause["pointers"]) - 1
    more = f" (and {_plural(others, 'other field')})" if others > 0 else ""
    # "/" is no field: a refusal, an exception or another failed check says what it is
    pointer = short_pointer(str(cause["pointer"]))
    where = f"{code}{pointer}{code}{more} " if pointer != "/" else ""
    clause = f" [{cause['clause']}]" if cause["clause"] else ""
    return f"{where}{cause['summary']}{clause} \u2192 {cause['requirement']}"


def causes_headline(causes: Sequence[Mapping[str, Any]], failures: int | None = None) -> str:
    """``1 cause explains 207 failures``; with ``failures`` (every failed test) also how
    many no cause explains, when some: ``2 causes explain 30 of 34 failures``."""
    n = sum(c["failures"] for c in causes)
    verb = "explains" if len(causes) == 1 else "explain"
    if failures is not None and failures > n:
        return (f"{_plural(len(causes), 'cause')} {verb} {n} of {_plural(failures, 'failure')}"
                f" ({failures - n} without a cause)")
    return f"{_plural(len(causes), 'cause')} {verb} {_plural(n, 'failure')}"
