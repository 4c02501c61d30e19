"""Structural diff of envelopes: what a plugin returned against what was written.

Each difference names the JSON pointer of the field as it appears on the wire
(unknown fields at the pointer of the object they belong to) and says precisely
what differs, so a failing round trip reads like a bug report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from . import _model
from ._deep import short_repr
from ._json import json_equal
from ._model import Attempt, Envelope, ErrorInfo, Outcome, Status
from ._violations import pointer_token
from ._wire import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    datetime_problem,
    format_timestamp,
)

__all__ = ["Difference", "DifferenceKind", "diff", "format_diff", "show_text"]

DifferenceKind = Literal["changed", "missing", "unexpected", "type", "length"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference at ``pointer``; ``expected``/``actual`` are the values there
    (None for the absent side of missing/unexpected)."""

    pointer: str
    kind: DifferenceKind
    expected: Any
    actual: Any
    note: str

    def __str__(self) -> str:
        return _format_line(self)


def diff(expected: object, actual: object) -> list[Difference]:
    """Every difference between ``expected`` and ``actual`` (models or JSON values)."""
    out: list[Difference] = []
    if expected is actual:
        return out
    if isinstance(expected, Envelope | Attempt | ErrorInfo):
        if type(actual) is not type(expected):
            out.append(_type_diff("", expected, actual, type(expected).__name__))
        elif isinstance(expected, Envelope):
            _envelope(expected, actual, out)  # type: ignore[arg-type]
        elif isinstance(expected, Attempt):
            _attempt(expected, actual, "", out)  # type: ignore[arg-type]
        else:
            _error(expected, actual, "", out)  # type: ignore[arg-type]
    else:
        _json(expected, actual, "", out)
    return out


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


# -- models ----------------------------------------------------------------------


def _envelope(e: Envelope, a: Envelope, out: list[Difference]) -> None:
    _fields(e, a, "", _ENVELOPE_COMPARE, out)


def _fields(
    e: Envelope | Attempt | ErrorInfo,
    a: Envelope | Attempt | ErrorInfo,
    ptr: str,
    compare: _Fields,
    out: list[Difference],
) -> None:
    """Each known field in the spec's order, then the unknown fields (``extra``)."""
    for name, token, check in compare:
        check(getattr(e, name), getattr(a, name), ptr + token, out)  # "" + token is token
    _extra(e.extra, a.extra, ptr, out)


def _attempts(e: Sequence[Attempt], a: object, ptr: str, out: list[Difference]) -> None:
    if not isinstance(a, tuple | list):
        out.append(_type_diff(ptr, e, a, "a tuple of Attempt"))
        return
    if len(e) != len(a):
        out.append(_length_change(ptr, e, a, "attempts", "attempt"))
    for i, (ea, aa) in enumerate(zip(e, a, strict=False)):
        if ea is aa:
            continue
        sub = f"{ptr}/{i}"
        if type(aa) is not Attempt or type(ea) is not Attempt:
            out.append(_type_diff(sub, ea, aa, "Attempt"))
        else:
            _attempt(ea, aa, sub, out)
    if len(e) != len(a):
        out.extend(_surplus(ptr, e, a, "attempt"))


def _length_change(
    ptr: str, e: Sequence[Any], a: Sequence[Any], what: str, noun: str
) -> Difference:
    return Difference(
        ptr,
        "length",
        len(e),
        len(a),
        f"{what} length changed: expected {_n(len(e), noun)}, got {len(a)}",
    )


def _surplus(ptr: str, e: Sequence[Any], a: Sequence[Any], item: str) -> list[Difference]:
    """The items past the shorter sequence: missing from ``a`` or unexpected in it."""
    missing = [
        Difference(f"{ptr}/{i}", "missing", e[i], None, f"{item} missing")
        for i in range(len(a), len(e))
    ]
    return missing + [
        Difference(f"{ptr}/{i}", "unexpected", None, a[i], f"unexpected {item}")
        for i in range(len(e), len(a))
    ]


def _attempt(e: Attempt, a: Attempt, ptr: str, out: list[Difference]) -> None:
    _fields(e, a, ptr, _ATTEMPT_COMPARE, out)


