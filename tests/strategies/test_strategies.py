"""The public Hypothesis strategies: what they generate is valid and survives
the codec, their bounds hold, their biases reach the edge cases, and bad
arguments fail when the strategy function is called.

The invariant checks below are written out by hand (not only via validate) so a
validator bug cannot hide a strategy bug."""

from __future__ import annotations

import json
import math
import operator
import subprocess
import sys
import unicodedata
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, find, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from rdq_compliance import (
    Attempt,
    Envelope,
    ErrorInfo,
    Outcome,
    Status,
    ViolationCode,
    decode,
    encode,
    is_canonical_id,
    truncate_utf8,
    validate,
)
from rdq_compliance import strategies as rs
from rdq_compliance.envelope._limits import (
    INT64_MAX,
    INT64_MIN,
    MAX_ENVELOPE_BYTES,
    MAX_KNOWN_INT,
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
)
from rdq_compliance.envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from rdq_compliance.strategies._extremes import LONG_FIELDS, plans, pushed

T = TypeVar("T")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789._-")

# Envelopes are large composite values: generating one takes milliseconds, so
# the default 200 ms deadline is noise on a shared CI box; keep examples few.
FEW = settings(max_examples=60, deadline=None, database=None)
SOME = settings(max_examples=100, deadline=None, database=None)


# Bias checks: find an example and stop (no shrinking: only existence matters).
FIND = settings(max_examples=2000, database=None, phases=[Phase.generate])


