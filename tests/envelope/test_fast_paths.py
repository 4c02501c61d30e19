"""Each fast path of the core computes exactly what its general path does (issue 11:
"keep a fast path only where the benchmark shows it pays, and then test it against the
general path over generated envelopes"); docs/performance.md has the measurements.

- ``_diff_json.same_json``: equal values are shown equal without the pointer-building walk;
  it must never call two values the same that the walk tells apart.
- ``validate(model)`` counts the payload's base64 characters instead of building the
  text; ``_validate_model(..., payload_text=True)`` is the general path.
- ``_diff._str`` and ``_diff._time`` return at once for an equal value of the exact
  wire type; ``_str_general`` and ``_time_general`` are the general paths.
- ``decode`` builds the model from validated, freshly parsed JSON without checks or
  copies (``_codec._build_valid``); the checking ``_codec._Builder`` is the general path.
- ``to_json`` writes with ``_write.ModelWriter``, which trusts the model's Python types;
  the validator's ``_ModelChecker`` is the same walk with every type checked (the
  general path).
- ``_wire.format_timestamp`` writes an exact ``datetime`` from its fields;
  ``_wire.datetime_problem`` accepts one at ``datetime.UTC`` and millisecond precision
  without ``utcoffset()``; ``_format_timestamp_general`` (``isoformat()``) and
  ``_datetime_problem_general`` are the general paths.

The generated pairs lean on what a type-blind or identity-trusting check gets wrong:
1, 1.0 and True; 0, -0.0 and False; NaN (not JSON, unequal to itself, even when both
sides share the float object); a str or int subclass; key order; keys and strings in
NFC and NFD; tuples for lists; values nested past any recursion limit.
"""

from __future__ import annotations

import dataclasses
import math
import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rdq_compliance import Difference, Envelope, ErrorInfo, decode, diff, encode, to_json, validate
from rdq_compliance.envelope import _diff, _diff_json
from rdq_compliance.envelope._deep import copy_json, dumps, short_repr
from rdq_compliance.envelope._validate import _validate_model
from rdq_compliance.strategies import envelopes, json_values

from ._envelopes import SEED_TEXT


class Text(str):
    """Equal to a str, not a JSON string (the diff reports the type)."""

    __slots__ = ()


class Whole(int):
    """Equal to an int, not a JSON number of the kit (IntEnum-like)."""

    __slots__ = ()


NAN = math.nan
_ATOMS: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 2**53 + 1, 0.0, -0.0, 1.0, 1.5, float(2**53 + 1), NAN,
    math.inf, "", "a", "\u00c5", "A\u030a", "\u212b", "e\u0301", "\u00e9", "\ud800",
    Text("a"), Whole(1), (1,), b"a",
)  # fmt: skip
_KEYS: tuple[Any, ...] = ("", "k", "\u00c5", "A\u030a", "\u212b", "a/b", "~", 1)
# 0 and 1 twice as often: their twins include False and True.
_SCALARS = st.one_of(st.sampled_from(_ATOMS), st.sampled_from((0, 1)), json_values(max_leaves=1))
VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(_KEYS), children, max_size=3),
    ),
    max_leaves=8,
)


