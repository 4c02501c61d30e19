"""strategies._bound.size_bound: never below the compact encoding's size, so that the
C2 guard of envelopes() may skip encoding the envelopes it places under 1 MiB."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, Status, encode
from rdq_compliance import strategies as rs
from rdq_compliance.envelope._limits import INT64_MIN, MAX_KNOWN_INT
from rdq_compliance.envelope._model import JSONValue
from rdq_compliance.strategies._bound import size_bound

_LAST = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
_WIDEST_FLOAT = -1.7976931348623157e308  # the longest repr a finite double has (24)


def _size(env: Envelope) -> int:
    return len(encode(env).encode("utf-8"))


def _worst(text: str, payload: bytes) -> Envelope:
    """Every field at its most expensive per character: ``text`` everywhere, the widest
    numbers and timestamps, containers with many small items."""
    nested: list[JSONValue] = [INT64_MIN, _WIDEST_FLOAT, True, None, text, [], {},
                               {text: [text, {}]}]
    error = ErrorInfo(type=text, message=text, detail=nested, stack=text,
                      extra={text + "e": nested})
    attempt = Attempt(attempt_no=MAX_KNOWN_INT, started_at=_LAST, finished_at=_LAST,
                      outcome=Outcome.RETRYABLE_FAILURE, error=error,
                      extra={text + "a": [[[text]]]})
    return Envelope(
        envelope_version=MAX_KNOWN_INT, id="0" * 26, queue=text, handler_ref=text,
        handler_version=text, payload=payload, payload_content_type=text,
        headers={text: text, text + "h": "", "": text}, status=Status.IN_FLIGHT,
        attempt_count=MAX_KNOWN_INT, redrive_count=MAX_KNOWN_INT, next_attempt_at=_LAST,
        lease_expires_at=_LAST, created_at=_LAST, attempts=(attempt, attempt),
        extra={text + "x": nested, "x_n": INT64_MIN, "x_f": _WIDEST_FLOAT},
    )


@pytest.mark.parametrize("text", ["\x00", "\x1f" * 7, '"\\', "\U0010ffff" * 3, "", "a"])
@pytest.mark.parametrize("payload", [b"", b"\x00", b"\xff\xfe", b"abc", bytes(range(256))])
def test_bound_holds_where_every_character_is_expensive(text: str, payload: bytes) -> None:
    env = _worst(text, payload)
    assert size_bound(env) >= _size(env)


_LONG = "\x00" * 2_000  # 6 bytes a character (\u0000): the most any character takes
# 3,380 keys of three control characters: 6 bytes each, so that nothing but the
# bound's per-entry overhead can make up for an under-count.
_SIX = [chr(i) for i in range(1, 32) if chr(i) not in "\b\t\n\f\r"]  # no short escape
_KEYS = [a + b + c for a in _SIX for b in _SIX for c in _SIX[:5]]
_PLACES = {
    "queue": lambda: _plain(queue=_LONG),
    "header key": lambda: _plain(headers={_LONG: ""}),
    "header value": lambda: _plain(headers={"": _LONG}),
    "error message": lambda: _plain(attempts=(_attempt(ErrorInfo(type="", message=_LONG)),)),
    "detail string": lambda: _plain(
        attempts=(_attempt(ErrorInfo(type="", message="", detail=[_LONG])),)),
    "nested key": lambda: _plain(extra={"x": {_LONG: None}}),
    "unknown key": lambda: _plain(extra={_LONG: None}),
    "many headers": lambda: _plain(headers=dict.fromkeys(_KEYS, "")),
    "many int64": lambda: _plain(extra={"x": [INT64_MIN] * 3_000}),
    "many floats": lambda: _plain(extra={"x": [_WIDEST_FLOAT] * 3_000}),
    "many empty objects": lambda: _plain(extra={"x": [{}] * 3_000}),
    "many keys": lambda: _plain(extra={"x": dict.fromkeys(_KEYS, "")}),
    "many unknown fields": lambda: _plain(extra=dict.fromkeys(_KEYS, "")),
    "many attempts": lambda: _plain(attempts=(_attempt(None),) * 64),
    "payload": lambda: _plain(payload=bytes(3_001)),
}


def _plain(**fields: object) -> Envelope:
    base = Envelope(id="0" * 26, queue="", handler_ref="", payload=b"",
                    payload_content_type="", status=Status.PENDING, created_at=_LAST)
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def _attempt(error: ErrorInfo | None) -> Attempt:
    return Attempt(attempt_no=MAX_KNOWN_INT, started_at=_LAST, finished_at=_LAST,
                   outcome=Outcome.RETRYABLE_FAILURE, error=error)


@pytest.mark.parametrize("place", list(_PLACES))
def test_bound_holds_where_one_part_dominates(place: str) -> None:
    """One part is most of the envelope, so the bound's per-item figure for it is
    what is checked (an under-count there fails here)."""
    env = _PLACES[place]()
    assert size_bound(env) >= _size(env)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rs.envelopes(extremes=0.5))
def test_bound_holds_for_generated_envelopes(env: Envelope) -> None:
    assert size_bound(env) >= _size(env)


@settings(max_examples=30, deadline=None, database=None)
@given(rs.envelopes())
def test_bound_places_ordinary_envelopes_under_c2(env: Envelope) -> None:
    """The point of the bound: an envelope drawn without extremes needs no encoding."""
    assert size_bound(env) <= 1_048_576
