"""The validator: every ViolationCode with passing and failing cases, pointers asserted."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdq_compliance import (
    Attempt,
    Envelope,
    ErrorInfo,
    InvalidEnvelope,
    Violation,
    ViolationCode,
    decode,
    encode,
    validate,
)
from rdq_compliance.testing import with_attempt, with_error

from ._envelopes import DELETE, SEED_TEXT, mutate, seed

C = ViolationCode
E0 = "/attempts/0/error"

LEASE_EXPIRED_ERROR = {
    "type": "rdq.LeaseExpired",
    "message": "lease expired at 2026-07-20T14:04:22.200Z",
    "detail": None,
    "stack": None,
}

# (case id, {pointer: new value | DELETE}) -> must stay valid.
VALID: list[tuple[str, dict[str, Any]]] = [
    ("seed", {}),
    ("attempt_count above attempts", {"/attempt_count": 7}),
    ("attempt_count below attempts", {"/attempt_count": 0}),
    ("known ints at 32-bit max", {"/attempt_count": 2**31 - 1, "/redrive_count": 2**31 - 1}),
    ("attempt_no zero", {"/attempts/0/attempt_no": 0}),
    ("repeated attempt_no", {"/attempts": [seed()["attempts"][0]] * 2}),
    ("no attempts", {"/attempts": []}),
    ("queue of 240", {"/queue": "q" * 240}),
    ("queue of 1", {"/queue": "a"}),
    ("queue all chars", {"/queue": "abcxyz0189._-"}),
    ("handler_ref of 240", {"/handler_ref": "h" * 240}),
    ("empty headers", {"/headers": {}}),
    ("odd header keys", {"/headers": {"": "", "A": "x", "a": "y", "rdq.x": "\u0000😀"}}),
    ("empty payload", {"/payload": ""}),
    ("payload one pad", {"/payload": "AAE="}),
    ("payload two pads", {"/payload": "AQ=="}),
    ("payload plus slash", {"/payload": "+/+/"}),
    ("free text any scalar", {"/payload_content_type": "", "/handler_version": "\u0000𝄞"}),
    ("first instant", {"/created_at": "1970-01-01T00:00:00.000Z"}),
    ("last instant", {"/created_at": "9999-12-31T23:59:59.999Z"}),
    ("leap day", {"/attempts/0/started_at": "2024-02-29T23:59:59.999Z"}),
    ("message at 4096 bytes", {E0 + "/message": "é" * 2048}),
    ("message at 4096 ending in marker", {E0 + "/message": "x" * 4082 + "…[truncated]"}),
    ("stack at 65536 bytes", {E0 + "/stack": "😀" * 16384}),
    (
        "in flight with lease",
        {
            "/status": "IN_FLIGHT",
            "/next_attempt_at": None,
            "/lease_expires_at": "2026-07-20T14:06:00.000Z",
        },
    ),
    (
        "in flight with due time",
        {"/status": "IN_FLIGHT", "/lease_expires_at": "2026-07-20T14:06:00.000Z"},
    ),
    ("succeeded", {"/status": "SUCCEEDED", "/next_attempt_at": None}),
    ("dead, next absent", {"/status": "DEAD", "/next_attempt_at": DELETE}),
    ("lease expired attempt", {"/attempts/0/outcome": "LEASE_EXPIRED", E0: LEASE_EXPIRED_ERROR}),
    (
        "lease expired, stack absent",
        {"/attempts/0/outcome": "LEASE_EXPIRED", E0: {"type": "rdq.LeaseExpired", "message": "m"}},
    ),
    (
        "optional fields absent",
        {
            "/handler_version": DELETE,
            "/next_attempt_at": DELETE,
            "/lease_expires_at": DELETE,
            "/attempts/0/finished_at": DELETE,
            E0 + "/detail": DELETE,
            E0 + "/stack": DELETE,
        },
    ),
    ("error absent", {E0: DELETE}),
    ("error null", {E0: None}),
    (
        "unknown fields any JSON",
        {
            "/payload_ref": {"a": [1, None, True, "s", 1.5, {}]},
            "/attempts/0/x": [],
            E0 + "/y": None,
            "/z": "",
        },
    ),
    ("int64 bounds", {"/a": 2**63 - 1, "/b": -(2**63), E0 + "/detail": {"n": -(2**63)}}),
    ("largest double", {"/a": 1.7976931348623157e308, "/b": -5e-324}),
    ("detail any JSON", {E0 + "/detail": {"code": 42, "retry": [1.0, "x"]}}),
]

# (case id, changes, [(code, pointer), ...]) -> exactly these violations.
INVALID: list[tuple[str, dict[str, Any], list[tuple[C, str]]]] = [
    # FIELD_MISSING: every required field, at the pointer of the absent member.
    *[
        (f"missing {name}", {f"/{name}": DELETE}, [(C.FIELD_MISSING, f"/{name}")])
        for name in (
            "id",
            "queue",
            "handler_ref",
            "payload",
            "payload_content_type",
            "headers",
            "attempt_count",
            "redrive_count",
            "created_at",
            "attempts",
        )
    ],
    (
        "missing envelope_version",
        {"/envelope_version": DELETE},
        [(C.FIELD_MISSING, "/envelope_version")],
    ),
    ("missing status", {"/status": DELETE}, [(C.FIELD_MISSING, "/status")]),
    *[
        (
            f"missing attempt {name}",
            {f"/attempts/0/{name}": DELETE},
            [(C.FIELD_MISSING, f"/attempts/0/{name}")],
        )
        for name in ("attempt_no", "started_at")
    ],
    (
        "missing outcome",
        {"/attempts/0/outcome": DELETE},
        [(C.FIELD_MISSING, "/attempts/0/outcome")],
    ),
    ("missing error type", {E0 + "/type": DELETE}, [(C.FIELD_MISSING, E0 + "/type")]),
    ("missing error message", {E0 + "/message": DELETE}, [(C.FIELD_MISSING, E0 + "/message")]),
    # FIELD_TYPE
    ("id number", {"/id": 5}, [(C.FIELD_TYPE, "/id")]),
    ("queue null", {"/queue": None}, [(C.FIELD_TYPE, "/queue")]),
    (
        "content type null",
        {"/payload_content_type": None},
        [(C.FIELD_TYPE, "/payload_content_type")],
    ),
    ("handler_version number", {"/handler_version": 3}, [(C.FIELD_TYPE, "/handler_version")]),
    ("payload array", {"/payload": [1]}, [(C.FIELD_TYPE, "/payload")]),
    ("headers array", {"/headers": []}, [(C.FIELD_TYPE, "/headers")]),
    ("headers null", {"/headers": None}, [(C.FIELD_TYPE, "/headers")]),
    ("header value number", {"/headers/traceparent": 1}, [(C.FIELD_TYPE, "/headers/traceparent")]),
    ("header value null", {"/headers/a~0b~1c": None}, [(C.FIELD_TYPE, "/headers/a~0b~1c")]),
    ("status number", {"/status": 1}, [(C.FIELD_TYPE, "/status")]),
    (
        "status array with lease",
        {"/status": [], "/lease_expires_at": "2026-07-20T14:06:00.000Z"},
        [(C.FIELD_TYPE, "/status")],
    ),
    ("outcome object", {"/attempts/0/outcome": {}}, [(C.FIELD_TYPE, "/attempts/0/outcome")]),
    ("attempt_count bool", {"/attempt_count": True}, [(C.FIELD_TYPE, "/attempt_count")]),
    ("attempt_count 1.0", {"/attempt_count": 1.0}, [(C.FIELD_TYPE, "/attempt_count")]),
    ("redrive_count string", {"/redrive_count": "0"}, [(C.FIELD_TYPE, "/redrive_count")]),
    ("envelope_version 1.0", {"/envelope_version": 1.0}, [(C.FIELD_TYPE, "/envelope_version")]),
    ("attempt_no 1.5", {"/attempts/0/attempt_no": 1.5}, [(C.FIELD_TYPE, "/attempts/0/attempt_no")]),
    ("created_at null", {"/created_at": None}, [(C.FIELD_TYPE, "/created_at")]),
    ("next_attempt_at number", {"/next_attempt_at": 0}, [(C.FIELD_TYPE, "/next_attempt_at")]),
    (
        "finished_at bool",
        {"/attempts/0/finished_at": False},
        [(C.FIELD_TYPE, "/attempts/0/finished_at")],
    ),
    ("attempts object", {"/attempts": {}}, [(C.FIELD_TYPE, "/attempts")]),
    ("attempt not object", {"/attempts": [1]}, [(C.FIELD_TYPE, "/attempts/0")]),
    ("error string", {E0: "boom"}, [(C.FIELD_TYPE, E0)]),
    ("error message null", {E0 + "/message": None}, [(C.FIELD_TYPE, E0 + "/message")]),
    ("error type number", {E0 + "/type": 1}, [(C.FIELD_TYPE, E0 + "/type")]),
    ("error stack object", {E0 + "/stack": {}}, [(C.FIELD_TYPE, E0 + "/stack")]),
    ("outcome null", {"/attempts/0/outcome": None}, [(C.FIELD_TYPE, "/attempts/0/outcome")]),
    # INTEGER_RANGE
    *[
        (f"{ptr} {value}", {ptr: value}, [(C.INTEGER_RANGE, ptr)])
        for ptr in ("/attempt_count", "/redrive_count", "/attempts/0/attempt_no")
        for value in (-1, 2**31)
    ],
    ("envelope_version -1", {"/envelope_version": -1}, [(C.INTEGER_RANGE, "/envelope_version")]),
    # NUMBER_RANGE
    ("unknown int above int64", {"/payload_ref": 2**63}, [(C.NUMBER_RANGE, "/payload_ref")]),
    ("unknown int below int64", {"/x": {"y": [-(2**63) - 1]}}, [(C.NUMBER_RANGE, "/x/y/0")]),
    (
        "detail int above int64",
        {E0 + "/detail": {"a": [0, 2**64]}},
        [(C.NUMBER_RANGE, E0 + "/detail/a/1")],
    ),
    ("attempt unknown int", {"/attempts/0/n": 2**63}, [(C.NUMBER_RANGE, "/attempts/0/n")]),
    # ID_FORMAT (C6)
    *[
        (f"id {value!r}", {"/id": value}, [(C.ID_FORMAT, "/id")])
        for value in (
            "01j2zk7q8xw5h3n9g4t6b8rdq0",  # lower case
            "01J2ZK7Q8XW5H3N9G4T6B8RDQI",  # I
            "01J2ZK7Q8XW5H3N9G4T6B8RDQL",  # L
            "01J2ZK7Q8XW5H3N9G4T6B8RDQO",  # O
            "01J2ZK7Q8XW5H3N9G4T6B8RDQU",  # U
            "81J2ZK7Q8XW5H3N9G4T6B8RDQ0",  # first char above 7 (overflows 128 bits)
            "01J2ZK7Q8XW5H3N9G4T6B8RDQ",  # 25 chars
            "01J2ZK7Q8XW5H3N9G4T6B8RDQ00",  # 27 chars
            "",
            " 01J2ZK7Q8XW5H3N9G4T6B8RDQ0",
        )
    ],
    # QUEUE_* / HANDLER_REF_* (C8a)
    ("queue upper case", {"/queue": "Payments"}, [(C.QUEUE_CHARSET, "/queue")]),
    ("queue space", {"/queue": "a b"}, [(C.QUEUE_CHARSET, "/queue")]),
    ("queue non-ascii", {"/queue": "é"}, [(C.QUEUE_CHARSET, "/queue")]),
    ("queue slash", {"/queue": "a/b"}, [(C.QUEUE_CHARSET, "/queue")]),
    ("queue empty", {"/queue": ""}, [(C.QUEUE_LENGTH, "/queue")]),
    ("queue 241", {"/queue": "q" * 241}, [(C.QUEUE_LENGTH, "/queue")]),
    (
        "queue 241 and bad char",
        {"/queue": "Q" * 241},
        [(C.QUEUE_LENGTH, "/queue"), (C.QUEUE_CHARSET, "/queue")],
    ),
    (
        "handler_ref colon",
        {"/handler_ref": "charge:payment"},
        [(C.HANDLER_REF_CHARSET, "/handler_ref")],
    ),
    ("handler_ref empty", {"/handler_ref": ""}, [(C.HANDLER_REF_LENGTH, "/handler_ref")]),
    ("handler_ref 241", {"/handler_ref": "h" * 241}, [(C.HANDLER_REF_LENGTH, "/handler_ref")]),
    # TIMESTAMP_FORMAT / TIMESTAMP_RANGE (C3)
    *[
        (f"created_at {value!r}", {"/created_at": value}, [(C.TIMESTAMP_FORMAT, "/created_at")])
        for value in (
            "2026-07-20T14:03:22.117+00:00",
            "2026-07-20T14:03:22Z",
            "2026-07-20T14:03:22.11Z",
            "2026-07-20T14:03:22.117000Z",
            "2026-07-20t14:03:22.117Z",
            "2026-07-20T14:03:22.117z",
            "2026-07-20 14:03:22.117Z",
            "2026-02-30T00:00:00.000Z",
            "2025-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-07-20T24:00:00.000Z",
            "2026-07-20T23:60:00.000Z",
            "2026-07-20T23:59:60.000Z",
            "٢٠٢٦-07-20T14:03:22.117Z",
            "",
        )
    ],
    (
        "next_attempt_at bad",
        {"/next_attempt_at": "tomorrow"},
        [(C.TIMESTAMP_FORMAT, "/next_attempt_at")],
    ),
    (
        "started_at bad",
        {"/attempts/0/started_at": "2026-07-20"},
        [(C.TIMESTAMP_FORMAT, "/attempts/0/started_at")],
    ),
    (
        "finished_at bad",
        {"/attempts/0/finished_at": "2026-07-20T14:03:22.950"},
        [(C.TIMESTAMP_FORMAT, "/attempts/0/finished_at")],
    ),
    (
        "created before 1970",
        {"/created_at": "1969-12-31T23:59:59.999Z"},
        [(C.TIMESTAMP_RANGE, "/created_at")],
    ),
    (
        "year zero",
        {"/attempts/0/started_at": "0000-01-01T00:00:00.000Z"},
        [(C.TIMESTAMP_RANGE, "/attempts/0/started_at")],
    ),
    (
        "lease before 1970",
        {"/status": "IN_FLIGHT", "/lease_expires_at": "1900-01-01T00:00:00.000Z"},
        [(C.TIMESTAMP_RANGE, "/lease_expires_at")],
    ),
    # PAYLOAD_BASE64 (C7)
    *[
        (f"payload {value!r}", {"/payload": value}, [(C.PAYLOAD_BASE64, "/payload")])
        for value in (
            "eyJ",  # length not a multiple of 4
            "eyJvcmRlcl9pZCI6IDQyfQ",  # padding dropped
            "-_-_",  # URL-safe alphabet
            "eyJv cmRl",
            "eyJvcmRl\n",
            "eyJvcmRlcl9pZCI6\nIDQyfQ==",
            "AB==",  # non-zero trailing bits
            "AAB=",  # non-zero trailing bits
            "====",
            "A===",
            "AA=A",
            "AA==AAAA",
        )
    ],
    # STATUS_VALUE / OUTCOME_VALUE
    ("status lower", {"/status": "pending"}, [(C.STATUS_VALUE, "/status")]),
    ("status unknown", {"/status": "RUNNING"}, [(C.STATUS_VALUE, "/status")]),
    ("status empty", {"/status": ""}, [(C.STATUS_VALUE, "/status")]),
    (
        "outcome lower",
        {"/attempts/0/outcome": "success"},
        [(C.OUTCOME_VALUE, "/attempts/0/outcome")],
    ),
    (
        "outcome unknown",
        {"/attempts/0/outcome": "TIMEOUT"},
        [(C.OUTCOME_VALUE, "/attempts/0/outcome")],
    ),
    # MESSAGE_TOO_LONG / STACK_TOO_LONG (C1)
    ("message 4097 ascii", {E0 + "/message": "m" * 4097}, [(C.MESSAGE_TOO_LONG, E0 + "/message")]),
    (
        "message 4097 bytes",
        {E0 + "/message": "m" * 4095 + "é"},
        [(C.MESSAGE_TOO_LONG, E0 + "/message")],
    ),
    ("stack 65537 bytes", {E0 + "/stack": "😀" * 16384 + "s"}, [(C.STACK_TOO_LONG, E0 + "/stack")]),
    # Invariants
    (
        "lease while pending",
        {"/lease_expires_at": "2026-07-20T14:06:00.000Z"},
        [(C.LEASE_WITHOUT_IN_FLIGHT, "/lease_expires_at")],
    ),
    (
        "lease while dead",
        {
            "/status": "DEAD",
            "/next_attempt_at": None,
            "/lease_expires_at": "2026-07-20T14:06:00.000Z",
        },
        [(C.LEASE_WITHOUT_IN_FLIGHT, "/lease_expires_at")],
    ),
    (
        "in flight, lease null",
        {"/status": "IN_FLIGHT"},
        [(C.IN_FLIGHT_WITHOUT_LEASE, "/lease_expires_at")],
    ),
    (
        "in flight, lease absent",
        {"/status": "IN_FLIGHT", "/lease_expires_at": DELETE},
        [(C.IN_FLIGHT_WITHOUT_LEASE, "/lease_expires_at")],
    ),
    (
        "succeeded with next attempt",
        {"/status": "SUCCEEDED"},
        [(C.NEXT_ATTEMPT_WHEN_TERMINAL, "/next_attempt_at")],
    ),
    (
        "dead with next attempt",
        {"/status": "DEAD"},
        [(C.NEXT_ATTEMPT_WHEN_TERMINAL, "/next_attempt_at")],
    ),
    (
        "lease expired, java error",
        {"/attempts/0/outcome": "LEASE_EXPIRED"},
        [(C.LEASE_EXPIRED_ERROR, E0 + "/type"), (C.LEASE_EXPIRED_ERROR, E0 + "/stack")],
    ),
    (
        "lease expired, no error",
        {"/attempts/0/outcome": "LEASE_EXPIRED", E0: None},
        [(C.LEASE_EXPIRED_ERROR, E0)],
    ),
    (
        "lease expired, error absent",
        {"/attempts/0/outcome": "LEASE_EXPIRED", E0: DELETE},
        [(C.LEASE_EXPIRED_ERROR, E0)],
    ),
    (
        "lease expired, stack set",
        {"/attempts/0/outcome": "LEASE_EXPIRED", E0: {**LEASE_EXPIRED_ERROR, "stack": ""}},
        [(C.LEASE_EXPIRED_ERROR, E0 + "/stack")],
    ),
    (
        "several at once",
        {"/id": "x", "/queue": "Q", "/attempts/0/outcome": "NOPE"},
        [
            (C.ID_FORMAT, "/id"),
            (C.QUEUE_CHARSET, "/queue"),
            (C.OUTCOME_VALUE, "/attempts/0/outcome"),
        ],
    ),
]


def _found(violations: list[Violation]) -> list[tuple[C, str]]:
    return [(v.code, v.pointer) for v in violations]


@pytest.mark.parametrize("form", ["text", "bytes", "mapping"])
@pytest.mark.parametrize(("changes"), [c for _, c in VALID], ids=[i for i, _ in VALID])
def test_valid(changes: dict[str, Any], form: str) -> None:
    obj = mutate(seed(), changes)
    data: Any = {"text": json.dumps(obj), "bytes": json.dumps(obj).encode(), "mapping": obj}[form]
    assert validate(data) == []


@pytest.mark.parametrize("form", ["text", "mapping"])
@pytest.mark.parametrize(
    ("changes", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid(changes: dict[str, Any], expected: list[tuple[C, str]], form: str) -> None:
    obj = mutate(seed(), changes)
    violations = validate(json.dumps(obj) if form == "text" else obj)
    assert sorted(_found(violations)) == sorted(expected)
    for v in violations:
        assert v.message, v


def test_every_code_has_a_failing_case() -> None:
    covered = {code for case in INVALID for code, _ in case[2]}
    covered |= {code for _, _, code, _ in TEXT_CASES}
    covered |= {C.UNSUPPORTED_ENVELOPE_VERSION, C.PAYLOAD_TOO_LARGE}  # tests below
    assert covered == set(C)


# -- text-level codes -------------------------------------------------------------

SEED_BYTES = SEED_TEXT.encode()
_Q = b'"queue": "payments.charge"'

TEXT_CASES: list[tuple[str, bytes, C, str]] = [
    ("empty", b"", C.JSON_SYNTAX, ""),
    ("truncated", SEED_BYTES[:-1], C.JSON_SYNTAX, ""),
    ("trailing garbage", SEED_BYTES + b" x", C.JSON_SYNTAX, ""),
    ("two texts", SEED_BYTES + SEED_BYTES, C.JSON_SYNTAX, ""),
    ("bom", b"\xef\xbb\xbf" + SEED_BYTES, C.JSON_SYNTAX, ""),
    ("NaN", SEED_BYTES.replace(b'"redrive_count": 0', b'"redrive_count": NaN'), C.JSON_SYNTAX, ""),
    ("Infinity", SEED_BYTES.replace(b"null", b"Infinity", 1), C.JSON_SYNTAX, ""),
    ("-Infinity", SEED_BYTES.replace(b"null", b"-Infinity", 1), C.JSON_SYNTAX, ""),
    ("single quotes", b"{'a': 1}", C.JSON_SYNTAX, ""),
    ("trailing comma", b'{"a": 1,}', C.JSON_SYNTAX, ""),
    ("comment", b'{"a": 1} // x', C.JSON_SYNTAX, ""),
    ("top-level array", b"[]", C.FIELD_TYPE, ""),
    ("top-level string", b'"x"', C.FIELD_TYPE, ""),
    ("top-level null", b"null", C.FIELD_TYPE, ""),
    ("invalid byte", SEED_BYTES.replace(b"payments.charge", b"payments\xff"), C.UTF8_INVALID, ""),
    ("cut multibyte", b'{"a": "\xc3"}', C.UTF8_INVALID, ""),
    ("overlong", b'{"a": "\xc0\xaf"}', C.UTF8_INVALID, ""),
    ("encoded surrogate", b'{"a": "\xed\xa0\x80"}', C.UTF8_INVALID, ""),
    ("latin-1", '{"a": "\xe9"}'.encode("latin-1"), C.UTF8_INVALID, ""),
    ("duplicate top key", SEED_BYTES.replace(_Q, _Q + b', "queue": "x"'), C.DUPLICATE_KEY, ""),
    ("duplicate same value", SEED_BYTES.replace(_Q, _Q + b"," + _Q), C.DUPLICATE_KEY, ""),
    (
        "duplicate header",
        SEED_BYTES.replace(b'"traceparent"', b'"a": "1", "a"'),
        C.DUPLICATE_KEY,
        "/headers",
    ),
    (
        "duplicate in error",
        SEED_BYTES.replace(b'"detail": null', b'"detail": null, "type": "x"'),
        C.DUPLICATE_KEY,
        E0,
    ),
    (
        "duplicate in detail",
        SEED_BYTES.replace(b'"detail": null', b'"detail": {"k": 1, "k": 1}'),
        C.DUPLICATE_KEY,
        E0 + "/detail",
    ),
    (
        "surrogate in value",
        SEED_BYTES.replace(b"payments.charge", b"pay\\ud800"),
        C.LONE_SURROGATE,
        "/queue",
    ),
    (
        "low surrogate alone",
        SEED_BYTES.replace(b"v3", b"\\uDC00v3"),
        C.LONE_SURROGATE,
        "/handler_version",
    ),
    (
        "reversed pair",
        SEED_BYTES.replace(b"v3", b"\\ude00\\ud83d"),
        C.LONE_SURROGATE,
        "/handler_version",
    ),
    (
        "surrogate in key",
        SEED_BYTES.replace(b'"traceparent"', b'"t\\ud800"'),
        C.LONE_SURROGATE,
        "/headers/t\\ud800",
    ),
    (
        "surrogate in detail",
        SEED_BYTES.replace(b'"detail": null', b'"detail": ["ok", "\\udfff"]'),
        C.LONE_SURROGATE,
        E0 + "/detail/1",
    ),
]


@pytest.mark.parametrize(
    ("data", "code", "pointer"), [c[1:] for c in TEXT_CASES], ids=[c[0] for c in TEXT_CASES]
)
def test_text_level(data: bytes, code: C, pointer: str) -> None:
    violations = validate(data)
    assert _found(violations) == [(code, pointer)]
    if code is not C.UTF8_INVALID:  # the same text as str gives the same answer
        assert _found(validate(data.decode("utf-8"))) == [(code, pointer)]
    with pytest.raises(InvalidEnvelope) as info:
        decode(data)
    assert list(info.value.violations) == violations


def test_utf8_message_names_the_byte_offset() -> None:
    data = b'{"a": "ok\xff"}'
    (v,) = validate(data)
    assert "byte offset 9" in v.message


def test_valid_surrogate_pair_escape_is_fine() -> None:
    text = SEED_TEXT.replace("v3", "\\ud83d\\ude00")
    assert validate(text) == []
    assert decode(text).handler_version == "😀"


def test_literal_lone_surrogate_in_str_input() -> None:
    text = SEED_TEXT.replace("v3", "\ud800")
    assert _found(validate(text)) == [(C.LONE_SURROGATE, "/handler_version")]


def test_huge_number_literals() -> None:
    text = SEED_TEXT.replace('"redrive_count": 0', '"redrive_count": 0, "x": 1e999')
    assert _found(validate(text)) == [(C.NUMBER_RANGE, "/x")]
    text = SEED_TEXT.replace('"redrive_count": 0', '"redrive_count": 0, "x": -1E400')
    assert _found(validate(text)) == [(C.NUMBER_RANGE, "/x")]
    text = SEED_TEXT.replace('"redrive_count": 0', '"redrive_count": 0, "x": ' + "9" * 5000)
    assert [v.code for v in validate(text)] == [C.NUMBER_RANGE]


def test_deep_nesting_is_a_syntax_violation_not_a_crash() -> None:
    text = SEED_TEXT.replace('"redrive_count": 0', '"redrive_count": 0, "x": ' + "[" * 100_000)
    assert [v.code for v in validate(text)] == [C.JSON_SYNTAX]


# -- versions (C16) ----------------------------------------------------------------


def test_unsupported_version_is_reported_alone() -> None:
    obj = mutate(seed(), {"/envelope_version": 2, "/queue": "BAD", "/attempts": "v2 shape"})
    assert _found(validate(obj)) == [(C.UNSUPPORTED_ENVELOPE_VERSION, "/envelope_version")]
    assert _found(validate(json.dumps(obj), max_bytes=10)) == [
        (C.UNSUPPORTED_ENVELOPE_VERSION, "/envelope_version")
    ]
    assert "envelope_version=2" in validate(obj)[0].message


def test_versions_parameter() -> None:
    v2 = mutate(seed(), {"/envelope_version": 2})
    assert validate(v2, versions=(1, 2)) == []
    assert validate(v2, versions=None) == []
    assert validate(mutate(seed(), {"/envelope_version": 0}), versions=None) == []
    assert _found(validate(seed(), versions=(2,))) == [
        (C.UNSUPPORTED_ENVELOPE_VERSION, "/envelope_version")
    ]
    # versions=None still judges the v1 shape
    bad = mutate(seed(), {"/envelope_version": 9, "/queue": "BAD"})
    assert _found(validate(bad, versions=None)) == [(C.QUEUE_CHARSET, "/queue")]
    # an out-of-range version is not "unsupported", it is out of range
    assert _found(validate(mutate(seed(), {"/envelope_version": 2**31}))) == [
        (C.INTEGER_RANGE, "/envelope_version")
    ]


# -- size (C2) -------------------------------------------------------------------------


def _compact_size(obj: dict[str, Any]) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())


def test_size_limit_boundary() -> None:
    obj = seed()
    size = _compact_size(obj)
    assert validate(obj, max_bytes=size) == []
    assert _found(validate(obj, max_bytes=size - 1)) == [(C.PAYLOAD_TOO_LARGE, "")]
    assert validate(obj, max_bytes=None) == []


def test_size_counts_the_canonical_form_with_nulls() -> None:
    # Absent optional fields are null in canonical form (C9), so they count as
    # `"name":null` members: the limit applies to the canonical encoding.
    absent = {
        "/handler_version": DELETE,
        "/next_attempt_at": DELETE,
        "/attempts/0/finished_at": DELETE,
        E0 + "/detail": DELETE,
        E0 + "/stack": DELETE,
    }
    sparse = mutate(seed(), absent)
    canonical = mutate(seed(), {k: None for k in absent})
    size = _compact_size(canonical)
    assert _compact_size(sparse) < size
    assert validate(sparse, max_bytes=size) == []
    assert _found(validate(sparse, max_bytes=size - 1)) == [(C.PAYLOAD_TOO_LARGE, "")]
    assert _found(validate(json.dumps(sparse), max_bytes=size - 1)) == [(C.PAYLOAD_TOO_LARGE, "")]


def test_size_counts_utf8_bytes_not_characters() -> None:
    obj = mutate(seed(), {"/handler_version": "😀" * 100})
    size = _compact_size(obj)
    assert validate(obj, max_bytes=size) == []
    assert _found(validate(obj, max_bytes=size - 1)) == [(C.PAYLOAD_TOO_LARGE, "")]


def test_default_limit_is_one_mebibyte() -> None:
    obj = seed()
    room = 1_048_576 - _compact_size(obj) + len(obj["payload"])
    obj["payload"] = "A" * (room - room % 4)
    assert _compact_size(obj) <= 1_048_576
    assert validate(obj) == []
    obj["payload"] += "AAAA"
    assert _found(validate(obj)) == [(C.PAYLOAD_TOO_LARGE, "")]


# -- the typed model -----------------------------------------------------------------


def _model() -> Envelope:
    return decode(SEED_TEXT)


T = datetime(2026, 7, 20, 14, 3, 22, 117000, tzinfo=UTC)

MODEL_INVALID: list[tuple[str, Any, list[tuple[C, str]]]] = [
    (
        "naive datetime",
        {"created_at": T.replace(tzinfo=None)},
        [(C.TIMESTAMP_FORMAT, "/created_at")],
    ),
    (
        "offset datetime",
        {"created_at": T.astimezone(timezone(timedelta(hours=2)))},
        [(C.TIMESTAMP_FORMAT, "/created_at")],
    ),
    (
        "microseconds",
        {"next_attempt_at": T.replace(microsecond=117001)},
        [(C.TIMESTAMP_FORMAT, "/next_attempt_at")],
    ),
    (
        "before 1970",
        {"created_at": datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)},
        [(C.TIMESTAMP_RANGE, "/created_at")],
    ),
    (
        "timestamp as text",
        {"created_at": "2026-07-20T14:03:22.117Z"},
        [(C.FIELD_TYPE, "/created_at")],
    ),
    ("lease as epoch", {"lease_expires_at": 1}, [(C.FIELD_TYPE, "/lease_expires_at")]),
    ("payload bytearray", {"payload": bytearray(b"x")}, [(C.FIELD_TYPE, "/payload")]),
    ("payload memoryview", {"payload": memoryview(b"x")}, [(C.FIELD_TYPE, "/payload")]),
    ("payload base64 text", {"payload": "eA=="}, [(C.FIELD_TYPE, "/payload")]),
    ("attempt_count bool", {"attempt_count": True}, [(C.FIELD_TYPE, "/attempt_count")]),
    ("redrive_count float", {"redrive_count": 0.0}, [(C.FIELD_TYPE, "/redrive_count")]),
    ("envelope_version str", {"envelope_version": "1"}, [(C.FIELD_TYPE, "/envelope_version")]),
    ("attempt_count negative", {"attempt_count": -1}, [(C.INTEGER_RANGE, "/attempt_count")]),
    ("status int", {"status": 1}, [(C.FIELD_TYPE, "/status")]),
    ("status not a member", {"status": "RUNNING"}, [(C.STATUS_VALUE, "/status")]),
    ("id bytes", {"id": b"01J2ZK7Q8XW5H3N9G4T6B8RDQ0"}, [(C.FIELD_TYPE, "/id")]),
    ("id lower", {"id": "01j2zk7q8xw5h3n9g4t6b8rdq0"}, [(C.ID_FORMAT, "/id")]),
    ("queue bad", {"queue": "Pay"}, [(C.QUEUE_CHARSET, "/queue")]),
    ("handler_version int", {"handler_version": 3}, [(C.FIELD_TYPE, "/handler_version")]),
    ("headers list", {"headers": [("a", "b")]}, [(C.FIELD_TYPE, "/headers")]),
    ("header value int", {"headers": {"a": 1}}, [(C.FIELD_TYPE, "/headers/a")]),
    ("header key int", {"headers": {1: "a"}}, [(C.FIELD_TYPE, "/headers")]),
    ("header surrogate", {"headers": {"a": "\udc00"}}, [(C.LONE_SURROGATE, "/headers/a")]),
    ("attempts dicts", {"attempts": ({"attempt_no": 1},)}, [(C.FIELD_TYPE, "/attempts/0")]),
    ("attempts generator", {"attempts": iter(())}, [(C.FIELD_TYPE, "/attempts")]),
    ("extra tuple", {"extra": {"x": (1, 2)}}, [(C.FIELD_TYPE, "/x")]),
    ("extra set nested", {"extra": {"x": {"y": [{1}]}}}, [(C.FIELD_TYPE, "/x/y/0")]),
    ("extra non-str key", {"extra": {"x": {1: 2}}}, [(C.FIELD_TYPE, "/x")]),
    ("extra datetime", {"extra": {"x": T}}, [(C.FIELD_TYPE, "/x")]),
    ("extra bytes", {"extra": {"x": b""}}, [(C.FIELD_TYPE, "/x")]),
    ("extra inf", {"extra": {"x": float("inf")}}, [(C.NUMBER_RANGE, "/x")]),
    ("extra nan", {"extra": {"x": float("nan")}}, [(C.NUMBER_RANGE, "/x")]),
    ("extra big int", {"extra": {"x": 2**63}}, [(C.NUMBER_RANGE, "/x")]),
    ("extra surrogate key", {"extra": {"\ud800": 1}}, [(C.LONE_SURROGATE, "/\\ud800")]),
    ("extra holds known field", {"extra": {"queue": "x"}}, [(C.DUPLICATE_KEY, "")]),
    ("extra not a mapping", {"extra": [("x", 1)]}, [(C.FIELD_TYPE, "")]),
    ("size", {"payload": b"\0" * 1_000_000}, [(C.PAYLOAD_TOO_LARGE, "")]),
]


@pytest.mark.parametrize(
    ("changes", "expected"), [c[1:] for c in MODEL_INVALID], ids=[c[0] for c in MODEL_INVALID]
)
def test_model_invalid(changes: dict[str, Any], expected: list[tuple[C, str]]) -> None:
    env = dataclasses.replace(_model(), **changes)
    assert sorted(_found(validate(env))) == sorted(expected)


def test_model_nested_checks() -> None:
    env = _model()
    assert validate(env) == []
    cases: list[tuple[Envelope, list[tuple[C, str]]]] = [
        (with_error(env, message="\ud800"), [(C.LONE_SURROGATE, E0 + "/message")]),
        (with_error(env, message="m" * 4097), [(C.MESSAGE_TOO_LONG, E0 + "/message")]),
        (with_error(env, stack=b"trace"), [(C.FIELD_TYPE, E0 + "/stack")]),
        (with_error(env, detail=(1,)), [(C.FIELD_TYPE, E0 + "/detail")]),
        (with_error(env, detail={"a": 2**64}), [(C.NUMBER_RANGE, E0 + "/detail/a")]),
        (with_error(env, extra={"message": "x"}), [(C.DUPLICATE_KEY, E0)]),
        (with_attempt(env, error="boom"), [(C.FIELD_TYPE, E0)]),
        (with_attempt(env, attempt_no=True), [(C.FIELD_TYPE, "/attempts/0/attempt_no")]),
        (with_attempt(env, outcome="NOPE"), [(C.OUTCOME_VALUE, "/attempts/0/outcome")]),
        (with_attempt(env, outcome=None), [(C.FIELD_TYPE, "/attempts/0/outcome")]),
        (
            with_attempt(env, finished_at=T.replace(tzinfo=None)),
            [(C.TIMESTAMP_FORMAT, "/attempts/0/finished_at")],
        ),
        (
            with_attempt(env, outcome="LEASE_EXPIRED"),
            [(C.LEASE_EXPIRED_ERROR, E0 + "/type"), (C.LEASE_EXPIRED_ERROR, E0 + "/stack")],
        ),
        (with_attempt(env, extra={"attempt_no": 2}), [(C.DUPLICATE_KEY, "/attempts/0")]),
    ]
    for model, expected in cases:
        assert sorted(_found(validate(model))) == sorted(expected), model


def test_model_valid_variants() -> None:
    env = _model()
    utc_alias = timezone(timedelta(0))
    assert validate(dataclasses.replace(env, created_at=T.replace(tzinfo=utc_alias))) == []
    # Enum values given as text, as an adapter reads them back: the model coerces them.
    dead = dataclasses.replace(env, status="DEAD", next_attempt_at=None)  # type: ignore[arg-type]
    assert validate(dead) == []
    assert validate(dataclasses.replace(env, extra={"payload_ref": {"a": [1, 2.5, None]}})) == []
    assert validate(dataclasses.replace(env, attempts=[env.attempts[0]])) == []
    minimal = Envelope(
        id="01J2ZK7Q8XW5H3N9G4T6B8RDQ0", queue="q", handler_ref="h", payload=b"",
        payload_content_type="", status="PENDING", created_at=T,  # type: ignore[arg-type]
        attempts=(Attempt(attempt_no=0, started_at=T, outcome="SUCCESS",  # type: ignore[arg-type]
                          error=ErrorInfo(type="", message="")),),
    )  # fmt: skip
    assert validate(minimal) == []


def test_model_and_text_agree_on_the_seed() -> None:
    env = _model()
    assert validate(encode(env)) == validate(env) == []


def test_violation_str_and_exception() -> None:
    v = Violation(C.QUEUE_CHARSET, "/queue", "bad")
    assert str(v) == "/queue: QUEUE_CHARSET: bad"
    exc = InvalidEnvelope([v])
    assert exc.violations == (v,)
    assert "/queue: QUEUE_CHARSET: bad" in str(exc)
    assert isinstance(exc, ValueError)


def test_messages_say_what_and_how() -> None:
    obj = mutate(seed(), {"/queue": "Payments", "/payload": "eyJ", "/attempt_count": 1.0})
    messages = {v.code: v.message for v in validate(obj)}
    assert "'P'" in messages[C.QUEUE_CHARSET] and "a-z 0-9 . _ -" in messages[C.QUEUE_CHARSET]
    assert "multiple of 4" in messages[C.PAYLOAD_BASE64]
    assert "1.0" in messages[C.FIELD_TYPE] and "write it without fraction" in messages[C.FIELD_TYPE]


def test_rejects_non_envelope_input_type() -> None:
    with pytest.raises(TypeError, match="data=int"):
        validate(5)  # type: ignore[arg-type]


def test_size_bound_covers_floats_that_grow() -> None:
    # "1e9" re-encodes as "1000000000.0": the canonical form outgrows the text, so the
    # validator must not take the text's length as the encoding's size.
    text = SEED_TEXT[:-1] + ', "f": [' + ", ".join(["1e9"] * 2000) + "]}"
    compact = len(json.dumps(json.loads(text), separators=(",", ":")).encode())
    assert compact > len(text.encode())
    assert validate(text, max_bytes=compact) == []
    assert _found(validate(text, max_bytes=compact - 1)) == [(C.PAYLOAD_TOO_LARGE, "")]
    assert _found(validate(text.encode(), max_bytes=len(text))) == [(C.PAYLOAD_TOO_LARGE, "")]


# -- robustness: any value anywhere is judged, never crashes -------------------------

_any_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["IN_FLIGHT", "LEASE_EXPIRED", "2026-07-20T14:03:22.117Z", "AA=="]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=4,
)
_POINTERS = sorted(
    {"/" + k for k in seed()}
    | {"/attempts/0/" + k for k in seed()["attempts"][0]}
    | {E0 + "/" + k for k in seed()["attempts"][0]["error"]}
    | {"/attempts/0", E0, "/headers/traceparent", "/payload_ref"}
)


@settings(max_examples=150, deadline=None)
@given(
    changes=st.dictionaries(
        st.sampled_from(_POINTERS), _any_json | st.just(DELETE), min_size=1, max_size=3
    )
)
def test_any_value_anywhere(changes: dict[str, Any]) -> None:
    try:
        obj = mutate(seed(), changes)
    except (KeyError, TypeError, IndexError, ValueError):
        return  # an earlier change replaced or removed the parent
    violations = validate(obj)
    assert all(isinstance(v, Violation) and v.message for v in violations)
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError):  # NaN, or DELETE set as a list item: not JSON
        return
    assert _found(validate(text)) == _found(violations)
    if violations:
        with pytest.raises(InvalidEnvelope):
            decode(text)
    else:
        env = decode(text)
        assert validate(env) == []
        assert decode(encode(env)) == env
