"""Which requirement and clauses a kind of defect belongs to: the one table (issue 21 §2).

A failed check is diagnosed by what differs, not by which test saw it first: the
generalised pointer of the first difference (``/attempts/*/error/*``), the class of
the difference (a timestamp, null against an empty value, a number, ...) or, for a
store that refuses or raises on a valid envelope, the class of value that triggers it
(U+0000 in a string, a payload that is not UTF-8, ...). :data:`DEFECT_RULES` maps
those to a requirement id and its clause tags; the most specific matching row wins.

The same table orders the kit's tests (a requirement's rank is its first row, so
that ``-x`` stops first on the requirement about the defect), tags each diff line
with its clauses and is printed in docs/requirements.md. It sits in the envelope
core because the core's diff lines carry its clause tags; the registry
(``rdq_compliance._requirements``) and the reporting read it from here. Adding a kind
of defect is adding one row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from ._difference import Difference
from ._limits import TRUNCATION_MARKER
from ._text_change import kept_as_number
from ._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

__all__ = [
    "DEFECT_RULES",
    "DIFFERENCES",
    "DefectRule",
    "difference_class",
    "find_rule",
    "pointer_pattern",
    "requirement_rank",
    "wider_rule",
]

DIFFERENCES: Mapping[str, str] = {
    "invalid": "what read returned is no valid envelope in exact form (wrong Python type, "
               "naive datetime, non-canonical wire JSON)",
    "reordered": "the attempts came back in another order (or with duplicates merged)",
    "key-restyled": "a key inside unknown fields or detail came back in another case style "
                    "(lower case, snake_case, camelCase: a deep key transform), its value kept",
    "items-reordered": "the items of an array in unknown fields or detail came back in "
                       "another order, or with repeats dropped (an array kept as a set)",
    "instant": "a timestamp came back as another instant or form",
    "empty-null": 'null came back for "", {} or [] (or the other way round), or {} for [] '
                  "(or the other way round)",
    "number": "a number came back with another value or type",
    "text": "a string came back with other code points",
    "marker": "a string that ended with the truncation marker came back without it (and "
              "otherwise unchanged)",
    "cut": "a string came back cut short: a proper prefix of what was written, more than "
           "white space or U+0000 cut off, or a shorter prefix with the truncation marker "
           "(a column limit)",
    "bytes": "the payload came back with other bytes",
    "missing": "a field, key or item did not come back",
    "unexpected": "a field, key or item came back that was not written",
    "alike-name": "a known field came back holding the value of an unknown field of its "
                  "object named like it but for case ('ID' beside 'id')",
    "boolean": "a boolean came back as the number 1 or 0 (a TINYINT column)",
    "type": "a value came back as another JSON type",
    "changed": "a value came back changed",
    "stale": "an earlier version of the id came back after a rewrite",
    "refused": "a valid envelope was refused with a C17 code",
    "raised": "the plugin raised an exception other than StorageError",
    "overwritten": "an envelope was gone after other ids were written to its namespace",
    "other-id": "a read returned the envelope written under another id",
    "absent": "reading an id never written to the namespace returned an envelope or an error",
    "leaked": "an envelope written to another namespace was read back (where nothing, or "
              "another envelope, was written under its id)",
    "survived-drop": "an envelope came back after its namespace was dropped",
    "taken-by-drop": "an envelope was gone after another namespace was dropped",
    "lost-after-drop": "an envelope written after its namespace had been dropped was gone",
    "not-durable": "an envelope written before the storage was closed was gone when it was "
                   "opened again, or from a new process",
    "torn": "a read that overlapped writes of its id returned parts of two of its versions "
            "(no one whole version)",
    "outdated": "a read returned an older version of its id than one whose write had "
                "returned before the read started",
    "crossed": "namespaces used at the same time crossed: a read returned (parts of) what "
               "another namespace was written, or came back wrong while another namespace "
               "holds what was written to the read's own",
}
"""The classes of difference a rule can name (``*``: any)."""


@dataclass(frozen=True, slots=True)
class DefectRule:
    """One row: a defect of this shape belongs to ``requirement`` and breaks ``clauses``."""

    pointer: str
    """A pointer pattern: a name matches that field (``a|b``: either), ``*`` an array index
    or generated key (an unknown field, a header key), ``?`` any one token, ``**`` any
    rest (also none)."""
    difference: str
    """A class of :data:`DIFFERENCES`, several separated by ``|``, ``*`` (any), or
    ``~`` and classes: any but those."""
    requirement: str
    clauses: tuple[str, ...]
    trigger: str = "*"
    """For ``refused``/``raised``: a class of ``_triggers.TRIGGERS`` the envelopes hold."""
    within: str = ""
    """The pointer of a wider row this row is one case of: where a run finds a defect of
    both rows, of one class and change, this row's failures are the wider row's cause
    (a store that loses every unknown top-level field loses ``payload_ref`` too). Alone,
    this row's defect is a cause of its own."""

    def takes(self, difference: str) -> bool:
        """Whether the row's classes of difference include ``difference``."""
        if self.difference.startswith("~"):
            return difference not in self.difference[1:].split("|")
        return self.difference == "*" or difference in self.difference.split("|")

    def matches(self, pattern: str, difference: str, triggers: Iterable[str] = ()) -> bool:
        if not self.takes(difference):
            return False
        if self.trigger != "*" and self.trigger not in set(triggers):
            return False
        return _pointer_matches(self.pointer.split("/")[1:], pattern.split("/")[1:])