def _twins(value: Any) -> list[Any]:
    """What a loose check takes for ``value``: equal under Python's ``==``, the same
    text in another normalization, the same object with its keys in another order,
    or ``value`` itself (NaN included)."""
    out: list[Any] = [value]
    t = type(value)
    if t is bool or t is int or t is float:
        if math.isfinite(value) and value == int(value):
            out += [int(value), float(value), -float(value), Whole(int(value))]
            out += [False, True] if value in (0, 1) else []
    elif t is str:
        out += [Text(value), unicodedata.normalize("NFD", value),
                unicodedata.normalize("NFC", value)]  # fmt: skip
    elif t is list:
        out += [tuple(value), value[:-1], [*value, None]]
    elif t is dict and value:
        first, *rest = value.items()
        renamed = [k for k in _twins(first[0]) if k is not first[0]]
        out += [dict(reversed(value.items()))]
        out += [dict([(key, first[1]), *rest]) for key in renamed]
        out += [{str(k): v for k, v in value.items()}]
    return out


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a (shallow) value: the paths of keys and indices to it."""
    places = [path]
    if type(value) is list:
        for i, item in enumerate(value):
            places += _places(item, (*path, i))
    elif type(value) is dict:
        for key, item in value.items():
            places += _places(item, (*path, key))
    return places


def _swapped(value: Any) -> st.SearchStrategy[Any]:
    # Mostly a twin: another value is a plain difference, which both paths see.
    return st.one_of(*[st.sampled_from(_twins(value))] * 4, VALUES)


@st.composite
def twin_values(draw: st.DrawFn, value: Any) -> Any:
    """A copy of ``value`` (new containers, shared leaves: NaN objects included) with
    nothing, one place or several places swapped for a twin or another value."""
    out = copy_json(value)
    changes = draw(st.sampled_from((0, 1, 1, 1, 1, 1, 3)))
    for _ in range(changes):
        path = draw(st.sampled_from(_places(out)))
        if not path:
            return draw(_swapped(out))
        parent = out
        for step in path[:-1]:
            parent = parent[step]
        old = parent[path[-1]]
        parent[path[-1]] = draw(_swapped(old))
    return out


@st.composite
def value_pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    """(expected, actual): a value and its twin."""
    e = draw(VALUES)
    return e, draw(twin_values(e))


LEVELS = st.sampled_from((0, 0, 1, 2, 40, 1_200))
"""Containers around both sides of a pair: up to past any recursion limit. Applied in
the test body (``nest``), so that a failing example prints without recursing."""


def nest(pair: tuple[Any, Any], levels: int) -> tuple[Any, Any]:
    e, a = pair
    for i in range(levels):
        e, a = ([e], [a]) if i % 2 else ({"d": e}, {"d": a})
    return e, a


def _shown(diffs: list[Difference]) -> list[tuple[str, str, str, str, str]]:
    # Differences hold the values; NaN != NaN, so compare what a reader sees.
    return [(d.pointer, d.kind, d.note, short_repr(d.expected, 80), short_repr(d.actual, 80))
            for d in diffs]  # fmt: skip


def general_diff(expected: object, actual: object) -> list[Difference]:
    """``diff`` with its fast path switched off: the pointer-building walk alone."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_diff_json, "same_json", lambda e, a: False)
        return diff(expected, actual)


def check_diff(expected: object, actual: object) -> None:
    assert _shown(diff(expected, actual)) == _shown(general_diff(expected, actual))


_SEED = decode(SEED_TEXT)


def _carrying(value: Any) -> Envelope:
    """The seed envelope with ``value`` as an unknown field and as ``detail``."""
    attempt = _SEED.attempts[0]
    assert attempt.error is not None
    error = dataclasses.replace(attempt.error, detail=value, extra={"x": value})
    return dataclasses.replace(
        _SEED, extra={"x_a": value, "x_b": 1},
        attempts=(dataclasses.replace(attempt, error=error, extra={"y": value}),),
    )  # fmt: skip


_FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(value_pairs(), LEVELS)
def test_diff_of_values_is_the_general_walks(pair: tuple[Any, Any], levels: int) -> None:
    e, a = nest(pair, levels)
    check_diff(e, a)
    check_diff(a, e)


@_FAST
@given(value_pairs(), LEVELS)
def test_diff_of_envelopes_carrying_them_is_the_general_walks(
    pair: tuple[Any, Any], levels: int
) -> None:
    e, a = nest(pair, levels)
    check_diff(_carrying(e), _carrying(a))


def _copy_of(env: Envelope) -> Envelope:
    """New containers, shared leaves: what the kit compares a write against."""

    def error(e: ErrorInfo | None) -> ErrorInfo | None:
        if e is None:
            return None
        return dataclasses.replace(e, detail=copy_json(e.detail), extra=copy_json(e.extra))

    return dataclasses.replace(
        env, extra=copy_json(env.extra), headers=dict(env.headers),
        attempts=tuple(dataclasses.replace(a, extra=copy_json(a.extra), error=error(a.error))
                       for a in env.attempts),
    )  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(envelopes(extremes=0.5))
def test_generated_envelopes_equal_their_copy_both_ways(env: Envelope) -> None:
    copy = _copy_of(env)
    assert diff(env, copy) == [] == general_diff(env, copy)


