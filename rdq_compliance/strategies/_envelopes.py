"""Strategies for whole envelope models: errors, attempts, envelopes."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection
from datetime import datetime

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..envelope._codec import encode
from ..envelope._limits import MAX_ENVELOPE_BYTES, MAX_KNOWN_INT, MESSAGE_LIMIT, STACK_LIMIT
from ..envelope._model import Attempt, Envelope, ErrorInfo, JSONValue, Outcome, Status
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS, format_timestamp
from . import _shapes as shapes
from ._args import check_bool, check_collection, check_int, check_range
from ._bound import size_bound
from ._draws import (
    field_map,
    free_text,
    index,
    integers_between,
    json_value,
    plain_texts,
    spliced_text,
    text_or,
)
from ._extremes import EXTREME_KINDS, Plan, plans, pushed
from ._headers import draw_header_map
from ._identifiers import draw_id, draw_name
from ._json_values import traps_without
from ._payloads import draw_payload
from ._texts import truncated_texts
from ._timestamps import EPOCH, LAST_INSTANT, TimestampDraw

LEASE_EXPIRED_TYPE = "rdq.LeaseExpired"
_MAX_PAYLOAD = 256 * 1024
_MAX_ATTEMPTS = 64
_MAX_TEXT = 1024
_PER_MILLE = st.integers(0, 999)
_EXTREME_KINDS = st.sampled_from(EXTREME_KINDS)

# Short and long (_shapes: JVM lambda class names, Go generics, MIME parameters).
_ERROR_TYPES = (
    "java.net.SocketTimeoutException", "java.lang.NullPointerException", "*errors.errorString",
    "*url.Error", "context.deadlineExceededError", "ValueError", LEASE_EXPIRED_TYPE,
    *shapes.ERROR_TYPES,
)  # fmt: skip
_CONTENT_TYPES = (
    "application/json", "application/octet-stream", "text/plain; charset=utf-8",
    "application/x-protobuf", "", *shapes.CONTENT_TYPES,
)  # fmt: skip


# Known integer fields (C5): 0..2**31-1, mostly small, biased to the ends (a third
# each: 0-10, an end, any). The branch and a small value or an end are one choice:
# 22 numbers a branch, each of 0-10 two of them and each end eleven.
_COUNTER_CHOICES = st.integers(0, 3 * 22 - 1)
_ANY_COUNTER = st.integers(0, MAX_KNOWN_INT)
_INSTANTS = TimestampDraw.of(EPOCH, LAST_INSTANT)
_BOOLEANS = st.booleans()
_LONG_FIELDS = st.sampled_from(("message", "stack", "both"))
_MESSAGES_AT_LIMIT = truncated_texts(limit=MESSAGE_LIMIT)
_STACKS_AT_LIMIT = truncated_texts(limit=STACK_LIMIT)
_ERROR_TRAPS = traps_without(frozenset(ERROR_FIELDS))
_ATTEMPT_TRAPS = traps_without(frozenset(ATTEMPT_FIELDS))
_ENVELOPE_TRAPS = traps_without(frozenset(ENVELOPE_FIELDS))
_ERROR_BANNED = frozenset(ERROR_FIELDS)
_ATTEMPT_BANNED = frozenset(ATTEMPT_FIELDS)
_ENVELOPE_BANNED = frozenset(ENVELOPE_FIELDS)
_STATUSES = st.sampled_from(Status)
_NUMBERING = st.sampled_from(("drawn", "sequential", "redriven"))
# Commit ids, image digests, semver with build metadata: 34 to 115 bytes.
_HANDLER_VERSION_SHAPES = st.sampled_from(shapes.HANDLER_VERSIONS)
_CONTENT_TYPE_NAMES = st.sampled_from(_CONTENT_TYPES)
_ERROR_TYPE_NAMES = st.sampled_from(_ERROR_TYPES)


def _counter(draw: st.DrawFn) -> int:
    branch, rest = divmod(draw(_COUNTER_CHOICES), 22)
    if branch == 0:
        return rest % 11
    if branch == 1:
        return (0, MAX_KNOWN_INT)[rest % 2]
    value: int = draw(_ANY_COUNTER)
    return value


def _optional_timestamp(draw: st.DrawFn) -> datetime | None:
    """null or a timestamp, a quarter and three quarters (the timestamp's three
    branches and null were one one_of)."""
    kind = draw(index(4))
    return None if kind == 0 else _INSTANTS.at(draw, kind - 1)


def _optional_text(draw: st.DrawFn, max_size: int) -> str | None:
    """null, a plain or a spliced text: a third each."""
    kind = draw(index(3))
    if kind == 0:
        return None
    return draw(plain_texts(0, max_size)) if kind == 1 else spliced_text(draw, 0, max_size)


def _extra(draw: st.DrawFn, traps: st.SearchStrategy[str] | None, banned: frozenset[str],
           max_size: int = 3) -> dict[str, JSONValue]:
    """Unknown fields for about half of the objects: JSON values are the costliest part
    of an envelope to generate. The half without and the map's size are one choice:
    0..max_size is "none", max_size+1.. the size (as a coin then a size drawn apart)."""
    choice = draw(_extra_choices(max_size))
    if choice <= max_size:
        return {}
    return field_map(draw, traps, banned, max_size, 6, size=choice - max_size - 1)


@functools.cache
def _extra_choices(max_size: int) -> st.SearchStrategy[int]:
    return st.integers(0, 2 * max_size + 1)


def _error(
    draw: st.DrawFn, unknown_fields: bool, max_text_size: int, long_texts: bool,
    lease_expired: bool,
) -> ErrorInfo:  # fmt: skip
    # With long_texts at least one of message/stack sits at its C1 limit (a
    # LEASE_EXPIRED error has no stack, so there it is the message).
    which = "message" if lease_expired or not long_texts else draw(_LONG_FIELDS)
    long_message = long_texts and which in ("message", "both")
    long_stack = long_texts and which in ("stack", "both")
    if lease_expired:
        type_ = LEASE_EXPIRED_TYPE
        if draw(_BOOLEANS):
            deadline: datetime = _INSTANTS(draw)
            message = f"lease expired at {format_timestamp(deadline)}"
        else:
            message = free_text(draw, 0, max_text_size)
    else:
        type_ = text_or(draw, _ERROR_TYPE_NAMES, 1, 0, max_text_size)
        message = free_text(draw, 0, max_text_size)
    if long_message:
        message = draw(_MESSAGES_AT_LIMIT)
    if lease_expired:
        stack = None
    elif long_stack:
        stack = draw(_STACKS_AT_LIMIT)
    else:
        stack = _optional_text(draw, max_text_size)
    detail = None if draw(_BOOLEANS) else json_value(draw, 6)
    extra = _extra(draw, _ERROR_TRAPS, _ERROR_BANNED) if unknown_fields else {}
    return ErrorInfo(type=type_, message=message, detail=detail, stack=stack, extra=extra)


@functools.cache
@st.composite
def _errors(
    draw: st.DrawFn, unknown_fields: bool, max_text_size: int, long_texts: bool,
    lease_expired: bool,
) -> ErrorInfo:  # fmt: skip
    return _error(draw, unknown_fields, max_text_size, long_texts, lease_expired)


def _check_text_size(max_text_size: object) -> int:
    return check_int("max_text_size", max_text_size, min_value=0, max_value=_MAX_TEXT)


def errors(
    *, unknown_fields: bool = True, max_text_size: int = 32, long_texts: bool = False,
    lease_expired: bool = False,
) -> st.SearchStrategy[ErrorInfo]:  # fmt: skip
    """Error objects of an attempt record. Free-text ``type``/``message``/``stack``
    of at most ``max_text_size`` code points; with ``long_texts`` the message, the
    stack or both are texts at their C1 limits (4,096 / 65,536 bytes, see
    :func:`truncated_texts`). ``detail`` is null or any JSON value; ``unknown_fields`` adds
    unknown keys. ``lease_expired`` gives the shape a LEASE_EXPIRED attempt
    needs: type ``rdq.LeaseExpired`` and no stack."""
    check_bool("unknown_fields", unknown_fields)
    check_bool("long_texts", long_texts)
    check_bool("lease_expired", lease_expired)
    return _errors(unknown_fields, _check_text_size(max_text_size), long_texts, lease_expired)


@functools.cache
def _sampled_outcomes(outcomes: tuple[Outcome, ...]) -> st.SearchStrategy[Outcome]:
    return st.sampled_from(outcomes)


def _attempt(
    draw: st.DrawFn, outcomes: tuple[Outcome, ...], unknown_fields: bool, max_text_size: int,
    long_texts: bool,
) -> Attempt:  # fmt: skip
    outcome = draw(_sampled_outcomes(outcomes))
    error: ErrorInfo | None
    if outcome is Outcome.LEASE_EXPIRED:
        error = _error(draw, unknown_fields, max_text_size, long_texts, lease_expired=True)
    elif long_texts or draw(_BOOLEANS):
        error = _error(draw, unknown_fields, max_text_size, long_texts, lease_expired=False)
    else:
        error = None
    return Attempt(
        attempt_no=_counter(draw),
        started_at=_INSTANTS(draw),
        finished_at=_optional_timestamp(draw),
        outcome=outcome,
        error=error,
        extra=_extra(draw, _ATTEMPT_TRAPS, _ATTEMPT_BANNED) if unknown_fields else {},
    )


@functools.cache
@st.composite
def _attempts(
    draw: st.DrawFn, outcomes: tuple[Outcome, ...], unknown_fields: bool, max_text_size: int,
    long_texts: bool,
) -> Attempt:  # fmt: skip
    return _attempt(draw, outcomes, unknown_fields, max_text_size, long_texts)


def attempts(
    *, outcomes: Collection[Outcome] = tuple(Outcome), unknown_fields: bool = True,
    max_text_size: int = 32, long_texts: bool = False,
) -> st.SearchStrategy[Attempt]:  # fmt: skip
    """Attempt records with an outcome from ``outcomes``. A LEASE_EXPIRED attempt
    always has an ``rdq.LeaseExpired`` error without stack; other outcomes have
    an optional error (see :func:`errors`), always present with ``long_texts``
    (whose message and/or stack then sit at the C1 limits). ``finished_at`` is null or any
    timestamp: the spec orders nothing, so neither does this strategy."""
    chosen = check_collection("outcomes", outcomes, allow_empty=False)
    if not all(isinstance(o, Outcome) for o in chosen):
        raise InvalidArgument(f"outcomes={outcomes!r} must hold only Outcome members")
    check_bool("unknown_fields", unknown_fields)
    check_bool("long_texts", long_texts)
    return _attempts(
        tuple(dict.fromkeys(chosen)),
        unknown_fields,
        _check_text_size(max_text_size),
        long_texts,
    )


def _renumber(history: list[Attempt], numbers: list[int]) -> list[Attempt]:
    return [dataclasses.replace(a, attempt_no=n) for a, n in zip(history, numbers, strict=True)]


@functools.cache
def _histories(
    min_attempts: int, max_attempts: int, unknown_fields: bool
) -> st.SearchStrategy[list[Attempt]]:
    return st.lists(
        _attempts(tuple(Outcome), unknown_fields, 16, long_texts=False),
        min_size=min_attempts,
        max_size=max_attempts,
    )


@functools.cache
@st.composite
def _envelopes(
    draw: st.DrawFn, versions: st.SearchStrategy[int], min_attempts: int, max_attempts: int,
    unknown_fields: bool, max_payload_size: int, extremes: int = 0,
) -> Envelope:  # fmt: skip
    # Drawn first: a choice at the start of an example keeps the share it is drawn
    # with; deep inside a large example Hypothesis mostly draws it as 0. The window
    # starts in the middle of 0-999 (wrapping past 999 above one half): Hypothesis
    # favours the ends of a range, and shrinking towards 0 leaves the window, so a
    # failure shrinks to an ordinary envelope when it can.
    kinds: tuple[str, ...] = ()
    if extremes and (draw(_PER_MILLE) - 500) % 1000 < extremes:
        # Which limits, also drawn early and each on its own: one choice among five
        # is skewed by the constants Hypothesis mixes in; five coins rarely all are.
        kinds = tuple(kind for kind in EXTREME_KINDS if draw(_BOOLEANS))
        kinds = kinds or (draw(_EXTREME_KINDS),)
    # The other early choices of the pushed kinds (which field is long, how long).
    plan: Plan | None = draw(plans(kinds)) if kinds else None
    status = draw(_STATUSES)
    history = draw(_histories(min_attempts, max_attempts, unknown_fields))
    # attempt_no: as drawn, 1..n, or restarting at 1 after each redrive (C12).
    numbering = draw(_NUMBERING)
    if numbering == "sequential":
        history = _renumber(history, list(range(1, len(history) + 1)))
    elif numbering == "redriven" and history:
        period = draw(integers_between(1, max(1, len(history))))
        history = _renumber(history, [i % period + 1 for i in range(len(history))])
    # At most one attempt with C1-limit texts keeps the envelope far below C2.
    if history and draw(index(4)) == 3:
        at = draw(integers_between(0, len(history) - 1))
        long_one = _attempt(draw, tuple(Outcome), unknown_fields, 16, long_texts=True)
        history[at] = dataclasses.replace(long_one, attempt_no=history[at].attempt_no)
    terminal = status in (Status.SUCCEEDED, Status.DEAD)
    envelope = Envelope(
        envelope_version=draw(versions),
        id=draw_id(draw),
        queue=draw_name(draw),
        handler_ref=draw_name(draw),
        handler_version=_handler_version(draw),
        payload=draw_payload(draw, max_payload_size),
        payload_content_type=text_or(draw, _CONTENT_TYPE_NAMES, 1, 0, 24),
        headers=draw_header_map(draw),
        status=status,
        attempt_count=_counter(draw),
        redrive_count=_counter(draw),
        next_attempt_at=None if terminal else _optional_timestamp(draw),
        lease_expires_at=_INSTANTS(draw) if status is Status.IN_FLIGHT else None,
        created_at=_INSTANTS(draw),
        attempts=tuple(history),
        extra=_envelope_extra(draw) if unknown_fields else {},
    )
    if plan is not None:
        item = _attempts(tuple(Outcome), unknown_fields, 4, long_texts=False)
        envelope = draw(pushed(envelope, item, plan))
    # The bounds make an envelope over C2 all but impossible; this guards the
    # promise that every generated envelope is valid. Lengths settle almost every
    # draw; only one they cannot place under the limit (a pushed one) is encoded.
    if size_bound(envelope) > MAX_ENVELOPE_BYTES:
        assume(len(encode(envelope).encode("utf-8")) <= MAX_ENVELOPE_BYTES)
    return envelope


def _handler_version(draw: st.DrawFn) -> str | None:
    """null, a plain or spliced text of up to 16 characters, or a real-world shape: a
    quarter each."""
    kind = draw(index(4))
    if kind == 0:
        return None
    if kind == 1:
        text: str = draw(plain_texts(0, 16))
        return text
    if kind == 2:
        return spliced_text(draw, 0, 16)
    shape: str = draw(_HANDLER_VERSION_SHAPES)
    return shape


def _envelope_extra(draw: st.DrawFn) -> dict[str, JSONValue]:
    """Unknown top-level fields; payload_ref is reserved but unknown in v1 (C10): a
    store that special-cases it must still preserve it, so half of the envelopes
    carry it (the one_of this replaces listed "none" three times, but Hypothesis
    counts a repeated branch once)."""
    fields = field_map(draw, _ENVELOPE_TRAPS, _ENVELOPE_BANNED, 3, 6)
    if draw(_BOOLEANS):
        fields["payload_ref"] = json_value(draw, 4)
    return fields


def _check_envelope_args(
    min_attempts: object, max_attempts: object, unknown_fields: object, max_payload_size: object
) -> tuple[int, int, bool, int]:
    lo, hi = check_range("min_attempts", min_attempts, "max_attempts", max_attempts,
                         least=0, most=_MAX_ATTEMPTS)
    size = check_int("max_payload_size", max_payload_size, min_value=0, max_value=_MAX_PAYLOAD)
    return lo, hi, check_bool("unknown_fields", unknown_fields), size


def envelopes(
    *, envelope_versions: Collection[int] = (1,), min_attempts: int = 0, max_attempts: int = 8,
    unknown_fields: bool = True, max_payload_size: int = 512, extremes: float = 0.0,
) -> st.SearchStrategy[Envelope]:  # fmt: skip
    """Valid envelope models of one of ``envelope_versions`` (v1-shaped).

    Every invariant the validator checks holds: IN_FLIGHT has a lease and no
    other status has one; SUCCEEDED/DEAD have ``next_attempt_at`` null;
    LEASE_EXPIRED attempts carry an ``rdq.LeaseExpired`` error without stack;
    messages and stacks are within C1; the compact encoding is within C2.
    Things the spec leaves free are left free: ``attempt_count`` unrelated to
    ``len(attempts)``, repeated or decreasing ``attempt_no``, unordered
    timestamps. ``min_attempts``/``max_attempts`` bound the history (at most
    64), ``max_payload_size`` the payload bytes (at most 262,144), and
    ``unknown_fields`` adds unknown fields at every level.

    ``extremes`` (0 to 1, default 0) is the share of draws pushed past limits that
    real stores have, whatever the bounds above say; each such draw crosses one or
    more of: a payload of 64 KiB + 1 to 256 KiB, a history of 51 to 64 attempts,
    header and unknown keys that differ only by Unicode normalization (NFC/NFD), a
    compact encoding within 4 KiB of C2's 1 MiB, an unknown field or ``detail``
    nested 65 to 400 levels deep, a header key or value, ``handler_version``,
    ``payload_content_type``, ``error.type`` or unknown string field of one of the
    ``COLUMN_LIMITS`` (255 to 16,384 bytes, see :func:`long_texts`), 1,000 to 2,000
    headers. Hypothesis reuses earlier examples, so fewer
    draws than the share cross (about half, measured).
    """
    versions = check_collection("envelope_versions", envelope_versions, allow_empty=False)
    for version in versions:
        check_int("an envelope_versions item", version, min_value=0, max_value=MAX_KNOWN_INT)
    args = _check_envelope_args(min_attempts, max_attempts, unknown_fields, max_payload_size)
    return _envelopes(_versions(frozenset(versions)), *args, _check_share(extremes))


def _check_share(extremes: object) -> int:
    """``extremes`` as a whole number of draws per thousand."""
    if (
        isinstance(extremes, bool)
        or not isinstance(extremes, int | float)
        or not 0 <= extremes <= 1
    ):
        raise InvalidArgument(f"extremes={extremes!r} must be a number from 0 to 1")
    return round(extremes * 1000)


def envelopes_of_other_versions(
    *, exclude: Collection[int] = (1,), max_attempts: int = 4, unknown_fields: bool = True,
    max_payload_size: int = 64,
) -> st.SearchStrategy[Envelope]:  # fmt: skip
    """v1-shaped envelopes whose ``envelope_version`` is not in ``exclude`` (C16),
    biased to 0, 2 and 2**31-1: what a plugin must reject with
    UNSUPPORTED_ENVELOPE_VERSION or return exactly as written."""
    excluded = check_collection("exclude", exclude, allow_empty=True)
    for version in excluded:
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidArgument(f"exclude={exclude!r} must hold only integers")
    args = _check_envelope_args(0, max_attempts, unknown_fields, max_payload_size)
    return _envelopes(_other_versions(frozenset(excluded)), *args)


@functools.cache
def _versions(versions: frozenset[int]) -> st.SearchStrategy[int]:
    return st.sampled_from(sorted(versions))


@functools.cache
def _other_versions(banned: frozenset[int]) -> st.SearchStrategy[int]:
    edges = [v for v in (0, 2, 3, MAX_KNOWN_INT) if v not in banned]
    # Any allowed version without a filter: a number among as many as are allowed,
    # moved past each banned version at or below it (shrinks to the least allowed one).
    skipped = sorted(v for v in banned if 0 <= v <= MAX_KNOWN_INT)
    drawn = st.integers(0, MAX_KNOWN_INT - len(skipped)).map(
        functools.partial(_skip_past, tuple(skipped)))
    return st.one_of(st.sampled_from(edges), drawn) if edges else drawn


def _skip_past(banned: tuple[int, ...], value: int) -> int:
    for version in banned:  # ascending: each one passed moves the value up by one
        if value >= version:
            value += 1
    return value
