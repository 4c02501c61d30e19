"""Envelope <-> rows: the decomposition into native MariaDB columns.

MariaDB strings hold U+0000 and (as ``utf8mb4``) astral characters, so free text
is stored as text. Every text column uses ``utf8mb4_bin``: no case folding
(``A`` and ``a`` are two header keys), no accent folding, no normalization.
Unknown fields and ``detail`` are JSON *text* in LONGTEXT, not the JSON type,
which normalizes numbers and keys. Timestamps are DATETIME(3) holding UTC.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rdq_compliance import Attempt, Envelope, ErrorInfo, JSONValue

__all__ = [
    "ATTEMPT_COLUMNS",
    "ENVELOPE_COLUMNS",
    "envelope_from_rows",
    "rows_from_envelope",
]

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


def dump_json(value: JSONValue | Mapping[str, JSONValue]) -> str:
    # Standard-library JSON: exact integers, shortest round-tripping floats (C5);
    # U+0000 becomes \u0000. Non-ASCII stays as is: the column is utf8mb4.
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def load_json(text: str) -> Any:
    return json.loads(text)


def _naive_utc(dt: datetime | None) -> datetime | None:
    """DATETIME has no zone: store the UTC wall clock. DATETIME(3) would silently
    drop sub-millisecond digits, so refuse them instead (C3 has none)."""
    if dt is None:
        return None
    if dt.tzinfo is None or dt.microsecond % 1000:
        raise ValueError(f"timestamp {dt!r} is not an aware datetime at ms precision (C3)")
    return dt.astimezone(UTC).replace(tzinfo=None)


def _aware(dt: datetime | None) -> datetime | None:
    return None if dt is None else dt.replace(tzinfo=UTC)


def rows_from_envelope(
    env: Envelope,
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    envelope_row = (
        env.id,
        env.envelope_version,
        env.queue,
        env.handler_ref,
        env.handler_version,  # NULL is null; '' is ""
        bytes(env.payload),
        env.payload_content_type,
        str(env.status),
        env.attempt_count,
        env.redrive_count,
        _naive_utc(env.next_attempt_at),
        _naive_utc(env.lease_expires_at),
        _naive_utc(env.created_at),
        dump_json(dict(env.extra)),
    )
    # Headers by position, not by key: a key may be any length, and an index on it
    # would need a prefix length (and a PAD SPACE collation would merge "a"/"a ").
    header_rows = [(env.id, i, k, v) for i, (k, v) in enumerate(env.headers.items())]
    attempt_rows = []
    for i, a in enumerate(env.attempts):
        e = a.error
        attempt_rows.append((
            env.id,
            i,  # C12: the list order, never attempt_no
            a.attempt_no,
            _naive_utc(a.started_at),
            _naive_utc(a.finished_at),
            str(a.outcome),
            dump_json(dict(a.extra)),
            None if e is None else e.type,  # NULL type <=> no error object
            None if e is None else e.message,
            None if e is None else dump_json(e.detail),  # 'null' is JSON null
            None if e is None else e.stack,
            None if e is None else dump_json(dict(e.extra)),
        ))
    return envelope_row, header_rows, attempt_rows


def envelope_from_rows(
    envelope_row: tuple[Any, ...],
    header_rows: tuple[tuple[Any, ...], ...],
    attempt_rows: tuple[tuple[Any, ...], ...],
) -> Envelope:
    (id_, version, queue, handler_ref, handler_version, payload, content_type, status,
     attempt_count, redrive_count, next_attempt_at, lease_expires_at, created_at,
     residual) = envelope_row
    attempts = []
    for (attempt_no, started_at, finished_at, outcome, a_residual, e_type, e_message,
         e_detail, e_stack, e_residual) in attempt_rows:
        error = None
        if e_type is not None:
            error = ErrorInfo(
                type=e_type,
                message=e_message,
                detail=load_json(e_detail),
                stack=e_stack,
                extra=load_json(e_residual),
            )
        attempts.append(Attempt(
            attempt_no=attempt_no,
            started_at=_aware(started_at),  # type: ignore[arg-type]
            outcome=outcome,
            finished_at=_aware(finished_at),
            error=error,
            extra=load_json(a_residual),
        ))
    return Envelope(
        id=id_,
        envelope_version=version,
        queue=queue,
        handler_ref=handler_ref,
        handler_version=handler_version,
        payload=bytes(payload),
        payload_content_type=content_type,
        headers=dict(header_rows),
        status=status,
        attempt_count=attempt_count,
        redrive_count=redrive_count,
        next_attempt_at=_aware(next_attempt_at),
        lease_expires_at=_aware(lease_expires_at),
        created_at=_aware(created_at),  # type: ignore[arg-type]
        attempts=tuple(attempts),
        extra=load_json(residual),
    )