def _wire_size(env: Envelope) -> int:
    try:
        return len(dumps(to_json(env), allow_nan=True).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return 1_000


def check_validate(env: Envelope, max_bytes: int | None) -> None:
    fast = validate(env, versions=None, max_bytes=max_bytes)
    assert fast == _validate_model(env, None, max_bytes, payload_text=True)


@_FAST
@given(value_pairs(), LEVELS, st.binary(max_size=10), st.data())
def test_validate_counts_the_payload_as_the_general_path_writes_it(
    pair: tuple[Any, Any], levels: int, payload: bytes, data: st.DataObject
) -> None:
    # Every payload length mod 3 (base64 padding), every size around C2's limit, lone
    # surrogates (no strict encoding: the other size check), non-JSON values.
    env = dataclasses.replace(_carrying(nest(pair, levels)[1]), payload=payload)
    size = _wire_size(env)
    max_bytes = data.draw(st.sampled_from((None, 0, size - 1, size, size + 1)))
    check_validate(env, max_bytes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(envelopes(extremes=0.5), st.integers(-2, 2))
def test_validate_of_generated_envelopes_at_their_size(env: Envelope, slack: int) -> None:
    size = _wire_size(env)
    assert size == len(encode(env).encode("utf-8"))
    check_validate(env, size + slack)
    assert (validate(env, versions=None, max_bytes=size + slack) == []) == (slack >= 0)


def _containers(*values: Any) -> set[int]:
    """The ids of every list and dict in ``values``, at any depth."""
    seen: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if type(value) is list or type(value) is dict:
            seen.add(id(value))
            stack.extend(value.values() if type(value) is dict else value)
    return seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(envelopes(extremes=0.5), st.booleans())
def test_to_json_copies_what_encode_writes(env: Envelope, pretty: bool) -> None:
    obj = to_json(env)
    assert encode(env, pretty=pretty) == dumps(obj, pretty=pretty)
    # to_json's object is the caller's: it shares no list or dict with the model.
    errors = [a.error for a in env.attempts if a.error is not None]
    model = _containers(env.extra, *(a.extra for a in env.attempts),
                        *(e.extra for e in errors), *(e.detail for e in errors))  # fmt: skip
    assert not model & _containers(obj)


class Moment(datetime):
    """Equal to a datetime, not one (its isoformat is not vouched for)."""


_T = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)
# The expected side is what a model holds (str or None; datetime or None); the read
# side anything a plugin may return.
_STRINGS: tuple[Any, ...] = (None, "", "a", "b", Text("a"), "\u00e9", "e\u0301")
_TIMES: tuple[Any, ...] = (
    None, _T, _T.replace(microsecond=117_500), _T.replace(tzinfo=None),
    _T.astimezone(timezone(timedelta(hours=1))), _T + timedelta(milliseconds=1),
    Moment(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC), _T.replace(fold=1),
)  # fmt: skip
_OTHERS: tuple[Any, ...] = (1, b"a", _T.isoformat())
_WRITTEN_TIMES = tuple(t for t in _TIMES if t is None or t.tzinfo is not None)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_STRINGS), st.sampled_from(_STRINGS + _OTHERS + _TIMES),
       st.sampled_from(_WRITTEN_TIMES), st.sampled_from(_TIMES + _OTHERS + _STRINGS))  # fmt: skip
def test_leaf_fast_paths_say_what_the_general_ones_say(
    es: Any, as_: Any, et: Any, at: Any
) -> None:
    for fast, general, e, a in ((_diff._str, _diff._str_general, es, as_),
                                (_diff._time, _diff._time_general, et, at)):  # fmt: skip
        out: list[Difference] = []
        fast(e, a, "/f", out)
        expected: list[Difference] = []
        general(e, a, "/f", expected)
        assert _shown(out) == _shown(expected)


# -- the properties above catch a fast path that is wrong ------------------------------


def _loose_same_json(e: Any, a: Any) -> bool:
    return bool(e == a)  # Python's ==: 1 == 1.0 == True, NaN shared by identity


def _numbers_by_value_same_json(e: Any, a: Any) -> bool:
    # same_json with one slip: numbers compared by value, so 1, 1.0 and True match.
    number = (bool, int, float)
    stack: list[tuple[Any, Any]] = [(e, a)]
    while stack:
        e, a = stack.pop()
        if type(e) in number and type(a) in number:
            if e != a:
                return False
        elif type(e) is not type(a):
            return False
        elif type(e) is list:
            if len(e) != len(a):
                return False
            stack.extend(zip(e, a, strict=True))
        elif type(e) is dict:
            if len(e) != len(a) or any(k not in a for k in e):
                return False
            stack.extend((v, a[k]) for k, v in e.items())
        elif (type(e) is not str and e is not None) or e != a:
            return False
    return True


