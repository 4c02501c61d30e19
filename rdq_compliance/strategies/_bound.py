"""An upper bound of an envelope's compact encoding in bytes, without encoding it.

``envelopes()`` promises C2 (the compact encoding within 1 MiB). Encoding every drawn
envelope to check that cost more than drawing a small one; lengths bound it at a
fraction of the cost, and only an envelope that the bound cannot place under the limit
(a pushed one: a big payload, a near-limit fill) is encoded to measure it exactly.
"""

from __future__ import annotations

from typing import Any

from ..envelope._model import Attempt, Envelope, ErrorInfo
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

__all__ = ["size_bound"]

# The encoder writes with ensure_ascii=False: a code point is 1-4 bytes of UTF-8, a
# 2-byte escape (\" \\ \n ...) or a 6-byte \u00XX (the other control characters).
_PER_CODE_POINT = 6
# A scalar that is not a string: null, a boolean, an int64 (20 characters), a float's
# repr (at most 24: -1.7976931348623157e+308), a timestamp in quotes (26), an enum value.
_SCALAR = 26


def _fields(names: tuple[str, ...]) -> int:
    """The known fields' keys with their quotes, colons and commas, and the braces."""
    return 2 + sum(len(name) + 4 for name in names)


_ENVELOPE, _ATTEMPT, _ERROR = (_fields(ENVELOPE_FIELDS), _fields(ATTEMPT_FIELDS),
                               _fields(ERROR_FIELDS))


def _text(value: str | None) -> int:
    return _SCALAR if value is None else 2 + _PER_CODE_POINT * len(value)


def _json(value: Any) -> int:
    """A JSON value of any depth (a loop: unknown fields may nest hundreds of levels)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += 2 + _PER_CODE_POINT * len(item)
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)  # braces, a colon and a comma per entry
            for key, child in item.items():
                total += 2 + _PER_CODE_POINT * len(key)
                stack.append(child)
        elif isinstance(item, list):
            total += 2 + len(item)
            stack.extend(item)
        elif isinstance(item, int) and not -(10**20) < item < 10**20:
            total += len(str(item))  # past int64: C5 forbids it, the bound still holds
        else:
            total += _SCALAR
    return total


def _extra(extra: Any) -> int:
    return sum(4 + _PER_CODE_POINT * len(key) + _json(value) for key, value in extra.items())


def _error(error: ErrorInfo | None) -> int:
    if error is None:
        return _SCALAR
    return (_ERROR + _text(error.type) + _text(error.message) + _text(error.stack)
            + _json(error.detail) + _extra(error.extra))


def _attempt(attempt: Attempt) -> int:
    return _ATTEMPT + 4 * _SCALAR + _error(attempt.error) + _extra(attempt.extra) + 1


def size_bound(env: Envelope) -> int:
    """At least ``len(encode(env).encode("utf-8"))`` for any envelope that encodes."""
    headers = sum(6 + _PER_CODE_POINT * (len(k) + len(v)) for k, v in env.headers.items())
    return (
        _ENVELOPE + 7 * _SCALAR  # version, status, counters, timestamps
        + _text(env.id) + _text(env.queue) + _text(env.handler_ref)
        + _text(env.handler_version) + _text(env.payload_content_type)
        + 2 + 4 * ((len(env.payload) + 2) // 3)  # base64 in quotes
        + 2 + headers
        + 2 + sum(_attempt(a) for a in env.attempts)
        + _extra(env.extra)
    )
