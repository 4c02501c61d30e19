"""The canonical codec: decode, from_json, to_json, encode and their round trips."""

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
    Outcome,
    Status,
    ViolationCode,
    decode,
    diff,
    encode,
    from_json,
    to_json,
    validate,
)
from rdq_compliance.envelope._wire import ENVELOPE_FIELDS

from ._envelopes import DELETE, SEED_TEXT, mutate, seed

C = ViolationCode
T = datetime(2026, 7, 20, 14, 3, 22, 117000, tzinfo=UTC)

# The seed envelope in canonical compact form, written out by hand from
# wire-envelope.txt: spec field order, no insignificant whitespace.
SEED_CANONICAL = (
    '{"envelope_version":1,"id":"01J2ZK7Q8XW5H3N9G4T6B8RDQ0","queue":"payments.charge",'
    '"handler_ref":"charge-payment","handler_version":"v3","payload":"eyJvcmRlcl9pZCI6IDQyfQ==",'
    '"payload_content_type":"application/json","headers":{"traceparent":"00-4bf9...-01",'
    '"rdq.source":"kafka://payments/3/42351","rdq.submitted_by":"checkout-service"},'
    '"status":"PENDING","attempt_count":2,"redrive_count":0,'
    '"next_attempt_at":"2026-07-20T14:05:22.117Z","lease_expires_at":null,'
    '"created_at":"2026-07-20T14:03:22.117Z","attempts":[{"attempt_no":1,'
    '"started_at":"2026-07-20T14:03:22.200Z","finished_at":"2026-07-20T14:03:22.950Z",'
    '"outcome":"RETRYABLE_FAILURE","error":{"type":"java.net.SocketTimeoutException",'
    '"message":"connect timed out after 500ms","detail":null,'
    '"stack":"java.net.SocketTimeoutException: connect timed out\\n\\tat ..."}}]}'
)


def test_decode_seed_fields() -> None:
    env = decode(SEED_TEXT)
    assert env.envelope_version == 1
    assert env.id == "01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
    assert env.payload == b'{"order_id": 42}'
    assert env.status is Status.PENDING
    assert env.headers["traceparent"] == "00-4bf9...-01"
    assert env.next_attempt_at == datetime(2026, 7, 20, 14, 5, 22, 117000, tzinfo=UTC)
    assert env.next_attempt_at.utcoffset() == timedelta(0)
    assert env.lease_expires_at is None
    assert isinstance(env.attempts, tuple)
    (attempt,) = env.attempts
    assert attempt.outcome is Outcome.RETRYABLE_FAILURE
    assert attempt.error is not None
    assert attempt.error.stack == "java.net.SocketTimeoutException: connect timed out\n\tat ..."
    assert env.extra == {} and attempt.extra == {} and attempt.error.extra == {}


def test_encode_seed_is_canonical() -> None:
    env = decode(SEED_TEXT)
    assert encode(env) == SEED_CANONICAL
    # The spec's text is itself indented by 2 in canonical order.
    assert encode(env, pretty=True) == SEED_TEXT
    assert list(to_json(env)) == list(json.loads(SEED_TEXT))


def test_decode_accepts_bytes_and_mapping() -> None:
    env = decode(SEED_TEXT)
    assert decode(SEED_TEXT.encode()) == env
    assert decode(seed()) == env
    assert from_json(seed()) == env


def test_absent_optional_fields_encode_as_null() -> None:
    obj = mutate(seed(), {"/handler_version": DELETE, "/next_attempt_at": DELETE,
                          "/attempts/0/finished_at": DELETE, "/attempts/0/error/detail": DELETE,
                          "/attempts/0/error/stack": DELETE})  # fmt: skip
    out = to_json(decode(obj))
    assert out["handler_version"] is None and out["next_attempt_at"] is None
    attempt: Any = out["attempts"][0]  # type: ignore[index]
    assert attempt["finished_at"] is None
    assert attempt["error"] == {"type": "java.net.SocketTimeoutException",
                                "message": "connect timed out after 500ms",
                                "detail": None, "stack": None}  # fmt: skip
    no_error = to_json(decode(mutate(seed(), {"/attempts/0/error": DELETE})))
    assert no_error["attempts"][0]["error"] is None  # type: ignore[index, call-overload]


