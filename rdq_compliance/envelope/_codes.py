"""Stable violation codes of the envelope validator, each tied to its clause.

The codes are part of the public contract: golden fixtures, the CLI and SDKs in
other languages name them. Never rename one; add new ones at the end.
"""

from __future__ import annotations

import enum

__all__ = ["CODE_CLAUSES", "ViolationCode"]


class ViolationCode(enum.StrEnum):
    # Encoding of the JSON text itself.
    JSON_SYNTAX = "JSON_SYNTAX"
    UTF8_INVALID = "UTF8_INVALID"
    DUPLICATE_KEY = "DUPLICATE_KEY"
    LONE_SURROGATE = "LONE_SURROGATE"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    # Shape.
    UNSUPPORTED_ENVELOPE_VERSION = "UNSUPPORTED_ENVELOPE_VERSION"
    FIELD_MISSING = "FIELD_MISSING"
    FIELD_TYPE = "FIELD_TYPE"
    INTEGER_RANGE = "INTEGER_RANGE"
    NUMBER_RANGE = "NUMBER_RANGE"
    # Values.
    ID_FORMAT = "ID_FORMAT"
    QUEUE_CHARSET = "QUEUE_CHARSET"
    QUEUE_LENGTH = "QUEUE_LENGTH"
    HANDLER_REF_CHARSET = "HANDLER_REF_CHARSET"
    HANDLER_REF_LENGTH = "HANDLER_REF_LENGTH"
    TIMESTAMP_FORMAT = "TIMESTAMP_FORMAT"
    TIMESTAMP_RANGE = "TIMESTAMP_RANGE"
    PAYLOAD_BASE64 = "PAYLOAD_BASE64"
    STATUS_VALUE = "STATUS_VALUE"
    OUTCOME_VALUE = "OUTCOME_VALUE"
    MESSAGE_TOO_LONG = "MESSAGE_TOO_LONG"
    STACK_TOO_LONG = "STACK_TOO_LONG"
    # Invariants stated by the design document.
    LEASE_WITHOUT_IN_FLIGHT = "LEASE_WITHOUT_IN_FLIGHT"
    IN_FLIGHT_WITHOUT_LEASE = "IN_FLIGHT_WITHOUT_LEASE"
    NEXT_ATTEMPT_WHEN_TERMINAL = "NEXT_ATTEMPT_WHEN_TERMINAL"
    LEASE_EXPIRED_ERROR = "LEASE_EXPIRED_ERROR"


#: The clause(s) of ``wire-envelope.txt`` (``WE:<section>``) and
#: ``clarifications.md`` (``C<n>``) each code enforces, with a one-line rule.
CODE_CLAUSES: dict[ViolationCode, tuple[tuple[str, ...], str]] = {
    ViolationCode.JSON_SYNTAX: (("WE:Canonical encoding",), "the input is one JSON text"),
    ViolationCode.UTF8_INVALID: (("WE:Canonical encoding", "C4"), "the input is valid UTF-8"),
    ViolationCode.DUPLICATE_KEY: (("C11",), "no object holds the same key twice"),
    ViolationCode.LONE_SURROGATE: (("C4",), "strings and keys hold Unicode scalar values only"),
    ViolationCode.PAYLOAD_TOO_LARGE: (
        ("C2",),
        "the compact JSON encoding is at most 1,048,576 bytes",
    ),
    ViolationCode.UNSUPPORTED_ENVELOPE_VERSION: (
        ("C16", "WE:Evolution rules"),
        "envelope_version is one the reader supports",
    ),
    ViolationCode.FIELD_MISSING: (("C9",), "every required known field is present"),
    ViolationCode.FIELD_TYPE: (("C9", "WE:Field notes"), "every known field has its JSON type"),
    ViolationCode.INTEGER_RANGE: (
        ("C5",),
        "known integer fields are non-negative and at most 2,147,483,647",
    ),
    ViolationCode.NUMBER_RANGE: (
        ("C5",),
        "numbers in unknown fields and detail are signed 64-bit integers or finite doubles",
    ),
    ViolationCode.ID_FORMAT: (("C6",), "id is canonical ULID text"),
    ViolationCode.QUEUE_CHARSET: (("C8a",), "queue uses only a-z 0-9 . _ -"),
    ViolationCode.QUEUE_LENGTH: (("C8a",), "queue is 1 to 240 characters"),
    ViolationCode.HANDLER_REF_CHARSET: (("C8a",), "handler_ref uses only a-z 0-9 . _ -"),
    ViolationCode.HANDLER_REF_LENGTH: (("C8a",), "handler_ref is 1 to 240 characters"),
    ViolationCode.TIMESTAMP_FORMAT: (("C3",), "timestamps are YYYY-MM-DDTHH:MM:SS.sssZ"),
    ViolationCode.TIMESTAMP_RANGE: (
        ("C3",),
        "timestamps lie in 1970-01-01T00:00:00.000Z..9999-12-31T23:59:59.999Z",
    ),
    ViolationCode.PAYLOAD_BASE64: (("C7",), "payload is standard padded base64"),
    ViolationCode.STATUS_VALUE: (("WE:Field notes",), "status is one of the four v1 values"),
    ViolationCode.OUTCOME_VALUE: (
        ("WE:The attempt record",),
        "outcome is one of the four v1 values",
    ),
    ViolationCode.MESSAGE_TOO_LONG: (("C1",), "error.message is at most 4,096 UTF-8 bytes"),
    ViolationCode.STACK_TOO_LONG: (("C1",), "error.stack is at most 65,536 UTF-8 bytes"),
    ViolationCode.LEASE_WITHOUT_IN_FLIGHT: (
        ("WE:Field notes",),
        "lease_expires_at is null unless status is IN_FLIGHT",
    ),
    ViolationCode.IN_FLIGHT_WITHOUT_LEASE: (
        ("WE:Field notes",),
        "lease_expires_at is set while status is IN_FLIGHT",
    ),
    ViolationCode.NEXT_ATTEMPT_WHEN_TERMINAL: (
        ("WE:Field notes",),
        "next_attempt_at is null once status is SUCCEEDED or DEAD",
    ),
    ViolationCode.LEASE_EXPIRED_ERROR: (
        ("WE:The attempt record",),
        'a LEASE_EXPIRED attempt has an error of type "rdq.LeaseExpired" and no stack',
    ),
}
