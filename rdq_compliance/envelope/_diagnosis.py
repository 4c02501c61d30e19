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

import base64
import binascii
import json
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._difference import Difference
from ._limits import TRUNCATION_MARKER
from ._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

__all__ = [
    "DEFECT_RULES",
    "DIFFERENCES",
    "TRIGGERS",
    "DefectRule",
    "difference_class",
    "find_rule",
    "pointer_pattern",
    "requirement_rank",
    "requirements_carried",
    "triggers_of",
]

DIFFERENCES: Mapping[str, str] = {
    "invalid": "what read returned is no valid envelope in exact form (wrong Python type, "
               "naive datetime, non-canonical wire JSON)",
    "reordered": "the attempts came back in another order (or with duplicates merged)",
    "instant": "a timestamp came back as another instant or form",
    "empty-null": 'null came back for "", {} or [] (or the other way round)',
    "number": "a number came back with another value or type",
    "text": "a string came back with other code points",
    "marker": "a string that ended with the truncation marker came back without it (and "
              "otherwise unchanged)",
    "cut": "a string came back cut short: a proper prefix of what was written, more than "
           "white space or U+0000 cut off (a column limit)",
    "bytes": "the payload came back with other bytes",
    "missing": "a field, key or item did not come back",
    "unexpected": "a field, key or item came back that was not written",
    "type": "a value came back as another JSON type",
    "changed": "a value came back changed",
    "stale": "an earlier version of the id came back after a rewrite",
    "refused": "a valid envelope was refused with a C17 code",
    "raised": "the plugin raised an exception other than StorageError",
    "overwritten": "an envelope was gone after other ids were written to its namespace",
    "other-id": "a read returned the envelope written under another id",
    "absent": "reading an id never written to the namespace returned an envelope or an error",
    "leaked": "an envelope written only to another namespace was read back",
    "survived-drop": "an envelope came back after its namespace was dropped",
    "taken-by-drop": "an envelope was gone after another namespace was dropped",
    "lost-after-drop": "an envelope written after its namespace had been dropped was gone",
}
"""The classes of difference a rule can name (``*``: any)."""

TRIGGERS: Mapping[str, str] = {
    "nul": "U+0000 in a string",
    "astral": "a character beyond U+FFFF in a string",
    "non-utf8-payload": "a payload that is not valid UTF-8",
    "empty-payload": "the empty payload",
    "dotted-key": "a key holding '.' or starting with '$'",
    "empty-key": "the empty header key",
    "long-header": "a header value of 256+ bytes",
    "long-key": "a header key of 256+ bytes",
    "long-field": "a handler_version, payload_content_type or error.type of 256+ bytes",
    "many-headers": "1,000 or more headers",
    "long-text": "a string of 4,096+ bytes",
    "deep": "JSON nested 64+ levels deep",
    "big-int": "an integer beyond 2^53",
    "large": "an envelope of 64 KiB or more",
    "many-attempts": "more than 10 attempts",
    "version": "an envelope_version other than 1",
}
"""The classes of value in a refused envelope that a rule can name: what makes a store
refuse (``find_rule`` picks the first row whose trigger the refused envelopes share)."""


@dataclass(frozen=True, slots=True)
class DefectRule:
    """One row: a defect of this shape belongs to ``requirement`` and breaks ``clauses``."""

    pointer: str
    """A pointer pattern: a name matches that field, ``*`` an array index or generated
    key (an unknown field, a header key), ``?`` any one token, ``**`` any rest (also none)."""
    difference: str
    """A class of :data:`DIFFERENCES`, several separated by ``|``, ``*`` (any), or
    ``~`` and classes: any but those."""
    requirement: str
    clauses: tuple[str, ...]
    trigger: str = "*"
    """For ``refused``/``raised``: a class of :data:`TRIGGERS` the envelopes hold."""

    def matches(self, pattern: str, difference: str, triggers: Iterable[str] = ()) -> bool:
        if self.difference.startswith("~"):
            if difference in self.difference[1:].split("|"):
                return False
        elif self.difference != "*" and difference not in self.difference.split("|"):
            return False
        if self.trigger != "*" and self.trigger not in set(triggers):
            return False
        return _pointer_matches(self.pointer.split("/")[1:], pattern.split("/")[1:])


def _r(pointer: str, difference: str, requirement: str, clauses: str,
       trigger: str = "*") -> DefectRule:
    return DefectRule(pointer, difference, requirement, tuple(clauses.split()), trigger)