def test_unknown_fields_come_after_known_ones_sorted() -> None:
    obj = mutate(seed(), {"/zeta": 1, "/payload_ref": {"b": 1, "a": [2]}, "/alpha": None,
                          "/attempts/0/z": True, "/attempts/0/a": "x",
                          "/attempts/0/error/y": [], "/attempts/0/error/b": {}})  # fmt: skip
    obj = {"beta": 0, **obj}
    out = to_json(decode(obj))
    keys = list(out)
    assert keys[:15] == list(json.loads(SEED_TEXT))
    assert keys[15:] == ["alpha", "beta", "payload_ref", "zeta"]
    assert out["payload_ref"] == {"b": 1, "a": [2]}  # inner order of unknown values is kept
    attempt: Any = out["attempts"][0]  # type: ignore[index]
    assert list(attempt)[5:] == ["a", "z"]
    assert list(attempt["error"])[4:] == ["b", "y"]
    text = encode(decode(obj))
    assert text.endswith(',"alpha":null,"beta":0,"payload_ref":{"b":1,"a":[2]},"zeta":1}')


def test_extra_must_not_override_known_field() -> None:
    env = dataclasses.replace(decode(SEED_TEXT), extra={"queue": "evil", "ok": 1})
    with pytest.raises(ValueError, match="'queue'"):
        to_json(env)
    error = ErrorInfo(type="t", message="m", extra={"stack": "x"})
    attempt = Attempt(attempt_no=1, started_at=T, outcome=Outcome.SUCCESS, error=error)
    with pytest.raises(ValueError, match="'stack'"):
        encode(dataclasses.replace(env, extra={}, attempts=(attempt,)))


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (T.replace(tzinfo=None), "naive"),
        (T.astimezone(timezone(timedelta(hours=-5))), "offset"),
        (T.replace(microsecond=117500), "millisecond"),
    ],
)
def test_to_json_refuses_unwritable_timestamps(value: datetime, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        to_json(dataclasses.replace(decode(SEED_TEXT), created_at=value))


def test_timestamps_encode_with_three_digits() -> None:
    env = dataclasses.replace(
        decode(SEED_TEXT),
        created_at=datetime(1970, 1, 1, tzinfo=UTC),
        next_attempt_at=datetime(9999, 12, 31, 23, 59, 59, 5000, tzinfo=timezone(timedelta(0))),
    )
    out = to_json(env)
    assert out["created_at"] == "1970-01-01T00:00:00.000Z"
    assert out["next_attempt_at"] == "9999-12-31T23:59:59.005Z"


def test_text_is_not_escaped_but_controls_are() -> None:
    env = dataclasses.replace(decode(SEED_TEXT), handler_version="é😀\u0000\u2028")
    text = encode(env)
    assert '"handler_version":"é😀\\u0000\u2028"' in text
    assert decode(text) == env


def _rich() -> Envelope:
    error = ErrorInfo(
        type="rdq.LeaseExpired",
        message="lease expired at 2026-07-20T14:04:22.200Z",
        detail={"n": -(2**63), "f": 0.1, "big": 2**63 - 1, "l": [None, True, "s", {}]},
        stack=None,
        extra={"e": {"x": []}},
    )
    return Envelope(
        id="7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        queue="q" * 240,
        handler_ref="h.a_n-d",
        payload=bytes(range(256)),
        payload_content_type="",
        status=Status.IN_FLIGHT,
        created_at=datetime(1970, 1, 1, tzinfo=UTC),
        handler_version=None,
        headers={"": "", "A": "1", "a": "2", "rdq.source": "\u0000", "x/~y": "😀"},
        attempt_count=2**31 - 1,
        redrive_count=0,
        next_attempt_at=None,
        lease_expires_at=datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        attempts=(
            Attempt(attempt_no=1, started_at=T, outcome=Outcome.LEASE_EXPIRED, error=error,
                    extra={"a": 1.5}),
            Attempt(attempt_no=1, started_at=T, outcome=Outcome.SUCCESS, finished_at=T),
        ),
        extra={"payload_ref": None, "x": {"nested": [1, 2.0, "3"]}},
    )  # fmt: skip


def test_round_trip_rich_model() -> None:
    env = _rich()
    for pretty in (False, True):
        text = encode(env, pretty=pretty)
        back = decode(text)
        assert back == env
        assert encode(back) == encode(env)
        assert back.payload == bytes(range(256))
        assert back.attempts[0].error is not None
        assert back.attempts[0].error.detail == env.attempts[0].error.detail  # type: ignore[union-attr]


def test_round_trip_keeps_number_forms() -> None:
    obj = mutate(seed(), {"/f": 1.0, "/i": 1, "/big": 2**63 - 1, "/small": 5e-324})
    text = encode(decode(obj))
    assert text.endswith(',"big":9223372036854775807,"f":1.0,"i":1,"small":5e-324}')


def test_decode_reports_all_violations() -> None:
    obj = mutate(seed(), {"/id": "bad", "/queue": "Bad", "/created_at": "now"})
    with pytest.raises(InvalidEnvelope) as info:
        decode(obj)
    assert sorted((v.code, v.pointer) for v in info.value.violations) == [
        (C.ID_FORMAT, "/id"),
        (C.QUEUE_CHARSET, "/queue"),
        (C.TIMESTAMP_FORMAT, "/created_at"),
    ]


def test_decode_versions() -> None:
    v2 = mutate(seed(), {"/envelope_version": 2})
    with pytest.raises(InvalidEnvelope) as info:
        decode(v2)
    assert [v.code for v in info.value.violations] == [C.UNSUPPORTED_ENVELOPE_VERSION]
    assert decode(v2, versions=(1, 2)).envelope_version == 2
    assert decode(v2, versions=None).envelope_version == 2


def test_decoded_model_does_not_share_caller_objects() -> None:
    obj = mutate(seed(), {"/x": {"list": [1]}, "/attempts/0/error/detail": {"d": [1]}})
    env = decode(obj)
    obj["x"]["list"].append(2)
    obj["attempts"][0]["error"]["detail"]["d"].append(2)
    obj["headers"]["new"] = "1"
    assert env.extra["x"] == {"list": [1]}
    assert env.attempts[0].error.detail == {"d": [1]}  # type: ignore[union-attr]
    assert "new" not in env.headers
    out = to_json(env)
    out["x"]["list"].append(3)  # type: ignore[index, union-attr, call-overload]
    assert env.extra["x"] == {"list": [1]}


def test_from_json_builds_without_judging_values() -> None:
    obj = mutate(seed(), {"/queue": "NOT valid", "/status": "RUNNING", "/attempt_count": -5,
                          "/created_at": "1969-12-31T23:59:59.999Z"})  # fmt: skip
    env = from_json(obj)
    assert env.queue == "NOT valid"
    assert env.status == "RUNNING"
    assert env.attempt_count == -5
    assert env.created_at.year == 1969


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"/id": DELETE}, [(C.FIELD_MISSING, "/id")]),
        ({"/id": 5}, [(C.FIELD_TYPE, "/id")]),
        ({"/attempt_count": "2"}, [(C.FIELD_TYPE, "/attempt_count")]),
        ({"/created_at": "yesterday"}, [(C.TIMESTAMP_FORMAT, "/created_at")]),
        ({"/created_at": None}, [(C.FIELD_TYPE, "/created_at")]),
        ({"/created_at": "2026-02-30T00:00:00.000Z"}, [(C.TIMESTAMP_FORMAT, "/created_at")]),
        ({"/payload": "not base64!"}, [(C.PAYLOAD_BASE64, "/payload")]),
        ({"/headers": {"a": 1}}, [(C.FIELD_TYPE, "/headers")]),
        ({"/attempts": {}}, [(C.FIELD_TYPE, "/attempts")]),
        ({"/attempts/0": 3}, [(C.FIELD_TYPE, "/attempts/0")]),
        ({"/attempts/0/started_at": DELETE}, [(C.FIELD_MISSING, "/attempts/0/started_at")]),
        ({"/attempts/0/error": []}, [(C.FIELD_TYPE, "/attempts/0/error")]),
        ({"/attempts/0/error/message": DELETE}, [(C.FIELD_MISSING, "/attempts/0/error/message")]),
        ({"/id": DELETE, "/queue": None}, [(C.FIELD_MISSING, "/id"), (C.FIELD_TYPE, "/queue")]),
    ],
)
def test_from_json_raises_on_what_it_cannot_build(
    changes: dict[str, Any], expected: list[tuple[C, str]]
) -> None:
    with pytest.raises(InvalidEnvelope) as info:
        from_json(mutate(seed(), changes))
    assert sorted((v.code, v.pointer) for v in info.value.violations) == sorted(expected)


