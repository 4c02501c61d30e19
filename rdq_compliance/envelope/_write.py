"""The one model -> wire walk.

:class:`ModelWriter` turns a model into its canonical JSON object: the known fields in
the spec's order (nulls included), then the unknown fields sorted by key. ``to_json``
writes with it as it is; the validator's model checker subclasses it, checking each
Python type where this writer trusts it, so the field tables live here only.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

from ._deep import copy_json
from ._model import Attempt, Envelope, ErrorInfo, Outcome, Status
from ._wire import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    AttemptPointers,
    attempt_pointers,
    datetime_problem,
    format_timestamp,
)

__all__ = ["ATTEMPT_KNOWN", "ENVELOPE_KNOWN", "ERROR_KNOWN", "ModelWriter"]

ENVELOPE_KNOWN = frozenset(ENVELOPE_FIELDS)
ATTEMPT_KNOWN = frozenset(ATTEMPT_FIELDS)
ERROR_KNOWN = frozenset(ERROR_FIELDS)


class ModelWriter:
    """Writes a model's wire form, trusting its Python types (``to_json``).

    ValueError when the model cannot be written: a timestamp that is naive, not UTC or
    finer than a millisecond, or a known field in ``extra``. JSON values are copied, so
    the object shares no container with the model. A subclass that judges instead of
    trusting overrides the value hooks (``int_`` ... ``extra``); the walk stays one."""

    __slots__ = ()

    # -- value hooks -------------------------------------------------------------------

    def int_(self, value: Any, ptr: str) -> Any:
        return value

    def text(self, value: Any, ptr: str, *, nullable: bool = False) -> Any:
        return value

    def timestamp(self, value: Any, ptr: str, *, nullable: bool = False) -> Any:
        if value is None:
            return None
        problem = datetime_problem(value) if isinstance(value, datetime) else "not a datetime"
        if problem is not None:
            raise ValueError(f"{ptr.lstrip('/') or 'timestamp'}: {problem}")
        return format_timestamp(value)

    def enum(self, value: Any, cls: type[Status] | type[Outcome], ptr: str) -> Any:
        return value.value if isinstance(value, Status | Outcome) else value

    def payload(self, value: Any) -> Any:
        return base64.b64encode(value).decode("ascii")

    def headers(self, value: Any) -> Any:
        return dict(value)

    def attempts(self, value: Any) -> Any:
        return [self.attempt(a, attempt_pointers(i)) for i, a in enumerate(value)]

    def error_or_none(self, error: Any, ptr: AttemptPointers) -> Any:
        return None if error is None else self.error(error, ptr)

    def json(self, value: Any) -> Any:
        return copy_json(value)

    def extra(self, extra: Any, known: frozenset[str], ptr: str, wire: dict[str, Any]) -> None:
        if not extra:
            return
        clash = sorted(k for k in extra if k in known)
        if clash:
            raise ValueError(
                f"extra={dict(extra)!r} at {ptr or '/'}: holds known field(s) {clash}; "
                "extra is for unknown fields only — set the model field instead"
            )
        for key in sorted(extra):
            wire[key] = copy_json(extra[key])

    # -- the walk ----------------------------------------------------------------------

    def envelope(self, env: Envelope) -> dict[str, Any]:
        # headers, attempts and payload first: the checker reports in this order
        headers = self.headers(env.headers)
        attempts = self.attempts(env.attempts)
        payload = self.payload(env.payload)
        text, int_, timestamp = self.text, self.int_, self.timestamp  # bound once: hot path
        wire: dict[str, Any] = {
            "envelope_version": int_(env.envelope_version, "/envelope_version"),
            "id": text(env.id, "/id"),
            "queue": text(env.queue, "/queue"),
            "handler_ref": text(env.handler_ref, "/handler_ref"),
            "handler_version": text(env.handler_version, "/handler_version", nullable=True),
            "payload": payload,
            "payload_content_type": text(env.payload_content_type, "/payload_content_type"),
            "headers": headers,
            "status": self.enum(env.status, Status, "/status"),
            "attempt_count": int_(env.attempt_count, "/attempt_count"),
            "redrive_count": int_(env.redrive_count, "/redrive_count"),
            "next_attempt_at": timestamp(env.next_attempt_at, "/next_attempt_at", nullable=True),
            "lease_expires_at": timestamp(env.lease_expires_at, "/lease_expires_at", nullable=True),
            "created_at": timestamp(env.created_at, "/created_at"),
            "attempts": attempts,
        }
        self.extra(env.extra, ENVELOPE_KNOWN, "", wire)
        return wire

    def attempt(self, attempt: Attempt, ptr: AttemptPointers) -> Any:
        error = self.error_or_none(attempt.error, ptr)
        wire: dict[str, Any] = {
            "attempt_no": self.int_(attempt.attempt_no, ptr.attempt_no),
            "started_at": self.timestamp(attempt.started_at, ptr.started_at),
            "finished_at": self.timestamp(attempt.finished_at, ptr.finished_at, nullable=True),
            "outcome": self.enum(attempt.outcome, Outcome, ptr.outcome),
            "error": error,
        }
        self.extra(attempt.extra, ATTEMPT_KNOWN, ptr.attempt, wire)
        return wire

    def error(self, error: ErrorInfo, ptr: AttemptPointers) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "type": self.text(error.type, ptr.error_type),
            "message": self.text(error.message, ptr.error_message),
            "detail": self.json(error.detail),
            "stack": self.text(error.stack, ptr.error_stack, nullable=True),
        }
        self.extra(error.extra, ERROR_KNOWN, ptr.error, wire)
        return wire
