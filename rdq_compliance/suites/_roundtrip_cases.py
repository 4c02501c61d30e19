"""The fixed examples of the round-trip suite (``test_roundtrip.py``), one table per
requirement: the values a store most often gets wrong, each a parametrized case named by
its key (RDQ-RT-004, -006 … -010).

Kept apart from the tests so that the suite module reads as its requirements; the test
ids come from these keys, so renaming one renames a test.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, Status
from rdq_compliance.strategies import EPOCH, LAST_INSTANT
from rdq_compliance.testing import (
    EVERY_JSON_TYPE,
    MAX_KNOWN_INT,
    T0,
    base_envelope,
    with_attempt,
    with_error,
)

__all__ = [
    "EMPTY_CASES", "HEADERS", "INSTANTS", "PAYLOADS", "REPEATED_HOURS", "TEXTS", "TYPE_CASES",
]


def _type_cases() -> dict[str, Envelope]:
    """Envelopes that put every typed field of the model at the values whose Python type
    or wire form a store most often gets wrong."""
    detail: dict[str, Any] = {"codes": [1, 2.5, None, True], "": {"nested": [[]]}}
    every_outcome = (
        Attempt(attempt_no=1, started_at=T0, finished_at=T0, outcome=Outcome.SUCCESS),
        Attempt(attempt_no=2, started_at=T0, finished_at=None,
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(type="e.Retry", message="m", detail=detail, stack="s"),
                extra={"x_attempt": 1}),
        Attempt(attempt_no=3, started_at=T0, finished_at=T0,
                outcome=Outcome.PERMANENT_FAILURE,
                error=ErrorInfo(type="e.Fatal", message="", extra={"x_error": [0.5]})),
        Attempt(attempt_no=4, started_at=T0, finished_at=T0, outcome=Outcome.LEASE_EXPIRED,
                error=ErrorInfo(type="rdq.LeaseExpired",
                                message="lease expired at 2026-07-20T14:03:22.117Z")),
    )
    range_ends = (
        Attempt(attempt_no=0, started_at=EPOCH, finished_at=LAST_INSTANT,
                outcome=Outcome.SUCCESS),
        Attempt(attempt_no=MAX_KNOWN_INT, started_at=LAST_INSTANT, finished_at=EPOCH,
                outcome=Outcome.RETRYABLE_FAILURE, error=ErrorInfo(type="", message="")),
    )
    return {
        # IN_FLIGHT: the only status with a lease; base64 with '+', '/' and padding.
        "every-field-set": base_envelope(
            4, status=Status.IN_FLIGHT, lease_expires_at=T0, payload=bytes(range(256)),
            attempt_count=7, redrive_count=3, attempts=every_outcome,
            extra={"x_every_type": list(EVERY_JSON_TYPE.values())},
        ),
        # null and empty values: None stays None, b"" stays bytes, 0 stays int.
        "nulls-and-empties": base_envelope(
            4, id="0" * 26, status=Status.SUCCEEDED, handler_version=None, payload=b"",
            headers={}, attempt_count=0, redrive_count=0, next_attempt_at=None,
            attempts=(),
        ),
        # the ends of every range: ids, counters, instants; 1- and 2-byte payloads.
        "range-ends": base_envelope(
            4, id="7" + "Z" * 25, status=Status.DEAD, payload=b"\xfb\xff",
            attempt_count=MAX_KNOWN_INT, redrive_count=MAX_KNOWN_INT, created_at=EPOCH,
            next_attempt_at=None, attempts=range_ends,
        ),
        "last-instant": base_envelope(
            4, id="01ARZ3NDEKTSV4RRFFQ69G5FAV", payload=b"\xff", created_at=LAST_INSTANT,
            next_attempt_at=LAST_INSTANT,
        ),
    }


TYPE_CASES = _type_cases()


TEXTS = {
    "nul": "\u0000",
    "nul-inside": "a\u0000b\u0000",
    "astral": "\U0001f600 \U0010ffff \U00020000",
    "nfd": "e\u0301",
    "nfc": "\u00e9",
    "ligature": "\ufb01",
    "sharp-s": "Stra\u00dfe",
    "padded": "  padded \t\n",
    "trailing-spaces": "CHAR(n) pads  ",
    "rtl": "\u202eabc\u202c \u05e9\u05dc\u05d5\u05dd",
    "bom": "\ufeffx",
    "separators": "\u2028\u2029\r\n",
    "null-text": "null",
    "number-like": "007.50",  # a SQLite column of NUMERIC affinity keeps it as 7.5
    "sql": "' OR 1=1; --",
    "json": '{"a": [1, "b"]}',
    "marker": "\u2026[truncated]",
    "empty": "",
}


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc,arg-type]


INSTANTS = {
    "epoch": _utc(1970, 1, 1),
    "last": _utc(9999, 12, 31, 23, 59, 59, 999_000),
    "leap-day": _utc(2024, 2, 29, 12, 0, 0, 1_000),
    "ms-999": _utc(2026, 7, 20, 14, 3, 22, 999_000),
    "ms-001": _utc(2026, 7, 20, 14, 3, 22, 1_000),
    "y2038": _utc(2038, 1, 19, 3, 14, 8, 0),
    "y2262": _utc(2262, 4, 11, 23, 47, 16, 855_000),
    # The repeated hour when clocks fall back, its second pass: an instant kept as a
    # local time (a DATETIME written in the server's zone, JDBC's default calendar)
    # reads back an hour early. Every European zone turns at 01:00 UTC; New York at
    # 06:00, Los Angeles at 09:00.
    "dst-fold-europe": _utc(2026, 10, 25, 1, 30, 0, 250_000),
    "dst-fold-us-east": _utc(2026, 11, 1, 6, 30, 0, 250_000),
    "dst-fold-us-west": _utc(2026, 11, 1, 9, 30, 0, 250_000),
}


#: Both passes of the hour repeated when clocks fall back, in every zone of the tz
#: database that turns them back in 2026: from Casablanca (February) and the southern
#: zones (April: Auckland, Lord Howe's half hour, Sydney, Adelaide, Santiago) to Gaza,
#: Beirut, Jerusalem, Chisinau, Europe, Troll's two hours, Cairo, St John's and every
#: zone of the Americas (November). An instant kept as a local time in the server's zone
#: reads one pass back an hour off wherever that zone is: the second an hour early when
#: the reader takes the earlier offset (java.time, Python's fold=0), the first an hour
#: late when it takes the later (PostgreSQL reads an ambiguous time as standard time).
#: ``tests/test_repeated_hours.py`` checks the list against the tz database.
REPEATED_HOURS = tuple(
    datetime.fromisoformat(text)
    for text in (
        "2026-02-15T01:30:00.250Z",
        "2026-02-15T02:30:00.250Z",
        "2026-04-04T13:30:00.250Z",
        "2026-04-04T14:30:00.250Z",
        "2026-04-04T14:45:00.250Z",
        "2026-04-04T15:15:00.250Z",
        "2026-04-04T15:30:00.250Z",
        "2026-04-04T16:00:00.250Z",
        "2026-04-04T16:30:00.250Z",
        "2026-04-04T17:00:00.250Z",
        "2026-04-05T02:30:00.250Z",
        "2026-04-05T03:30:00.250Z",
        "2026-10-23T22:30:00.250Z",
        "2026-10-23T23:30:00.250Z",
        "2026-10-24T20:30:00.250Z",
        "2026-10-24T21:30:00.250Z",
        "2026-10-24T22:30:00.250Z",
        "2026-10-24T23:30:00.250Z",
        "2026-10-25T00:00:00.250Z",
        "2026-10-25T00:30:00.250Z",
        "2026-10-25T01:30:00.250Z",
        "2026-10-25T02:00:00.250Z",
        "2026-10-29T20:30:00.250Z",
        "2026-10-29T21:30:00.250Z",
        "2026-11-01T03:30:00.250Z",
        "2026-11-01T04:00:00.250Z",
        "2026-11-01T04:30:00.250Z",
        "2026-11-01T05:00:00.250Z",
        "2026-11-01T05:30:00.250Z",
        "2026-11-01T06:30:00.250Z",
        "2026-11-01T07:30:00.250Z",
        "2026-11-01T08:30:00.250Z",
        "2026-11-01T09:30:00.250Z",
        "2026-11-01T10:30:00.250Z",
        "2026-11-01T11:30:00.250Z",
    )
)


PAYLOADS = {
    "empty": b"",
    "one-byte": b"\x00",
    "two-bytes": b"\xff\xfe",
    "all-bytes": bytes(range(256)),
    "utf8-bom": b"\xef\xbb\xbf{}",
    "invalid-utf8": b"\xc3\x28\xa0\xa1",
    "64k-random": random.Random(8).randbytes(65_536),
}


HEADERS: dict[str, dict[str, str]] = {
    "empty-map": {},
    "empty-key": {"": ""},
    "case-distinct": {"A": "upper", "a": "lower", "Content-Type": "x", "content-type": "y"},
    "dotted-and-rdq": {"rdq.source": "kafka://t/0/1", "rdq.submitted_by": "svc", "a.b.c": "d"},
    "empty-value": {"k": ""},
    "spaces": {" k ": " v ", "\t": "\n"},
    # a key column in MySQL's utf8mb4_bin (chosen to tell case apart) is PAD SPACE: its
    # unique key takes these three for one. The values end with a space too: a store that
    # strips every string (RDQ-RT-006) changes them, one that merges keys moves them.
    "space-distinct": {"k": "bare ", "k ": "one trailing space ",
                       "k  ": "two trailing spaces "},
}


_EMPTIES: dict[str, Any] = {"null": None, "empty-string": "", "empty-object": {},
                            "empty-array": []}


def _empty_cases() -> dict[str, list[Envelope]]:
    """In the known fields (run before the unknown-field tests: nothing else there), in
    detail, in unknown fields at every level, and in headers: each case runs after the
    tests of the place it puts them (``_ordering.item_rank``), so that a store losing
    that place fails there first, and one confusing the empty values fails here first."""
    in_detail: list[Envelope] = []
    unknown: list[Envelope] = []
    whole = T0.replace(microsecond=0)  # instants in seconds: they carry nothing else
    for n, value in enumerate(_EMPTIES.values(), 101):
        in_detail.append(base_envelope(
            n, created_at=whole, next_attempt_at=whole,
            attempts=(Attempt(attempt_no=1, started_at=whole, finished_at=whole,
                              outcome=Outcome.PERMANENT_FAILURE,
                              error=ErrorInfo(type="e.Fatal", message="m", detail=value)),)))
        env = with_error(base_envelope(n + 10, extra={"x": value}), extra={"x": value})
        unknown.append(with_attempt(env, extra={"x": value}))
    # the empty map, and the empty key with an empty value: headers' own tests first
    headers = [base_envelope(105, handler_version="", headers={"": ""}),
               base_envelope(109, headers={})]
    # instants in seconds here too: the attempt without an error (the trigger
    # ``null-error``) runs at RDQ-RT-010's place, before the tests that carry it
    at = {"created_at": whole, "next_attempt_at": whole}
    known = [base_envelope(106, handler_version=None, attempts=(), **at),
             base_envelope(107, handler_version="", attempts=(), **at),
             base_envelope(108, attempts=(Attempt(attempt_no=1, started_at=whole,
                                                  outcome=Outcome.SUCCESS),), **at)]
    return {"known-fields": known, "detail": in_detail, "unknown-fields": unknown,
            "headers": headers}


EMPTY_CASES = _empty_cases()