_KEPT = "~unexpected|stale"
"""What the unknown-field and attempt rows take: anything but what an earlier version
left behind (``RDQ-ST-001``'s rows, at the end of the table)."""
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
    # semantics: ``testing._namespaces.Namespaces.semantics``). Each id its own: every
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
    _r("/payload_ref/**", _KEPT, "RDQ-UF-004", "C10"),
    _r("/attempts/**", "reordered", "RDQ-RT-005", "C12"),
    _r("/attempts", _KEPT, "RDQ-RT-005", "C12"),
    _r("/attempts/*", _KEPT, "RDQ-RT-005", "C12"),
    _r("/attempts/*/attempt_no", "*", "RDQ-RT-005", "C12"),
    _r("/payload", "*", "RDQ-RT-008", "C7"),
    # A header value whose code points changed is free text (RDQ-RT-006): a store trimming
    # every string trims header values too.
    _r("/headers/**", "missing|type|changed|empty-null", "RDQ-RT-009", "C8 C4"),
    _r("/headers", "empty-null", "RDQ-RT-009", "C8 C9"),  # the empty map read as null
    _r("/**", "text", "RDQ-RT-006", "C4"),
    _r("/payload_content_type", "*", "RDQ-RT-006", "C4"),
    # A value that merely ends with the truncation marker lost it. After the free-text
    # row: the marker is non-ASCII text, which a mangling store changes in these tests
    # too; the free-text test's own marker case carries this row and runs after it.
    _r("/**", "marker", "RDQ-TR-003", "C1"),
    _r("/**", "number", "RDQ-UF-005", "C5"),
    _r("/**", "cut", "RDQ-RT-011", "C4"),
    _r("/attempts/*/error/message", "*", "RDQ-TR-001", "C1 C4"),
    _r("/attempts/*/error/stack", "*", "RDQ-TR-001", "C1 C4"),
    _r("/envelope_version", "number", "RDQ-VER-001", "C16"),
    _r("/envelope_version", "*", "RDQ-VER-001", "C16"),
    _r("/queue", "*", "RDQ-RT-001", "C8a"),
    _r("/handler_ref", "*", "RDQ-RT-001", "C8a"),
    # Refusals and exceptions of valid envelopes: by the value that triggers them.
    _r("/**", "refused|raised", "RDQ-ST-005", "C2 C17", trigger="large"),
    _r("/**", "refused|raised", "RDQ-UF-007", "C10", trigger="deep"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4 C8", trigger="long-header"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4 C8", trigger="long-key"),
    _r("/**", "refused|raised", "RDQ-RT-011", "C4", trigger="long-field"),
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
    # Something that was never written came back: what an earlier version left behind.
    _r("/**", "stale|unexpected", "RDQ-ST-001", "C13"),
    _r("/", "absent", "RDQ-ST-002", "C13"),
    _r("/", "leaked", "RDQ-ST-003", "C14"),
    # the namespace can be used again after a drop: RDQ-ST-004's test writes it again
    _r("/", "survived-drop|taken-by-drop|lost-after-drop", "RDQ-ST-004", "C14"),
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
    if head == "?" or head == tokens[0]:
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
        return "cut" if _cut_short(e, a) else "text"
    if isinstance(e, bytes | bytearray) or isinstance(a, bytes | bytearray):
        return "bytes"
    return "type" if d.kind == "type" else "changed"


def _cut_short(expected: str, actual: str) -> bool:
    """``actual`` is ``expected`` cut to a length: a proper prefix, and what is gone is
    more than white space and U+0000 (which trimming stores drop: RDQ-RT-006)."""
    return (len(actual) < len(expected) and expected.startswith(actual)
            and bool(expected[len(actual):].strip().strip("\x00")))


# -- triggers: the value classes of an envelope (canonical JSON) --------------------------

_MAX_SAFE = 2**53