def test_from_json_rejects_non_object() -> None:
    with pytest.raises(InvalidEnvelope):
        from_json([])  # type: ignore[arg-type]


def test_status_given_as_text_encodes() -> None:
    env = dataclasses.replace(decode(SEED_TEXT), status="DEAD", next_attempt_at=None)  # type: ignore[arg-type]
    assert env.status is Status.DEAD
    assert to_json(env)["status"] == "DEAD"


def test_encode_refuses_non_finite_numbers() -> None:
    env = dataclasses.replace(decode(SEED_TEXT), extra={"x": float("nan")})
    with pytest.raises(ValueError):
        encode(env)


# -- round trip by property ---------------------------------------------------------
# A small local strategy (the public ones live in rdq_compliance.strategies): valid
# v1 models only, so that encode -> validate -> decode must be lossless.

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_times = st.datetimes(
    min_value=datetime(1970, 1, 1),
    max_value=datetime(9999, 12, 31, 23, 59, 59, 999000),
    timezones=st.just(UTC),
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
_ints = st.integers(min_value=0, max_value=2**31 - 1)


def _extra(known: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_text.filter(lambda k: k not in known), _json, max_size=2)


_errors = st.builds(
    ErrorInfo,
    type=_text,
    message=_text,
    detail=_json,
    stack=st.none() | _text,
    extra=_extra(("type", "message", "detail", "stack")),
)
_lease_expired = st.builds(
    ErrorInfo,
    type=st.just("rdq.LeaseExpired"),
    message=_text,
    detail=_json,
    stack=st.none(),
    extra=_extra(("type", "message", "detail", "stack")),
)


@st.composite
def _attempts(draw: st.DrawFn) -> Attempt:
    outcome = draw(st.sampled_from(Outcome))
    error = draw(_lease_expired if outcome is Outcome.LEASE_EXPIRED else st.none() | _errors)
    return Attempt(
        attempt_no=draw(_ints),
        started_at=draw(_times),
        outcome=outcome,
        finished_at=draw(st.none() | _times),
        error=error,
        extra=draw(_extra(("attempt_no", "started_at", "finished_at", "outcome", "error"))),
    )


@st.composite
def _envelopes(draw: st.DrawFn) -> Envelope:
    status = draw(st.sampled_from(Status))
    terminal = status in (Status.SUCCEEDED, Status.DEAD)
    return Envelope(
        id=draw(st.from_regex(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", fullmatch=True)),
        queue=draw(st.from_regex(r"[a-z0-9._-]{1,20}", fullmatch=True)),
        handler_ref=draw(st.from_regex(r"[a-z0-9._-]{1,20}", fullmatch=True)),
        payload=draw(st.binary(max_size=20)),
        payload_content_type=draw(_text),
        status=status,
        created_at=draw(_times),
        handler_version=draw(st.none() | _text),
        headers=draw(st.dictionaries(_text, _text, max_size=3)),
        attempt_count=draw(_ints),
        redrive_count=draw(_ints),
        next_attempt_at=None if terminal else draw(st.none() | _times),
        lease_expires_at=draw(_times) if status is Status.IN_FLIGHT else None,
        attempts=tuple(draw(st.lists(_attempts(), max_size=3))),
        extra=draw(_extra(ENVELOPE_FIELDS)),
    )


@settings(max_examples=60, deadline=None)
@given(env=_envelopes(), pretty=st.booleans())
def test_round_trip_property(env: Envelope, pretty: bool) -> None:
    assert validate(env) == []
    text = encode(env, pretty=pretty)
    assert validate(text) == []
    back = decode(text)
    assert diff(env, back) == []
    assert back == env
    assert encode(back, pretty=pretty) == text  # canonical: a fixed point
    assert json.loads(text) == json.loads(encode(env))
