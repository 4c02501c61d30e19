"""The envelope v1 validator: every rule of wire-envelope.txt and C1-C17 that a
single envelope can break, each reported with a stable code and a JSON pointer.

One pass over the parsed object. A typed model is first checked for its Python
types (what a Python adapter returns), turned into its wire form and then judged
by the same value rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from datetime import datetime
from typing import Any

from ._codes import ViolationCode as C
from ._deep import SURROGATE as _SURROGATE
from ._deep import dumps, short_repr
from ._ids import _CANONICAL as _ULID
from ._json import json_type_name, parse_json
from ._limits import (
    INT64_MAX,
    INT64_MIN,
    MAX_ENVELOPE_BYTES,
    MAX_KNOWN_INT,
    MESSAGE_LIMIT,
    NAME_MAX_CHARS,
    STACK_LIMIT,
)
from ._model import (
    OUTCOME_BY_VALUE,
    STATUS_BY_VALUE,
    Attempt,
    Envelope,
    ErrorInfo,
    Outcome,
    Status,
)
from ._violations import InvalidEnvelope, Violation, pointer_token
from ._wire import (
    AttemptPointers,
    attempt_pointers,
    base64_problem,
    datetime_problem,
    format_timestamp,
    timestamp_problem,
)
from ._write import ATTEMPT_KNOWN as _ATTEMPT_KNOWN
from ._write import ENVELOPE_KNOWN as _ENVELOPE_KNOWN
from ._write import ERROR_KNOWN as _ERROR_KNOWN
from ._write import ModelWriter

__all__ = ["InvalidEnvelope", "Violation", "validate"]

_NAME = re.compile(r"[a-z0-9._-]+")
_ENVELOPE_REQUIRED = (
    "envelope_version", "id", "queue", "handler_ref", "payload", "payload_content_type",
    "headers", "status", "attempt_count", "redrive_count", "created_at", "attempts",
)  # fmt: skip
_ENVELOPE_OPTIONAL = ("handler_version", "next_attempt_at", "lease_expires_at")
_ATTEMPT_REQUIRED = ("attempt_no", "started_at", "outcome")
_ATTEMPT_OPTIONAL = ("finished_at", "error")
_ERROR_REQUIRED = ("type", "message")
_ERROR_OPTIONAL = ("detail", "stack")
assert set(_ENVELOPE_REQUIRED + _ENVELOPE_OPTIONAL) == _ENVELOPE_KNOWN
assert set(_ATTEMPT_REQUIRED + _ATTEMPT_OPTIONAL) == _ATTEMPT_KNOWN
assert set(_ERROR_REQUIRED + _ERROR_OPTIONAL) == _ERROR_KNOWN
_LEASE_EXPIRED_TYPE = "rdq.LeaseExpired"


class _Skip:
    """Stands for a model value whose Python type was already reported."""

    __slots__ = ()


_SKIP: Any = _Skip()


def validate(
    data: str | bytes | bytearray | Mapping[str, Any] | Envelope,
    *,
    versions: Collection[int] | None = (1,),
    max_bytes: int | None = MAX_ENVELOPE_BYTES,
) -> list[Violation]:
    """Every violation of envelope v1 in ``data``; an empty list means valid.

    ``data`` is JSON text (parsed strictly first), a parsed JSON object, or an
    ``Envelope`` model. ``versions``: the envelope versions accepted (None: any;
    the shape is judged as v1). ``max_bytes``: C2 limit on the compact canonical
    encoding (None: no limit).
    """
    if isinstance(data, Envelope):
        return _validate_model(data, versions, max_bytes)
    if isinstance(data, str | bytes | bytearray):
        try:
            obj = parse_json(data)
        except InvalidEnvelope as exc:
            return list(exc.violations)
        return validate_object(
            obj, versions=versions, max_bytes=max_bytes, parsed=True, size_bound=size_bound(data)
        )
    if isinstance(data, Mapping):
        return validate_object(data, versions=versions, max_bytes=max_bytes, parsed=False)
    raise TypeError(
        f"data={type(data).__name__}: expected JSON text (str/bytes), a JSON object "
        "(Mapping) or an Envelope"
    )


def validate_object(
    obj: Mapping[str, Any],
    *,
    versions: Collection[int] | None = (1,),
    max_bytes: int | None = MAX_ENVELOPE_BYTES,
    parsed: bool = False,
    size_bound: int | None = None,
) -> list[Violation]:
    """Validate a JSON object. ``parsed=True`` promises it came from ``parse_json``
    (plain types, no lone surrogates), which skips those checks. ``size_bound``: an
    upper bound of its compact encoding (see ``size_bound``), which spares encoding
    it when the bound already fits ``max_bytes``."""
    unsupported = _version_check(obj.get("envelope_version"), versions)
    if unsupported is not None:
        return [unsupported]
    checker = _Checker(check_keys=not parsed, check_surrogates=not parsed)
    checker.envelope(obj)
    out = checker.out
    if max_bytes is not None and (
        size_bound is None or size_bound + checker.absent_bytes > max_bytes
    ):
        _size_check(obj, checker.absent_bytes, max_bytes, out)
    return out


def size_bound(text: str | bytes | bytearray) -> int:
    """An upper bound, in bytes, of the compact encoding of what ``text`` parses to.

    Re-encoding never lengthens a string, a key, an integer or a literal (escapes
    only shrink, whitespace goes). Only a float can grow: its token has at least 3
    characters ("1e9", "0.5") and its repr at most 24 ("-2.2250738585072014e-308"),
    so 8 times the text's UTF-8 size (at most 4 bytes per str character) bounds it.
    """
    if isinstance(text, str):
        return 32 * len(text)
    return 8 * len(text)


def _version_check(value: object, versions: Collection[int] | None) -> Violation | None:
    if (
        versions is None
        or type(value) is not int
        or not 0 <= value <= MAX_KNOWN_INT
        or value in versions
    ):
        return None
    accepted = ", ".join(str(v) for v in sorted(versions)) or "none"
    return Violation(
        C.UNSUPPORTED_ENVELOPE_VERSION,
        "/envelope_version",
        f"envelope_version={value!r} is not supported (supported: {accepted}); "
        "the rest of the envelope is not judged",
    )


def _size_check(obj: object, unwritten_bytes: int, max_bytes: int, out: list[Violation]) -> None:
    """C2 on ``obj``'s compact encoding plus ``unwritten_bytes`` that canonical text holds
    beyond it (absent optional members written as null, a payload only counted)."""
    try:
        text = dumps(obj, allow_nan=True)
    except (TypeError, ValueError):
        return  # non-JSON values: already reported as FIELD_TYPE
    # No code point takes more than 4 UTF-8 bytes: skip encoding small envelopes.
    if 4 * len(text) + unwritten_bytes <= max_bytes:
        return
    size = len(text.encode("utf-8", "surrogatepass")) + unwritten_bytes
    if size > max_bytes:
        out.append(_too_large(size, max_bytes))


def _too_large(size: int, max_bytes: int) -> Violation:
    return Violation(
        C.PAYLOAD_TOO_LARGE,
        "",
        f"the compact canonical JSON encoding is {size} bytes; the limit is {max_bytes} bytes (C2)",
    )


def _absent_member_bytes(name: str) -> int:
    # ,"name":null  -- what canonical form adds for an absent optional field (C9).
    return len(name) + 8


class _Checker:
    """One pass over a JSON object. ``check_keys``: keys may be other than str (not
    from parse_json). ``check_surrogates``: strings may hold lone surrogates (neither
    parse_json nor a strict UTF-8 encoding has ruled them out).

    JSON pointers are built only for values that break a rule: the valid envelope,
    by far the common case, costs no string formatting."""

    __slots__ = ("absent_bytes", "check_keys", "check_surrogates", "model_wire", "out")

    def __init__(
        self, *, check_keys: bool, check_surrogates: bool, model_wire: bool = False
    ) -> None:
        self.out: list[Violation] = []
        self.check_keys = check_keys
        self.check_surrogates = check_surrogates
        # The wire form _ModelChecker built: every timestamp text is format_timestamp()
        # of a datetime it accepted (only the year can still be wrong), and the payload
        # is base64.b64encode() of bytes (canonical by construction) or "" standing for it.
        self.model_wire = model_wire
        self.absent_bytes = 0

    # -- primitives -------------------------------------------------------------

    def add(self, code: C, ptr: str, message: str) -> None:
        self.out.append(Violation(code, ptr, message))

    def type_error(self, ptr: str, expected: str, value: object) -> None:
        got = "a float with a fraction or exponent" if type(value) is float else None
        self.add(
            C.FIELD_TYPE,
            ptr,
            f"expected {expected}, got {got or json_type_name(value)}: {_short(value)}",
        )

    def string(self, value: object, ptr: str, *, nullable: bool = False) -> bool:
        """True when ``value`` is a string (reported otherwise); None is fine if nullable."""
        if type(value) is str:
            if self.check_surrogates:
                self.surrogates(value, ptr, "string")
            return True
        if value is None and nullable:
            return False
        if value is not _SKIP:
            self.type_error(ptr, "a string" + (" or null" if nullable else ""), value)
        return False

    def surrogates(self, value: str, ptr: str, what: str) -> None:
        m = _SURROGATE.search(value)
        if m is not None:
            self.add(
                C.LONE_SURROGATE,
                ptr,
                f"{what} holds a lone surrogate U+{ord(m.group()):04X} at code point "
                f"{m.start()}; strings must be Unicode scalar values (C4)",
            )

    def known_int(self, value: object, ptr: str) -> bool:
        if type(value) is int:
            if 0 <= value <= MAX_KNOWN_INT:
                return True
            self.add(
                C.INTEGER_RANGE,
                ptr,
                f"{value} is out of range; expected 0 to {MAX_KNOWN_INT} (C5)",
            )
            return False
        if value is _SKIP:
            return False
        if type(value) is float and value.is_integer():
            self.add(
                C.FIELD_TYPE,
                ptr,
                f"expected an integer, got {value!r}; write it without fraction or exponent "
                "(integer decoders in Go and Java reject it)",
            )
        else:
            self.type_error(ptr, "an integer", value)
        return False

    def timestamp(self, value: object, ptr: str, *, nullable: bool = False) -> bool:
        if type(value) is not str:
            if not (value is None and nullable) and value is not _SKIP:
                self.type_error(ptr, "a timestamp string" + (" or null" if nullable else ""), value)
            return False
        if self.model_wire and value[:4] >= "1970":
            return True
        problem = timestamp_problem(value)
        if problem is None:
            return True
        kind, message = problem
        self.add(C.TIMESTAMP_FORMAT if kind == "FORMAT" else C.TIMESTAMP_RANGE, ptr, message)
        return False

    def name(self, value: object, ptr: str, length_code: C, charset_code: C) -> None:
        if not self.string(value, ptr):
            return
        assert isinstance(value, str)
        n = len(value)
        if n == 0 or n > NAME_MAX_CHARS:
            self.add(length_code, ptr, f"length {n} is out of range; expected 1 to 240 characters")
        if n and _NAME.fullmatch(value) is None:
            bad = next(c for c in value if not ("a" <= c <= "z" or "0" <= c <= "9" or c in "._-"))
            self.add(
                charset_code,
                ptr,
                f"character {bad!r} at index {value.index(bad)} is not allowed; "
                "use only a-z 0-9 . _ - (C8a)",
            )

    def limited_text(self, value: str, ptr: str, limit: int, code: C) -> None:
        if len(value) * 4 <= limit:
            return
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            self.add(
                code,
                ptr,
                f"{size} UTF-8 bytes; the limit is {limit} bytes, truncation marker included "
                "(truncate with rdq_compliance.truncate_message / truncate_stack, C1)",
            )

    def json_object(self, value: object, ptr: str, what: str, *, nullable: bool = False) -> bool:
        if type(value) is dict:
            if self.check_keys:
                self.keys(value, ptr)
            return True
        if not (value is None and nullable) and value is not _SKIP:
            self.type_error(ptr, what + (" or null" if nullable else ""), value)
        return False

    def keys(self, value: Mapping[Any, Any], ptr: str) -> None:
        for key in value:
            if type(key) is not str:
                self.add(C.FIELD_TYPE, ptr, f"key {key!r} is not a string; JSON keys are strings")
            elif self.check_surrogates and _SURROGATE.search(key) is not None:
                self.surrogates(key, f"{ptr}/{pointer_token(key)}", "key")

    def clean_json(self, value: Any) -> bool:
        """True when :meth:`any_json` would report nothing in ``value`` (without building
        a pointer); False when it might. Any depth: an explicit stack."""
        t = type(value)
        if t is not list and t is not dict:
            return self._clean_leaf(value)
        stack: list[Any] = [value]
        leaf = self._clean_leaf
        while stack:
            value = stack.pop()
            if type(value) is list:
                for item in value:
                    t = type(item)
                    if t is list or t is dict:
                        stack.append(item)
                    elif not leaf(item):
                        return False
            else:
                for key, item in value.items():
                    if type(key) is not str or not leaf(key):
                        return False
                    t = type(item)
                    if t is list or t is dict:
                        stack.append(item)
                    elif not leaf(item):
                        return False
        return True

    def _clean_leaf(self, value: Any) -> bool:
        t = type(value)
        if t is str:
            return not self.check_surrogates or _SURROGATE.search(value) is None
        if t is int:
            return bool(INT64_MIN <= value <= INT64_MAX)
        if t is float:
            return math.isfinite(value)
        return value is None or t is bool

    def any_json(self, value: Any, ptr: str) -> None:
        """Unknown fields and ``detail``: any JSON value, numbers in range (C5)."""
        if (type(value) is list or type(value) is dict) and self.clean_json(value):
            return  # the common case: no pointer for every nested value
        self.json_value(value, ptr)

    def unknown(self, value: Any, ptr: str, key: object) -> None:
        """An unknown field ``key`` of the object at ``ptr`` (C10): any JSON value."""
        if not self.clean_json(value):  # the pointer only for a violation
            self.json_value(value, f"{ptr}/{pointer_token(str(key))}")

    def json_value(self, value: Any, ptr: str) -> None:
        """Report what breaks C4/C5/C10 in ``value``, depth first in document order,
        with an explicit stack (C10 sets no depth limit)."""
        stack: list[tuple[Any, str]] = [(value, ptr)]
        while stack:
            value, ptr = stack.pop()
            t = type(value)
            if t is str:
                if self.check_surrogates:
                    self.surrogates(value, ptr, "string")
            elif t is int:
                if not INT64_MIN <= value <= INT64_MAX:
                    self.add(
                        C.NUMBER_RANGE,
                        ptr,
                        f"integer {_short(value)} is outside the signed 64-bit range (C5)",
                    )
            elif t is float:
                if not math.isfinite(value):
                    self.add(
                        C.NUMBER_RANGE,
                        ptr,
                        f"number {value!r} is not finite (e.g. 1e999 overflows a double); "
                        "C5 allows finite doubles only",
                    )
            elif t is list:
                stack.extend((value[i], f"{ptr}/{i}") for i in range(len(value) - 1, -1, -1))
            elif t is dict:
                if self.check_keys:
                    self.keys(value, ptr)
                stack.extend(
                    (item, f"{ptr}/{pointer_token(str(key))}")
                    for key, item in reversed(value.items())
                )
            elif value is not None and t is not bool and value is not _SKIP:
                self.add(
                    C.FIELD_TYPE,
                    ptr,
                    f"{type(value).__name__} {_short(value)} is not a JSON value "
                    "(null, bool, int, float, str, list, dict)",
                )

    def members(
        self,
        obj: Mapping[str, Any],
        ptr: str,
        known: frozenset[str],
        required: tuple[str, ...],
        optional: tuple[str, ...],
    ) -> None:
        """FIELD_MISSING for each absent required field; the bytes canonical text
        writes for each absent optional one (C2)."""
        if known <= obj.keys():
            return  # every field present, the common case: one check in C
        for name in required:
            if name not in obj:
                self.add(C.FIELD_MISSING, f"{ptr}/{name}", f"required field {name!r} is absent")
        for name in optional:
            if name not in obj:
                self.absent_bytes += _absent_member_bytes(name)

    # -- objects -----------------------------------------------------------------

    def envelope(self, obj: Mapping[str, Any]) -> None:
        if self.check_keys and not isinstance(obj, dict):
            obj = dict(obj)
        if self.check_keys:
            self.keys(obj, "")
        self.members(obj, "", _ENVELOPE_KNOWN, _ENVELOPE_REQUIRED, _ENVELOPE_OPTIONAL)
        for key, value in obj.items():
            known = _ENVELOPE_CHECKS.get(key)
            if known is None:
                self.unknown(value, "", key)
            else:
                known[0](self, value, known[1])
        # Invariants of the design document, judged only on well-typed values.
        status = obj.get("status")
        if type(status) is not str:
            status = None  # a wrong type (maybe unhashable) was reported as FIELD_TYPE
        lease = obj.get("lease_expires_at")
        if type(lease) is str and status in STATUS_BY_VALUE and status != "IN_FLIGHT":
            self.add(
                C.LEASE_WITHOUT_IN_FLIGHT,
                "/lease_expires_at",
                f"lease_expires_at is set while status is {status}; it is null unless IN_FLIGHT",
            )
        if status == "IN_FLIGHT" and lease is None:
            self.add(
                C.IN_FLIGHT_WITHOUT_LEASE,
                "/lease_expires_at",
                "status is IN_FLIGHT but lease_expires_at is null; an in-flight task has a lease",
            )
        if (status == "SUCCEEDED" or status == "DEAD") and type(obj.get("next_attempt_at")) is str:
            self.add(
                C.NEXT_ATTEMPT_WHEN_TERMINAL,
                "/next_attempt_at",
                f"next_attempt_at is set while status is {status}; it is null once terminal",
            )

    # -- top-level fields, dispatched by name from _ENVELOPE_CHECKS ----------------

    def f_id(self, value: Any, ptr: str) -> None:
        if self.string(value, ptr) and _ULID.fullmatch(value) is None:
            self.add(
                C.ID_FORMAT,
                ptr,
                f"{_short(value)} is not canonical ULID text: 26 characters of "
                "upper-case Crockford base32 (no I, L, O, U), the first one 0-7 (C6)",
            )

    def f_queue(self, value: Any, ptr: str) -> None:
        self.name(value, ptr, C.QUEUE_LENGTH, C.QUEUE_CHARSET)

    def f_handler_ref(self, value: Any, ptr: str) -> None:
        self.name(value, ptr, C.HANDLER_REF_LENGTH, C.HANDLER_REF_CHARSET)

    def f_nullable_string(self, value: Any, ptr: str) -> None:
        self.string(value, ptr, nullable=True)

    def f_string(self, value: Any, ptr: str) -> None:
        self.string(value, ptr)

    def f_payload(self, value: Any, ptr: str) -> None:
        if self.string(value, ptr) and not self.model_wire:
            problem = base64_problem(value)
            if problem is not None:
                self.add(C.PAYLOAD_BASE64, ptr, problem + " (C7)")

    def f_headers(self, value: Any, ptr: str) -> None:
        if self.json_object(value, ptr, "an object of string values"):
            for hkey, hvalue in value.items():
                if type(hvalue) is str and not (
                    self.check_surrogates and _SURROGATE.search(hvalue) is not None
                ):
                    continue  # fine: no pointer needed
                self.string(hvalue, f"{ptr}/{pointer_token(str(hkey))}")

    def f_status(self, value: Any, ptr: str) -> None:
        if self.string(value, ptr) and value not in STATUS_BY_VALUE:
            self.add(
                C.STATUS_VALUE,
                ptr,
                f"{_short(value)} is not a v1 status; expected one of "
                "PENDING, IN_FLIGHT, SUCCEEDED, DEAD",
            )

    def f_nullable_timestamp(self, value: Any, ptr: str) -> None:
        self.timestamp(value, ptr, nullable=True)

    def f_timestamp(self, value: Any, ptr: str) -> None:
        self.timestamp(value, ptr)

    def f_attempts(self, value: Any, ptr: str) -> None:
        if type(value) is list:
            for i, attempt in enumerate(value):
                self.attempt(attempt, attempt_pointers(i))
        elif value is not _SKIP:
            self.type_error(ptr, "an array of attempt objects", value)

    def attempt(self, obj: object, p: AttemptPointers) -> None:
        ptr = p.attempt
        if not self.json_object(obj, ptr, "an attempt object"):
            return
        assert isinstance(obj, dict)
        self.members(obj, ptr, _ATTEMPT_KNOWN, _ATTEMPT_REQUIRED, _ATTEMPT_OPTIONAL)
        for key, value in obj.items():
            if key not in _ATTEMPT_KNOWN:
                self.unknown(value, ptr, key)
            elif key == "attempt_no":
                self.known_int(value, p.attempt_no)
            elif key == "started_at":
                self.timestamp(value, p.started_at)
            elif key == "finished_at":
                self.timestamp(value, p.finished_at, nullable=True)
            elif key == "outcome":
                if self.string(value, p.outcome) and value not in OUTCOME_BY_VALUE:
                    self.add(
                        C.OUTCOME_VALUE,
                        p.outcome,
                        f"{_short(value)} is not a v1 outcome; expected one of SUCCESS, "
                        "RETRYABLE_FAILURE, PERMANENT_FAILURE, LEASE_EXPIRED",
                    )
            else:  # error
                self.error(value, p)
        if obj.get("outcome") == "LEASE_EXPIRED":
            error = obj.get("error")
            if error is None:
                self.add(
                    C.LEASE_EXPIRED_ERROR,
                    p.error,
                    f'a LEASE_EXPIRED attempt has an error of type "{_LEASE_EXPIRED_TYPE}"; '
                    "got null",
                )
            elif type(error) is dict:
                etype = error.get("type")
                if type(etype) is str and etype != _LEASE_EXPIRED_TYPE:
                    self.add(
                        C.LEASE_EXPIRED_ERROR,
                        p.error_type,
                        f'a LEASE_EXPIRED attempt has error.type "{_LEASE_EXPIRED_TYPE}"; '
                        f"got {_short(etype)}",
                    )
                stack = error.get("stack")
                if stack is not None and stack is not _SKIP:
                    self.add(
                        C.LEASE_EXPIRED_ERROR,
                        p.error_stack,
                        f"a LEASE_EXPIRED attempt has no stack; expected null, got {_short(stack)}",
                    )

    def error(self, obj: object, p: AttemptPointers) -> None:
        ptr = p.error
        if not self.json_object(obj, ptr, "an error object", nullable=True):
            return
        assert isinstance(obj, dict)
        self.members(obj, ptr, _ERROR_KNOWN, _ERROR_REQUIRED, _ERROR_OPTIONAL)
        for key, value in obj.items():
            if key not in _ERROR_KNOWN:
                self.unknown(value, ptr, key)
            elif key == "type":
                self.string(value, p.error_type)
            elif key == "message":
                if self.string(value, p.error_message):
                    self.limited_text(value, p.error_message, MESSAGE_LIMIT, C.MESSAGE_TOO_LONG)
            elif key == "detail":
                self.any_json(value, p.error_detail)
            elif self.string(value, p.error_stack, nullable=True):  # stack
                self.limited_text(value, p.error_stack, STACK_LIMIT, C.STACK_TOO_LONG)


# Each known field's check and JSON pointer (built once, not per envelope).
_ENVELOPE_CHECKS: dict[str, tuple[Callable[[_Checker, Any, str], object], str]] = {
    name: (check, "/" + name)
    for name, check in {
        "envelope_version": _Checker.known_int,
        "id": _Checker.f_id,
        "queue": _Checker.f_queue,
        "handler_ref": _Checker.f_handler_ref,
        "handler_version": _Checker.f_nullable_string,
        "payload": _Checker.f_payload,
        "payload_content_type": _Checker.f_string,
        "headers": _Checker.f_headers,
        "status": _Checker.f_status,
        "attempt_count": _Checker.known_int,
        "redrive_count": _Checker.known_int,
        "next_attempt_at": _Checker.f_nullable_timestamp,
        "lease_expires_at": _Checker.f_nullable_timestamp,
        "created_at": _Checker.f_timestamp,
        "attempts": _Checker.f_attempts,
    }.items()
}
assert set(_ENVELOPE_CHECKS) == _ENVELOPE_KNOWN


def _short(value: object, limit: int = 60) -> str:
    text = short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the typed model ---------------------------------------------------------------


def _validate_model(
    env: Envelope,
    versions: Collection[int] | None,
    max_bytes: int | None,
    *,
    payload_text: bool = False,
) -> list[Violation]:
    """``payload_text``: build the payload's base64 text into the wire form (the
    general path) instead of only counting its characters (see ``_ModelChecker``)."""
    unsupported = _version_check(env.envelope_version, versions)
    if unsupported is not None:
        return [unsupported]
    model = _ModelChecker(payload_text=payload_text)
    wire = model.envelope(env)
    # One strict UTF-8 encoding of the compact JSON text (needed for C2 anyway)
    # proves that no string or key anywhere holds a lone surrogate, which spares
    # a search in every string. Key types are still checked: json.dumps turns
    # int, float, bool and None keys into strings without complaint.
    encoded = None if model.out else _strict_utf8(wire)
    checker = _Checker(
        check_keys=True, check_surrogates=encoded is None, model_wire=model.exact_datetimes
    )
    checker.envelope(wire)
    out = model.out + checker.out
    if max_bytes is not None and not model.out:
        if encoded is None:
            _size_check(wire, model.payload_chars, max_bytes, out)
        elif len(encoded) + model.payload_chars > max_bytes:
            out.append(_too_large(len(encoded) + model.payload_chars, max_bytes))
    return out


def _strict_utf8(wire: dict[str, Any]) -> bytes | None:
    """The compact JSON text of ``wire`` in strict UTF-8, or None when it has values
    json cannot write or strings with lone surrogates."""
    try:
        return dumps(wire, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError
        return None


class _ModelChecker(ModelWriter):
    """The model -> wire walk (:class:`ModelWriter`) checking each Python type as it
    writes: a value of the wrong type is reported and becomes ``_SKIP``, so the JSON
    rules do not report it twice. JSON values are not copied (they are only read)."""

    __slots__ = ("exact_datetimes", "out", "payload_chars", "payload_text")

    def __init__(self, *, payload_text: bool = False) -> None:
        self.out: list[Violation] = []
        # False once a datetime subclass was seen: its isoformat() is not vouched for.
        self.exact_datetimes = True
        # The payload's wire text is base64.b64encode() of bytes: canonical (C7) and
        # plain ASCII that JSON writes as it is, so validation needs only its length
        # (C2). Unless ``payload_text``, the wire form holds "" and payload_chars the
        # length: building, writing and encoding up to 256 KiB of base64 text per
        # validated model was two thirds of validate(model) over generated envelopes.
        self.payload_text = payload_text
        self.payload_chars = 0

    def type_error(self, ptr: str, expected: str, value: object) -> Any:
        self.out.append(
            Violation(
                C.FIELD_TYPE,
                ptr,
                f"expected {expected}, got {type(value).__name__} {_short(value)}",
            )
        )
        return _SKIP

    def int_(self, value: object, ptr: str) -> Any:
        # Exactly int: bool, IntEnum and other subclasses are not what a reader returns.
        if type(value) is int:
            return value
        return self.type_error(ptr, "int", value)

    def text(self, value: object, ptr: str, *, nullable: bool = False) -> Any:
        if type(value) is str or (value is None and nullable):
            return value
        return self.type_error(ptr, "str" + (" or None" if nullable else ""), value)

    def timestamp(self, value: object, ptr: str, *, nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, datetime):
            return self.type_error(ptr, "datetime" + (" or None" if nullable else ""), value)
        problem = datetime_problem(value)
        if problem is not None:
            self.out.append(Violation(C.TIMESTAMP_FORMAT, ptr, problem))
            return _SKIP
        if type(value) is not datetime:
            self.exact_datetimes = False
        return format_timestamp(value)  # years before 1970: TIMESTAMP_RANGE on the text

    def enum(self, value: object, cls: type[Status] | type[Outcome], ptr: str) -> Any:
        if isinstance(value, cls):
            return value.value
        if type(value) is str:
            return value  # not a member (the model coerces members): *_VALUE on the text
        return self.type_error(ptr, f"{cls.__name__}", value)

    def payload(self, value: object) -> Any:
        if type(value) is not bytes:
            return self.type_error("/payload", "bytes", value)
        if self.payload_text:
            return super().payload(value)
        self.payload_chars = 4 * ((len(value) + 2) // 3)
        return ""

    def headers(self, value: object) -> Any:
        if isinstance(value, Mapping):
            return dict(value)
        return self.type_error("/headers", "a Mapping[str, str]", value)

    def attempts(self, value: object) -> Any:
        if isinstance(value, tuple | list):
            return super().attempts(value)
        return self.type_error("/attempts", "a tuple of Attempt", value)

    def attempt(self, attempt: object, ptr: AttemptPointers) -> Any:
        if not isinstance(attempt, Attempt):
            return self.type_error(ptr.attempt, "Attempt", attempt)
        return super().attempt(attempt, ptr)

    def error_or_none(self, error: object, ptr: AttemptPointers) -> Any:
        if error is None or isinstance(error, ErrorInfo):
            return super().error_or_none(error, ptr)
        return self.type_error(ptr.error, "ErrorInfo or None", error)

    def json(self, value: Any) -> Any:
        return value  # any JSON: judged by the JSON rules

    def extra(self, extra: object, known: frozenset[str], ptr: str, wire: dict[str, Any]) -> None:
        if not isinstance(extra, Mapping):
            self.type_error(f"{ptr}", "a Mapping for extra (unknown fields)", extra)
            return
        for key, value in extra.items():
            if key in known:
                self.out.append(
                    Violation(
                        C.DUPLICATE_KEY,
                        ptr,
                        f"extra holds the known field {key!r}; unknown fields must not "
                        "repeat a known one (the encoding would hold the key twice)",
                    )
                )
            else:
                wire[key] = value  # non-str keys and non-JSON values: the JSON rules