@pytest.mark.parametrize("broken", [_loose_same_json, _numbers_by_value_same_json])
def test_a_loose_fast_path_is_caught(broken: Any) -> None:
    # Derandomized: the same 1,000 pairs every run, so the check is not a matter of luck.
    @settings(max_examples=1000, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(value_pairs(), LEVELS)
    def prop(pair: tuple[Any, Any], levels: int) -> None:
        e, a = nest(pair, levels)
        fast = diff(e, a)
        assert _shown(fast) == _shown(general_diff(e, a))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_diff_json, "same_json", broken)
        # general_diff patches same_json itself; the fast side runs the broken one.
        with pytest.raises(AssertionError):
            prop()


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(envelopes(extremes=0.05))
def test_decode_builds_what_the_general_builder_builds(env: Envelope) -> None:
    """``decode``'s fast path (``_codec._build_valid``: JSON that ``validate`` has
    vouched for and ``parse_json`` has just made, read without checks or copies) builds
    the model that the general, checking builder (``_codec._Builder``, which
    ``from_json`` uses) builds from the same wire JSON: same fields, same JSON types,
    same canonical encoding."""
    from rdq_compliance import parse_json
    from rdq_compliance.envelope._codec import _build_valid, _Builder

    text = encode(env)
    fast = _build_valid(parse_json(text))
    general = _Builder(copy=True).envelope(parse_json(text))
    assert diff(general, fast) == []
    assert diff(env, fast) == []
    assert encode(fast) == encode(general) == text


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(envelopes(extremes=0.05))
def test_to_json_writes_what_the_checking_model_walk_writes(env: Envelope) -> None:
    """``to_json`` (``ModelWriter``: the one model -> wire walk, trusting the Python
    types) and the validator's ``_ModelChecker`` (the same walk, checking every type
    as it writes) agree on every valid model: same members, same JSON types, same text."""
    import json

    from rdq_compliance.envelope._validate import _ModelChecker

    checker = _ModelChecker(payload_text=True)
    checked = checker.envelope(env)
    assert checker.out == []

    def text(wire: object) -> str:
        return json.dumps(wire, sort_keys=True, ensure_ascii=False, allow_nan=False)

    assert text(checked) == text(to_json(env))


class LyingYear(datetime):
    """A datetime subclass whose ``year`` property lies: writing it from its fields
    would be wrong."""

    @property
    def year(self) -> int:  # type: ignore[override]
        return 1


class LyingOffset(datetime):
    """A datetime subclass whose ``utcoffset()`` says +01:00 whatever its tzinfo."""

    def utcoffset(self) -> timedelta | None:
        return timedelta(hours=1)


_ZONES = st.sampled_from(
    (None, UTC, timezone(timedelta(0)), timezone(timedelta(hours=1)),
     timezone(-timedelta(minutes=30)))
)  # fmt: skip


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.datetimes(
        min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_999)
    ),
    _ZONES,
    st.sampled_from((lambda us: us, lambda us: us - us % 1000)),
    st.sampled_from((datetime, LyingYear, LyingOffset)),
)
def test_timestamp_fast_paths_say_what_isoformat_says(
    naive: datetime, zone: timezone | None, rounding: Any, cls: type[datetime]
) -> None:
    """``format_timestamp`` writes an exact ``datetime`` from its fields and two digit
    tables; ``datetime_problem`` accepts an exact ``datetime`` at ``datetime.UTC`` and
    millisecond precision without calling ``utcoffset()``. Both say what the general
    paths (``isoformat()``, ``utcoffset()``) say, for every year (1 to 9999: 4 digits,
    zero-padded), offset, precision, and subclasses that override a field or the offset."""
    from rdq_compliance.envelope import _wire

    value = naive.replace(microsecond=rounding(naive.microsecond), tzinfo=zone)
    value = cls.fromisoformat(value.isoformat())
    assert _wire.datetime_problem(value) == _wire._datetime_problem_general(value)
    if _wire.datetime_problem(value) is None:
        assert _wire.format_timestamp(value) == _wire._format_timestamp_general(value)
        assert _wire.parse_timestamp(_wire.format_timestamp(value)) == value