def _r(pointer: str, difference: str, requirement: str, clauses: str,
       trigger: str = "*", *, within: str = "") -> DefectRule:
    return DefectRule(pointer, difference, requirement, tuple(clauses.split()), trigger,
                      within)


_KEPT = "~stale"
"""What the unknown-field and attempt rows take: anything but what an earlier version
left behind (``RDQ-ST-001``'s row, at the end of the table). A key or item no version
held is the place's own defect (a store that adds MongoDB's ``_id``)."""
DEFECT_RULES: tuple[DefectRule, ...] = (
    # Row order is test order (a requirement runs at its first row): what every envelope
    # carries first (a defect in it fails every test, and the requirement about it should
    # fail first), the storage semantics last. A requirement runs before those whose
    # tests carry its values along: the model's Python types (every read), then the
    # instants, then null against "" in the known fields, detail, the unknown fields of
    # error, attempt and envelope, attempts, payload, headers, free text (whose test
    # writes it into unknown fields, detail and headers), numbers. An example whose
    # parameters carry values of a later row runs at that row (``_pytest/_ordering``).
    # Which row a defect matches is not row order but the most specific row (see
    # ``find_rule``).
    _r("/**", "invalid", "RDQ-RT-004", "C11 C3 C6 C7 C9"),
    _r("/id", "*", "RDQ-RT-004", "C6"),
    _r("/status", "*", "RDQ-RT-004", "C9"),
    _r("/attempts/*/outcome", "*", "RDQ-RT-004", "C9"),
    _r("/attempt_count", "*", "RDQ-RT-004", "C5"),
    _r("/redrive_count", "*", "RDQ-RT-004", "C5"),
    _r("/**", "instant", "RDQ-RT-007", "C3"),
    # A read that found the wrong thing for what the test did before it (the storage
    # semantics: ``testing._owned_namespaces.Namespaces.semantics``). Each id its own: every
    # test writing two envelopes to a namespace carries it along.
    _r("/", "overwritten|other-id", "RDQ-RT-002", "C13"),
    _r("/**", "empty-null", "RDQ-RT-010", "C9"),
    _r("/handler_version", "*", "RDQ-RT-010", "C4 C9"),
    _r("/attempts/*/error", "*", "RDQ-RT-010", "C9"),
    # detail lost: a store that reads "" as null loses a "" detail too, whose diagnosis
    # (the empty-null row above, more specific) names RDQ-RT-010.
    _r("/attempts/*/error/detail/**", _KEPT, "RDQ-UF-006", "C10"),
    _r("/attempts/*/error/*/**", _KEPT, "RDQ-UF-003", "C10"),
    _r("/attempts/*/*/**", _KEPT, "RDQ-UF-002", "C10"),
    _r("/*/**", _KEPT, "RDQ-UF-001", "C10"),
    # A decoder that matches keys to fields ignoring case (Go's encoding/json) reads an
    # unknown field 'ID' into id: the unknown field's defect, whichever field it hits.
    _r("/?", "alike-name", "RDQ-UF-001", "C10"),
    _r("/attempts/*/?", "alike-name", "RDQ-UF-002", "C10"),
    _r("/attempts/*/error/?", "alike-name", "RDQ-UF-003", "C10"),
    # payload_ref is an unknown field of v1 (C10): lost with the other unknown top-level
    # fields, it is their cause; lost alone (a store that "knows" it is unused), its own.
    _r("/payload_ref/**", _KEPT, "RDQ-UF-004", "C10", within="/*/**"),
    # Booleans are only where any JSON value may be (no known field is one): a store
    # that keeps them as 0/1 changes them at every level, one cause. Only 0/1: a store
    # that turns every value into another type keeps a cause per level, whichever value
    # an example shrank to.
    _r("/**", "boolean", "RDQ-UF-001", "C10"),
    _r("/attempts/**", "reordered", "RDQ-RT-005", "C12"),
    # The items of an array a store keeps as a set (a DynamoDB String Set, a Redis SET),
    # at every level: one cause, as booleans kept as 0/1 are.
    _r("/**", "items-reordered", "RDQ-UF-001", "C10"),
    _r("/**", "key-restyled", "RDQ-UF-001", "C10"),
    _r("/attempts", _KEPT, "RDQ-RT-005", "C12"),
    _r("/attempts/*", _KEPT, "RDQ-RT-005", "C12"),
    _r("/attempts/*/attempt_no", "*", "RDQ-RT-005", "C12"),
    _r("/payload", "*", "RDQ-RT-008", "C7"),
    # A header value whose code points changed is free text (RDQ-RT-006): a store trimming
    # every string trims header values too.
    _r("/headers/**", "missing|unexpected|type|changed|empty-null", "RDQ-RT-009", "C8 C4"),
    _r("/headers", "empty-null", "RDQ-RT-009", "C8 C9"),  # the empty map read as null
    _r("/**", "text", "RDQ-RT-006", "C4"),
    _r("/payload_content_type", "*", "RDQ-RT-006", "C4"),
    # A value that merely ends with the truncation marker lost it. After the free-text
    # row: the marker is non-ASCII text, which a mangling store changes in these tests
    # too; the free-text test's own marker case carries this row and runs after it.
    _r("/**", "marker", "RDQ-TR-003", "C1"),
    _r("/**", "number", "RDQ-UF-005", "C5"),
    _r("/**", "cut", "RDQ-RT-011", "C4"),
    # message and stack have C1's limits: a column shorter than those is C1's defect, one
    # cause where both are cut alike (a store that re-truncates by its own byte count)
    _r("/attempts/*/error/message|stack", "cut", "RDQ-TR-001", "C1 C4"),
    _r("/attempts/*/error/message|stack", "*", "RDQ-TR-001", "C1 C4"),
    _r("/envelope_version", "number", "RDQ-VER-001", "C16"),
    _r("/envelope_version", "*", "RDQ-VER-001", "C16"),
    _r("/queue", "*", "RDQ-RT-001", "C8a"),
    _r("/handler_ref", "*", "RDQ-RT-001", "C8a"),
    # Refusals and exceptions of valid envelopes: by the value that triggers them.
    _r("/**", "refused|raised", "RDQ-ST-005", "C2 C17", trigger="large"),
    _r("/**", "refused|raised", "RDQ-UF-007", "C10", trigger="deep"),
    _r("/**", "refused|raised", "RDQ-UF-001", "C10", trigger="alike-name"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4 C8", trigger="long-header"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4 C8", trigger="long-key"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4", trigger="long-field"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C8a", trigger="long-name"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C8 C2", trigger="many-headers"),
    _r("/**", "refused|raised", "RDQ-TR-001", "C1", trigger="long-text"),
    _r("/**", "refused|raised", "RDQ-RT-005", "C12", trigger="many-attempts"),
    _r("/**", "refused|raised", "RDQ-RT-006", "C4", trigger="nul"),
    _r("/**", "refused|raised", "RDQ-RT-006", "C4", trigger="astral"),
    _r("/**", "refused|raised", "RDQ-RT-008", "C7", trigger="non-utf8-payload"),
    _r("/**", "refused|raised", "RDQ-RT-008", "C7", trigger="empty-payload"),
    _r("/**", "refused|raised", "RDQ-RT-009", "C8", trigger="empty-key"),
    _r("/**", "refused|raised", "RDQ-RT-009", "C8", trigger="dotted-key"),
    _r("/**", "refused|raised", "RDQ-UF-005", "C5", trigger="big-int"),
    # Last: an attempt without an error is common, so any rarer class the envelopes share
    # names the cause first. A reader that dereferences a null error (Java's
    # NullPointerException, Go's nil pointer) raises on every such envelope.
    _r("/**", "refused|raised", "RDQ-RT-010", "C9", trigger="null-error"),
    # What an earlier version left behind came back.
    _r("/**", "stale", "RDQ-ST-001", "C13"),
    _r("/", "absent", "RDQ-ST-002", "C13"),
    _r("/", "leaked", "RDQ-ST-003", "C14"),
    # the namespace can be used again after a drop: RDQ-ST-004's test writes it again
    _r("/", "survived-drop|taken-by-drop|lost-after-drop", "RDQ-ST-004", "C14"),
    _r("/", "not-durable", "RDQ-RT-003", "C15"),
    # What a read overlapping other lanes' calls found (the concurrency suite's recorded
    # histories, ``suites._history``): by what came back, whichever check saw it (a read
    # cache's stale read fails the isolation check too). A row only names a cause where its
    # requirement's own test failed as well (``reporting._causes``).
    _r("/", "torn", "RDQ-CC-001", "C18"),
    _r("/", "outdated", "RDQ-CC-003", "C18"),
    _r("/", "crossed", "RDQ-CC-004", "C14 C18"),
    _r("/", "~refused|raised", "RDQ-RT-001", "C13"),
)
"""The one table. docs/requirements.md prints it."""

def _narrowness(rule: DefectRule) -> tuple[int, int, int, int]:
    """How specific a row is: a trigger named, then one class of difference (before
    several, before all but some, before any), then more field names in the pointer,
    then more tokens."""
    d = rule.difference
    classes = 0 if d == "*" else 1 if d.startswith("~") else 2 if "|" in d else 3
    tokens = [t for t in rule.pointer.split("/")[1:] if t and t != "**"]
    names = [t for t in tokens if t not in ("*", "?")]
    return (rule.trigger != "*", classes, len(names), len(tokens))


def find_rule(pattern: str, difference: str, triggers: Iterable[str] = ()) -> DefectRule | None:
    """The most specific row (:func:`_narrowness`; ties: the earlier row) for a
    difference of class ``difference`` at ``pattern`` (refusals and exceptions: with a
    value of the classes ``triggers`` in every envelope concerned), else None."""
    found = tuple(triggers)
    best: DefectRule | None = None
    for rule in DEFECT_RULES:
        if rule.matches(pattern, difference, found) and (
            best is None or _narrowness(rule) > _narrowness(best)
        ):
            best = rule
    return best


def wider_rule(rule: DefectRule, difference: str) -> DefectRule | None:
    """The row ``rule`` is one case of (:attr:`DefectRule.within`) for a difference of
    class ``difference``, or None."""
    if not rule.within:
        return None
    for wider in DEFECT_RULES:
        if wider.pointer == rule.within and wider.takes(difference):
            return wider
    return None


def requirement_rank(requirement: str) -> int:
    """Where ``requirement``'s tests run among the kit's: the index of its first row."""
    for n, rule in enumerate(DEFECT_RULES):
        if rule.requirement == requirement:
            return n
    return len(DEFECT_RULES)


def _pointer_matches(rule: list[str], tokens: list[str]) -> bool:
    if not rule or rule == [""]:
        return not tokens or tokens == [""]
    head, rest = rule[0], rule[1:]
    if head == "**":
        return any(_pointer_matches(rest, tokens[i:]) for i in range(len(tokens) + 1))
    if not tokens:
        return False
    if head == "?" or head == tokens[0] or tokens[0] in head.split("|"):
        return _pointer_matches(rest, tokens[1:])
    return False


_ENVELOPE = frozenset(ENVELOPE_FIELDS)
_ATTEMPT = frozenset(ATTEMPT_FIELDS)
_ERROR = frozenset(ERROR_FIELDS)


def pointer_pattern(pointer: str) -> str:
    """``pointer`` with array indexes and names the kit generates (header keys, unknown
    field names but the reserved ``payload_ref``, keys inside ``detail`` and unknown
    values) replaced by ``*``:
    ``/attempts/3/error/x_7`` -> ``/attempts/*/error/*``."""
    out: list[str] = []
    level = "envelope"
    for token in pointer.split("/")[1:]:
        if level == "envelope" and (token in _ENVELOPE or token == "payload_ref"):
            out.append(token)
            level = {"headers": "json", "attempts": "attempts"}.get(token, "json")
        elif level == "attempts" and token.isdigit():
            out.append("*")
            level = "attempt"
        elif level == "attempt" and token in _ATTEMPT:
            out.append(token)
            level = "error" if token == "error" else "json"
        elif level == "error" and token in _ERROR:
            out.append(token)
            level = "json"
        else:  # an unknown field, a header key, anything inside an opaque JSON value
            out.append("*")
            level = "json"
    return "/" + "/".join(out) if out else ""


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _null_against_empty(a: object, b: object) -> bool:
    """One of null, "", {} and [] for another (C9): null for an empty value, or the
    reverse, or {} for [] (PHP's json_encode of an empty array), or the reverse."""
    if type(a) in (dict, list) and type(b) in (dict, list) and type(a) is not type(b):
        return not a and not b
    other = b if a is None else a if b is None else None
    return (a is None) != (b is None) and type(other) in (str, dict, list) and not other


def difference_class(d: Difference) -> str:
    """The class (:data:`DIFFERENCES`) of one difference the core's diff found."""
    e, a = d.expected, d.actual
    if isinstance(e, datetime) or isinstance(a, datetime) or d.note.startswith("timestamp"):
        return "instant"
    if d.kind in ("missing", "unexpected"):  # an absent key is no null (C10, not C9)
        return d.kind
    if d.kind == "length":
        return "missing" if d.expected > d.actual else "unexpected"
    if _null_against_empty(e, a):
        return "empty-null"
    if _is_number(e) and (_is_number(a) or d.note.startswith("integer")):
        return "number"
    if isinstance(e, str) and isinstance(a, str):
        if e.endswith(TRUNCATION_MARKER) and a == e[:-len(TRUNCATION_MARKER)]:
            return "marker"
        return "cut" if _cut_short(e, a) and not kept_as_number(e, a) else "text"
    if isinstance(e, bytes | bytearray) or isinstance(a, bytes | bytearray):
        return "bytes"
    if isinstance(e, bool) and type(a) is int and a == int(e):
        return "boolean"  # 1 or 0: the value kept, its type lost (a TINYINT column)
    return "type" if d.kind == "type" else "changed"


def _cut_short(expected: str, actual: str) -> bool:
    """``actual`` is ``expected`` cut to a length: a proper prefix, and what is gone is
    more than white space and U+0000 (which trimming stores drop: RDQ-RT-006); or cut
    shorter by C1's own algorithm, a prefix and the truncation marker (a store that
    re-truncates to its column's smaller limit)."""
    if actual.endswith(TRUNCATION_MARKER):
        kept = actual[:-len(TRUNCATION_MARKER)]
        if (expected.startswith(kept) and expected[len(kept):] != TRUNCATION_MARKER
                and _utf8_len(actual) < _utf8_len(expected)):
            return True
    return (len(actual) < len(expected) and expected.startswith(actual)
            and bool(expected[len(actual):].strip().strip("\x00")))


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
