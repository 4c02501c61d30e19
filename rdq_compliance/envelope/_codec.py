"""The canonical codec: JSON text/object <-> Envelope model.

Canonical form (C9): every known field of each object in the spec's order, nulls
included, then unknown fields in sorted key order; compact text has no
insignificant whitespace and keeps non-ASCII characters as they are.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from ._codes import ViolationCode as C
from ._deep import copy_json as _copy_json
from ._deep import dumps
from ._json import json_type_name, parse_json
from ._model import (
    OUTCOME_BY_VALUE,
    STATUS_BY_VALUE,
    Attempt,
    Envelope,
    ErrorInfo,
    JSONValue,
)
from ._validate import size_bound, validate_object
from ._violations import InvalidEnvelope, Violation
from ._wire import (
    parse_timestamp,
)
from ._write import ATTEMPT_KNOWN as _ATTEMPT_KNOWN
from ._write import ENVELOPE_KNOWN as _ENVELOPE_KNOWN
from ._write import ERROR_KNOWN as _ERROR_KNOWN
from ._write import ModelWriter

__all__ = ["decode", "encode", "from_json", "to_json"]



# -- decoding ------------------------------------------------------------------------


def decode(
    data: str | bytes | bytearray | Mapping[str, Any],
    *,
    versions: Collection[int] | None = (1,),
) -> Envelope:
    """Parse strictly, validate and build the model; InvalidEnvelope with ALL violations."""
    if isinstance(data, str | bytes | bytearray):
        obj: Mapping[str, Any] = parse_json(data)
        parsed, bound = True, size_bound(data)
    elif isinstance(data, Mapping):
        obj, parsed, bound = data, False, None
    else:
        raise TypeError(
            f"data={type(data).__name__}: expected JSON text (str/bytes) or a JSON object"
        )
    violations = validate_object(obj, versions=versions, parsed=parsed, size_bound=bound)
    if violations:
        raise InvalidEnvelope(violations)
    if not parsed:
        return _Builder(copy=True).envelope(obj)
    return _build_valid(obj)


# -- building a validated, freshly parsed object: no checks, no copies -----------------


def _ts_or_none(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _build_valid(obj: Mapping[str, Any]) -> Envelope:
    # validate() has vouched for every type and value, and parse_json's objects are
    # ours alone, so this is straight field access (the decode hot path).
    return Envelope(
        envelope_version=obj["envelope_version"],
        id=obj["id"],
        queue=obj["queue"],
        handler_ref=obj["handler_ref"],
        handler_version=obj.get("handler_version"),
        payload=binascii.a2b_base64(obj["payload"]),
        payload_content_type=obj["payload_content_type"],
        headers=obj["headers"],
        status=STATUS_BY_VALUE[obj["status"]],
        attempt_count=obj["attempt_count"],
        redrive_count=obj["redrive_count"],
        next_attempt_at=_ts_or_none(obj.get("next_attempt_at")),
        lease_expires_at=_ts_or_none(obj.get("lease_expires_at")),
        created_at=datetime.fromisoformat(obj["created_at"]),
        attempts=tuple(_build_valid_attempt(a) for a in obj["attempts"]),
        extra={k: v for k, v in obj.items() if k not in _ENVELOPE_KNOWN},
    )


def _build_valid_attempt(obj: dict[str, Any]) -> Attempt:
    error = obj.get("error")
    return Attempt(
        attempt_no=obj["attempt_no"],
        started_at=datetime.fromisoformat(obj["started_at"]),
        outcome=OUTCOME_BY_VALUE[obj["outcome"]],
        finished_at=_ts_or_none(obj.get("finished_at")),
        error=None
        if error is None
        else ErrorInfo(
            type=error["type"],
            message=error["message"],
            detail=error.get("detail"),
            stack=error.get("stack"),
            extra={k: v for k, v in error.items() if k not in _ERROR_KNOWN},
        ),
        extra={k: v for k, v in obj.items() if k not in _ATTEMPT_KNOWN},
    )


def from_json(obj: Mapping[str, Any]) -> Envelope:
    """Build the model from a JSON object without judging values (use ``validate`` for
    that); InvalidEnvelope lists whatever cannot be built (missing fields, wrong JSON
    types, unparsable timestamps or base64)."""
    if not isinstance(obj, Mapping):
        raise InvalidEnvelope(
            [Violation(C.FIELD_TYPE, "", f"expected a JSON object, got {json_type_name(obj)}")]
        )
    return _Builder(copy=True).envelope(obj)


class _Builder:
    __slots__ = ("copy", "out")

    def __init__(self, *, copy: bool) -> None:
        self.copy = copy
        self.out: list[Violation] = []

    def fail(self, code: C, ptr: str, message: str) -> Any:
        self.out.append(Violation(code, ptr, message))
        return None

    def get(self, obj: Mapping[str, Any], name: str, ptr: str, *, required: bool) -> Any:
        if name in obj:
            return obj[name]
        if required:
            self.fail(C.FIELD_MISSING, f"{ptr}/{name}", f"required field {name!r} is absent")
        return None

    def text(self, obj: Mapping[str, Any], name: str, ptr: str, *, required: bool = True) -> Any:
        value = self.get(obj, name, ptr, required=required)
        if type(value) is str or (value is None and not required):
            return value
        if value is None and name not in obj:
            return None  # reported as missing
        return self.fail(
            C.FIELD_TYPE, f"{ptr}/{name}", f"expected a string, got {json_type_name(value)}"
        )

    def integer(self, obj: Mapping[str, Any], name: str, ptr: str) -> Any:
        value = self.get(obj, name, ptr, required=True)
        if type(value) is int or name not in obj:
            return value
        return self.fail(
            C.FIELD_TYPE, f"{ptr}/{name}", f"expected an integer, got {json_type_name(value)}"
        )

    def timestamp(
        self, obj: Mapping[str, Any], name: str, ptr: str, *, required: bool = True
    ) -> Any:
        value = self.get(obj, name, ptr, required=required)
        if value is None:
            if required and name in obj:
                self.fail(C.FIELD_TYPE, f"{ptr}/{name}", "expected a timestamp string, got null")
            return None
        if type(value) is not str:
            return self.fail(
                C.FIELD_TYPE,
                f"{ptr}/{name}",
                f"expected a timestamp string, got {json_type_name(value)}",
            )
        try:
            return parse_timestamp(value)
        except ValueError as exc:
            return self.fail(C.TIMESTAMP_FORMAT, f"{ptr}/{name}", str(exc))

    def residual(self, obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, JSONValue]:
        if self.copy:
            return {k: _copy_json(v) for k, v in obj.items() if k not in known}
        return {k: v for k, v in obj.items() if k not in known}

    def envelope(self, obj: Mapping[str, Any]) -> Envelope:
        payload: Any = self.text(obj, "payload", "")
        if payload is not None:
            try:
                payload = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError) as exc:
                payload = self.fail(C.PAYLOAD_BASE64, "/payload", f"not base64: {exc}")
        headers: Any = self.get(obj, "headers", "", required=True)
        if type(headers) is dict and all(type(v) is str for v in headers.values()):
            headers = dict(headers)
        elif "headers" in obj:
            headers = self.fail(C.FIELD_TYPE, "/headers", "expected an object of string values")
        status = self.text(obj, "status", "")
        attempts: Any = self.get(obj, "attempts", "", required=True)
        if type(attempts) is list:
            attempts = tuple(self.attempt(a, f"/attempts/{i}") for i, a in enumerate(attempts))
        elif "attempts" in obj:
            attempts = self.fail(C.FIELD_TYPE, "/attempts", "expected an array")
        fields: dict[str, Any] = {
            "envelope_version": self.integer(obj, "envelope_version", ""),
            "id": self.text(obj, "id", ""),
            "queue": self.text(obj, "queue", ""),
            "handler_ref": self.text(obj, "handler_ref", ""),
            "handler_version": self.text(obj, "handler_version", "", required=False),
            "payload": payload,
            "payload_content_type": self.text(obj, "payload_content_type", ""),
            "headers": headers,
            "status": status,
            "attempt_count": self.integer(obj, "attempt_count", ""),
            "redrive_count": self.integer(obj, "redrive_count", ""),
            "next_attempt_at": self.timestamp(obj, "next_attempt_at", "", required=False),
            "lease_expires_at": self.timestamp(obj, "lease_expires_at", "", required=False),
            "created_at": self.timestamp(obj, "created_at", ""),
            "attempts": attempts,
        }
        if self.out:
            raise InvalidEnvelope(self.out)
        return Envelope(**fields, extra=self.residual(obj, _ENVELOPE_KNOWN))

    def attempt(self, obj: object, ptr: str) -> Any:
        if type(obj) is not dict:
            return self.fail(C.FIELD_TYPE, ptr, f"expected an object, got {json_type_name(obj)}")
        error: Any = obj.get("error")
        if type(error) is dict:
            error = self.error(error, f"{ptr}/error")
        elif error is not None:
            error = self.fail(
                C.FIELD_TYPE,
                f"{ptr}/error",
                f"expected an object or null, got {json_type_name(error)}",
            )
        return Attempt(
            attempt_no=self.integer(obj, "attempt_no", ptr),
            started_at=self.timestamp(obj, "started_at", ptr),
            finished_at=self.timestamp(obj, "finished_at", ptr, required=False),
            outcome=self.text(obj, "outcome", ptr),
            error=error,
            extra=self.residual(obj, _ATTEMPT_KNOWN),
        )

    def error(self, obj: dict[str, Any], ptr: str) -> ErrorInfo:
        detail = obj.get("detail")
        return ErrorInfo(
            type=self.text(obj, "type", ptr),
            message=self.text(obj, "message", ptr),
            detail=_copy_json(detail) if self.copy else detail,
            stack=self.text(obj, "stack", ptr, required=False),
            extra=self.residual(obj, _ERROR_KNOWN),
        )


# -- encoding ------------------------------------------------------------------------


def to_json(env: Envelope) -> dict[str, JSONValue]:
    """The canonical JSON object of ``env``: known fields in spec order (nulls
    included), then unknown fields sorted by key. ValueError when the model cannot be
    written (naive or non-UTC timestamps, sub-millisecond precision, a known field in
    ``extra``)."""
    if not isinstance(env, Envelope):
        raise TypeError(f"env={type(env).__name__}: expected an Envelope")
    return _WRITER.envelope(env)


_WRITER = ModelWriter()


def encode(env: Envelope, *, pretty: bool = False) -> str:
    """Canonical JSON text of ``env`` (compact, or indented by 2 when ``pretty``)."""
    obj = to_json(env)
    return dumps(obj, pretty=pretty)