def _find(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    return find(strategy, condition, settings=FIND)


def _is_ms_utc(moment: datetime) -> bool:
    return (
        moment.tzinfo is not None
        and moment.utcoffset() == timedelta(0)
        and moment.microsecond % 1000 == 0
        and EPOCH <= moment <= LAST
    )


def _check_invariants(env: Envelope) -> None:
    """What the validator checks, restated independently."""
    assert is_canonical_id(env.id)
    for name in (env.queue, env.handler_ref):
        assert 1 <= len(name) <= 240 and set(name) <= NAME_CHARS
    assert isinstance(env.payload, bytes)
    assert (env.lease_expires_at is not None) is (env.status is Status.IN_FLIGHT)
    if env.status in (Status.SUCCEEDED, Status.DEAD):
        assert env.next_attempt_at is None
    for value in (env.attempt_count, env.redrive_count, env.envelope_version):
        assert 0 <= value <= MAX_KNOWN_INT
    stamps = [env.created_at, env.next_attempt_at, env.lease_expires_at]
    assert not set(env.extra) & set(ENVELOPE_FIELDS)
    for attempt in env.attempts:
        assert 0 <= attempt.attempt_no <= MAX_KNOWN_INT
        assert not set(attempt.extra) & set(ATTEMPT_FIELDS)
        stamps += [attempt.started_at, attempt.finished_at]
        error = attempt.error
        if attempt.outcome is Outcome.LEASE_EXPIRED:
            assert error is not None
            assert error.type == "rdq.LeaseExpired" and error.stack is None
        if error is not None:
            assert not set(error.extra) & set(ERROR_FIELDS)
            assert len(error.message.encode()) <= MESSAGE_LIMIT
            assert error.stack is None or len(error.stack.encode()) <= STACK_LIMIT
    assert all(_is_ms_utc(s) for s in stamps if s is not None)
    assert len(encode(env).encode()) <= MAX_ENVELOPE_BYTES


# ---------------------------------------------------------------- envelopes


@FEW
@given(rs.envelopes())
def test_envelopes_are_valid_and_survive_the_codec(env: Envelope) -> None:
    _check_invariants(env)
    assert [str(v) for v in validate(env)] == []
    text = encode(env)
    assert validate(text) == []
    assert decode(text) == env


@FEW
@given(rs.envelopes(envelope_versions=(1, 2, 7), min_attempts=2, max_attempts=3))
def test_envelopes_respect_versions_and_attempt_bounds(env: Envelope) -> None:
    assert env.envelope_version in (1, 2, 7)
    assert 2 <= len(env.attempts) <= 3
    assert validate(env, versions=(1, 2, 7)) == []


@FEW
@given(rs.envelopes(unknown_fields=False, max_payload_size=4))
def test_envelopes_without_unknown_fields(env: Envelope) -> None:
    assert env.extra == {}
    assert len(env.payload) <= 4
    for attempt in env.attempts:
        assert attempt.extra == {}
        assert attempt.error is None or attempt.error.extra == {}


@FEW
@given(rs.envelopes_of_other_versions(exclude=(1, 2)))
def test_other_versions_are_never_excluded(env: Envelope) -> None:
    assert env.envelope_version not in (1, 2)
    _check_invariants(env)
    assert validate(env, versions=None) == []
    assert [v.code for v in validate(env)] == [ViolationCode.UNSUPPORTED_ENVELOPE_VERSION]
    assert decode(encode(env), versions=None) == env


def test_other_versions_are_biased_to_0_2_and_int32_max() -> None:
    # Map to the version: find() reprs what it finds, and an envelope can be
    # huge (Hypothesis warns on huge reprs, and warnings are errors here).
    versions = rs.envelopes_of_other_versions().map(lambda e: e.envelope_version)
    for wanted in (0, 2, MAX_KNOWN_INT):
        _find(versions, partial(operator.eq, wanted))
    others = rs.envelopes_of_other_versions(exclude=(0, 1, 2, 3))
    _find(others.map(lambda e: e.envelope_version), partial(operator.eq, MAX_KNOWN_INT))


class Shape(NamedTuple):
    """A small projection of an envelope, for find() (see above)."""

    status: Status
    attempt_nos: tuple[int, ...]
    outcomes: tuple[Outcome, ...]
    extra_keys: tuple[str, ...]
    max_message_bytes: int
    max_stack_bytes: int


def _shape(env: Envelope) -> Shape:
    errors = [a.error for a in env.attempts if a.error is not None]
    return Shape(
        env.status,
        tuple(a.attempt_no for a in env.attempts),
        tuple(a.outcome for a in env.attempts),
        tuple(sorted(env.extra)),
        max((len(e.message.encode()) for e in errors), default=0),
        max((len((e.stack or "").encode()) for e in errors), default=0),
    )


def test_envelopes_reach_the_interesting_shapes() -> None:
    shapes = rs.envelopes().map(_shape)
    for status in Status:
        _find(shapes.map(lambda s: s.status), partial(operator.is_, status))
    # Redriven: the history restarts at attempt_no 1 (C12).
    _find(shapes, lambda s: len(s.attempt_nos) >= 3 and s.attempt_nos[0] == 1
          and 1 in s.attempt_nos[1:])  # fmt: skip
    _find(shapes, lambda s: Outcome.LEASE_EXPIRED in s.outcomes)
    _find(shapes, lambda s: "payload_ref" in s.extra_keys)
    _find(shapes, lambda s: s.max_message_bytes > MESSAGE_LIMIT - 20)
    _find(shapes, lambda s: s.max_stack_bytes > STACK_LIMIT - 20)


# ---------------------------------------------------------------- parts


@SOME
@given(rs.attempts(outcomes=[Outcome.LEASE_EXPIRED]))
def test_lease_expired_attempts_have_the_spec_error_shape(attempt: Attempt) -> None:
    assert attempt.outcome is Outcome.LEASE_EXPIRED
    error = attempt.error
    assert isinstance(error, ErrorInfo)
    assert error.type == "rdq.LeaseExpired"
    assert error.stack is None


@SOME
@given(rs.attempts(outcomes={Outcome.SUCCESS, Outcome.PERMANENT_FAILURE}))
def test_attempts_use_only_the_given_outcomes(attempt: Attempt) -> None:
    assert attempt.outcome in {Outcome.SUCCESS, Outcome.PERMANENT_FAILURE}


@settings(max_examples=30, deadline=None, database=None)
@given(rs.errors(long_texts=True))
def test_errors_with_long_texts_stay_within_c1(error: ErrorInfo) -> None:
    assert len(error.message.encode()) <= MESSAGE_LIMIT
    assert error.stack is None or len(error.stack.encode()) <= STACK_LIMIT


@SOME
@given(rs.ids())
def test_ids_are_canonical(value: str) -> None:
    assert is_canonical_id(value)


def test_ids_reach_both_ends() -> None:
    _find(rs.ids(), lambda v: v == "0" * 26)
    _find(rs.ids(), lambda v: v == "7" + "Z" * 25)


@SOME
@given(rs.names(min_size=3, max_size=5))
def test_names_respect_bounds_and_charset(name: str) -> None:
    assert 3 <= len(name) <= 5 and set(name) <= NAME_CHARS


def test_names_are_biased_to_1_and_240() -> None:
    _find(rs.names(), lambda n: len(n) == 240)
    _find(rs.names(), lambda n: len(n) == 1)


@SOME
@given(rs.timestamps())
def test_timestamps_are_aware_utc_ms_in_range(moment: datetime) -> None:
    assert _is_ms_utc(moment)


LO = datetime(2024, 2, 29, 0, 0, 0, 500_000, tzinfo=UTC)
HI = datetime(2024, 2, 29, 0, 0, 1, 0, tzinfo=UTC)


@SOME
@given(rs.timestamps(min_value=LO, max_value=HI))
def test_timestamps_respect_custom_bounds(moment: datetime) -> None:
    assert LO <= moment <= HI and _is_ms_utc(moment)


def test_timestamps_reach_the_edges() -> None:
    for edge in (EPOCH, LAST, datetime(2000, 2, 29, tzinfo=UTC)):
        _find(rs.timestamps(), partial(operator.eq, edge))
    _find(rs.timestamps(), lambda t: t.microsecond == 999_000)


@SOME
@given(rs.free_texts(min_size=2, max_size=9))
def test_free_texts_are_scalar_values_within_bounds(text: str) -> None:
    assert 2 <= len(text) <= 9
    text.encode("utf-8")  # raises on a lone surrogate


@pytest.mark.parametrize(
    "wanted",
    ["\x00", "\U0010ffff", "e\u0301", TRUNCATION_MARKER, "null", "\u202e"],
    ids=["nul", "max-scalar", "combining", "marker", "null-text", "rtl-override"],
)
def test_free_texts_reach_the_traps(wanted: str) -> None:
    _find(rs.free_texts(), lambda t: wanted in t)


@pytest.mark.parametrize("limit", [14, 20, 64, MESSAGE_LIMIT])
def test_truncated_texts_fit_and_are_what_a_producer_writes(limit: int) -> None:
    @settings(max_examples=60, deadline=None, database=None)
    @given(rs.truncated_texts(limit=limit))
    def check(text: str) -> None:
        size = len(text.encode("utf-8"))
        assert size <= limit
        assert truncate_utf8(text, limit) == text  # C1: at or under the limit: unchanged

    check()


def test_truncated_texts_put_multibyte_characters_at_the_cut() -> None:
    def multibyte_before_marker(text: object) -> bool:
        assert isinstance(text, str)
        body = text.removesuffix(TRUNCATION_MARKER)
        return (body != text and len(text.encode()) == 64 and len(body) > 0
                and len(body[-1].encode()) == 4)  # fmt: skip

    def dropped_at_cut(text: object) -> bool:
        assert isinstance(text, str)
        return text.endswith(TRUNCATION_MARKER) and len(text.encode()) < 64

    _find(rs.truncated_texts(limit=64), multibyte_before_marker)
    _find(rs.truncated_texts(limit=64), dropped_at_cut)
    _find(rs.truncated_texts(limit=64),
          lambda t: len(t.encode()) == 64 and not t.endswith(TRUNCATION_MARKER))  # fmt: skip
    _find(rs.truncated_texts(limit=64),
          lambda t: t.endswith(TRUNCATION_MARKER) and len(t.encode()) < 40)  # fmt: skip


@SOME
@given(rs.header_maps(max_size=4))
def test_header_maps_are_flat_string_maps(headers: dict[str, str]) -> None:
    assert len(headers) <= 4
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())


