"""From what a failed check found to the :class:`~rdq_compliance.reporting._symptom.Symptom`
that travels with the failure to the report (root causes, issues 14 §1 and 21 §1):
a difference read back, an invalid envelope, a refusal or exception of the plugin."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from ..envelope._clauses import clauses_for_pointer
from ..envelope._codes import ViolationCode
from ..envelope._diagnosis import difference_class, pointer_pattern
from ..envelope._diff import diff
from ..envelope._difference import Difference
from ..envelope._json import json_equal
from ..envelope._model import Attempt, Envelope
from ..envelope._text_change import text_change
from ..envelope._validate import Violation
from ..reporting._symptom import LOST_TO_NULL, NULL_OMITTED, Symptom
from ._symptom_keys import (
    MISSING,
    alike_read,
    alike_symptom,
    merged_keys,
    renamed_key,
    restyled_key,
    value_at,
)
from ._symptom_messages import DIFF_LINES, short, symptom_of_exception, symptom_of_failure

__all__ = [
    "kept_in_place", "pointer_pattern", "symptom_of", "symptom_of_exception", "symptom_of_failure",
    "symptom_of_semantics", "symptom_of_violation",
]

# A Python repr of a key or value inside a note: 'a', "it's", 'a\'b'.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
# The code points the diff shows after a non-ASCII key or value: (U+00C5), (U+0041 U+030A).
_CODE_POINTS = re.compile(r"\((?:U\+[0-9A-F]{4,6}(?: at \d+)?,? ?)+(?:\u2026 \d+ more)?\)")


def _kind(d: Difference) -> str:
    if d.kind == "changed" and isinstance(d.expected, datetime) and isinstance(
        d.actual, datetime
    ):
        return "instant changed"
    head = _CODE_POINTS.sub("", _QUOTED.sub("", d.note)).split(":", 1)[0]
    return " ".join(head.split())


def _summary(d: Difference) -> str:
    if isinstance(d.expected, datetime) and isinstance(d.actual, datetime) and d.kind == "changed":
        try:
            ms = (d.actual - d.expected).total_seconds() * 1000
        except TypeError:  # naive against aware: no delta to show
            return d.note
        shown = f"{ms:+,.0f}" if ms == int(ms) else f"{ms:+,.3f}"
        return f"instant changed by {shown} ms"
    return d.note if len(d.note) <= 160 else d.note[:159] + "\u2026"


def _reordered(expected: Envelope, actual: Envelope) -> bool:
    """The attempts came back in another order, or with some merged: every attempt read
    is one written, and the list differs (RDQ-RT-005, not the fields it moved)."""
    e, a = list(expected.attempts), list(actual.attempts)
    if e == a or len(e) < 2 or not a:
        return False
    # Equal attempts (the structural diff finds nothing) share attempt_no and started_at:
    # matched within those buckets, thousands of attempts cost no more than a diff.
    buckets: dict[object, list[Attempt]] = {}
    for x in e:
        buckets.setdefault(_bucket(x), []).append(x)
    if len(a) == len(e):
        # the same attempts in another order; not two read as one written (a store that
        # drops unknown fields reads two attempts differing only in them as equal)
        for x in a:
            left = buckets.get(_bucket(x), [])
            i = next((i for i, y in enumerate(left) if x == y), -1)
            if i < 0:
                return False
            del left[i]
        return True
    moved = any(x != y for x, y in zip(e, a, strict=False))
    return all(x in buckets.get(_bucket(x), ()) for x in a) and (len(a) < len(e) or moved)


def _bucket(attempt: Attempt) -> object:
    key = (attempt.attempt_no, attempt.started_at)
    try:
        hash(key)
    except TypeError:  # a plugin's odd value: equal to no attempt written
        return None
    return key


def _cut_history(expected: Envelope, actual: Envelope) -> str:
    """Which end of the history came back alone ("first", "last"), or "": a store that
    keeps N attempts (a capped list, LTRIM) loses the others, it moves none."""
    e, a = expected.attempts, actual.attempts
    if not a or len(a) >= len(e):
        return ""
    numbers = {x.attempt_no for x in a}
    if len(numbers) == len(a) == len({x.attempt_no for x in e}):
        return ""  # one attempt per attempt_no: records merged by it, not a cut
    return "first" if e[:len(a)] == a else "last" if e[-len(a):] == a else ""


def symptom_of(
    first: Difference, clause: str, diff_lines: list[str], *,
    expected: Envelope | None = None, actual: Envelope | None = None,
    earlier: Sequence[Envelope] = (), rewrite_ignored: bool | None = None,
    found: Sequence[Difference] | None = None,
) -> Symptom:
    """The symptom of a failed round trip whose first difference is ``first``; with
    the envelopes written and read, attempts that merely moved are one ``reordered``
    symptom at ``/attempts``, whatever field differs first. ``found``: every difference
    of the two envelopes, when the caller has them (else diffed here, once, if needed)."""
    every: list[Sequence[Difference]] = [] if found is None else [found]

    def differences() -> Sequence[Difference]:
        if not every:
            both = isinstance(expected, Envelope) and isinstance(actual, Envelope)
            every.append(diff(expected, actual) if both else [])
        return every[0]

    lines = diff_lines[:DIFF_LINES]
    if len(diff_lines) > DIFF_LINES:
        lines.append(f"  \u2026 and {len(diff_lines) - DIFF_LINES} more lines")
    # An earlier version read back: a rewrite ignored. Unless all it lacks is what the
    # rewrite added: a store that loses fields reads back the same (a missing difference).
    # And unless the rewrite changed one kind of thing only: a store that mangles it may
    # read back exactly the earlier version ("m " stripped to "m", "" read as null).
    # ``rewrite_ignored``: what a probe found (``Namespace._rewrite_ignored``), which
    # decides where it found anything.
    def whole() -> bool:  # the read is an earlier version, every field of it
        return isinstance(actual, Envelope) and any(
            e is not expected and e == actual for e in earlier)

    if (rewrite_ignored is True and whole()) or (
            rewrite_ignored is None and difference_class(first) != "missing"
            and expected is not None and whole()
            and len({difference_class(d) for d in differences()}) >= 2):
        return Symptom(pointer="/", pattern="/", kind="earlier version read back",
                       clause="C13", summary="the version written before the rewrite came back",
                       diff="\n".join(lines), difference="stale")
    if rewrite_ignored is True or (difference_class(first) == "unexpected" and _left_behind(
            differences(), expected, earlier)):
        # Parts of the earlier version kept beside the rewrite (HSET without DEL, attempt
        # rows never deleted) or in its place (an upsert that leaves created_at): the
        # rewrite's defect wherever they show, one cause with a rewrite ignored, not
        # "unexpected" or "instant changed" at each place.
        return Symptom(pointer=first.pointer or "/", pattern=pointer_pattern(first.pointer) or "/",
                       kind="kept from an earlier version", clause="C13",
                       summary=short("kept from the version written before the rewrite: "
                                     + _summary(first)),
                       diff="\n".join(lines), difference="stale")
    if (isinstance(expected, Envelope) and isinstance(actual, Envelope)
            and first.pointer.startswith("/attempts")
            and (kept := _cut_history(expected, actual))):
        n, of = len(actual.attempts), len(expected.attempts)
        return Symptom(pointer="/attempts", pattern="/attempts", kind="attempts lost",
                       clause="C12", summary=f"attempts lost: {of:,} written, only the {kept} "
                       f"{n:,} came back", diff="\n".join(lines), difference="missing")
    if (isinstance(expected, Envelope) and isinstance(actual, Envelope)
            and first.pointer.startswith("/attempts") and _reordered(expected, actual)):
        got = [a.attempt_no for a in actual.attempts]
        want = [a.attempt_no for a in expected.attempts]
        return Symptom(pointer="/attempts", pattern="/attempts", kind="attempts reordered",
                       clause="C12", summary=f"attempts reordered: attempt_no {want} came "
                       f"back as {got}"[:200], diff="\n".join(lines), difference="reordered")
    moved = _items_moved(first.pointer, expected, actual)
    if moved is not None:
        at, written, read = moved
        return Symptom(pointer=at, pattern=pointer_pattern(at), kind="array items reordered",
                       clause="C10", summary=short(f"array items reordered or repeats dropped: "
                                                   f"{written!r} came back as {read!r}"),
                       diff="\n".join(lines), difference="items-reordered")
    alike = alike_read(first.pointer, expected, actual)
    if alike is not None:
        return alike_symptom(*alike, lines)
    difference = difference_class(first)
    renamed = renamed_key(first, expected, actual) if difference == "missing" else ""
    if renamed:
        # A key that came back changed the way the store changes every string (U+0000
        # stripped, NFC): the one string defect (RDQ-RT-006), not a lost header.
        head = _kind(first).removesuffix(" missing")
        return Symptom(
            pointer=first.pointer or "/", pattern=pointer_pattern(first.pointer) or "/",
            kind=f"{head} renamed", clause="C4",
            summary=short(f"{first.note} (key {renamed})"), diff="\n".join(lines),
            difference="text", change=renamed)
    restyled = (restyled_key(first, expected, actual) if difference == "missing" and (
        _any_json(first.pointer) or first.pointer == "/payload_ref") else None)
    if restyled is not None:
        # A deep key transform (snake_case, camelCase, lower case) of unknown fields and
        # detail renames keys at every level: one defect, whichever level shows it.
        lost, new, nature = restyled
        return Symptom(
            pointer=first.pointer, pattern=pointer_pattern(first.pointer),
            kind="key restyled", clause="C10", diff="\n".join(lines),
            summary=short(f"key {lost!r} came back as {new!r} ({nature}), its value kept"),
            difference="key-restyled", change=nature)
    merged = merged_keys(first, expected, actual)
    if merged is not None and merged[2]:
        return Symptom(
            pointer=first.pointer or "/", pattern=pointer_pattern(first.pointer) or "/",
            kind=_kind(first), clause="C4", summary=_summary(first), diff="\n".join(lines),
            difference="text", change=merged[2])
    if merged is not None:
        # Two keys became one: a key lost (the place's requirement), not a changed value.
        kept, source, _ = merged
        held = (f"came back holding the value written to {source!r} (the names are equal "
                "but for case or trailing spaces)")
        summary = (f"{_summary(first)}; {kept!r}, written beside it, {held}"
                   if first.kind == "missing" else f"{kept!r} {held}")
        return Symptom(
            pointer=first.pointer or "/", pattern=pointer_pattern(first.pointer) or "/",
            kind="keys merged", clause=clause, summary=short(summary),
            diff="\n".join(lines), difference="missing")
    if difference == "text" and _any_json(first.pointer) and _json_encoded(
            first.expected, first.actual):
        # A place that holds any JSON value kept as its JSON text (a TEXT column never
        # parsed back): the place's defect, as for an object read back as a string.
        difference = "type"
    decoded = (first.kind not in ("missing", "unexpected") and _any_json(first.pointer)
               and _json_encoded(first.actual, first.expected))
    if decoded:
        # The other way round: a string that holds JSON read back as that JSON ("5" as 5,
        # "null" as null, '"a"' as "a": a store that tries json.loads on what it reads).
        difference = "type"
    change = "JSON-decoded" if decoded else _change(difference, first.expected, first.actual)
    if change == NULL_OMITTED and not _only_nulls_lost(differences()):
        change = ""  # a store that loses fields, the null ones among them
    return Symptom(
        pointer=first.pointer or "/",
        pattern=pointer_pattern(first.pointer) or "/",
        kind=_kind(first),
        clause=clause,
        summary=short(f"a string holding JSON came back as that JSON: {first.expected!r} "
                      f"read as {first.actual!r}") if decoded else _summary(first),
        diff="\n".join(lines),
        difference=difference,
        change=change,
    )


def _items_moved(pointer: str, expected: object, actual: object
                 ) -> tuple[str, list[object], list[object]] | None:
    """The array of scalars inside unknown fields or ``detail`` at ``pointer`` or holding
    it whose items came back in another order or with repeats dropped, the same values
    otherwise (a DynamoDB String Set, a Redis SET): (its pointer, as written, as read);
    else None. Arrays of arrays or objects are left to the diff (a set holds scalars)."""
    if not (isinstance(expected, Envelope) and isinstance(actual, Envelope)):
        return None
    for at in (pointer, pointer.rpartition("/")[0]):
        if not at or at == "/attempts":
            return None
        written, read = value_at(expected, at), value_at(actual, at)
        if isinstance(written, list) and isinstance(read, list):
            items, back = _items(written), _items(read)
            if (items is not None and back is not None and items != back
                    and set(items) == set(back)
                    and (Counter(items) == Counter(back) or len(set(back)) == len(back))):
                return at, written, read
            return None
    return None


def _items(values: list[object]) -> list[tuple[str, object]] | None:
    """The items of an array of scalars as a set compares them (numbers by value: -0.0
    as 0, as a set of numbers keeps one), else None."""
    items: list[tuple[str, object]] = []
    for v in values:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            items.append((type(v).__name__, v))
        elif isinstance(v, int | float):
            items.append(("number", v))
        else:
            return None
    return items


def _left_behind(found: Sequence[Difference], expected: Envelope | None,
                 earlier: Sequence[Envelope], kinds: tuple[str, ...] = ("unexpected",)
                 ) -> bool:
    """Everything the read holds that was not written (each key, field or item ``found``
    calls unexpected; with ``kinds``, also each value changed) is what an earlier version
    of the id held at that place (not always the same one: a store that merges every
    rewrite keeps keys of each)."""
    extra = [d for d in found if d.kind in kinds]
    return bool(extra) and all(
        any(json_equal(value_at(version, d.pointer), d.actual)
            for version in earlier if version is not expected) for d in extra)


def kept_in_place(found: Sequence[Difference], expected: Envelope,
                  earlier: Sequence[Envelope]) -> bool:
    """Every value the read changed is what an earlier version held there (an upsert
    that leaves ``created_at``); a store that mangles values can do that too ("" read as
    null), so only a probe can tell (``Namespace._rewrite_ignored``)."""
    return any(d.kind in ("changed", "type") for d in found) and _left_behind(
        found, expected, earlier, ("changed", "type", "unexpected"))


def _only_nulls_lost(found: Sequence[Difference]) -> bool:
    """Every field the read lost held null (not only the first difference's)."""
    missing = [d for d in found if d.kind == "missing"]
    return bool(missing) and all(d.expected is None for d in missing)


def _any_json(pointer: str) -> bool:
    """``pointer`` is at a place that holds any JSON value: error.detail or an unknown
    field (its pattern has a generated key beyond the attempt's index), not a header."""
    tokens = pointer_pattern(pointer).split("/")[1:]
    if tokens[:2] == ["attempts", "*"]:
        tokens = tokens[2:]
    return bool(tokens) and tokens[0] != "headers" and (
        "*" in tokens or tokens[:2] == ["error", "detail"])


def _json_encoded(expected: object, actual: object) -> bool:
    """``actual`` is the JSON text of ``expected`` (not itself a string equal to it)."""
    if not isinstance(actual, str) or actual == expected:
        return False
    try:
        return json_equal(json.loads(actual), expected)
    except ValueError:
        return False


def _change(difference: str, expected: object, actual: object) -> str:
    """The nature of the change (``Symptom.change``) of a difference of that class."""
    if difference in ("text", "cut", "marker") and isinstance(expected, str) and isinstance(
            actual, str):
        change = text_change(expected, actual)
        # A cut that also reads as another change (the astral character right before
        # the marker cut away) is a cut, as every other cut of that store.
        return "cut short" if difference == "cut" and change != "cut at U+0000" else change
    if difference == "empty-null":
        return ("empty read as null" if actual is None else "null read as empty"
                if expected is None else f"{json.dumps(expected)} read as {json.dumps(actual)}")
    if difference == "missing" and expected is None:
        return NULL_OMITTED  # a field that held null did not come back
    if difference in ("type", "changed") and actual is None and expected is not None:
        return LOST_TO_NULL  # a value lost (a field the store does not keep)
    if difference == "type" and _json_encoded(expected, actual):
        return "JSON-encoded"
    if difference == "boolean":
        return "boolean read as 0/1"
    return ""


def symptom_of_semantics(difference: str, kind: str, summary: str) -> Symptom:
    """The symptom of a read that found the wrong thing for what the test did before it
    (``Namespaces.semantics``): an envelope after its namespace was dropped, another
    namespace's envelope, nothing after another id was written. ``difference`` is the
    class the diagnosis table maps to a storage requirement."""
    return Symptom(pointer="/", pattern="/", kind=f"{kind} ({difference})", clause="",
                   summary=short(summary), diff=summary, difference=difference)


_SIZE_LIMITS = frozenset({ViolationCode.MESSAGE_TOO_LONG, ViolationCode.STACK_TOO_LONG,
                          ViolationCode.PAYLOAD_TOO_LARGE})
"""Violations of a size limit (C1, C2): a store that grows what it reads breaks them."""
_FREE_TEXT_RULES = frozenset({ViolationCode.LEASE_EXPIRED_ERROR})
"""Violations of a rule on a free-text field's value (C4): a store that changes every
string (case folded, trimmed) breaks them where the rule applies."""


def _what_differs(pointer: str, expected: object, actual: object, code: str = "") -> str:
    """The class of an invalid value read where ``expected`` was written, when it says
    more than "invalid": null for an empty map or payload (RDQ-RT-009's and RDQ-RT-008's,
    not the model's types), an integer pushed out of range (a number changed), an aware
    instant off by microseconds (an instant changed), free text changed the way a store
    changes every string where a rule of ``code`` fixes its value (rdq.LeaseExpired
    lower-cased: that store's string defect), a string or payload a store grew past a
    size limit (``code``; re-read as Latin-1, the payload as text: that store's defect).
    A naive datetime, another type for an equal value (1.0 for 1) or an id changed into
    one that is not canonical stays "invalid" (RDQ-RT-004)."""
    e, a = value_at(expected, pointer), value_at(actual, pointer)
    if e is MISSING or a is MISSING:
        return "invalid"
    found = difference_class(Difference(pointer, "changed", e, a, ""))
    if found == "number" and e == a:  # 1.0 or Decimal(1) for 1: the type, not the value
        return "invalid"
    if found in ("empty-null", "number") or (found == "bytes" and a is None):
        return found
    if found == "instant" and (a is None or (isinstance(a, datetime) and a.tzinfo is not None)):
        return found
    if found == "text" and code in _FREE_TEXT_RULES and _mangled(e, a):
        return found
    if code in _SIZE_LIMITS and _grown(found, e, a):
        return found
    return "invalid"


def _grown(found: str, expected: object, actual: object) -> bool:
    """A string changed in a way a store changes every string (a named nature of
    :func:`text_change`), or a payload that came back longer."""
    if found == "text":
        return _mangled(expected, actual)
    return (found == "bytes" and isinstance(expected, bytes | bytearray)
            and isinstance(actual, bytes | bytearray) and len(actual) > len(expected))


def _mangled(expected: object, actual: object) -> bool:
    """``actual`` is the string ``expected`` changed in a way a store changes every
    string (re-read as Latin-1, say: a named nature of :func:`text_change`)."""
    return (isinstance(expected, str) and isinstance(actual, str)
            and text_change(expected, actual) not in ("", "changed"))


def _first_grown(expected: object, actual: object) -> str | None:
    """For an envelope that came back too large: the pointer of the first string or
    payload the store grew (:func:`_grown`), else None."""
    try:
        found = diff(expected, actual)
    except Exception:  # a read the diff cannot walk: say nothing more than "invalid"
        return None
    return next((d.pointer for d in found
                 if _grown(difference_class(d), d.expected, d.actual)), None)


def symptom_of_violation(
    first: Violation, clause: str, lines: list[str], *,
    expected: object = None, actual: object = None,
) -> Symptom:
    """The symptom of a read that returned an invalid envelope (RDQ-RT-004): its first
    violation, e.g. ``/created_at`` ``invalid: TIMESTAMP_NOT_UTC`` (a naive datetime);
    with the envelope written and the one read, classed by what differs where that
    tells more (:func:`_what_differs`): models, or the canonical JSON written and the
    wire JSON a testee returned."""
    shown = lines[:DIFF_LINES]
    if len(lines) > DIFF_LINES:
        shown.append(f"  \u2026 and {len(lines) - DIFF_LINES} more lines")
    alike = alike_read(first.pointer, expected, actual) if first.pointer else None
    if alike is not None:  # 'ID': {} read into id: the unknown field's defect (C10)
        return alike_symptom(*alike, shown)
    message = first.message if len(first.message) <= 160 else first.message[:159] + "\u2026"
    difference, change = "invalid", ""
    at = first.pointer
    if expected is not None and actual is not None and not at and first.code in _SIZE_LIMITS:
        at = _first_grown(expected, actual) or ""
        if not at and isinstance(expected, Envelope) and isinstance(actual, Envelope):
            # Too large, and nothing grown in place: what the store added (MongoDB's _id)
            # is the defect, as in every other read; the envelope written was within C2.
            found = diff(expected, actual)
            added = next((d for d in found if d.kind == "unexpected"), None)
            if added is not None:
                return symptom_of(added, clauses_for_pointer(added), lines,
                                  expected=expected, actual=actual, found=found)
    if expected is not None and actual is not None and at:
        difference = _what_differs(at, expected, actual, first.code)
        change = _change(difference, value_at(expected, at), value_at(actual, at))
    shown_at = at if difference != "invalid" else first.pointer
    return Symptom(
        pointer=shown_at or "/",
        pattern=pointer_pattern(shown_at) or "/",
        kind=f"invalid: {first.code}",
        clause=clause,
        summary=f"returned invalid ({first.code}): {message}",
        diff="\n".join(shown),
        difference=difference,
        # An invalid read is the defect its violation names (a message too long, a naive
        # instant), wherever it shows.
        change=first.code if difference == "invalid" else change,
    )


