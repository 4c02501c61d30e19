"""Wire-form details shared by the codec and the validator: field order,
timestamp text (C3) and base64 text (C7)."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import NamedTuple

__all__ = [
    "ATTEMPT_FIELDS",
    "ENVELOPE_FIELDS",
    "ERROR_FIELDS",
    "AttemptPointers",
    "attempt_pointers",
    "base64_problem",
    "datetime_problem",
    "format_timestamp",
    "parse_timestamp",
    "timestamp_problem",
]

#: Known fields in the spec's order (the concrete envelope of wire-envelope.txt).
ENVELOPE_FIELDS: tuple[str, ...] = (
    "envelope_version",
    "id",
    "queue",
    "handler_ref",
    "handler_version",
    "payload",
    "payload_content_type",
    "headers",
    "status",
    "attempt_count",
    "redrive_count",
    "next_attempt_at",
    "lease_expires_at",
    "created_at",
    "attempts",
)
ATTEMPT_FIELDS: tuple[str, ...] = ("attempt_no", "started_at", "finished_at", "outcome", "error")
ERROR_FIELDS: tuple[str, ...] = ("type", "message", "detail", "stack")


class AttemptPointers(NamedTuple):
    """The JSON pointers of ``attempts[i]``, its fields and its error's fields."""

    attempt: str
    attempt_no: str
    started_at: str
    finished_at: str
    outcome: str
    error: str
    error_type: str
    error_message: str
    error_detail: str
    error_stack: str


@functools.lru_cache(maxsize=1024)
def attempt_pointers(i: int) -> AttemptPointers:
    """``attempts[i]``'s pointers, built once per index: the walks pass a field's
    pointer to every check (a violation or not), and formatting ten of them for each
    attempt of each envelope cost 3 % of a codec round trip."""
    at = f"/attempts/{i}"
    return AttemptPointers(
        at, f"{at}/attempt_no", f"{at}/started_at", f"{at}/finished_at", f"{at}/outcome",
        f"{at}/error", f"{at}/error/type", f"{at}/error/message", f"{at}/error/detail",
        f"{at}/error/stack",
    )  # fmt: skip


# [0-9], not \\d: \\d also matches non-ASCII digits such as U+0660. The regex fixes the
# form; datetime.fromisoformat (C code, fast) then checks that the date and time exist.
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_FORMAT_HINT = (
    "expected YYYY-MM-DDTHH:MM:SS.sssZ (UTC, exactly 3 fraction digits, upper-case T and Z)"
)
_RANGE_HINT = "valid timestamps run from 1970-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z"


def timestamp_problem(text: str) -> tuple[str, str] | None:
    """None if ``text`` is a valid v1 timestamp, else ("FORMAT" | "RANGE", message)."""
    if _TIMESTAMP.fullmatch(text) is None:
        return "FORMAT", f"{_FORMAT_HINT}, got {text!r}"
    if text.startswith("0000-"):  # well-formed, but before year 1 (and 1970)
        return "RANGE", f"{text!r} is before 1970-01-01T00:00:00.000Z; {_RANGE_HINT}"
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        return "FORMAT", f"{text!r} is not a real UTC date and time ({exc}; no leap seconds)"
    if value.year < 1970:
        return "RANGE", f"{text!r} is before 1970-01-01T00:00:00.000Z; {_RANGE_HINT}"
    return None


def parse_timestamp(text: str) -> datetime:
    """Parse v1 timestamp text into an aware UTC datetime; ValueError when it is not one.

    Years 1 to 1969 parse (the model can hold them); the validator reports them.
    """
    if _TIMESTAMP.fullmatch(text) is None:
        raise ValueError(f"{_FORMAT_HINT}, got {text!r}")
    try:
        return datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a real UTC date and time ({exc})") from None


def format_timestamp(value: datetime) -> str:
    """Wire text of an aware UTC, millisecond-precision datetime (callers check that)."""
    if type(value) is datetime:  # from its fields and two digit tables: isoformat() is
        d2 = _TWO_DIGITS  # 2.7 times slower, and this runs for every timestamp written
        return (
            f"{value.year:04d}-{d2[value.month]}-{d2[value.day]}T{d2[value.hour]}:"
            f"{d2[value.minute]}:{d2[value.second]}.{_THREE_DIGITS[value.microsecond // 1000]}Z"
        )
    return _format_timestamp_general(value)


def _format_timestamp_general(value: datetime) -> str:
    # Also for a subclass: it may override the field properties; isoformat() reads the
    # real ones.
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"


_TWO_DIGITS = tuple(f"{i:02d}" for i in range(100))
_THREE_DIGITS = tuple(f"{i:03d}" for i in range(1000))


def datetime_problem(value: datetime) -> str | None:
    """None if ``value`` can be written as a v1 timestamp, else why not."""
    if type(value) is datetime and value.tzinfo is UTC and not value.microsecond % 1000:
        return None  # the common case, without a utcoffset() call (a subclass may override it)
    return _datetime_problem_general(value)


def _datetime_problem_general(value: datetime) -> str | None:
    offset = value.utcoffset()
    if offset is None:
        return f"{value.isoformat()} is naive; expected an aware UTC datetime (tzinfo=datetime.UTC)"
    if offset:
        return f"{value.isoformat()} has a UTC offset of {offset}; expected UTC (offset 0)"
    if value.microsecond % 1000:
        return (
            f"{value.isoformat()} has microsecond={value.microsecond}; expected millisecond "
            "precision "
            "(microsecond a multiple of 1000)"
        )
    return None


_B64_BODY = re.compile(r"[A-Za-z0-9+/]*")
# The last data character before padding may only carry zero trailing bits.
_B64_LAST_BEFORE_2PAD = frozenset("AQgw")
_B64_LAST_BEFORE_1PAD = frozenset("AEIMQUYcgkosw048")


def base64_problem(text: str) -> str | None:
    """None if ``text`` is canonical standard padded base64 (C7), else why not."""
    n = len(text)
    if n % 4:
        return f"length {n} is not a multiple of 4; standard base64 is padded with '='"
    if n == 0:
        return None
    if text.endswith("=="):
        body, last, allowed = text[:-2], text[-3], _B64_LAST_BEFORE_2PAD
    elif text.endswith("="):
        body, last, allowed = text[:-1], text[-2], _B64_LAST_BEFORE_1PAD
    else:
        body, last, allowed = text, "", frozenset()
    m = _B64_BODY.match(body)
    end = m.end() if m else 0
    if end != len(body):
        return (
            f"character {body[end]!r} at index {end} is not in the standard base64 alphabet "
            "(A-Z a-z 0-9 + /, '=' only as final padding, no line breaks or spaces)"
        )
    if allowed and last not in allowed:
        return (
            f"character {last!r} before the padding has non-zero trailing bits; the canonical "
            "encoding of the same bytes differs"
        )
    return None