def _walk(value: Any, depth: int = 1) -> Iterator[tuple[str, Any, int]]:
    """(kind, value, depth) of every key and value of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield "key", k, depth
            yield from _walk(v, depth + 1)
        yield "container", value, depth
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, depth + 1)
        yield "container", value, depth
    else:
        yield "value", value, depth


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def triggers_of(doc: object) -> frozenset[str]:
    """The value classes (:data:`TRIGGERS`) present in the canonical JSON ``doc`` of an
    envelope; nothing for what is not a JSON object (a repr the kit could not encode)."""
    if not isinstance(doc, dict):
        return frozenset()
    found: set[str] = set()
    deepest = 0
    for kind, v, depth in _walk(doc):
        deepest = max(deepest, depth)
        if isinstance(v, str):
            if "\x00" in v:
                found.add("nul")
            if any(ord(c) > 0xFFFF for c in v):
                found.add("astral")
            if kind == "key" and ("." in v or v.startswith("$")):
                found.add("dotted-key")
            if len(v.encode("utf-8", "surrogatepass")) >= 4096:
                found.add("long-text")
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > _MAX_SAFE:
            found.add("big-int")
    if deepest >= 64:
        found.add("deep")
    headers = doc.get("headers")
    if isinstance(headers, dict):
        if "" in headers:
            found.add("empty-key")
        if any(isinstance(v, str) and _size(v) >= 256 for v in headers.values()):
            found.add("long-header")
        if any(_size(k) >= 256 for k in headers):
            found.add("long-key")
        if len(headers) >= 1000:
            found.add("many-headers")
    fields = [doc.get("handler_version"), doc.get("payload_content_type")]
    for attempt in doc.get("attempts") or ():
        error = attempt.get("error") if isinstance(attempt, dict) else None
        if isinstance(error, dict):
            fields.append(error.get("type"))
    if any(isinstance(v, str) and _size(v) >= 256 for v in fields):
        found.add("long-field")
    payload = doc.get("payload")
    if isinstance(payload, str):
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw == b"":
            found.add("empty-payload")
        elif raw is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                found.add("non-utf8-payload")
    attempts = doc.get("attempts")
    if isinstance(attempts, list) and len(attempts) > 10:
        found.add("many-attempts")
    if doc.get("envelope_version") not in (1, None):
        found.add("version")
    try:
        size = len(json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        size = 0
    if size >= 64 * 1024:
        found.add("large")
    return frozenset(found)


# -- what a test's values carry: the requirements it runs after -----------------------------

_TIMESTAMPS = ("created_at", "next_attempt_at", "lease_expires_at")
_EMPTY: tuple[object, ...] = ("", {}, [])


def _empties(value: Any, ptr: str) -> Iterator[str]:
    """The pointers of every "", {} and [] in ``value`` (itself included)."""
    if isinstance(value, str | dict | list) and not value:
        yield ptr
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _empties(v, f"{ptr}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _empties(v, f"{ptr}/{i}")


def _strings(value: Any) -> Iterator[str]:
    """Every key and string value of a JSON document."""
    for _, v, _ in _walk(value):
        if isinstance(v, str):
            yield v


def _fragile(text: str) -> bool:
    """Text that stores commonly change (RDQ-RT-006): white space at either end (CHAR
    padding, trimming), a carriage return, a form that NFC normalization changes."""
    return (text != text.strip() or "\r" in text
            or unicodedata.normalize("NFC", text) != text)


def requirements_carried(
    value: object, *, envelope: bool, common: Iterable[str] = ()
) -> frozenset[str]:
    """The requirements whose values ``value`` holds: for each, the table's row for the
    loss or change of such a value (an instant with milliseconds, two attempts or more,
    an unknown field, a detail, "", {} or [], text that stores commonly change, a value
    ending with the truncation marker, a trigger of :data:`TRIGGERS`).

    ``envelope``: ``value`` is the canonical JSON object of an envelope (its fields are
    known); otherwise a bare value (text, bytes for a payload, JSON) a test puts
    somewhere. ``common``: triggers to leave out (those every test's envelope holds, which
    can order nothing). The kit runs a fixed example after the tests of the
    requirements its parameters carry, so that a defect about them fails their own
    tests first."""
    found: set[str] = set()

    def name(pattern: str, difference: str, triggers: Iterable[str] = ()) -> None:
        rule = find_rule(pattern, difference, triggers)
        if rule is not None:
            found.add(rule.requirement)

    if isinstance(value, bytes | bytearray):  # a payload
        doc: object = {"payload": base64.b64encode(bytes(value)).decode("ascii")}
    else:
        doc = value if envelope else {"x": value}
    for trigger in triggers_of(doc) - frozenset(common):
        name("", "refused", [trigger])
    for text in _strings(doc):
        if text.endswith(TRUNCATION_MARKER):
            name("/*", "marker")
        elif _fragile(text):
            name("/*", "text")
    for ptr in _empties(value, ""):
        name(pointer_pattern(ptr) if envelope else "/*", "empty-null")
        if envelope and ptr == "/headers":  # the empty map, dropped or null: headers'
            name("/headers/*", "missing")
    if not envelope or not isinstance(value, dict):
        return frozenset(found)
    for key in value:
        if key not in _ENVELOPE:
            name(pointer_pattern(f"/{key}"), "missing")
    for field in _TIMESTAMPS:
        _instant(value.get(field), f"/{field}", name)
    attempts = value.get("attempts")
    if isinstance(attempts, list):
        if len(attempts) >= 2:
            name("/attempts/*", "reordered")
        for attempt in attempts:
            if not isinstance(attempt, dict):
                continue
            for field in ("started_at", "finished_at"):
                _instant(attempt.get(field), f"/attempts/*/{field}", name)
            if any(k not in _ATTEMPT for k in attempt):
                name("/attempts/*/*", "missing")
            error = attempt.get("error")
            if isinstance(error, dict):
                if any(k not in _ERROR for k in error):
                    name("/attempts/*/error/*", "missing")
                if error.get("detail") is not None:
                    name("/attempts/*/error/detail", "missing")
    return frozenset(found)


def _instant(text: object, pattern: str, name: Any) -> None:
    """An instant with milliseconds (a store cutting them changes it)."""
    if isinstance(text, str) and not text.endswith(".000Z"):
        name(pattern, "instant")
