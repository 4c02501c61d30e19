"""Root causes: every failure grouped by what actually went wrong (issues 14 §1, 21 §1-2).

A failed kit test carries a :class:`Symptom`. For a round trip that read back something
else it is the first difference (pointer generalised to ``/attempts/*/error/detail``,
the class of difference, the nature of the change, the clause); for a store that
refused a valid envelope or raised, the operation, the exception or C17 code with its
message's variable parts masked, and the classes of value the envelope held
(:data:`TRIGGERS`); for any other failure, its exception and masked first line. One
storage defect fails hundreds of tests across many requirements, at many places and in
many strings; grouping them by the table's row and the nature of the change
(:func:`cause_key`) shows the one cause.

The requirement of a cause comes from the one table (:data:`DEFECT_RULES`, kept in the
envelope core beside the diff it tags): the defect's nature decides, not which test
saw it first. A cause the table does not name (a namespace a drop took with it) is
the requirement of its failing tests.

Plain values only: the pytest layer builds the symptoms, this module groups them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from .._requirements import get_requirement
from ..envelope._diagnosis import (
    DEFECT_RULES,
    DefectRule,
    find_rule,
    requirement_rank,
    wider_rule,
)
from ..envelope._json import JSON_TYPE_NAMES
from ..envelope._triggers import TRIGGERS

__all__ = [
    "LOST_TO_NULL",
    "NULL_OMITTED",
    "SPEC_URL",
    "CauseKey",
    "Symptom",
    "cause_key",
    "cause_line",
    "cause_signature",
    "causes_headline",
    "causes_of",
    "clause_link",
    "explained_by",
    "fallback_symptom",
    "group_causes",
    "mask",
    "short_pointer",
]

SPEC_URL = "docs/spec/clarifications.md"
"""Where the clauses C1..C20 are written down (in the repository and the wheel);
every clause id the kit prints links to ``SPEC_URL#c<n>``."""


def clause_link(clause: str, base: str = SPEC_URL) -> str:
    """The address of ``clause`` (``C3`` -> ``docs/spec/clarifications.md#c3``)."""
    return f"{base}#{clause.strip().lower()}"


