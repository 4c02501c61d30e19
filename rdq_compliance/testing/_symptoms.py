"""From what a failed check found to the :class:`~rdq_compliance.reporting.Symptom`
that travels with the failure to the report (root causes, issues 14 §1 and 21 §1):
a difference read back, an invalid envelope, a refusal or exception of the plugin."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime

from ..envelope._codec import to_json
from ..envelope._diagnosis import difference_class, pointer_pattern
from ..envelope._diff import diff
from ..envelope._difference import Difference
from ..envelope._json import json_equal
from ..envelope._model import Envelope
from ..envelope._text_change import text_change
from ..envelope._triggers import alike_field, has_alike_name, triggers_of
from ..envelope._validate import Violation
from ..envelope._violations import pointer_token
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from ..reporting._causes import LOST_TO_NULL, Symptom, fallback_symptom, mask

__all__ = [
    "pointer_pattern", "symptom_of", "symptom_of_exception", "symptom_of_failure",
    "symptom_of_semantics", "symptom_of_violation",
]

# A Python repr of a key or value inside a note: 'a', "it's", 'a\'b'.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
# The code points the diff shows after a non-ASCII key or value: (U+00C5), (U+0041 U+030A).
_CODE_POINTS = re.compile(r"\((?:U\+[0-9A-F]{4,6}(?: at \d+)?,? ?)+(?:\u2026 \d+ more)?\)")
_DIFF_LINES = 6


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
    moved = any(x != y for x, y in zip(e, a, strict=False))
    return all(x in e for x in a) and (len(a) < len(e) or moved)


def symptom_of(
    first: Difference, clause: str, diff_lines: list[str], *,
    expected: Envelope | None = None, actual: Envelope | None = None,
    earlier: Sequence[Envelope] = (), rewrite_ignored: bool | None = None,
) -> Symptom:
    """The symptom of a failed round trip whose first difference is ``first``; with
    the envelopes written and read, attempts that merely moved are one ``reordered``
    symptom at ``/attempts``, whatever field differs first."""
    lines = diff_lines[:_DIFF_LINES]
    if len(diff_lines) > _DIFF_LINES:
        lines.append(f"  \u2026 and {len(diff_lines) - _DIFF_LINES} more lines")
    # An earlier version read back: a rewrite ignored. Unless all it lacks is what the
    # rewrite added: a store that loses fields reads back the same (a missing difference).
    # And unless the rewrite changed one kind of thing only: a store that mangles it may
    # read back exactly the earlier version ("m " stripped to "m", "" read as null).
    # ``rewrite_ignored``: what a probe found (``Namespace._rewrite_ignored``), which
    # decides where it found anything.
    if rewrite_ignored is True or (
            rewrite_ignored is None
            and isinstance(actual, Envelope) and difference_class(first) != "missing"
            and any(e is not expected and e == actual for e in earlier)
            and expected is not None
            and len({difference_class(d) for d in diff(expected, actual)}) >= 2):
        return Symptom(pointer="/", pattern="/", kind="earlier version read back",
                       clause="C13", summary="the version written before the rewrite came back",
                       diff="\n".join(lines), difference="stale")
    if (isinstance(expected, Envelope) and isinstance(actual, Envelope)
            and first.pointer.startswith("/attempts") and _reordered(expected, actual)):
        got = [a.attempt_no for a in actual.attempts]
        want = [a.attempt_no for a in expected.attempts]
        return Symptom(pointer="/attempts", pattern="/attempts", kind="attempts reordered",
                       clause="C12", summary=f"attempts reordered: attempt_no {want} came "
                       f"back as {got}"[:200], diff="\n".join(lines), difference="reordered")
    alike = _alike(first.pointer, expected, actual)
    if alike is not None:
        return _alike_symptom(*alike, lines)
    difference = difference_class(first)
    renamed = _renamed(first, expected, actual) if difference == "missing" else ""
    if renamed:
        # A key that came back changed the way the store changes every string (U+0000
        # stripped, NFC): the one string defect (RDQ-RT-006), not a lost header.
        head = _kind(first).removesuffix(" missing")
        return Symptom(
            pointer=first.pointer or "/", pattern=pointer_pattern(first.pointer) or "/",
            kind=f"{head} renamed", clause="C4",
            summary=_short(f"{first.note} (key {renamed})"), diff="\n".join(lines),
            difference="text", change=renamed)
    merged = _merged(first, expected, actual)
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
            kind="keys merged", clause=clause, summary=_short(summary),
            diff="\n".join(lines), difference="missing")
    return Symptom(
        pointer=first.pointer or "/",
        pattern=pointer_pattern(first.pointer) or "/",
        kind=_kind(first),
        clause=clause,
        summary=_summary(first),
        diff="\n".join(lines),
        difference=difference,
        change=_change(difference, first.expected, first.actual),
    )


def _alike_symptom(at: str, key: str, lines: list[str]) -> Symptom:
    return Symptom(
        pointer=at, pattern=pointer_pattern(at),
        kind="known field read from an unknown field named like it", clause="C10",
        summary=_short(f"came back holding the value of the unknown field {key!r} beside it "
                       "(named like it but for case)"),
        diff="\n".join(lines), difference="alike-name")


def _alike(pointer: str, expected: object, actual: object) -> tuple[str, str] | None:
    """(pointer of a known field, name of an unknown field) when the known field that
    ``pointer`` is at (or inside) came back holding the value written to an unknown field
    of its object named like it but for case: a decoder or a collation that ignores case
    took one for the other (``_triggers.alike_field``), not a change of that field.
    ``expected`` and ``actual``: envelopes (models, valid or not) or their JSON."""
    if not _has_alike_name(expected):
        return None  # the common case: no name to take for another, nothing to encode
    tokens = pointer.split("/")[1:]
    levels: list[tuple[str, Collection[str]]] = [("", ENVELOPE_FIELDS)]
    if len(tokens) >= 2 and tokens[0] == "attempts" and tokens[1].isdigit():
        levels.append((f"/attempts/{tokens[1]}", ATTEMPT_FIELDS))
        if len(tokens) >= 3 and tokens[2] == "error":
            levels.append((f"/attempts/{tokens[1]}/error", ERROR_FIELDS))
    written, read = _as_json(expected), _as_json(actual)
    for prefix, known in reversed(levels):  # the innermost object first
        depth = prefix.count("/")
        obj = _value_at(written, prefix)
        if len(tokens) <= depth or not isinstance(obj, Mapping):
            continue
        field = tokens[depth]
        got = _value_at(read, f"{prefix}/{field}")
        if got is _MISSING or json_equal(obj.get(field, _MISSING), got):
            continue
        for key, value in obj.items():
            if alike_field(key, known) == field and json_equal(value, got):
                return f"{prefix}/{field}", key
    return None


def _has_alike_name(envelope: object) -> bool:
    """``_triggers.has_alike_name``, of a model too (without encoding it)."""
    if isinstance(envelope, Envelope):
        named = [(envelope.extra, ENVELOPE_FIELDS)]
        for attempt in envelope.attempts:
            named.append((attempt.extra, ATTEMPT_FIELDS))
            if attempt.error is not None:
                named.append((attempt.error.extra, ERROR_FIELDS))
        return any(alike_field(k, known) for extra, known in named for k in extra)
    return isinstance(envelope, Mapping) and has_alike_name(envelope)


def _as_json(envelope: object) -> object:
    """An envelope's JSON (a model the codec cannot encode, an invalid read: the model
    itself, whose fields ``_value_at`` reads)."""
    if isinstance(envelope, Envelope):
        try:
            return to_json(envelope)
        except Exception:
            return envelope
    return envelope


def _change(difference: str, expected: object, actual: object) -> str:
    """The nature of the change (``Symptom.change``) of a difference of that class."""
    if difference in ("text", "cut", "marker") and isinstance(expected, str) and isinstance(
            actual, str):
        return text_change(expected, actual)
    if difference == "empty-null":
        return "empty read as null" if actual is None else "null read as empty"
    if difference in ("type", "changed") and actual is None and expected is not None:
        return LOST_TO_NULL  # a value lost (a field the store does not keep)
    return ""


def _keys(container: object) -> list[str]:
    """The keys of a mapping, or the unknown fields of a model object."""
    if isinstance(container, Mapping):
        return [str(k) for k in container]
    extra = getattr(container, "extra", None)
    return [str(k) for k in extra] if isinstance(extra, Mapping) else []


@dataclass(frozen=True)
class _Around:
    """The objects (written, read) holding the key a difference is about, their keys,
    and that key as written."""

    written: object
    read: object
    written_keys: list[str]
    read_keys: list[str]
    key: str


def _around(first: Difference, expected: object, actual: object) -> _Around | None:
    if expected is None or actual is None:
        return None
    parent, _, token = first.pointer.rpartition("/")
    written, read = _value_at(expected, parent), _value_at(actual, parent)
    w_keys, r_keys = _keys(written), _keys(read)
    key = next((k for k in w_keys if pointer_token(k) == token), None)
    return None if key is None else _Around(written, read, w_keys, r_keys, key)


def _renamed(first: Difference, expected: object, actual: object) -> str:
    """For a key missing from what was read: the nature of the change
    (``envelope._text_change``) that turns it into a key read that was not written, if
    one does; else ""."""
    around = _around(first, expected, actual) if first.kind == "missing" else None
    if around is None or around.key in around.read_keys:
        return ""
    lost, written, read = around.key, around.written_keys, around.read_keys
    for new in (k for k in read if k not in written):
        nature = text_change(lost, new)
        if nature not in _NOT_RENAMED:
            return nature
    return ""


def _merged(
    first: Difference, expected: object, actual: object
) -> tuple[str, str, str] | None:
    """When the key ``first`` is about (missing, or holding another value) and keys
    written beside it equal to it but for case or trailing spaces came back as one: which
    key holds whose value (one row of a side table keyed in a collation that ignores them,
    upserted: MySQL's utf8mb4_bin is PAD SPACE): (the key that came back, the key whose
    value it holds, "" or the nature of the change of that value when the store changed
    it too: ``envelope._text_change``); else None."""
    around = _around(first, expected, actual) if first.kind in (
        "missing", "changed", "type") else None
    if around is None:
        return None
    written, read, key = around.written, around.read, around.key
    w_keys, r_keys = around.written_keys, around.read_keys

    def fold(k: str) -> str:
        return k.casefold().rstrip(" ")

    def at(obj: object, k: str) -> object:
        return _value_at(obj, f"/{pointer_token(k)}")

    group = [k for k in w_keys if fold(k) == fold(key)]
    if len(group) < 2 or all(k in r_keys for k in group):
        return None
    for kept in (k for k in group if k in r_keys):
        got = at(read, kept)
        source = next((k for k in group if k != kept and got is not _MISSING
                       and json_equal(at(written, k), got)), None)
        if source is not None:
            return kept, source, ""
    for kept in (k for k in group if k in r_keys):
        # The keys became one because the store changes every string (trailing spaces
        # trimmed, keys and values alike): the string defect (RDQ-RT-006), as elsewhere.
        got = at(read, kept)
        for source in group:
            value = at(written, source)
            if isinstance(value, str) and isinstance(got, str):
                nature = text_change(value, got)
                if nature not in ("", "changed"):
                    return kept, source, nature
    return None


_NOT_RENAMED = frozenset({"", "changed", "lower-cased", "upper-cased", "case-folded",
                          "cut short", "extended"})
"""Changes of a key that are the map's defect, not the string's: a map that folds the
case of its keys (HTTP-style headers, RDQ-RT-009) or cuts them to a length loses keys;
a key merely unlike the one lost is another key."""


def symptom_of_semantics(difference: str, kind: str, summary: str) -> Symptom:
    """The symptom of a read that found the wrong thing for what the test did before it
    (``Namespaces.semantics``): an envelope after its namespace was dropped, another
    namespace's envelope, nothing after another id was written. ``difference`` is the
    class the diagnosis table maps to a storage requirement."""
    return Symptom(pointer="/", pattern="/", kind=f"{kind} ({difference})", clause="",
                   summary=_short(summary), diff=summary, difference=difference)


_MISSING = object()


def _value_at(obj: object, pointer: str) -> object:
    """The value at a JSON pointer of a model (fields, then unknown fields in
    ``extra``), a mapping or a sequence; ``_MISSING`` where there is none."""
    for token in pointer.split("/")[1:]:
        if isinstance(obj, Mapping):
            obj = obj.get(token, _MISSING)
        elif isinstance(obj, list | tuple):
            obj = obj[int(token)] if token.isdigit() and int(token) < len(obj) else _MISSING
        elif is_dataclass(obj) and token in {f.name for f in fields(obj)}:
            obj = getattr(obj, token)
        elif isinstance(extra := getattr(obj, "extra", None), Mapping):
            obj = extra.get(token, _MISSING)
        else:
            return _MISSING
        if obj is _MISSING:
            return obj
    return obj


def _what_differs(pointer: str, expected: object, actual: object) -> str:
    """The class of an invalid value read where ``expected`` was written, when it says
    more than "invalid": null for an empty map or payload (RDQ-RT-009's and RDQ-RT-008's,
    not the model's types), an integer pushed out of range (a number changed), an aware
    instant off by microseconds (an instant changed). A naive datetime or another type
    for an equal value (1.0 for 1) stays "invalid" (RDQ-RT-004)."""
    e, a = _value_at(expected, pointer), _value_at(actual, pointer)
    if e is _MISSING or a is _MISSING:
        return "invalid"
    found = difference_class(Difference(pointer, "changed", e, a, ""))
    if found == "number" and e == a:  # 1.0 or Decimal(1) for 1: the type, not the value
        return "invalid"
    if found in ("empty-null", "number") or (found == "bytes" and a is None):
        return found
    if found == "instant" and isinstance(a, datetime) and a.tzinfo is not None:
        return found
    return "invalid"


def symptom_of_violation(
    first: Violation, clause: str, lines: list[str], *,
    expected: object = None, actual: object = None,
) -> Symptom:
    """The symptom of a read that returned an invalid envelope (RDQ-RT-004): its first
    violation, e.g. ``/created_at`` ``invalid: TIMESTAMP_NOT_UTC`` (a naive datetime);
    with the envelope written and the one read, classed by what differs where that
    tells more (:func:`_what_differs`): models, or the canonical JSON written and the
    wire JSON a testee returned."""
    shown = lines[:_DIFF_LINES]
    if len(lines) > _DIFF_LINES:
        shown.append(f"  \u2026 and {len(lines) - _DIFF_LINES} more lines")
    alike = _alike(first.pointer, expected, actual) if first.pointer else None
    if alike is not None:  # 'ID': {} read into id: the unknown field's defect (C10)
        return _alike_symptom(*alike, shown)
    message = first.message if len(first.message) <= 160 else first.message[:159] + "\u2026"
    difference, change = "invalid", ""
    if expected is not None and actual is not None and first.pointer:
        difference = _what_differs(first.pointer, expected, actual)
        change = _change(difference, _value_at(expected, first.pointer),
                         _value_at(actual, first.pointer))
    return Symptom(
        pointer=first.pointer or "/",
        pattern=pointer_pattern(first.pointer) or "/",
        kind=f"invalid: {first.code}",
        clause=clause,
        summary=f"returned invalid ({first.code}): {message}",
        diff="\n".join(shown),
        difference=difference,
        # An invalid read is the defect its violation names (a message too long, a naive
        # instant), wherever it shows.
        change=first.code if difference == "invalid" else change,
    )


# The kit's own failure messages (testing/_handle.py, _namespace_handle.py): the second line is
# "plugin 'label': <operation>(…) … refused … with StorageError(code='X', message='…')"
# or "plugin 'label': <operation>(…) … raised Type: message".
_PLUGIN_LINE = re.compile(r"^plugin '(?:[^'\\]|\\.)*': (?P<body>.*)$", re.M)
_OPERATION = re.compile(r"^(?P<op>[\w.]+)[( ]")
_STORAGE_ERROR = re.compile(r"StorageError\(code=(?:<[\w.]+: )?'(?P<code>[^']*)'>?, "
                            r"message=(?P<msg>.*?)\)"
                            r"(?: \(C17|;|, whose|$)")
_REFUSED_CODE = re.compile(r"\brefused with code (?:<[\w.]+: )?'(?P<code>[^']*)'>?")
_RAISED = re.compile(r"\braised (?P<type>[\w.]+): (?P<msg>.*)$")


def _short(text: str) -> str:
    return text if len(text) <= 160 else text[:159] + "\u2026"


def _unquote(text: str) -> str:
    """The message of ``StorageError(..., message='…')`` without its repr quotes."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _triggers(envelopes: Iterable[object]) -> str:
    found: set[str] = set()
    for doc in envelopes:
        found |= triggers_of(doc)
    return " ".join(sorted(found))


def symptom_of_failure(message: str, envelopes: Iterable[object] = ()) -> Symptom:
    """The symptom of a failed check that found no difference: a refusal of a valid
    envelope (by operation, C17 code and masked message), an exception of the plugin
    (by operation, type and masked message) with the value classes of ``envelopes``
    (canonical JSON) that may trigger it, or any other failure by its masked line."""
    m = _PLUGIN_LINE.search(message)
    if m is None:
        return fallback_symptom(message)
    body = m.group("body")
    op_match = _OPERATION.match(body)
    op = op_match.group("op") if op_match else "call"
    lines = [ln for ln in message.splitlines() if ln.strip()][1:_DIFF_LINES + 1]
    err = _STORAGE_ERROR.search(body)
    if err is not None and ("refused" in body or "raised" in body):
        text = _unquote(err.group("msg"))
        return Symptom(
            pointer="/", pattern="/", clause="C17", diff="\n".join(lines),
            summary=_short(f"{op} refused with {err.group('code')}: {text}"),
            # Refusals group by operation and C17 code (issue 21 §1): one store refusing
            # for one reason answers several checks with different words around it.
            kind=f"{op} refused: StorageError {err.group('code')}",
            difference="refused", triggers=_triggers(envelopes),
        )
    code = _REFUSED_CODE.search(body)
    if code is not None:
        return Symptom(
            pointer="/", pattern="/", clause="C17", diff="\n".join(lines),
            summary=_short(body), kind=f"{op} refused: StorageError {code.group('code')}",
            difference="refused", triggers=_triggers(envelopes),
        )
    raised = _RAISED.search(body)
    if raised is not None:
        return Symptom(
            pointer="/", pattern="/", clause="", diff="\n".join(lines),
            summary=_short(f"{op} raised {raised.group('type')}: {raised.group('msg')}"),
            kind=f"{op} raised {raised.group('type')}: {mask(raised.group('msg'))}"[:200],
            difference="raised", triggers=_triggers(envelopes),
        )
    return Symptom(pointer="/", pattern="/", kind=mask(body)[:200], clause="",
                   summary=_short(body), diff="\n".join(lines))


def symptom_of_exception(exc: BaseException) -> Symptom:
    """The symptom of any failure: a check's own (its difference), else one built from
    its message (:func:`symptom_of_failure`)."""
    symptom = getattr(exc, "symptom", None)
    if isinstance(symptom, Symptom):
        return symptom
    envelopes = getattr(exc, "envelopes", ())
    text = str(exc)
    if _PLUGIN_LINE.search(text) is None:  # not the kit's message: the type tells apart
        text = f"{type(exc).__name__}: {text}"
    return symptom_of_failure(text, envelopes if isinstance(envelopes, tuple) else ())
