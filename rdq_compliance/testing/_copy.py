"""The kit's private copy of an envelope: what ``Namespace.write`` hands to the plugin.

Whatever a plugin does to the object it was given, the kit's expected value stays what
the generator produced. copy.deepcopy would do, at many times the cost on every write.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from ..envelope._deep import copy_json
from ..envelope._diff_json import same_json
from ..envelope._model import Attempt, Envelope, ErrorInfo

__all__ = ["private_copy", "untouched"]

_MISSING: Any = object()


def _copy_json(value: Any) -> Any:
    # Any depth (no recursion); not plain JSON (an invalid model): copy it anyway.
    return copy_json(value, copy.deepcopy)


def _copy_error(error: Any) -> Any:
    if type(error) is not ErrorInfo:
        return copy.deepcopy(error)
    return dataclasses.replace(error, detail=_copy_json(error.detail),
                               extra=_copy_json(error.extra))


def _copy_attempt(attempt: Any) -> Any:
    if type(attempt) is not Attempt:
        return copy.deepcopy(attempt)
    return dataclasses.replace(attempt, error=_copy_error(attempt.error),
                               extra=_copy_json(attempt.extra))


def private_copy(env: Envelope) -> Envelope:
    """A copy of ``env`` that shares nothing mutable with it: new model objects, new
    containers (headers, attempts, ``extra``, ``detail``); the immutable leaves
    (str, bytes, int, datetime, enum members) are shared. What copy.deepcopy gives,
    at a fraction of its cost."""
    if type(env) is not Envelope:
        return copy.deepcopy(env)
    attempts = env.attempts
    return dataclasses.replace(
        env,
        headers=_copy_json(env.headers),
        attempts=(tuple(_copy_attempt(a) for a in attempts)
                  if type(attempts) is tuple else copy.deepcopy(attempts)),
        extra=_copy_json(env.extra),
    )


# -- untouched ---------------------------------------------------------------------

_ENV_INTS = attrgetter("envelope_version", "attempt_count", "redrive_count")
_ENV_STRS = attrgetter("id", "queue", "handler_ref", "handler_version",
                       "payload_content_type")
_ENV_TIMES = attrgetter("created_at", "next_attempt_at", "lease_expires_at")


def untouched(original: Envelope, copy: Envelope) -> bool:
    """Whether ``copy``, made by :func:`private_copy` from ``original``, is provably
    still equal to it: every field's leaf the very object of ``original``'s, every
    container of the same exact type and size, each leaf of a kind that ``diff`` finds
    equal to itself; the plain JSON (unknown fields, ``detail``) by ``same_json``, the
    diff's own shortcut for it.
    True means ``diff(original, copy)`` is empty, without its pointers and messages;
    False only that the diff must decide. It compares the two objects as they are now,
    never anything the plugin says (a plugin that mutates either one, now or later,
    changes what this finds)."""
    if type(original) is not Envelope or type(copy) is not Envelope:
        return False
    return (
        _same(_ENV_INTS(original), _ENV_INTS(copy), _is_int)
        and _same(_ENV_STRS(original), _ENV_STRS(copy), _is_str)
        and _same(_ENV_TIMES(original), _ENV_TIMES(copy), _is_time)
        and original.payload is copy.payload and type(original.payload) is bytes
        and original.status is copy.status and isinstance(original.status, str)
        and _same_headers(original.headers, copy.headers)
        and _same_attempts(original.attempts, copy.attempts)
        and same_json(original.extra, copy.extra)
    )


def _same(e: tuple[Any, ...], a: tuple[Any, ...], kind: Callable[[Any], bool]) -> bool:
    return all(x is y and kind(x) for x, y in zip(e, a, strict=True))


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is another type to diff


def _is_str(value: Any) -> bool:
    return value is None or type(value) is str


def _is_time(value: Any) -> bool:
    # diff's quiet case: an instant in exactly the wire's form (else it says why).
    return value is None or (type(value) is datetime and value.tzinfo is UTC
                             and not value.microsecond % 1000)


def _same_headers(e: Any, a: Any) -> bool:
    if type(e) is not dict or type(a) is not dict or len(e) != len(a):
        return False
    for key, value in e.items():
        if a.get(key, _MISSING) is not value or type(value) is not str:
            return False
    return True


def _same_attempts(e: Any, a: Any) -> bool:
    if type(e) is not tuple or type(a) is not tuple or len(e) != len(a):
        return False
    for x, y in zip(e, a, strict=True):
        if type(x) is not Attempt or type(y) is not Attempt:
            return False
        if not (x.attempt_no is y.attempt_no and type(x.attempt_no) is int
                and x.outcome is y.outcome and isinstance(x.outcome, str)
                and x.started_at is y.started_at and _is_time(x.started_at)
                and x.finished_at is y.finished_at and _is_time(x.finished_at)
                and _same_error(x.error, y.error) and same_json(x.extra, y.extra)):
            return False
    return True


def _same_error(e: Any, a: Any) -> bool:
    if e is None or a is None:
        return e is a
    if type(e) is not ErrorInfo or type(a) is not ErrorInfo:
        return False
    return (_same((e.type, e.message, e.stack), (a.type, a.message, a.stack), _is_str)
            and same_json(e.detail, a.detail) and same_json(e.extra, a.extra))