def test_header_maps_reach_the_traps() -> None:
    _find(rs.header_maps(), lambda h: h == {})
    _find(rs.header_maps(), lambda h: {"A", "a"} <= set(h))
    _find(rs.header_maps(), lambda h: "" in h)
    _find(rs.header_maps(), lambda h: any(k.startswith("rdq.") for k in h))


@SOME
@given(rs.long_texts(sizes=(255, 256, 2_704, 8_191, 16_384)))
def test_long_texts_have_exactly_a_chosen_byte_size(text: str) -> None:
    assert len(text.encode("utf-8")) in (255, 256, 2_704, 8_191, 16_384)  # no lone surrogate


@pytest.mark.parametrize("size", rs.COLUMN_LIMITS)
def test_long_texts_reach_every_size_in_ascii_and_each_width(size: int) -> None:
    """Issue 22 §1: each column limit in ASCII and in 2-, 3- and 4-byte text, and
    incompressible (zlib keeps more than half of it: no "aaaa" a store could squeeze
    under its limit)."""
    # (first character's width, bytes, compressed bytes): find() reprs what it finds.
    texts = rs.long_texts(sizes=(size,)).map(
        lambda t: (len(t[0].encode()), len(t.encode()), len(zlib.compress(t.encode()))))
    for width in (1, 2, 3, 4):
        _find(texts, lambda t, w=width: t[:2] == (w, size))
    _find(texts, lambda t: t[2] > size // 2)


def test_envelopes_reach_long_values_in_real_shapes() -> None:
    """Issue 22 §1: a bearer JWT, W3C baggage, a JVM class name over 255 bytes, MIME
    parameters past 100 bytes, a handler_version past 64 bytes, in ordinary draws."""
    _find(rs.header_maps(), lambda h: any(v.startswith("Bearer ey") for v in h.values()))
    _find(rs.header_maps(), lambda h: "baggage" in h and len(h["baggage"]) > 1_000)
    lengths = rs.envelopes().map(lambda e: (
        max((len(a.error.type.encode()) for a in e.attempts if a.error), default=0),
        len(e.payload_content_type.encode()), len((e.handler_version or "").encode())))
    _find(lengths, lambda n: n[0] > 255)
    _find(lengths, lambda n: n[1] > 100)
    _find(lengths, lambda n: n[2] > 64)


@SOME
@given(rs.payloads(max_size=10))
def test_payloads_respect_max_size(payload: bytes) -> None:
    assert isinstance(payload, bytes) and len(payload) <= 10


def test_payloads_reach_empty_and_all_bytes() -> None:
    _find(rs.payloads(), lambda p: p == b"")
    _find(rs.payloads(), lambda p: p == bytes(range(256)))


def _leaves(value: object) -> list[object]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        assert all(isinstance(k, str) for k in value)
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


@SOME
@given(rs.json_values(max_leaves=5))
def test_json_values_are_plain_json_within_c5(value: object) -> None:
    for leaf in _leaves(value):
        assert leaf is None or type(leaf) in (bool, int, float, str)
        if type(leaf) is int:
            assert INT64_MIN <= leaf <= INT64_MAX
        if type(leaf) is float:
            assert math.isfinite(leaf)


@pytest.mark.parametrize(
    "wanted",
    [INT64_MIN, INT64_MAX, 2**53 + 1, 5e-324, 1e308, 0.1],
    ids=["int64-min", "int64-max", "2^53+1", "min-subnormal", "1e308", "0.1"],
)
def test_json_values_reach_the_number_edges(wanted: float) -> None:
    _find(rs.json_values(), lambda v: any(type(x) is type(wanted) and x == wanted
                                          for x in _leaves(v)))  # fmt: skip


def test_json_values_reach_negative_zero_and_integral_floats() -> None:
    _find(rs.json_values(), lambda v: any(type(x) is float and x == 0 and math.copysign(1, x) < 0
                                          for x in _leaves(v)))  # fmt: skip
    _find(rs.json_values(), lambda v: any(type(x) is float and x == 1.0 for x in _leaves(v)))


@SOME
@given(rs.unknown_field_maps(forbidden_keys=ENVELOPE_FIELDS))
def test_unknown_field_maps_never_use_forbidden_keys(fields: dict[str, object]) -> None:
    assert not set(fields) & set(ENVELOPE_FIELDS)


@pytest.mark.parametrize("key", ["", "__proto__", "$set", "a.b", "payload_ref", "attempt_no"])
def test_unknown_field_maps_reach_trap_keys(key: str) -> None:
    _find(rs.unknown_field_maps(forbidden_keys=ENVELOPE_FIELDS), lambda m: key in m)


# ---------------------------------------------------------------- arguments


NAIVE = datetime(2020, 1, 1)
PLUS_ONE = datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=1)))

