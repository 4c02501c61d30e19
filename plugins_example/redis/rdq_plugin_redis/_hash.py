"""Envelope <-> Redis hash fields.

Redis strings are binary-safe, so free text is stored as its UTF-8 bytes (U+0000
and astral characters included) and the payload as raw bytes. A ``null`` known
field is an *absent* hash field; ``""`` is a present, empty one (C9).

- scalar known fields: one hash field each, under their wire names; integers in
  decimal; timestamps as integer milliseconds since the Unix epoch (exact, no
  time zone, no rounding: the model is at ms precision, C3).
- headers: one hash field per header, ``h:<key>`` (no known field name starts
  with ``h:``, so any key, ``""`` included, is safe); ``A`` and ``a`` are two fields.
- ``attempts``: JSON text of the list, in order (C12); each attempt's and error's
  unknown fields sit under their own ``extra`` key, never mixed with known names.
- ``residual``: JSON text of the top-level unknown fields (C10).

JSON is written by the standard library with ``allow_nan=False``: integers are
exact at any size and floats use the shortest repr that round-trips (C5), so
``-0.0``, ``5e-324`` and ``1.0`` come back as they went in. U+0000 in JSON
strings is written as ``\\u0000``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from rdq_compliance import Attempt, Envelope, ErrorInfo, JSONValue

__all__ = ["HEADER_PREFIX", "envelope_from_hash", "hash_from_envelope"]

HEADER_PREFIX = b"h:"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_ms(dt: datetime) -> int:
    if dt.tzinfo is None or dt.microsecond % 1000:
        raise ValueError(f"timestamp {dt!r} is not an aware datetime at ms precision (C3)")
    return (dt - _EPOCH) // _MS


def from_ms(ms: int) -> datetime:
    return _EPOCH + ms * _MS


def _dump(value: JSONValue | Mapping[str, Any] | list[Any]) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode("utf-8")


def _attempt_json(a: Attempt) -> dict[str, Any]:
    e = a.error
    return {
        "attempt_no": a.attempt_no,
        "started_at": to_ms(a.started_at),
        "finished_at": None if a.finished_at is None else to_ms(a.finished_at),
        "outcome": str(a.outcome),
        "error": None if e is None else {
            "type": e.type,
            "message": e.message,
            "detail": e.detail,
            "stack": e.stack,
            "extra": dict(e.extra),
        },
        "extra": dict(a.extra),
    }


def _attempt_model(o: dict[str, Any]) -> Attempt:
    e = o["error"]
    return Attempt(
        attempt_no=o["attempt_no"],
        started_at=from_ms(o["started_at"]),
        outcome=o["outcome"],
        finished_at=None if o["finished_at"] is None else from_ms(o["finished_at"]),
        error=None if e is None else ErrorInfo(
            type=e["type"], message=e["message"], detail=e["detail"], stack=e["stack"],
            extra=e["extra"],
        ),
        extra=o["extra"],
    )


def hash_from_envelope(env: Envelope) -> dict[bytes, bytes]:
    fields: dict[bytes, bytes] = {
        b"envelope_version": str(env.envelope_version).encode(),
        b"id": env.id.encode("utf-8"),
        b"queue": env.queue.encode("utf-8"),
        b"handler_ref": env.handler_ref.encode("utf-8"),
        b"payload": bytes(env.payload),
        b"payload_content_type": env.payload_content_type.encode("utf-8"),
        b"status": str(env.status).encode("utf-8"),
        b"attempt_count": str(env.attempt_count).encode(),
        b"redrive_count": str(env.redrive_count).encode(),
        b"created_at": str(to_ms(env.created_at)).encode(),
        b"attempts": _dump([_attempt_json(a) for a in env.attempts]),
        b"residual": _dump(dict(env.extra)),
    }
    if env.handler_version is not None:
        fields[b"handler_version"] = env.handler_version.encode("utf-8")
    if env.next_attempt_at is not None:
        fields[b"next_attempt_at"] = str(to_ms(env.next_attempt_at)).encode()
    if env.lease_expires_at is not None:
        fields[b"lease_expires_at"] = str(to_ms(env.lease_expires_at)).encode()
    for k, v in env.headers.items():
        fields[HEADER_PREFIX + k.encode("utf-8")] = v.encode("utf-8")
    return fields


def envelope_from_hash(h: Mapping[bytes, bytes]) -> Envelope:
    def text(name: bytes) -> str:
        return h[name].decode("utf-8")

    def opt_ts(name: bytes) -> datetime | None:
        return from_ms(int(h[name])) if name in h else None

    return Envelope(
        id=text(b"id"),
        envelope_version=int(h[b"envelope_version"]),
        queue=text(b"queue"),
        handler_ref=text(b"handler_ref"),
        handler_version=text(b"handler_version") if b"handler_version" in h else None,
        payload=bytes(h[b"payload"]),
        payload_content_type=text(b"payload_content_type"),
        headers={
            k[len(HEADER_PREFIX):].decode("utf-8"): v.decode("utf-8")
            for k, v in h.items()
            if k.startswith(HEADER_PREFIX)
        },
        status=text(b"status"),  # type: ignore[arg-type]  # the model coerces
        attempt_count=int(h[b"attempt_count"]),
        redrive_count=int(h[b"redrive_count"]),
        next_attempt_at=opt_ts(b"next_attempt_at"),
        lease_expires_at=opt_ts(b"lease_expires_at"),
        created_at=from_ms(int(h[b"created_at"])),
        attempts=tuple(_attempt_model(o) for o in json.loads(h[b"attempts"])),
        extra=json.loads(h[b"residual"]),
    )
