"""Envelope <-> rows: the decomposition into native PostgreSQL columns.

Free text (handler_version, payload_content_type, header keys and values, the
error's type/message/stack) goes into ``bytea`` as UTF-8: PostgreSQL ``text``
cannot hold U+0000, which C4 allows in every free-text field, and ``bytea``
keeps every code point byte for byte with no collation or normalization in the
way. Names that the spec restricts to ``[a-z0-9._-]`` (queue, handler_ref), the
id and the enum values stay ``text``.

Unknown fields (C10) and ``detail`` are JSON *text* (never ``jsonb``, which
rejects ``\\u0000`` and normalizes numbers, key order and duplicates), written
ASCII-only so any server encoding stores them, and parsed back with Python's
exact int/float round trip (C5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rdq_compliance import Attempt, Envelope, ErrorInfo, JSONValue

__all__ = [
    "AttemptRow",
    "EnvelopeRow",
    "HeaderRow",
    "envelope_from_rows",
    "rows_from_envelope",
]

EnvelopeRow = tuple[Any, ...]
HeaderRow = tuple[str, int, bytes, bytes]
AttemptRow = tuple[Any, ...]

# Column order of the envelope table, as the INSERT in _storage.py lists them.
ENVELOPE_COLUMNS = (
    "id", "envelope_version", "queue", "handler_ref", "handler_version", "payload",
    "payload_content_type", "status", "attempt_count", "redrive_count",
    "next_attempt_at", "lease_expires_at", "created_at", "residual",
)
ATTEMPT_COLUMNS = (
    "envelope_id", "position", "attempt_no", "started_at", "finished_at", "outcome",
    "residual", "error_type", "error_message", "error_detail", "error_stack",
    "error_residual",
)


def _utf8(s: str) -> bytes:
    # strict: a lone surrogate (invalid per C4) fails here, before the server.
    return s.encode("utf-8")


def _text(b: bytes) -> str:
    return bytes(b).decode("utf-8")


def _opt_utf8(s: str | None) -> bytes | None:
    return None if s is None else _utf8(s)


def _opt_text(b: bytes | None) -> str | None:
    return None if b is None else _text(b)


def dump_json(value: JSONValue | Mapping[str, JSONValue]) -> str:
    # ensure_ascii: \u escapes for everything non-ASCII (U+0000 included), so
    # the text is valid in any server encoding; floats use repr (exact).
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def load_json(text: str) -> Any:
    return json.loads(text)


def _utc(dt: datetime | None) -> datetime | None:
    # The session runs with TimeZone=UTC; normalise the tzinfo object anyway.
    return None if dt is None else dt.astimezone(UTC)


def rows_from_envelope(
    env: Envelope,
) -> tuple[EnvelopeRow, list[HeaderRow], list[AttemptRow]]:
    envelope_row: EnvelopeRow = (
        env.id,
        env.envelope_version,
        env.queue,
        env.handler_ref,
        _opt_utf8(env.handler_version),  # NULL is null; b"" is ""
        bytes(env.payload),
        _utf8(env.payload_content_type),
        str(env.status),
        env.attempt_count,
        env.redrive_count,
        env.next_attempt_at,
        env.lease_expires_at,
        env.created_at,
        dump_json(dict(env.extra)),
    )
    # Headers are child rows keyed by position, not by key: a key may be any
    # string of any length, and a btree key is limited to ~2.7 kB.
    header_rows: list[HeaderRow] = [
        (env.id, i, _utf8(k), _utf8(v)) for i, (k, v) in enumerate(env.headers.items())
    ]
    attempt_rows: list[AttemptRow] = []
    for i, a in enumerate(env.attempts):
        e = a.error
        attempt_rows.append((
            env.id,
            i,  # C12: the list order, never attempt_no
            a.attempt_no,
            a.started_at,
            a.finished_at,
            str(a.outcome),
            dump_json(dict(a.extra)),
            None if e is None else _utf8(e.type),  # NULL type <=> no error object
            None if e is None else _utf8(e.message),
            None if e is None else dump_json(e.detail),  # 'null' is JSON null
            None if e is None else _opt_utf8(e.stack),
            None if e is None else dump_json(dict(e.extra)),
        ))
    return envelope_row, header_rows, attempt_rows


def envelope_from_rows(
    envelope_row: tuple[Any, ...],
    header_rows: list[tuple[Any, ...]],
    attempt_rows: list[tuple[Any, ...]],
) -> Envelope:
    (id_, version, queue, handler_ref, handler_version, payload, content_type, status,
     attempt_count, redrive_count, next_attempt_at, lease_expires_at, created_at,
     residual) = envelope_row
    attempts = []
    for row in attempt_rows:
        (attempt_no, started_at, finished_at, outcome, a_residual, e_type, e_message,
         e_detail, e_stack, e_residual) = row
        error = None
        if e_type is not None:
            error = ErrorInfo(
                type=_text(e_type),
                message=_text(e_message),
                detail=load_json(e_detail),
                stack=_opt_text(e_stack),
                extra=load_json(e_residual),
            )
        attempts.append(Attempt(
            attempt_no=attempt_no,
            started_at=_utc(started_at),  # type: ignore[arg-type]
            outcome=outcome,
            finished_at=_utc(finished_at),
            error=error,
            extra=load_json(a_residual),
        ))
    return Envelope(
        id=id_,
        envelope_version=version,
        queue=queue,
        handler_ref=handler_ref,
        handler_version=_opt_text(handler_version),
        payload=bytes(payload),
        payload_content_type=_text(content_type),
        headers={_text(k): _text(v) for k, v in header_rows},
        status=status,
        attempt_count=attempt_count,
        redrive_count=redrive_count,
        next_attempt_at=_utc(next_attempt_at),
        lease_expires_at=_utc(lease_expires_at),
        created_at=_utc(created_at),  # type: ignore[arg-type]
        attempts=tuple(attempts),
        extra=load_json(residual),
    )
