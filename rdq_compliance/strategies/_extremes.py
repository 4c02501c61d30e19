"""Envelopes pushed past one common store limit (issue 13 item 5).

``envelopes(extremes=...)`` hands a share of its draws to :func:`pushed`, which
changes one or more aspects of a valid envelope so that it crosses limits real
stores have while staying valid: a payload above 64 KiB (BLOB/TEXT columns), a history
above 50 attempts (row caps), header and unknown keys that differ only by Unicode
normalization (NFC/NFD-folding collations and key stores), a whole envelope near
C2's 1 MiB (row, document and message size limits), an unknown field or
``detail`` nested past the JSON depth limits of .NET (64), MySQL and MongoDB (100)
and serde_json (128), up to a few hundred levels, a free-text field at a column or
index limit (VARCHAR(255), PostgreSQL's 2,704-byte b-tree entry, 8 and 16 KiB: C4
sets no length limit), and 1,000 to 2,000 headers (C8 sets no count limit).

Big values are expanded from a few drawn numbers (a seeded PRNG for bytes), so a
1 MiB envelope costs Hypothesis a handful of choices, not a million.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import unicodedata
from typing import Any

from hypothesis import strategies as st

from ..envelope._codec import encode
from ..envelope._deep import depth
from ..envelope._limits import MAX_ENVELOPE_BYTES
from ..envelope._model import Attempt, Envelope, ErrorInfo, JSONValue, Outcome
from ._json_values import json_values
from ._texts import COLUMN_LIMITS, WIDTHS, exact_byte_texts, free_texts

__all__ = ["EXTREME_KINDS", "LONG_FIELDS", "Plan", "plans", "pushed"]

EXTREME_KINDS = ("payload", "history", "normalization", "size", "depth", "lengths", "headers")

BIG_PAYLOAD_MIN = 64 * 1024 + 1
"""Above a 64 KiB BLOB/TEXT column (MySQL BLOB holds 65,535 bytes)."""
BIG_PAYLOAD_MAX = 256 * 1024
LONG_HISTORY_MIN = 51
LONG_HISTORY_MAX = 64
NEAR_LIMIT_SLACK = 4_096
"""A near-limit envelope's compact encoding is within this many bytes of C2's limit."""
DEEP_MIN, DEEP_MAX = 65, 400
MANY_HEADERS_MIN, MANY_HEADERS_MAX = 1_000, 2_000
LONG_FIELDS = ("header_key", "header_value", "handler_version", "payload_content_type",
               "error_type", "unknown_field", "unknown_field_key", "detail",
               "attempt_unknown_field", "error_unknown_field")
"""The free-text fields a "lengths" draw makes long (one per draw, see long_texts)."""

# Pairs of distinct strings equal after normalization: precomposed against
# decomposed, the Angstrom sign's singleton decomposition, Hangul jamo, and a long
# s with two marks whose canonical order differs.
_NORMALIZATION_PAIRS = (
    ("\u00c5", "A\u030a"), ("\u212b", "\u00c5"), ("\u212b", "A\u030a"), ("\u00e9", "e\u0301"),
    ("\uac00", "\u1100\u1161"), ("\u1e9b\u0323", "\u017f\u0323\u0307"),
)  # fmt: skip
_DEPTHS = st.one_of(
    st.sampled_from((DEEP_MIN, 101, 129, 300, DEEP_MAX)), st.integers(DEEP_MIN, DEEP_MAX)
)
_PAYLOAD_SIZES = st.one_of(
    st.sampled_from((BIG_PAYLOAD_MIN, 65_536 * 2, BIG_PAYLOAD_MAX)),
    st.integers(BIG_PAYLOAD_MIN, BIG_PAYLOAD_MAX),
)
_SEEDS = st.integers(0, 2**32 - 1)
_WHERE = st.sampled_from(("top", "attempt", "error", "detail"))
_SHAPES = st.sampled_from(("arrays", "objects", "mixed"))
_LEAVES = json_values(max_leaves=3)
_SHORT_TEXTS = free_texts(max_size=8)
_LONG_FIELDS = st.sampled_from(LONG_FIELDS)
_LONG_SIZES = st.sampled_from(COLUMN_LIMITS)
_LONG_WIDTHS = st.sampled_from(WIDTHS)
_HEADER_COUNTS = st.one_of(
    st.sampled_from((MANY_HEADERS_MIN, MANY_HEADERS_MAX)),
    st.integers(MANY_HEADERS_MIN, MANY_HEADERS_MAX),
)
_HEADER_TEMPLATES = st.lists(st.tuples(_SHORT_TEXTS, _SHORT_TEXTS), min_size=1, max_size=4)


def _random_bytes(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _nested(levels: int, leaf: JSONValue, shape: str) -> JSONValue:
    """``leaf`` inside containers so that the value is exactly ``levels`` arrays/objects
    deep, the depth .NET's MaxDepth counts (MySQL also counts the innermost scalar):
    ``levels`` one past a limit crosses it by either count, and never goes past DEEP_MAX
    whatever the drawn leaf."""
    value = leaf
    for i in range(levels - depth(leaf)):
        array = shape == "arrays" or (shape == "mixed" and i % 2 == 0)
        value = [value] if array else {"k": value}
    return value


@functools.cache
def _templates(attempt: st.SearchStrategy[Attempt]) -> st.SearchStrategy[list[Attempt]]:
    return st.lists(attempt, min_size=1, max_size=4)


_HISTORY_SIZES = st.integers(LONG_HISTORY_MIN, LONG_HISTORY_MAX)


def _long_history(draw: st.DrawFn, attempt: st.SearchStrategy[Attempt]) -> tuple[Attempt, ...]:
    # A few drawn attempts repeated to 51-64, numbered 1..n: drawing 60 attempts one
    # by one would overrun Hypothesis's per-example budget.
    templates = draw(_templates(attempt))
    size = draw(_HISTORY_SIZES)
    return tuple(
        dataclasses.replace(templates[i % len(templates)], attempt_no=i + 1) for i in range(size)
    )


def _size(env: Envelope) -> int:
    return len(encode(env).encode("utf-8"))


def _free_key(existing: Any, stem: str) -> str:
    key, n = stem, 0
    while key in existing:
        n += 1
        key = f"{stem}_{n}"
    return key


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a pushed draw crosses, chosen at the start of the example: a choice drawn
    deep inside a large example comes out as its first option most of the time
    (measured: the long field was a header key in 13 of 27 draws, never error.type)."""

    kinds: tuple[str, ...]
    long_field: str = ""
    long_size: int = 0
    long_width: int = 1


