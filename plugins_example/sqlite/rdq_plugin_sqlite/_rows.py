"""Envelope <-> rows: the values of the native columns of ``rdq_tasks`` and ``rdq_attempts``.

Timestamps are INTEGER epoch milliseconds (exact at the model's precision, C3; a value
with sub-millisecond precision is refused, never cut). Unknown fields (C10), ``detail``
and, in layout 2, the headers are JSON text written ASCII-only and read back with
Python's exact int/float round trip (C5). The column lists give the order in which
``_task_row`` and ``_attempt_row`` build a row, as the statements in ``_storage.py`` name them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from rdq_compliance import Attempt, Envelope, ErrorCode, ErrorInfo, JSONValue, StorageError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)

_TASK_COLUMNS = (
    "namespace, id, envelope_version, queue, handler_ref, handler_version, payload, "
    "payload_content_type, status, attempt_count, redrive_count, next_attempt_at, "
    "lease_expires_at, created_at, residual"
)
_ATTEMPT_COLUMNS = (
    "namespace, task_id, position, attempt_no, started_at, finished_at, outcome, residual, "
    "has_error, error_type, error_message, error_detail, error_stack, error_residual"
)


# --- value conversions --------------------------------------------------------


def _to_ms(value: datetime, field: str) -> int:
    """An aware datetime -> integer epoch milliseconds, refusing to lose precision."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise StorageError(
            ErrorCode.INVALID_ENVELOPE,
            f"{field}={value!r} is not an aware datetime; expected a UTC timestamp",
        )
    if value.microsecond % 1000:
        raise StorageError(
            ErrorCode.INVALID_ENVELOPE,
            f"{field}={value!r} has sub-millisecond precision; v1 timestamps are milliseconds (C3)",
        )
    return (value - _EPOCH) // _MS


def _opt_ms(value: datetime | None, field: str) -> int | None:
    return None if value is None else _to_ms(value, field)


def _from_ms(ms: int | None) -> datetime | None:
    return None if ms is None else _EPOCH + ms * _MS


def _dump(value: JSONValue) -> str:
    """JSON text for a residual or ``detail``.

    ``ensure_ascii`` turns U+0000 and astral characters into escapes, so the
    column holds plain ASCII; ints are written in full and floats with
    ``repr`` (shortest text that reads back the same double: 5e-324 stays
    5e-324); ``allow_nan=False`` refuses NaN/Infinity, which are not JSON.
    """
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _load(text: str) -> Any:
    # json.loads parses integers with int() (exact, any size) and floats with
    # float() (correctly rounded), so a repr-written double comes back exactly.
    return json.loads(text)


def _residual(extra: Mapping[str, JSONValue], where: str) -> str:
    try:
        return _dump(dict(extra))
    except (TypeError, ValueError) as exc:
        raise StorageError(
            ErrorCode.INVALID_ENVELOPE, f"unknown fields of {where} are not JSON: {exc}"
        ) from None


def _headers_json(headers: Mapping[str, str]) -> str:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise StorageError(ErrorCode.INVALID_ENVELOPE, "header keys and values must be strings")
    try:  # layout 1 refuses a lone surrogate when binding it: so does layout 2
        "".join(f"{k}{v}" for k, v in headers.items()).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StorageError(ErrorCode.INVALID_ENVELOPE,
                           f"a header is not valid Unicode: {exc}") from None
    return _dump(dict(headers))


def _task_row(namespace: str, env: Envelope) -> tuple[object, ...]:
    return (
        namespace,
        env.id,
        env.envelope_version,
        env.queue,
        env.handler_ref,
        env.handler_version,
        bytes(env.payload),
        env.payload_content_type,
        str(env.status),  # StrEnum -> its value; a plain str stays itself
        env.attempt_count,
        env.redrive_count,
        _opt_ms(env.next_attempt_at, "next_attempt_at"),
        _opt_ms(env.lease_expires_at, "lease_expires_at"),
        _to_ms(env.created_at, "created_at"),
        _residual(env.extra, "the envelope"),
    )


def _attempt_row(namespace: str, task_id: str, pos: int, att: Attempt) -> tuple[object, ...]:
    where = f"attempts[{pos}]"
    err = att.error
    if err is None:
        error_cols: tuple[object, ...] = (0, None, None, None, None, None)
    else:
        try:
            detail = None if err.detail is None else _dump(err.detail)
        except (TypeError, ValueError) as exc:
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE, f"{where}.error.detail is not JSON: {exc}"
            ) from None
        error_cols = (
            1,
            err.type,
            err.message,
            detail,
            err.stack,
            _residual(err.extra, f"{where}.error"),
        )
    return (
        namespace,
        task_id,
        pos,
        att.attempt_no,
        _to_ms(att.started_at, f"{where}.started_at"),
        _opt_ms(att.finished_at, f"{where}.finished_at"),
        str(att.outcome),
        _residual(att.extra, where),
        *error_cols,
    )


def _attempt_from_row(row: tuple[Any, ...]) -> Attempt:
    (attempt_no, started_at, finished_at, outcome, residual, has_error,
     e_type, e_message, e_detail, e_stack, e_residual) = row  # fmt: skip
    error = None
    if has_error:
        error = ErrorInfo(
            type=e_type,
            message=e_message,
            detail=None if e_detail is None else _load(e_detail),
            stack=e_stack,
            extra=_load(e_residual),
        )
    return Attempt(
        attempt_no=attempt_no,
        started_at=_from_ms(started_at),  # type: ignore[arg-type]  # NOT NULL column
        outcome=outcome,
        finished_at=_from_ms(finished_at),
        error=error,
        extra=_load(residual),
    )
