"""Structural diff of envelopes: what a plugin returned against what was written.

Each difference names the JSON pointer of the field as it appears on the wire
(unknown fields at the pointer of the object they belong to) and says precisely
what differs, so a failing round trip reads like a bug report. This module is the
typed walk over the models, field by field in the spec's order, and the entry point
:func:`diff`; plain JSON (unknown fields, ``error.detail``) is walked by
:mod:`._diff_json`, the record and its line by :mod:`._difference`. It also installs
model equality ("no difference", see ``_model._equal``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from . import _diff_json, _model
from ._diff_json import diff_json
from ._diff_text import show_text, string_note
from ._difference import Difference, length_change, surplus, type_diff
from ._model import Attempt, Envelope, ErrorInfo, Outcome, Status
from ._violations import pointer_token
from ._wire import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    datetime_problem,
    format_timestamp,
)

# Difference is named here too for the modules that import it from the diff.
__all__ = ["Difference", "diff"]


def diff(expected: object, actual: object) -> list[Difference]:
    """Every difference between ``expected`` and ``actual`` (models or JSON values)."""
    out: list[Difference] = []
    if expected is actual:
        return out
    if isinstance(expected, Envelope | Attempt | ErrorInfo):
        if type(actual) is not type(expected):
            out.append(type_diff("", expected, actual, type(expected).__name__))
        elif isinstance(expected, Envelope):
            _envelope(expected, actual, out)  # type: ignore[arg-type]
        elif isinstance(expected, Attempt):
            _attempt(expected, actual, "", out)  # type: ignore[arg-type]
        else:
            _error(expected, actual, "", out)  # type: ignore[arg-type]
    else:
        diff_json(expected, actual, "", out)
    return out


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
        out.append(type_diff(ptr, e, a, "a tuple of Attempt"))
        return
    if len(e) != len(a):
        out.append(length_change(ptr, e, a, "attempts", "attempt"))
    for i, (ea, aa) in enumerate(zip(e, a, strict=False)):
        if ea is aa:
            continue
        sub = f"{ptr}/{i}"
        if type(aa) is not Attempt or type(ea) is not Attempt:
            out.append(type_diff(sub, ea, aa, "Attempt"))
        else:
            _attempt(ea, aa, sub, out)
    if len(e) != len(a):
        out.extend(surplus(ptr, e, a, "attempt"))


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
        out.append(type_diff(ptr, e, a, "ErrorInfo"))
    else:
        _error(e, a, ptr, out)


def _error(e: ErrorInfo, a: ErrorInfo, ptr: str, out: list[Difference]) -> None:
    _fields(e, a, ptr, _ERROR_COMPARE, out)


def _extra(e: Mapping[str, Any], a: object, ptr: str, out: list[Difference]) -> None:
    if not isinstance(a, Mapping):
        out.append(type_diff(f"{ptr}/extra", e, a, "a Mapping of unknown fields"))
        return
    if (not e and not a) or _diff_json.same_json(e, a):  # an exact dict of equal values
        return
    _members(e, a, ptr, out, "unknown field", diff_json)


def _headers(e: Mapping[str, str], a: object, ptr: str, out: list[Difference]) -> None:
    if not isinstance(a, Mapping):
        out.append(type_diff(ptr, e, a, "a Mapping[str, str]"))
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


def _null_diff(ptr: str, e: object, a: object) -> Difference:
    side = "expected null, got a value" if e is None else "expected a value, got null"
    return Difference(ptr, "changed", e, a, f"value changed: {side}")


def _int(e: int, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not int:  # bool and float are different types, not equal values
        out.append(type_diff(ptr, e, a, "int"))
    elif e != a:
        out.append(Difference(ptr, "changed", e, a, f"integer changed: expected {e}, got {a}"))


def _enum(e: Status | Outcome | str, a: object, ptr: str, out: list[Difference]) -> None:
    # A plain str equal to the member's value is the same value (the model coerces).
    if not isinstance(a, str):
        out.append(type_diff(ptr, e, a, type(e).__name__))
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
        out.append(type_diff(ptr, e, a, cls.__name__))
        return False
    return True


def _str(e: str | None, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not str or e != a:  # else the common case: equal, nothing to say
        _str_general(e, a, ptr, out)


def _str_general(e: str | None, a: object, ptr: str, out: list[Difference]) -> None:
    if _both_set(e, a, str, ptr, out) and e != a:
        out.append(Difference(ptr, "changed", e, a, string_note(e, a)))  # type: ignore[arg-type]


def _bytes(e: bytes, a: object, ptr: str, out: list[Difference]) -> None:
    if type(a) is not bytes:
        out.append(type_diff(ptr, e, a, "bytes"))
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
    "detail": diff_json,
    "stack": _str,
})


def _no_difference(a: object, b: object) -> bool:
    return not diff(a, b)


_model._equal = _no_difference  # model equality is "no difference" (see _model._equal)
