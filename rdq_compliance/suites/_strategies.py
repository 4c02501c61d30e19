"""Suite-specific strategies: generated envelopes with one aspect pushed hard."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from ..envelope import Attempt, Envelope, ErrorInfo, Outcome, Status
from ..strategies import envelopes, free_texts, json_values, timestamps, unknown_field_maps
from ._support import ATTEMPT_FIELDS, ERROR_FIELDS, TOP_FIELDS

__all__ = [
    "distinct_envelopes",
    "envelopes_with_extras_everywhere",
    "envelopes_with_free_text_everywhere",
    "envelopes_with_reordered_attempts",
    "envelopes_with_timestamps_everywhere",
]


def distinct_envelopes(
    *, min_size: int = 2, max_size: int = 6
) -> st.SearchStrategy[list[Envelope]]:
    """Lists of envelopes with pairwise different ids."""
    return st.lists(envelopes(), min_size=min_size, max_size=max_size, unique_by=lambda e: e.id)


@st.composite
def envelopes_with_reordered_attempts(draw: st.DrawFn) -> Envelope:
    """Attempts whose attempt_no repeat, decrease or skip (C12: list order rules)."""
    # up to 14 attempts: past 10, where position keys sorted as text misorder
    env = draw(envelopes(min_attempts=2, max_attempts=14))
    nos = draw(st.lists(st.integers(0, 3), min_size=len(env.attempts),
                        max_size=len(env.attempts)))
    attempts = tuple(dataclasses.replace(a, attempt_no=n) for a, n in zip(env.attempts, nos,
                                                                        strict=True))
    return dataclasses.replace(env, attempts=attempts)


@st.composite
def envelopes_with_free_text_everywhere(draw: st.DrawFn) -> Envelope:
    """Free text (C4) in every free-text field: handler_version, payload_content_type,
    header keys and values, error type/message/stack, detail and unknown fields."""
    env = draw(envelopes(max_attempts=2))
    t = [draw(free_texts()) for _ in range(10)]
    error = ErrorInfo(type=t[4], message=t[5], detail={t[6]: t[7]}, stack=t[8])
    started = draw(timestamps())
    attempt = Attempt(attempt_no=1, started_at=started, finished_at=started,
                      outcome=Outcome.RETRYABLE_FAILURE, error=error)
    return dataclasses.replace(
        env,
        handler_version=t[0],
        payload_content_type=t[1],
        headers={t[2]: t[3], **env.headers},
        attempts=(attempt, *env.attempts),
        extra={**env.extra, "x_free_text": t[9]},
    )


@st.composite
def envelopes_with_timestamps_everywhere(draw: st.DrawFn) -> Envelope:
    """Timestamps (C3) across the whole valid range in every timestamp field."""
    env = draw(envelopes(max_attempts=3))
    ts = [draw(timestamps()) for _ in range(4)]
    attempt = Attempt(attempt_no=1, started_at=ts[2], finished_at=ts[3],
                      outcome=Outcome.SUCCESS)
    # PENDING allows next_attempt_at and forbids a lease (the validator's invariants).
    return dataclasses.replace(
        env,
        status=Status.PENDING,
        created_at=ts[0],
        next_attempt_at=ts[1],
        lease_expires_at=None,
        attempts=(*env.attempts, attempt),
    )


@st.composite
def envelopes_with_extras_everywhere(draw: st.DrawFn) -> Envelope:
    """Unknown fields (C10) at the top level, in an attempt and in its error,
    and a JSON ``detail``."""
    env = draw(envelopes(max_attempts=2))
    top: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=TOP_FIELDS, max_size=4))
    att: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=ATTEMPT_FIELDS, max_size=3))
    err: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=ERROR_FIELDS, max_size=3))
    started = draw(timestamps())
    error = ErrorInfo(type="e.Boom", message="boom", detail=draw(json_values()), extra=err)
    attempt = Attempt(attempt_no=1, started_at=started, finished_at=None,
                      outcome=Outcome.RETRYABLE_FAILURE, error=error, extra=att)
    return dataclasses.replace(env, attempts=(attempt, *env.attempts), extra=top)