@dataclass(frozen=True, slots=True)
class Symptom:
    """What one failed test found: its first difference, refusal or exception."""

    pointer: str
    """The JSON pointer as found (``/attempts/0/error/detail``); for a refusal or an
    exception, where the envelopes differ from what the store took (else ``/``)."""
    pattern: str
    """The pointer with array indexes and generated key names as ``*``."""
    kind: str
    """What differs, without the field: ``instant changed``, ``header missing``; for a
    refusal ``write refused: StorageError INTERNAL <message, masked>``."""
    clause: str
    """The clause(s) the difference breaks, space-separated (``C3``, ``C10``)."""
    summary: str
    """One line for people: ``instant changed by -117 ms``."""
    diff: str
    """The first lines of the diff (or the message), as the failure shows them."""
    difference: str = ""
    """The class of difference (``DIFFERENCES`` of the table: ``instant``, ``refused``,
    ``raised``, ...); "" for a failure that is neither (a semantics check)."""
    triggers: str = ""
    """Refusals and exceptions: the value classes (``TRIGGERS``) of the envelopes the
    failing call was given, space-separated."""
    change: str = ""
    """The nature of the change, which the root causes group by (:func:`cause_key`): for
    a string (or a key) read back changed, what happened to it (``U+0000 stripped``,
    ``normalised to NFC``: ``envelope._text_change``); for null against an empty value,
    which way (``empty read as null``); for an invalid read, the violation code; ""
    when the class says it all (and in reports written before it was recorded)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Symptom | None:
        """The symptom in ``text``, or None when it is not one (never raises)."""
        try:
            return cls.from_mapping(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    @classmethod
    def from_mapping(cls, doc: Mapping[str, Any], **given: str) -> Symptom:
        """The symptom a record holds (a test's ``cause`` in a report): each field it
        has, one it lacks or holds as null (a report written before the field was)
        its default, ``given`` over both. Raises TypeError when a field with no
        default is missing."""
        found = {f.name: str(doc[f.name]) for f in fields(cls) if doc.get(f.name) is not None}
        return cls(**{**found, **given})


# -- masking the variable parts of a message ---------------------------------------------

_MASKS = (
    (re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""), "'…'"),  # quoted values
    (re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b"), "<id>"),  # ULIDs
    (re.compile(r"\bt[0-9a-f]{8}\d*w[0-9a-f]+\b"), "<namespace>"),  # the kit's namespaces
    # The JSON type of a value the store got wrong (the kit's own validator, which the
    # plugin may raise: "/id: expected a string, got an array"): the value drawn decides it.
    (re.compile(r"\bgot (?:" + "|".join(JSON_TYPE_NAMES) + r")\b"), "got <a JSON type>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<n>"),
    (re.compile(r"(?<![\w.])[-+]?\d[\d_,.]*(?![\w])"), "<n>"),  # numbers
    (re.compile(r"\(U\+[0-9A-F]{4,6}(?: U\+[0-9A-F]{4,6})*\)"), ""),
)


def mask(text: str) -> str:
    """``text`` with ids, namespaces, numbers and quoted values masked, on one line:
    two failures of one defect read the same."""
    out = " ".join(text.split())
    for pattern, repl in _MASKS:
        out = pattern.sub(repl, out)
    return " ".join(out.split())


def fallback_symptom(message: str | None) -> Symptom:
    """The symptom of a failure that carries none (a setup error, an assertion of the
    suite, a hang): its masked first line, which the grouping then groups by."""
    lines = [ln for ln in (message or "").splitlines() if ln.strip()]
    # The kit's messages: "RDQ-… [MUST; …] title" then "plugin 'x': what happened".
    body = next((ln for ln in lines if ln.startswith("plugin ")), lines[0] if lines else "")
    body = body.split(": ", 1)[1] if body.startswith("plugin ") and ": " in body else body
    first = body if len(body) <= 160 else body[:159] + "\u2026"
    return Symptom(pointer="/", pattern="/", kind=mask(first)[:200] or "failed",
                   clause="", summary=first or "failed", diff="\n".join(lines[:6]))


# -- grouping ------------------------------------------------------------------------------


CauseKey = tuple[str, str, str]
"""What makes failures one cause (:func:`cause_key`)."""

LOST_TO_NULL = "read as null"
"""The nature (:attr:`Symptom.change`) of a value that came back null: lost."""

NULL_OMITTED = "null omitted"
"""The nature (:attr:`Symptom.change`) of a field whose value was null that did not come
back (a serializer told to leave nulls out). It joins causes, never splits them
(:func:`_join_omitted_nulls`): a store that loses every unknown field loses the null ones
too, and its cause is one."""


def cause_key(symptom: Symptom) -> CauseKey:
    """What makes failures one cause: one storage defect, wherever and in whatever
    string it shows (issue 21 §2). The root causes group by it, their signature is a
    hash of it (:func:`cause_signature`) and the shrink budget (``testing._budget``)
    cuts by it.

    A difference the table (:data:`DEFECT_RULES`) names: its row, class and the nature
    of the change (:attr:`Symptom.change`): U+0000 stripped from the error message, a
    header value and a header key deep in the envelope is one cause. A row of the storage
    semantics (pointer ``/``) that lists its classes is one defect whatever it found (a
    drop that took every namespace loses both the envelopes before and after it).
    Refusals and exceptions, whose row is the value class all refused envelopes share
    (known only for the group), and what no row names: the kind (operation, type or C17
    code and masked message) and its place (:func:`_place`), as before the table."""
    difference = symptom.difference
    if difference and difference not in ("refused", "raised"):
        rule = find_rule(symptom.pattern, difference)
        if rule is not None:
            row = _row(rule)
            if rule.pointer == "/" and rule.difference[0] not in "*~":
                return (row, "", "")
            change = "" if symptom.change == NULL_OMITTED else symptom.change
            return (row, difference, change)
    return ("", symptom.kind, _place(symptom.pattern))


def _place(pattern: str) -> str:
    """What tells causes of one clause and kind apart: nothing for a field the envelope
    defines (the timestamps at the top and in attempts are one cause), the object for a
    generated key (unknown fields lost at the top and in attempts are two)."""
    parent, _, leaf = pattern.rpartition("/")
    return parent if leaf == "*" else ""


def _join_losses(groups: dict[CauseKey, list[tuple[str, str, Symptom]]]) -> None:
    """An empty value read as null where values of the same kind at the same place
    were lost to null (a store that drops ``detail`` loses ``{}`` and ``{"a": 1}``
    alike) is that loss, not an empty/null confusion (RDQ-RT-010): its failures join the
    loss's cause. Where nothing else was lost (``""`` read as null), they stay apart."""
    losses: dict[tuple[str, str], CauseKey] = {}
    for key, members in groups.items():
        for _, _, s in members:
            if s.change == LOST_TO_NULL:
                losses.setdefault((s.pattern, s.kind), key)
    for key in [k for k in groups if k[1] == "empty-null"]:
        kept = []
        for member in groups[key]:
            s = member[2]
            loss = losses.get((s.pattern, s.kind)) if s.change != "null read as empty" else None
            if loss is None:
                kept.append(member)
            else:
                groups[loss].append(member)
                groups[loss].sort(key=lambda m: m[0])  # by node id, as grouped
        if kept:
            groups[key] = kept
        else:
            del groups[key]


def _join_wider(groups: dict[CauseKey, list[tuple[str, str, Symptom]]]) -> set[str]:
    """A defect of a row that is one case of a wider row (``DefectRule.within``: a lost
    ``payload_ref``, one of the unknown top-level fields) joins that row's cause of the
    same class and change where the run found one; alone it stays a cause of its own.
    Returns the node ids of the failures that joined: the cause is named and shown by
    the wider row's own failures, however many joined it."""
    rows = _rows()
    joined: set[str] = set()
    for key in list(groups):
        rule = rows.get(key[0])
        wider = wider_rule(rule, key[1]) if rule is not None else None
        target = None if wider is None else (_row(wider), key[1], key[2])
        if target is not None and target in groups:
            joined |= _move(groups, key, target)
    return joined


def _join_omitted_nulls(groups: dict[CauseKey, list[tuple[str, str, Symptom]]]) -> set[str]:
    """Where the run lost fields at several rows of the table (the top level, attempts,
    errors) and every field lost at each of them held null, the store leaves nulls out
    (Jackson's ``NON_NULL``, ``omitempty``): one defect, the cause of the outermost row
    (the fewest pointer tokens: the top level's; ties: :func:`requirement_rank`). Returns
    the node ids that joined it. A row where a non-null value was lost too is a loss of
    its own and stays apart."""
    rows = _rows()
    omitted = [key for key, members in groups.items()
               if key[1] == "missing" and key[0] in rows
               and all(s.change == NULL_OMITTED for _, _, s in members)]
    if len(omitted) < 2:
        return set()
    target = min(omitted, key=lambda k: (rows[k[0]].pointer.count("/"),
                                         requirement_rank(rows[k[0]].requirement), k))
    joined: set[str] = set()
    for key in omitted:
        if key != target:
            joined |= _move(groups, key, target)
    return joined


def _move(groups: dict[CauseKey, list[tuple[str, str, Symptom]]], key: CauseKey,
          target: CauseKey) -> set[str]:
    """The failures of cause ``key`` join cause ``target``; returns their node ids."""
    moved = groups.pop(key)
    groups[target].extend(moved)
    groups[target].sort(key=lambda m: m[0])  # by node id, as grouped
    return {n for n, _, _ in moved}


def _row(rule: DefectRule) -> str:
    """A row of the table as :func:`cause_key` names it."""
    return f"{rule.pointer} {rule.difference} {rule.requirement}"


def _rows() -> dict[str, DefectRule]:
    """Each row of the table by the name :func:`_row` gives it."""
    return {_row(rule): rule for rule in DEFECT_RULES}


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


def cause_signature(key: Sequence[str]) -> str:
    """The stable name of a cause, for known-failures files: ``c`` and 12 hex digits of
    a hash of its key (:func:`cause_key`), the same in every run (any profile, seed or
    shard) that fails by that defect."""
    text = "\x1f".join(" ".join(part.split()) for part in key)
    return "c" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


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
    groups: dict[CauseKey, list[tuple[str, str, Symptom]]] = {}
    # By node id, not by arrival: every tie below (the pattern named, the example shown)
    # is then the same however the tests were ordered, dealt to xdist workers or shards.
    for nodeid, rid, s in sorted(failures, key=lambda f: f[0]):
        groups.setdefault(cause_key(s), []).append((nodeid, rid, s))
    _join_losses(groups)
    joined = _join_wider(groups) | _join_omitted_nulls(groups)
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