def _error_or_null(e: ErrorInfo | None, a: object, ptr: str, out: list[Difference]) -> None:
    if e is None or a is None:
        if e is not a:
            out.append(
                Difference(
                    ptr,
                    "changed",
                    e,
                    a,
                    "error changed: expected "
                    + ("null, got an error object" if e is None else "an error object, got null"),
                )
            )
    elif type(a) is not ErrorInfo or type(e) is not ErrorInfo:
        out.append(_type_diff(ptr, e, a, "ErrorInfo"))
    else:
        _error(e, a, ptr, out)


def _error(e: ErrorInfo, a: ErrorInfo, ptr: str, out: list[Difference]) -> None:
    _fields(e, a, ptr, _ERROR_COMPARE, out)


def _extra(e: Mapping[str, Any], a: object, ptr: str, out: list[Difference]) -> None:
    if not isinstance(a, Mapping):
        out.append(_type_diff(f"{ptr}/extra", e, a, "a Mapping of unknown fields"))
        return
    if (not e and not a) or same_json(e, a):  # an exact dict of equal values
        return
    _members(e, a, ptr, out, "unknown field", _json)


def _headers(e: Mapping[str, str], a: object, ptr: str, out: list[Difference]) -> None:
    if not isinstance(a, Mapping):
        out.append(_type_diff(ptr, e, a, "a Mapping[str, str]"))
        return
    _members(e, a, ptr, out, "header", _str)


def _members(
    e: Mapping[Any, Any],
    a: Mapping[Any, Any],
    ptr: str,
    out: list[Difference],
    what: str,
    compare: Any,
) -> None:
    for key, evalue in e.items():
        sub = f"{ptr}/{pointer_token(str(key))}"
        if key not in a:
            out.append(Difference(sub, "missing", evalue, None, f"{what} {show_text(key)} missing"))
        else:
            compare(evalue, a[key], sub, out)
    for key, avalue in a.items():
        if key not in e:
            sub = f"{ptr}/{pointer_token(str(key))}"
            out.append(
                Difference(sub, "unexpected", None, avalue, f"unexpected {what} {show_text(key)}")
            )


# -- leaves ------------------------------------------------------------------------


def _type_diff(ptr: str, e: object, a: object, expected_type: str) -> Difference:
    return Difference(
        ptr, "type", e, a, f"type changed: expected {expected_type}, got {type(a).__name__}"
    )


def _null_diff(ptr: str, e: object, a: object) -> Difference:
    side = "expected null, got a value" if e is None else "expected a value, got null"
    return Difference(ptr, "changed", e, a, f"value changed: {side}")


