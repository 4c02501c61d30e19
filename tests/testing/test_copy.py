"""``private_copy``: the copy of an envelope the kit hands to ``write``.

It must equal the original and share no mutable container with it, so that whatever a
plugin does to the envelope it was given, the kit's expected value stays what the
generator produced (``Namespace.write``).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from collections.abc import Iterator
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings

from rdq_compliance import Attempt, Envelope, ErrorInfo, Outcome, Status, diff
from rdq_compliance.strategies import envelopes
from rdq_compliance.testing._copy import (
    _copy_attempt,
    _copy_error,
    _copy_json,
    untouched,
)
from rdq_compliance.testing._copy import private_copy as _private_copy

T0 = datetime(2024, 2, 29, 12, 0, 0, 1000, tzinfo=UTC)


class Box:
    """A value that is not plain JSON and holds a mutable list."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.items == self.items

    __hash__ = None  # type: ignore[assignment]


def containers(value: object) -> Iterator[object]:
    """Every mutable object reachable from ``value``: dicts, lists, sets, bytearrays and
    plain objects, through models, tuples and frozensets (enum members are shared
    constants, not containers)."""
    if isinstance(value, dict):
        yield value
        for k, v in value.items():
            yield from containers(k)
            yield from containers(v)
    elif isinstance(value, list | set):
        yield value
        for v in value:
            yield from containers(v)
    elif isinstance(value, bytearray):
        yield value
    elif isinstance(value, tuple | frozenset):
        for v in value:
            yield from containers(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from containers(getattr(value, f.name))
    elif hasattr(value, "__dict__") and not isinstance(value, type | enum.Enum):
        yield value
        yield from containers(vars(value))


def mutate_every_container(value: object) -> int:
    """Change every mutable container of ``value`` in place; how many there were."""
    found = list(containers(value))
    for c in found:
        if isinstance(c, dict):
            c["\x00mutated"] = True
        elif isinstance(c, list):
            c.append("mutated")
        elif isinstance(c, set):
            c.add("mutated")
        elif isinstance(c, bytearray):
            c.append(0)
        else:
            c.mutated = True  # type: ignore[attr-defined]
    return len(found)


def shape(value: object) -> object:
    """A comparable picture of ``value`` with every type kept: equality of any object
    tree, including the non-JSON values the model's ``==`` (a diff) does not compare."""
    if isinstance(value, dict):
        return (type(value), tuple((shape(k), shape(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value), tuple(shape(v) for v in value))
    if isinstance(value, set | frozenset):
        return (type(value), tuple(sorted(repr(shape(v)) for v in value)))
    if isinstance(value, bytearray):
        return (bytearray, bytes(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value), tuple((f.name, shape(getattr(value, f.name)))
                                   for f in dataclasses.fields(value)))
    if hasattr(value, "__dict__") and not isinstance(value, type | enum.Enum):
        return (type(value), shape(vars(value)))
    return (type(value), value)


def assert_private(original: Envelope, copied: Envelope, *, valid: bool = True) -> None:
    """``copied`` equals ``original``, shares no mutable container with it, and mutating
    every container of ``copied`` leaves ``original`` unchanged. ``valid``: the model's
    own ``==`` applies too (it compares JSON values only)."""
    assert copied is not original
    snapshot = copy.deepcopy(original)
    assert shape(copied) == shape(original)
    if valid:
        assert copied == original and diff(original, copied) == []
    shared = {id(c) for c in containers(original)} & {id(c) for c in containers(copied)}
    assert not shared, [c for c in containers(copied) if id(c) in shared]
    assert all(ca is not oa for ca, oa in zip(copied.attempts, original.attempts,
                                              strict=True))
    assert mutate_every_container(copied) == len(list(containers(snapshot)))
    assert shape(original) == shape(snapshot)
    if valid:
        assert original == snapshot


def full_envelope(**changes: Any) -> Envelope:
    """Every mutable place of the model filled: headers, extra at every level, an
    attempt's extra, error detail and error extra."""
    fields: dict[str, Any] = dict(
        id="01J2ZK7Q8XW5H3N9G4T6B8RDQ0", queue="q", handler_ref="h", payload=b"\x00\xff",
        payload_content_type="application/octet-stream", status=Status.PENDING,
        created_at=T0, headers={"a": "1", "": "empty"},
        attempts=(
            Attempt(attempt_no=1, started_at=T0, outcome=Outcome.RETRYABLE_FAILURE,
                    error=ErrorInfo(type="E", message="m", detail={"n": [1, {"deep": [2]}]},
                                    extra={"e": {"x": [None]}}),
                    extra={"a": [{"b": {}}]}),
            Attempt(attempt_no=2, started_at=T0, outcome=Outcome.SUCCESS,
                    extra={"list": [[], {}]}),
        ),
        extra={"future": {"k": [True, -(2**63), {"z": []}]}, "payload_ref": None},
    )  # fmt: skip
    fields.update(changes)
    return Envelope(**fields)


@settings(max_examples=60, deadline=None, database=None)
@given(env=envelopes())
def test_copy_of_a_generated_envelope_is_equal_and_private(env: Envelope) -> None:
    copied = _private_copy(env)
    assert copied == env and diff(env, copied) == [] and diff(copied, env) == []
    assert_private(env, copied)


def test_every_mutable_place_is_copied() -> None:
    env = full_envelope()
    copied = _private_copy(env)
    assert diff(env, copied) == []
    # the walker sees every container: headers 1, attempts 4 + 3 + 4 + 4, extra 5
    assert mutate_every_container(copy.deepcopy(env)) == 21
    assert copied.headers is not env.headers and copied.extra is not env.extra
    a0, c0 = env.attempts[0], copied.attempts[0]
    assert a0.error is not None and c0.error is not None
    assert c0.error is not a0.error
    assert c0.error.detail is not a0.error.detail and c0.error.extra is not a0.error.extra
    assert c0.extra is not a0.extra
    assert_private(env, copied)


def test_immutable_leaves_are_shared() -> None:
    # What makes it cheaper than deepcopy: str, bytes, datetime, enum members stay.
    env = full_envelope()
    copied = _private_copy(env)
    assert copied.payload is env.payload and copied.created_at is env.created_at
    assert copied.id is env.id and copied.status is env.status


@pytest.mark.parametrize(
    "changes",
    [
        # values that are not plain JSON: still deep copied
        {"extra": {"t": ({"in": [1]}, [2]), "box": Box([1, [2]]), "s": {3},
                   "b": bytearray(b"x")}},
        {"headers": type("Headers", (dict,), {})({"a": "1"})},  # a dict subclass
        {"attempts": (Attempt(attempt_no=1, started_at=T0, outcome=Outcome.SUCCESS,
                              error=ErrorInfo(type="E", message="m", detail=Box([{"k": []}]),
                                              extra={"box": Box([])})),)},
    ],
    ids=["extra-values", "headers-subclass", "error-detail-object"],
)
def test_values_that_are_not_plain_json_are_still_copied(changes: dict[str, Any]) -> None:
    env = full_envelope(**changes)
    assert_private(env, _private_copy(env), valid=False)


def test_models_of_the_wrong_type_are_deep_copied() -> None:
    # An invalid model (a plugin test built it by hand): copied all the same.
    odd_attempt: Any = {"attempt_no": 1, "extra": {"x": []}}
    env = full_envelope(attempts=(odd_attempt,))
    assert_private(env, _private_copy(env), valid=False)

    odd_error: Any = {"type": "E", "detail": [1]}
    attempt = Attempt(attempt_no=1, started_at=T0, outcome=Outcome.SUCCESS, error=odd_error)
    copied = _copy_attempt(attempt)
    assert shape(copied) == shape(attempt) and copied.error is not odd_error
    assert copied.error["detail"] is not odd_error["detail"]

    class MyEnvelope(Envelope):
        __slots__ = ()

    sub = MyEnvelope(**{f.name: getattr(full_envelope(), f.name)
                        for f in dataclasses.fields(Envelope)})
    copied_sub = _private_copy(sub)
    assert type(copied_sub) is MyEnvelope
    assert_private(sub, copied_sub)


def test_copy_json_and_copy_error() -> None:
    value = {"a": [1, 2.5, None, True, "s", {"b": []}], "c": {}}
    copied = _copy_json(value)
    assert copied == value
    assert not {id(c) for c in containers(value)} & {id(c) for c in containers(copied)}
    for leaf in (1, 2.5, None, True, "s"):
        assert _copy_json(leaf) is leaf
    error = ErrorInfo(type="E", message="m", detail={"d": [1]}, extra={"x": {"y": []}})
    copied_error = _copy_error(error)
    assert copied_error == error and copied_error is not error
    assert not {id(c) for c in containers(error)} & {id(c) for c in containers(copied_error)}
    assert _copy_error(None) is None


# -- untouched: the write check's shortcut ---------------------------------------------
# True must mean diff(original, copy) == [] as the two are now; any change a plugin can
# make to the copy, in place or by replacing a field of the frozen model, must make it
# False (then the diff decides), however deep and whatever the value written.


@settings(max_examples=60, deadline=None, database=None)
@given(env=envelopes())
def test_an_untouched_copy_of_a_generated_envelope_is_seen_as_such(env: Envelope) -> None:
    copied = _private_copy(env)
    assert untouched(env, copied) and diff(env, copied) == []
    assert mutate_every_container(copied) > 0  # headers and extra at least
    assert not untouched(env, copied)


def _places(env: Envelope) -> Iterator[tuple[object, str]]:
    """(model object, field name) of every field of ``env``, its attempts and errors."""
    for model in (env, *env.attempts, *(a.error for a in env.attempts if a.error)):
        for f in dataclasses.fields(model):  # type: ignore[arg-type]
            yield model, f.name


def test_every_field_of_every_model_is_compared() -> None:
    env = full_envelope()
    count = 0
    for index in range(len(list(_places(env)))):
        copied = _private_copy(env)
        model, name = list(_places(copied))[index]
        object.__setattr__(model, name, object())  # a frozen model changed all the same
        assert not untouched(env, copied), name
        count += 1
    assert count == 16 + 2 * 6 + 5  # envelope, two attempts, one error


def test_every_container_mutated_in_place_is_seen() -> None:
    env = full_envelope()
    for index in range(len(list(containers(env)))):
        copied = _private_copy(env)
        target = list(containers(copied))[index]
        if isinstance(target, dict):
            target["\x00mutated"] = True
        else:
            assert isinstance(target, list)
            target.append("mutated")
        assert not untouched(env, copied) and diff(env, copied) != [], index


@pytest.mark.parametrize("change", [
    lambda c: c.headers.__setitem__("a", "2"),  # a value replaced in place
    lambda c: c.headers.__setitem__("", "".join(["emp", "ty"])),  # equal, another object
    lambda c: c.extra["future"]["k"].__setitem__(0, 1),  # True became 1 (C5)
    lambda c: c.extra["future"]["k"].__setitem__(1, float(-(2**63))),
    lambda c: c.extra.pop("payload_ref"),
    lambda c: object.__setattr__(c, "attempts", list(c.attempts)),
    lambda c: object.__setattr__(c, "headers", MappingProxyType(c.headers)),
    lambda c: object.__setattr__(c, "created_at", T0.astimezone()),  # the same instant
    lambda c: object.__setattr__(c, "status", "PENDING"),  # equal to the member
])
def test_any_replaced_value_is_left_to_the_diff(change: Any) -> None:
    env = full_envelope()
    copied = _private_copy(env)
    change(copied)
    assert not untouched(env, copied)


@pytest.mark.parametrize("changes", [
    {"extra": {"nan": float("nan")}},  # NaN differs from itself to the diff
    {"created_at": T0.replace(microsecond=1)},  # not the wire's form: the diff says so
    {"headers": {"n": 1}},  # not a str: a type the diff names
    {"envelope_version": True},  # bool is not int to the diff
], ids=["nan", "sub-millisecond", "header-int", "bool-version"])
def test_a_value_the_diff_finds_unequal_to_itself_is_left_to_the_diff(
    changes: dict[str, Any],
) -> None:
    # The same objects on both sides, yet the diff reports them: never claim "untouched".
    env = full_envelope(**changes)
    copied = _private_copy(env)
    assert diff(env, copied) != []
    assert not untouched(env, copied)


def test_models_of_other_types_are_left_to_the_diff() -> None:
    env = full_envelope()

    class MyEnvelope(Envelope):
        __slots__ = ()

    sub = MyEnvelope(**{f.name: getattr(env, f.name) for f in dataclasses.fields(Envelope)})
    assert not untouched(sub, _private_copy(sub))
    assert not untouched(env, sub) and not untouched(env, "x")  # type: ignore[arg-type]
