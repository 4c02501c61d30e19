"""Suite-specific strategies: generated envelopes with one aspect pushed hard.

Whole-envelope variety is RDQ-RT-001's job (``envelopes()``). The targeted
properties here start from the small hand-built :func:`base_envelope` (with a
generated id) and generate only what their requirement is about: drawing a full
envelope only to overwrite most of it would spend the profile's time on
generation, not on the plugin.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from hypothesis import strategies as st

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, Status
from rdq_compliance.strategies import (
    attempts,
    envelopes,
    free_texts,
    header_maps,
    ids,
    json_values,
    payloads,
    timestamps,
    unknown_field_maps,
)
from rdq_compliance.testing import (
    ATTEMPT_FIELDS,
    ENVELOPE_FIELDS,
    ERROR_FIELDS,
    MAX_KNOWN_INT,
    base_envelope,
)

__all__ = [
    "distinct_envelopes",
    "envelopes_with_extras_everywhere",
    "envelopes_with_free_text_everywhere",
    "envelopes_with_reordered_attempts",
    "envelopes_with_timestamps_everywhere",
    "envelopes_with_typed_fields",
]

_IDS = ids()
_TEXTS = free_texts()
_TIMESTAMPS = timestamps()
_SMALL_NUMBERS = st.integers(0, 3)
_BOOLEANS = st.booleans()
# Attempts as envelopes() draws them (errors, details and unknown fields), short texts.
_ATTEMPTS = attempts(max_text_size=16)
_COUNTERS = st.one_of(st.sampled_from((0, 1, MAX_KNOWN_INT)), st.integers(0, MAX_KNOWN_INT))
_STATUSES = st.sampled_from(Status)
_OPTIONAL_TIMESTAMPS = st.one_of(st.none(), _TIMESTAMPS)
_SHORT_PAYLOADS = payloads(max_size=8)
_HANDLER_VERSIONS = st.sampled_from((None, "", "v3"))
# Every outcome (LEASE_EXPIRED with its rdq.LeaseExpired error), tiny texts, no unknowns.
_TYPED_HISTORIES = st.lists(attempts(unknown_fields=False, max_text_size=4), max_size=3)


@functools.cache
def distinct_envelopes(
    *, min_size: int = 2, max_size: int = 6
) -> st.SearchStrategy[list[Envelope]]:
    """Lists of envelopes with pairwise different ids. Up to 2 attempts each: what
    RDQ-RT-002/003 test is many envelopes side by side, not long histories."""
    return st.lists(envelopes(max_attempts=2), min_size=min_size, max_size=max_size,
                    unique_by=lambda e: e.id)


@st.composite
def envelopes_with_reordered_attempts(draw: st.DrawFn) -> Envelope:
    """Attempts whose attempt_no repeat, decrease or skip (C12: list order rules)."""
    # up to 14 attempts: past 10, where position keys sorted as text misorder
    history = draw(st.lists(_ATTEMPTS, min_size=2, max_size=14))
    nos = draw(st.lists(_SMALL_NUMBERS, min_size=len(history), max_size=len(history)))
    renumbered = tuple(dataclasses.replace(a, attempt_no=n)
                       for a, n in zip(history, nos, strict=True))
    return base_envelope(1, id=draw(_IDS), attempts=renumbered, attempt_count=len(history))


@st.composite
def envelopes_with_free_text_everywhere(draw: st.DrawFn) -> Envelope:
    """Free text (C4) in every free-text field: handler_version, payload_content_type,
    header keys and values, error type/message/stack, detail and unknown fields."""
    t = [draw(_TEXTS) for _ in range(10)]
    error = ErrorInfo(type=t[4], message=t[5], detail={t[6]: t[7]}, stack=t[8])
    started = draw(_TIMESTAMPS)
    attempt = Attempt(attempt_no=1, started_at=started, finished_at=started,
                      outcome=Outcome.RETRYABLE_FAILURE, error=error)
    return base_envelope(
        1,
        id=draw(_IDS),
        handler_version=t[0],
        payload_content_type=t[1],
        headers={t[2]: t[3], **draw(header_maps())},
        attempts=(attempt,),
        extra={"x_free_text": t[9]},
    )


@st.composite
def envelopes_with_timestamps_everywhere(draw: st.DrawFn) -> Envelope:
    """Timestamps (C3) across the whole valid range in every timestamp field: created_at,
    next_attempt_at, lease_expires_at (an IN_FLIGHT envelope) and the attempts'
    started_at/finished_at."""
    ts = [draw(_TIMESTAMPS) for _ in range(6)]
    history = (
        Attempt(attempt_no=1, started_at=ts[2], finished_at=ts[3], outcome=Outcome.SUCCESS),
        Attempt(attempt_no=2, started_at=ts[4], finished_at=None,
                outcome=Outcome.RETRYABLE_FAILURE),
    )
    # Only IN_FLIGHT has a lease; PENDING and IN_FLIGHT both allow next_attempt_at.
    in_flight = draw(_BOOLEANS)
    return base_envelope(
        1,
        id=draw(_IDS),
        status=Status.IN_FLIGHT if in_flight else Status.PENDING,
        created_at=ts[0],
        next_attempt_at=ts[1],
        lease_expires_at=ts[5] if in_flight else None,
        attempts=history,
    )


@st.composite
def envelopes_with_extras_everywhere(draw: st.DrawFn) -> Envelope:
    """Unknown fields (C10) at the top level, in an attempt and in its error,
    and a JSON ``detail``."""
    top: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=ENVELOPE_FIELDS, max_size=4))
    att: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=ATTEMPT_FIELDS, max_size=3))
    err: dict[str, Any] = draw(unknown_field_maps(forbidden_keys=ERROR_FIELDS, max_size=3))
    started = draw(_TIMESTAMPS)
    error = ErrorInfo(type="e.Boom", message="boom", detail=draw(json_values()), extra=err)
    attempt = Attempt(attempt_no=1, started_at=started, finished_at=None,
                      outcome=Outcome.RETRYABLE_FAILURE, error=error, extra=att)
    base = base_envelope(1, id=draw(_IDS))
    return dataclasses.replace(base, attempts=(attempt, *base.attempts), extra=top)


@st.composite
def envelopes_with_typed_fields(draw: st.DrawFn) -> Envelope:
    """Generated values in every field whose Python type or wire form a store can get
    wrong (RDQ-RT-004): id, status, counters, every timestamp, the payload, attempt
    numbers and outcomes; free text and unknown fields stay small."""
    status = draw(_STATUSES)
    terminal = status in (Status.SUCCEEDED, Status.DEAD)
    return base_envelope(
        1,
        id=draw(_IDS),
        status=status,
        handler_version=draw(_HANDLER_VERSIONS),
        payload=draw(_SHORT_PAYLOADS),
        attempt_count=draw(_COUNTERS),
        redrive_count=draw(_COUNTERS),
        created_at=draw(_TIMESTAMPS),
        next_attempt_at=None if terminal else draw(_OPTIONAL_TIMESTAMPS),
        lease_expires_at=draw(_TIMESTAMPS) if status is Status.IN_FLIGHT else None,
        attempts=tuple(draw(_TYPED_HISTORIES)),
    )