def _int(e: int, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not int:  # bool and float are different types, not equal values
        out.append(_type_diff(ptr, e, a, "int"))
    elif e != a:
        out.append(Difference(ptr, "changed", e, a, f"integer changed: expected {e}, got {a}"))


def _enum(e: Status | Outcome | str, a: object, ptr: str, out: list[Difference]) -> None:
    # A plain str equal to the member's value is the same value (the model coerces).
    if not isinstance(a, str):
        out.append(_type_diff(ptr, e, a, type(e).__name__))
    elif str.__eq__(e, a) is not True:
        out.append(
            Difference(ptr, "changed", e, a, f"value changed: expected {str(e)!r}, got {str(a)!r}")
        )


def _both_set(e: object, a: object, cls: type, ptr: str, out: list[Difference]) -> bool:
    """Whether a nullable field is set on both sides with ``a`` a ``cls``; reports the
    null or the type that differs otherwise."""
    if e is None or a is None:
        if e is not a:
            out.append(_null_diff(ptr, e, a))
        return False
    if not isinstance(a, cls):
        out.append(_type_diff(ptr, e, a, cls.__name__))
        return False
    return True


def _str(e: str | None, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not str or e != a:  # else the common case: equal, nothing to say
        _str_general(e, a, ptr, out)


def _str_general(e: str | None, a: object, ptr: str, out: list[Difference]) -> None:
    if _both_set(e, a, str, ptr, out) and e != a:
        out.append(Difference(ptr, "changed", e, a, string_note(e, a)))  # type: ignore[arg-type]


def string_note(e: str, a: str) -> str:
    """Byte lengths and the first differing code point of two different strings."""
    eb = len(e.encode("utf-8", "surrogatepass"))
    ab = len(a.encode("utf-8", "surrogatepass"))
    i = next((k for k, (x, y) in enumerate(zip(e, a, strict=False)) if x != y), min(len(e), len(a)))
    return (
        f"string changed: expected {eb} bytes, got {ab} bytes; first difference at "
        f"code point {i}: expected {_code_point(e, i)}, got {_code_point(a, i)}"
    )


def _code_point(s: str, i: int) -> str:
    if i >= len(s):
        return "end of string"
    c = s[i]
    shown = repr(c) if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ""
    return f"U+{ord(c):04X}" + (f" {shown}" if shown else "")


def _bytes(e: bytes, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not bytes:
        out.append(_type_diff(ptr, e, a, "bytes"))
        return
    if e == a:
        return
    i = next((k for k, (x, y) in enumerate(zip(e, a, strict=False)) if x != y), min(len(e), len(a)))
    ev = f"0x{e[i]:02X}" if i < len(e) else "end of bytes"
    av = f"0x{a[i]:02X}" if i < len(a) else "end of bytes"
    out.append(
        Difference(
            ptr,
            "changed",
            e,
            a,
            f"bytes changed: expected {len(e)} bytes, got {len(a)} bytes; first difference "
            f"at offset {i}: expected {ev}, got {av}",
        )
    )


def _time(e: datetime | None, a: object, ptr: str, out: list[Difference]) -> None:
    # The common case, nothing to say: an equal instant in exactly the wire's form.
    if type(a) is not datetime or a.tzinfo is not UTC or a.microsecond % 1000 or e != a:
        _time_general(e, a, ptr, out)


def _time_general(e: datetime | None, a: object, ptr: str, out: list[Difference]) -> None:
    if not _both_set(e, a, datetime, ptr, out):
        return
    assert e is not None and isinstance(a, datetime)
    problem = datetime_problem(a)
    if problem is not None and a.utcoffset() is None:
        out.append(Difference(ptr, "type", e, a, f"timestamp not aware: {problem}"))
        return
    if e != a:
        delta = (a - e).total_seconds() * 1000
        out.append(
            Difference(
                ptr,
                "changed",
                e,
                a,
                f"instant changed: expected {_ts(e)}, got {_ts(a)} ({delta:+.3f} ms)",
            )
        )
    elif problem is not None:
        out.append(Difference(ptr, "type", e, a, f"timestamp form changed: {problem}"))


def _ts(value: datetime) -> str:
    if datetime_problem(value) is None:
        return format_timestamp(value)
    return value.isoformat()


# -- plain JSON (unknown fields, detail) ----------------------------------------------


def _json_type(v: object) -> str:
    t = type(v)
    if v is None:
        return "null"
    if t is bool:
        return "boolean"
    if t is int or t is float:
        return "number"
    if t is str:
        return "string"
    if t is list:
        return "array"
    if t is dict:
        return "object"
    return f"non-JSON {t.__name__}"


def same_json(e: Any, a: Any) -> bool:
    """True only when :func:`_json` would find no difference: the same plain JSON value
    with the same exact type everywhere (so ``1`` and ``True``, ``1`` and ``1.0``, a str
    subclass and a str are not the same here) and no NaN (it differs from itself).
    False means "not shown the same" (a difference or an awkward value): the general
    walk decides and says where. The fast path for the common case, equal values: no
    pointers, no messages (tests compare the two over generated envelopes). Any depth:
    an explicit stack, which measured faster than recursion on shallow values too."""
    stack: list[tuple[Any, Any]] = [(e, a)]
    while stack:
        e, a = stack.pop()
        t = type(e)
        if t is not type(a):
            return False
        if t is str or t is int or t is float or t is bool:
            if e != a:  # float: NaN != NaN; -0.0 == 0.0 as for json_equal
                return False
        elif t is list:
            if len(e) != len(a):
                return False
            stack.extend(zip(e, a, strict=True))
        elif t is dict:
            if len(e) != len(a):
                return False
            for key, x in e.items():
                if key not in a:
                    return False
                stack.append((x, a[key]))
        elif e is not None:
            return False  # any other type: the walk's non-JSON rules decide
    return True


def _json(e: object, a: object, ptr: str, out: list[Difference]) -> None:
    if same_json(e, a):
        return
    # Depth first in document order over an explicit stack (C10 sets no depth limit):
    # a task is a pair of values to compare, or a Difference ready to report.
    stack: list[tuple[Any, Any, str] | Difference] = [(e, a, ptr)]
    while stack:
        task = stack.pop()
        if isinstance(task, Difference):
            out.append(task)
            continue
        e, a, ptr = task
        et, at = _json_type(e), _json_type(a)
        if et != at:
            out.append(Difference(ptr, "type", e, a, f"type changed: expected {et}, got {at}"))
        elif et == "object":
            assert isinstance(e, dict) and isinstance(a, dict)
            todo: list[tuple[Any, Any, str] | Difference] = []
            for key, evalue in e.items():
                sub = f"{ptr}/{pointer_token(str(key))}"
                if key not in a:
                    todo.append(
                        Difference(sub, "missing", evalue, None, f"key {show_text(key)} missing")
                    )
                else:
                    todo.append((evalue, a[key], sub))
            for key, avalue in a.items():
                if key not in e:
                    sub = f"{ptr}/{pointer_token(str(key))}"
                    todo.append(
                        Difference(
                            sub, "unexpected", None, avalue, f"unexpected key {show_text(key)}"
                        )
                    )
            stack.extend(reversed(todo))
        elif et == "array":
            assert isinstance(e, list) and isinstance(a, list)
            if len(e) != len(a):
                out.append(_length_change(ptr, e, a, "array", "item"))
            todo = [(x, y, f"{ptr}/{i}") for i, (x, y) in enumerate(zip(e, a, strict=False))]
            todo.extend(_surplus(ptr, e, a, "array item"))
            stack.extend(reversed(todo))
        elif et == "string":
            if e != a:
                out.append(Difference(ptr, "changed", e, a, string_note(e, a)))  # type: ignore[arg-type]
        elif not json_equal(e, a):
            if et == "number":
                note = f"number changed: expected {e!r}, got {a!r}"
                if isinstance(e, int) and isinstance(a, float) and math.isfinite(a):
                    note += " (a double cannot hold every 64-bit integer; C5 requires it exactly)"
            else:
                note = f"value changed: expected {short_repr(e, 60)}, got {short_repr(a, 60)}"
            out.append(Difference(ptr, "changed", e, a, note))


_Compare = Callable[[Any, Any, str, list[Difference]], None]
"""Compares one field: expected, actual, the field's pointer, the differences so far."""


_Fields = tuple[tuple[str, str, _Compare], ...]
"""Per known field: its name, its pointer token (with the slash) and its compare."""


def _table(order: tuple[str, ...], compare: dict[str, _Compare]) -> _Fields:
    assert tuple(compare) == order, "every known field, in the spec's order"
    return tuple((name, f"/{name}", check) for name, check in compare.items())


# The known fields of each object, in the spec's order (the order of the differences).
_ENVELOPE_COMPARE = _table(ENVELOPE_FIELDS, {
    "envelope_version": _int,
    "id": _str,
    "queue": _str,
    "handler_ref": _str,
    "handler_version": _str,
    "payload": _bytes,
    "payload_content_type": _str,
    "headers": _headers,
    "status": _enum,
    "attempt_count": _int,
    "redrive_count": _int,
    "next_attempt_at": _time,
    "lease_expires_at": _time,
    "created_at": _time,
    "attempts": _attempts,
})
_ATTEMPT_COMPARE = _table(ATTEMPT_FIELDS, {
    "attempt_no": _int,
    "started_at": _time,
    "finished_at": _time,
    "outcome": _enum,
    "error": _error_or_null,
})
_ERROR_COMPARE = _table(ERROR_FIELDS, {
    "type": _str,
    "message": _str,
    "detail": _json,
    "stack": _str,
})


# -- formatting --------------------------------------------------------------------

_VALUE_CHARS = 80


def _short(value: object, center: int | None = None) -> str:
    """repr cut to ~80 characters; for strings, a window around ``center``, followed
    by the code points of what is not plain ASCII (look-alikes print alike)."""
    if isinstance(value, str):
        start = center - 20 if center is not None and center > 30 and len(value) > 60 else 0
        window = value[start:]
        text = ("…" if start else "") + repr(window)
        if len(text) > _VALUE_CHARS:
            text = text[: _VALUE_CHARS - 1] + "…"
        return text + _code_points(window[:_VALUE_CHARS], start)
    text = value.isoformat() if isinstance(value, datetime) else short_repr(value, _VALUE_CHARS)
    if len(text) > _VALUE_CHARS:
        text = text[: _VALUE_CHARS - 1] + "…"
    return text


_SHOWN_CODE_POINTS = 8


def _plain(c: str) -> bool:
    return " " <= c <= "~"


def _code_points(s: str, offset: int = 0) -> str:
    """`` (U+0041 U+030A)``: every code point of ``s`` when any is not printable ASCII
    (so U+00C5, U+212B and A+U+030A never print alike); for a long one, the first few
    that are not, with their index (``s`` starting at index ``offset``); ``""`` for
    plain ASCII."""
    if all(_plain(c) for c in s):
        return ""
    if len(s) <= _SHOWN_CODE_POINTS and not offset:
        return " (" + " ".join(f"U+{ord(c):04X}" for c in s) + ")"
    odd = [(i + offset, c) for i, c in enumerate(s) if not _plain(c)]
    shown = ", ".join(f"U+{ord(c):04X} at {i}" for i, c in odd[:_SHOWN_CODE_POINTS])
    more = f", … {len(odd) - _SHOWN_CODE_POINTS} more" if len(odd) > _SHOWN_CODE_POINTS else ""
    return f" ({shown}{more})"


def show_text(s: object) -> str:
    """A key or string for a message: ``repr``, then the code points when it holds
    anything but printable ASCII: ``'Å' (U+212B)``, ``'Å' (U+0041 U+030A)``."""
    if not isinstance(s, str):
        return short_repr(s, _VALUE_CHARS)
    return repr(s) + _code_points(s)


def _show_pointer(ptr: str) -> str:
    # Pointer tokens are raw keys: annotate each that is not plain ASCII as show_text
    # does keys, e.g. "/headers/Å (U+212B)".
    if ptr.isascii() and ptr.isprintable():
        return ptr or "/"
    notes = [_code_points(token)[2:-1] for token in ptr.split("/")[1:] if _code_points(token)]
    return f"{ptr} ({'; '.join(notes)})"


def _format_line(d: Difference) -> str:
    ptr = _show_pointer(d.pointer)
    if d.kind == "missing":
        return f"{ptr}: {d.note}: expected {_short(d.expected)}"
    if d.kind == "unexpected":
        return f"{ptr}: {d.note}: got {_short(d.actual)}"
    if d.kind == "length":
        return f"{ptr}: {d.note}"
    center = None
    if isinstance(d.expected, str) and isinstance(d.actual, str):
        center = next(
            (k for k, (x, y) in enumerate(zip(d.expected, d.actual, strict=False)) if x != y),
            min(len(d.expected), len(d.actual)),
        )
    if isinstance(d.expected, bytes | datetime) and d.kind == "changed":
        return f"{ptr}: {d.note}"
    if _names_both(d.note, d.expected, d.actual):
        return f"{ptr}: {d.note}"  # not "expected 1, got 2 (expected 1, got 2)"
    return (
        f"{ptr}: {d.note} (expected {_short(d.expected, center)}, got {_short(d.actual, center)})"
    )


def _names_both(note: str, expected: object, actual: object) -> bool:
    """Whether ``note`` already says "expected X, got Y" with both values."""
    def forms(v: object) -> set[str]:
        return {repr(v), str(v), repr(str(v))}

    return any(f"expected {e}, got {a}" in note
               for e in forms(expected) for a in forms(actual))


def format_diff(diffs: Sequence[Difference], *, limit: int = 20) -> str:
    """One readable line per difference, at most ``limit`` of them, then "… and N more"."""
    lines = [_format_line(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"… and {len(diffs) - limit} more")
    return "\n".join(lines)


def _no_difference(a: object, b: object) -> bool:
    return not diff(a, b)


_model._equal = _no_difference  # model equality is "no difference" (see _model._equal)
