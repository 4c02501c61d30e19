"""The envelope walk of the validator: required and optional members, each known
field's rule (dispatched by name), attempts, errors and the design invariants."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._check_values import _SKIP, _short, _ValueChecker
from ._codes import ViolationCode as C
from ._deep import SURROGATE as _SURROGATE
from ._ids import _CANONICAL as _ULID
from ._limits import MESSAGE_LIMIT, STACK_LIMIT
from ._model import OUTCOME_BY_VALUE, STATUS_BY_VALUE
from ._violations import pointer_token
from ._wire import AttemptPointers, attempt_pointers, base64_problem
from ._write import ATTEMPT_KNOWN as _ATTEMPT_KNOWN
from ._write import ENVELOPE_KNOWN as _ENVELOPE_KNOWN
from ._write import ERROR_KNOWN as _ERROR_KNOWN

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


class _Checker(_ValueChecker):
    """One pass over an envelope object, on the value rules of :class:`_ValueChecker`."""

    __slots__ = ()

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
