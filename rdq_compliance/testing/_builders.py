"""Deterministic envelopes for fixed examples: a small valid base envelope and variations.

Tests compare against these, never against an earlier read, so each is a pure function
of its arguments.
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime
from typing import Any

from ..envelope._ids import id_from_int, parse_id
from ..envelope._model import Attempt, Envelope, ErrorInfo, Outcome, Status

__all__ = [
    "EVERY_JSON_TYPE",
    "T0",
    "base_envelope",
    "random_id",
    "ulid",
    "with_attempt",
    "with_error",
]

T0 = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)
"""The instant the fixed examples are built around."""


_ULID_BASE = int(parse_id("01J2ZK7Q8X0000000000000000"))


def ulid(n: int) -> str:
    """A canonical ULID text that is a pure function of ``n`` (deterministic examples):
    ``01J2ZK7Q8X`` followed by the low 80 bits of ``n``."""
    return id_from_int(_ULID_BASE | (n % (1 << 80)))


def random_id(rng: random.Random) -> str:
    """A canonical ULID text drawn from ``rng`` (the same ``rng`` state, the same id)."""
    value = rng.randrange(8)  # the first character carries 3 bits
    for _ in range(25):
        value = value * 32 + rng.randrange(32)
    return id_from_int(value)


def base_envelope(n: int = 1, **changes: Any) -> Envelope:
    """A small valid v1 envelope (PENDING, one failed attempt), with ``changes`` applied."""
    env = Envelope(
        id=ulid(n),
        queue="payments.charge",
        handler_ref="charge-payment",
        handler_version="v3",
        payload=b'{"order_id": 42}',
        payload_content_type="application/json",
        headers={"traceparent": "00-4bf9-01", "rdq.source": "kafka://payments/3/42351"},
        status=Status.PENDING,
        attempt_count=1,
        redrive_count=0,
        next_attempt_at=T0.replace(minute=5),
        lease_expires_at=None,
        created_at=T0,
        attempts=(
            Attempt(
                attempt_no=1,
                started_at=T0.replace(microsecond=200_000),
                finished_at=T0.replace(microsecond=950_000),
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(
                    type="java.net.SocketTimeoutException",
                    message="connect timed out after 500ms",
                    detail=None,
                    stack="java.net.SocketTimeoutException: connect timed out\n\tat ...",
                ),
            ),
        ),
    )
    return dataclasses.replace(env, **changes) if changes else env


def with_attempt(env: Envelope, **changes: Any) -> Envelope:
    """``env`` whose first attempt has ``changes`` applied (the others kept)."""
    first = dataclasses.replace(env.attempts[0], **changes)
    return dataclasses.replace(env, attempts=(first, *env.attempts[1:]))


def with_error(env: Envelope, **changes: Any) -> Envelope:
    """``env`` whose first attempt's error has ``changes`` applied."""
    error = env.attempts[0].error
    assert error is not None
    return with_attempt(env, error=dataclasses.replace(error, **changes))


#: One JSON value of every kind unknown fields and ``detail`` may hold (C5, C10).
EVERY_JSON_TYPE: dict[str, Any] = {
    "null": None,
    "true": True,
    "false": False,
    "zero": 0,
    "int": -42,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "float": 1.5,
    "integral_float": 1.0,
    "empty_string": "",
    "string": "x\u0000y\U0001f600",
    "empty_array": [],
    "array": [None, 1, "two", [3.5], {"four": False}],
    "empty_object": {},
    "object": {"": "empty key", "__proto__": {"$set": [1, 2]}, "a.b": None},
}