@functools.cache
@st.composite
def plans(draw: st.DrawFn, kinds: tuple[str, ...]) -> Plan:
    """The plan of a draw pushed past the limits named in ``kinds`` (of EXTREME_KINDS)."""
    if "lengths" not in kinds:
        return Plan(kinds)
    return Plan(kinds, draw(_LONG_FIELDS), draw(_LONG_SIZES), draw(_LONG_WIDTHS))


@st.composite
def pushed(
    draw: st.DrawFn, env: Envelope, attempt: st.SearchStrategy[Attempt], plan: Plan
) -> Envelope:
    """``env`` pushed past the store limits of ``plan`` (see the module docstring), in
    an order that lets them combine; still valid. ``attempt``: the strategy of one
    history item."""
    kinds = plan.kinds
    if "history" in kinds:
        env = dataclasses.replace(env, attempts=_long_history(draw, attempt))
    if "depth" in kinds:
        env = _deep(draw, env)
    if "normalization" in kinds:
        env = _normalization(draw, env)
    if "payload" in kinds:
        env = dataclasses.replace(env, payload=_random_bytes(draw(_SEEDS), draw(_PAYLOAD_SIZES)))
    if "lengths" in kinds:
        text = draw(exact_byte_texts(plan.long_size, plan.long_width))
        env = _long_value(draw, env, plan.long_field, text)
    if "headers" in kinds:
        env = _many_headers(draw, env)
    if "size" in kinds:  # last: it fills what the others left
        env = _near_limit(draw, env)
    return env


def _normalization(draw: st.DrawFn, env: Envelope) -> Envelope:
    text = draw(_SHORT_TEXTS)
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    first, second = (nfc, nfd) if nfc != nfd else draw(st.sampled_from(_NORMALIZATION_PAIRS))
    headers = {**env.headers, first: draw(_SHORT_TEXTS), second: draw(_SHORT_TEXTS)}
    extra = {**env.extra, first: draw(_LEAVES), second: draw(_LEAVES)}
    return dataclasses.replace(env, headers=headers, extra=extra)