BAD_CALLS: dict[str, Callable[[], object]] = {
    "names-min-0": lambda: rs.names(min_size=0),
    "names-max-241": lambda: rs.names(max_size=241),
    "names-min-gt-max": lambda: rs.names(min_size=5, max_size=4),
    "names-float": lambda: rs.names(max_size=3.0),  # type: ignore[arg-type]
    "free-texts-negative": lambda: rs.free_texts(max_size=-1),
    "free-texts-min-gt-max": lambda: rs.free_texts(min_size=3, max_size=2),
    "truncated-below-marker": lambda: rs.truncated_texts(limit=13),
    "truncated-bool": lambda: rs.truncated_texts(limit=True),
    "timestamps-naive": lambda: rs.timestamps(min_value=NAIVE),
    "timestamps-offset": lambda: rs.timestamps(max_value=PLUS_ONE),
    "timestamps-microseconds": lambda: rs.timestamps(
        min_value=datetime(2020, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    ),
    "timestamps-before-1970": lambda: rs.timestamps(
        min_value=datetime(1969, 12, 31, tzinfo=UTC)
    ),
    "timestamps-min-gt-max": lambda: rs.timestamps(min_value=LAST, max_value=EPOCH),
    "payloads-negative": lambda: rs.payloads(max_size=-1),
    "long-texts-no-sizes": lambda: rs.long_texts(sizes=()),
    "long-texts-zero": lambda: rs.long_texts(sizes=(0,)),
    "long-texts-over-16k": lambda: rs.long_texts(sizes=(16_385,)),
    "long-texts-str": lambda: rs.long_texts(sizes="255"),  # type: ignore[arg-type]
    "long-texts-bool": lambda: rs.long_texts(sizes=(True,)),
    "header-maps-negative": lambda: rs.header_maps(max_size=-1),
    "json-values-no-leaves": lambda: rs.json_values(max_leaves=0),
    "unknown-forbidden-str": lambda: rs.unknown_field_maps(forbidden_keys="id"),
    "unknown-forbidden-ints": lambda: rs.unknown_field_maps(forbidden_keys=[1]),  # type: ignore[list-item]
    "unknown-max-size": lambda: rs.unknown_field_maps(forbidden_keys=(), max_size=-1),
    "errors-text-size": lambda: rs.errors(max_text_size=-1),
    "errors-flag": lambda: rs.errors(lease_expired=1),  # type: ignore[arg-type]
    "attempts-no-outcomes": lambda: rs.attempts(outcomes=[]),
    "attempts-string-outcome": lambda: rs.attempts(outcomes=["SUCCESS"]),  # type: ignore[list-item]
    "envelopes-no-versions": lambda: rs.envelopes(envelope_versions=()),
    "envelopes-negative-version": lambda: rs.envelopes(envelope_versions=(-1,)),
    "envelopes-version-over-int32": lambda: rs.envelopes(envelope_versions=(2**31,)),
    "envelopes-bool-version": lambda: rs.envelopes(envelope_versions=(True,)),
    "envelopes-attempts-min-gt-max": lambda: rs.envelopes(min_attempts=3, max_attempts=2),
    "envelopes-too-many-attempts": lambda: rs.envelopes(max_attempts=65),
    "envelopes-payload-negative": lambda: rs.envelopes(max_payload_size=-1),
    "envelopes-payload-too-big": lambda: rs.envelopes(max_payload_size=10**6),
    "envelopes-unknown-fields-str": lambda: rs.envelopes(unknown_fields="yes"),  # type: ignore[arg-type]
    "envelopes-extremes-negative": lambda: rs.envelopes(extremes=-0.1),
    "envelopes-extremes-over-1": lambda: rs.envelopes(extremes=1.5),
    "envelopes-extremes-bool": lambda: rs.envelopes(extremes=True),
    "envelopes-extremes-str": lambda: rs.envelopes(extremes="0.1"),  # type: ignore[arg-type]
    "other-versions-exclude-str": lambda: rs.envelopes_of_other_versions(exclude="1"),  # type: ignore[arg-type]
    "other-versions-exclude-float": lambda: rs.envelopes_of_other_versions(exclude=[1.0]),  # type: ignore[list-item]
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_arguments_fail_at_definition_time(call: Callable[[], object]) -> None:
    # Calling the strategy function must raise; no draw happens here.
    with pytest.raises(InvalidArgument):
        call()


def test_public_surface() -> None:
    assert sorted(rs.__all__) == sorted(
        ["EPOCH", "LAST_INSTANT",
         "attempts", "envelopes", "envelopes_of_other_versions", "errors", "free_texts",
         "header_maps", "ids", "json_values", "names", "payloads", "timestamps",
         "COLUMN_LIMITS", "long_texts",
         "truncated_texts", "unknown_field_maps"]
    )  # fmt: skip
    for name in rs.__all__:
        assert getattr(rs, name).__doc__, f"{name} has no docstring"


# ---------------------------------------------------------------- extremes (issue 13 item 5)

# What one envelope crosses, judged from the value alone (not from the generator).
_KINDS = ("payload", "history", "normalization", "size", "depth", "lengths", "headers")
_LIMITS = frozenset(rs.COLUMN_LIMITS)


def _depth(value: object) -> int:
    best, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            best = max(best, d + 1)
            stack.extend((item, d + 1) for item in (v.values() if isinstance(v, dict) else v))
    return best


def _normalization_pair(keys: list[str]) -> bool:
    seen: dict[str, str] = {}
    for key in keys:
        folded = unicodedata.normalize("NFC", key)
        if folded in seen and seen[folded] != key:
            return True
        seen[folded] = key
    return False


def _long_fields(env: Envelope) -> dict[str, int]:
    """Free-text field -> UTF-8 length, for the fields at a column limit (COLUMN_LIMITS:
    no generated or sampled value of an ordinary draw has one of those lengths)."""
    found: dict[str, int] = {}

    def note(field: str, text: object) -> None:
        if isinstance(text, str) and len(text.encode()) in _LIMITS:
            found[field] = len(text.encode())

    for key, value in env.headers.items():
        note("header_key", key)
        note("header_value", value)
    note("handler_version", env.handler_version)
    note("payload_content_type", env.payload_content_type)
    for a in env.attempts:
        for value in a.extra.values():
            note("attempt_unknown_field", value)
        if a.error is not None:
            note("error_type", a.error.type)
            note("detail", a.error.detail)
            for value in a.error.extra.values():
                note("error_unknown_field", value)
    for key, value in env.extra.items():
        note("unknown_field_key", key)
        note("unknown_field", value)
    return found


def _crossed(env: Envelope) -> set[str]:
    values = list(env.extra.values())
    for a in env.attempts:
        values += a.extra.values()
        if a.error is not None:
            values += [a.error.detail, *a.error.extra.values()]
    crossed = {
        "payload": len(env.payload) > 64 * 1024,
        "history": len(env.attempts) > 50,
        "normalization": _normalization_pair(list(env.headers))
        and _normalization_pair(list(env.extra)),
        "size": len(encode(env).encode()) >= MAX_ENVELOPE_BYTES - 4096,
        "depth": any(_depth(v) > 64 for v in values),
        "lengths": bool(_long_fields(env)),
        "headers": len(env.headers) >= 1000,
    }
    return {kind for kind, yes in crossed.items() if yes}


def _shares(extremes: float, examples: int, seeds: tuple[int, ...] = ()) -> dict[str, float]:
    """The share of draws crossing each kind of limit, and (``field:NAME``,
    ``bytes:N``) the share with a free-text field at a column limit, by field and by
    length class; over one run per seed in ``seeds`` (none: one derandomized run)."""
    counts = dict.fromkeys(_KINDS, 0)
    drawn = [0]

    # derandomize (or fixed seeds): the measured shares are the same on every run, so a
    # change that makes a boundary vanish fails here instead of passing by luck.
    @settings(max_examples=examples, deadline=None, database=None, derandomize=not seeds,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(rs.envelopes(extremes=extremes))
    def draw(env: Envelope) -> None:
        drawn[0] += 1
        for kind in _crossed(env):
            counts[kind] += 1
        for field, size in _long_fields(env).items():
            counts[f"field:{field}"] = counts.get(f"field:{field}", 0) + 1
            counts[f"bytes:{size}"] = counts.get(f"bytes:{size}", 0) + 1
        if env.payload and len(env.payload) > 512:  # only an extreme goes past the bound
            assert len(env.payload) > 64 * 1024 or len(encode(env).encode()) > 900_000
        assert validate(env) == []
        assert decode(encode(env)) == env

    for one in seeds:
        seed(one)(draw)()
    if not seeds:
        draw()
    return {kind: count / drawn[0] for kind, count in counts.items()}


def _shares_alone(extremes: float, examples: int, seeds: tuple[int, ...] = ()) -> dict[str, float]:
    """``_shares`` in a fresh interpreter. Hypothesis mixes constants of the local modules
    already imported into what it generates, so in a worker that ran other tests the
    shares drift (history fell to 0.3% once under xdist): measured alone, derandomized,
    they are the same on every run."""
    code = ("import json, sys; from tests.strategies.test_strategies import _shares; "
            f"print(json.dumps(_shares({extremes!r}, {examples!r}, {seeds!r})))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, check=True, timeout=600).stdout
    shares: dict[str, float] = json.loads(out)
    return shares


def test_extremes_cross_every_store_limit_often_enough() -> None:
    """Issue 13 item 5: with ``extremes``, each boundary (payload > 64 KiB, > 50 attempts,
    NFC/NFD key pairs, ~1 MiB, values deeper than 64) is crossed by a measured share of
    draws above a floor; every such envelope is valid and survives the codec."""
    # Three fixed seeds of 100 draws each, not one derandomized run of 300: that one
    # stream fell to 2% for three boundaries when six instants joined the timestamp
    # edges (2026-12-05), while seeded runs of both trees measured the same 12-26%.
    shares = _shares_alone(0.5, 100, (1, 2, 3))
    # Measured 2026-12-05: 12-26% each in a fresh interpreter; the floors leave room for
    # changes of the strategies that keep every boundary.
    floors = {"payload": 0.05, "history": 0.03, "normalization": 0.03, "size": 0.03,
              "depth": 0.03, "lengths": 0.03, "headers": 0.03}  # fmt: skip
    low = {kind: shares[kind] for kind in _KINDS if shares[kind] < floors[kind]}
    assert not low, f"boundaries crossed too rarely: {low} (floors {floors}); all: {shares}"


@st.composite
def _lengths_pushed(draw: st.DrawFn) -> tuple[str, ...]:
    plan = draw(plans(("lengths",)))  # first, as envelopes() draws it
    env = draw(rs.envelopes(max_attempts=2, max_payload_size=8, unknown_fields=False))
    pushed_env = draw(pushed(env, rs.attempts(max_text_size=4), plan))
    assert validate(pushed_env) == []
    return tuple(f"{field}:{size}" for field, size in _long_fields(pushed_env).items())


def test_lengths_reach_every_field_at_every_column_limit() -> None:
    """Issue 22 §1: the "lengths" extreme puts each free-text field (header key and
    value, handler_version, payload_content_type, error.type, error.detail, an unknown
    field's name, an unknown field of the envelope, an attempt or an error) at each
    column limit (255 to 16,384 bytes): every field and every limit is reached in 400
    derandomized draws, and half the 70 pairs at least (Hypothesis repeats what it drew
    before, so pairs are not uniform; and it draws string constants from the modules
    loaded, so the count moves with them: 50 alone, 40 in a worker of the kit's suite,
    measured 2026-12-04)."""
    seen: dict[str, int] = {}

    @settings(max_examples=400, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(_lengths_pushed())
    def draw(pairs: tuple[str, ...]) -> None:
        for pair in pairs:
            seen[pair] = seen.get(pair, 0) + 1

    draw()
    fields = {pair.split(":")[0] for pair in seen}
    sizes = {int(pair.split(":")[1]) for pair in seen}
    assert fields == set(LONG_FIELDS), f"fields never long: {set(LONG_FIELDS) - fields}"
    assert sizes == set(rs.COLUMN_LIMITS), f"limits never reached: {set(rs.COLUMN_LIMITS) - sizes}"
    assert len(seen) >= 35, f"only {len(seen)} of 70 (field, limit) pairs: {sorted(seen)}"


def test_extremes_at_the_kit_share_and_never_by_default() -> None:
    """RDQ-RT-001 draws with extremes=0.1 (ci): some draws still cross a boundary; the
    default (0) never does, so the bounds a caller gives keep holding. Pooled over four
    seeds: which of 150 draws cross varies a lot with the stream (Hypothesis reuses what
    it drew: 0% to 22% for one seed, measured), the pooled share much less."""
    shares = _shares_alone(0.1, 150, (0, 1, 2, 3))  # once: inside the sum it ran per kind
    assert sum(shares[kind] for kind in _KINDS) >= 0.02
    assert not any(_shares(0.0, 50).values())


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rs.envelopes(extremes=1.0))
def test_every_extreme_envelope_is_valid_and_within_its_promises(env: Envelope) -> None:
    """Each pushed envelope crosses a limit the docstring names, and no further: payload
    up to 256 KiB (more only to fill a near-limit envelope), at most 64 attempts, depth
    at most 400, within C2."""
    _check_invariants(env)
    size = len(encode(env).encode())
    assert size <= MAX_ENVELOPE_BYTES
    assert len(env.payload) <= 256 * 1024 or size >= MAX_ENVELOPE_BYTES - 4096
    assert len(env.attempts) <= 64
    assert all(_depth(v) <= 400 for v in env.extra.values())
    assert _crossed(env), "extremes=1.0: every draw crosses a limit"