def _near_limit(draw: st.DrawFn, env: Envelope) -> Envelope:
    """Fill the payload (and an ASCII unknown field, to the byte) until the compact
    encoding is within NEAR_LIMIT_SLACK bytes of the limit, the limit included."""
    target = MAX_ENVELOPE_BYTES - draw(st.integers(0, NEAR_LIMIT_SLACK))
    key = _free_key(env.extra, "x_fill")
    env = dataclasses.replace(env, payload=b"", extra={**env.extra, key: ""})
    room = target - _size(env)
    if room < 64:  # already near the limit: leave it as it is
        return env
    raw = (room - 8) // 4 * 3
    env = dataclasses.replace(env, payload=_random_bytes(draw(_SEEDS), raw))
    # The payload's base64 (4 characters per 3 bytes, no escapes) is all that grew:
    # counted, not encoded again.
    fill = room - 4 * ((raw + 2) // 3)
    return dataclasses.replace(env, extra={**env.extra, key: "p" * fill})


def _deep(draw: st.DrawFn, env: Envelope) -> Envelope:
    value = _nested(draw(_DEPTHS), draw(_LEAVES), draw(_SHAPES))
    where = draw(_WHERE)
    history = list(env.attempts)
    with_error = [i for i, a in enumerate(history) if a.error is not None]
    if where in ("error", "detail") and with_error:
        i = with_error[draw(st.integers(0, len(with_error) - 1))]
        error = history[i].error
        assert error is not None
        if where == "detail":
            error = dataclasses.replace(error, detail=value)
        else:
            error = dataclasses.replace(
                error, extra={**error.extra, _free_key(error.extra, "x_deep"): value}
            )
        history[i] = dataclasses.replace(history[i], error=error)
        return dataclasses.replace(env, attempts=tuple(history))
    if where == "attempt" and history:
        i = draw(st.integers(0, len(history) - 1))
        a = history[i]
        history[i] = dataclasses.replace(a, extra={**a.extra, _free_key(a.extra, "x_deep"): value})
        return dataclasses.replace(env, attempts=tuple(history))
    return dataclasses.replace(env, extra={**env.extra, _free_key(env.extra, "x_deep"): value})


def _long_value(draw: st.DrawFn, env: Envelope, field: str, text: str) -> Envelope:
    """``field`` (of LONG_FIELDS) holding ``text``."""
    if field == "header_key":
        return dataclasses.replace(env, headers={**env.headers, text: draw(_SHORT_TEXTS)})
    if field == "header_value":
        key = draw(_SHORT_TEXTS)
        return dataclasses.replace(env, headers={**env.headers, key: text})
    if field == "unknown_field":
        return dataclasses.replace(env, extra={**env.extra, _free_key(env.extra, "x_long"): text})
    if field == "unknown_field_key":  # 255+ bytes: never a known field's name
        return dataclasses.replace(env, extra={**env.extra, text: draw(_SHORT_TEXTS)})
    if field == "handler_version":
        return dataclasses.replace(env, handler_version=text)
    if field == "payload_content_type":
        return dataclasses.replace(env, payload_content_type=text)
    # The others go into an attempt whose error is not LEASE_EXPIRED's (whose type is
    # fixed), or a new attempt carrying one (in place of the last when the history is at
    # its 64 already).
    history = list(env.attempts)
    free = [i for i, a in enumerate(history)
            if a.error is not None and a.outcome is not Outcome.LEASE_EXPIRED]
    if free:
        i = free[0]
    else:
        attempt = Attempt(attempt_no=len(history) + 1, started_at=env.created_at,
                          finished_at=None, outcome=Outcome.RETRYABLE_FAILURE,
                          error=ErrorInfo(type="E", message=""))
        i = min(len(history), 63)
        history[i:i + 1] = [attempt]
    attempt = history[i]
    error = attempt.error
    assert error is not None
    if field == "attempt_unknown_field":
        attempt = dataclasses.replace(
            attempt, extra={**attempt.extra, _free_key(attempt.extra, "x_long"): text})
    elif field == "error_unknown_field":
        key = _free_key(error.extra, "x_long")
        attempt = dataclasses.replace(attempt, error=dataclasses.replace(
            error, extra={**error.extra, key: text}))
    elif field == "detail":
        attempt = dataclasses.replace(attempt, error=dataclasses.replace(error, detail=text))
    else:  # error_type
        attempt = dataclasses.replace(attempt, error=dataclasses.replace(error, type=text))
    history[i] = attempt
    return dataclasses.replace(env, attempts=tuple(history))


def _many_headers(draw: st.DrawFn, env: Envelope) -> Envelope:
    """1,000 to 2,000 headers repeated from a few drawn ones, each key prefixed with its
    number so that all are distinct (drawing a thousand pairs one by one would overrun
    Hypothesis's per-example budget: about 30 s a draw, measured)."""
    templates = draw(_HEADER_TEMPLATES)
    count = draw(_HEADER_COUNTS)
    many = {
        f"{i:04d}{templates[i % len(templates)][0]}": templates[i % len(templates)][1]
        for i in range(count)
    }
    return dataclasses.replace(env, headers={**env.headers, **many})
