"""The harness itself: the strict comparison catches every defect the plugin tests rely on
it for, on its own (not through the kit's diff), and the contract fails a store that
loses a little on the way (1.0 stored as 1, and the like)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import rdq_plugin_memory

from rdq_compliance import Adapter, Envelope, ErrorInfo, Storage, StorageInfo
from rdq_compliance.envelope import _model

from ._harness import (
    INT64_MAX,
    Live,
    Namespaces,
    StorageContract,
    assert_same,
    awkward_empty_envelope,
    awkward_envelope,
    every_json_type,
    strict_diff,
)

ENV = awkward_empty_envelope("01J2ZK7Q8XW5H3N9G4T6B8RDQ0")
JSON = ENV.extra


def test_identical_values_have_no_difference() -> None:
    assert strict_diff(ENV, awkward_empty_envelope(ENV.id)) == []
    rich = awkward_envelope(ENV.id)
    assert strict_diff(rich, awkward_envelope(ENV.id)) == []
    assert strict_diff(every_json_type("x"), every_json_type("x")) == []


DIFFERENT: list[tuple[object, object]] = [
    (1, 1.0), (1, True), (1.0, True), (0, False), (0, 0.0), (0.0, -0.0), (0, -0.0),
    (INT64_MAX, float(INT64_MAX)), ("", None), (None, {}), ([], {}), ("x", b"x"),
    (b"", ""), ([1, 2], [2, 1]), ([1], (1, 1)), ({"a": None}, {}), ({}, {"a": None}),
    ({"A": 1}, {"a": 1}), ("e\u0301", "\u00e9"),
    (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1)),  # aware vs naive
    # The same instant in another zone is not what was written.
    (datetime(2026, 1, 1, tzinfo=UTC),
     datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))),
    (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)),
]


@pytest.mark.parametrize(("expected", "actual"), DIFFERENT,
                         ids=[f"{e!r}~{a!r}" for e, a in DIFFERENT])
def test_differences_are_caught(expected: object, actual: object) -> None:
    assert strict_diff(expected, actual)
    assert strict_diff({"k": [expected]}, {"k": [actual]}), "not caught when nested"


def test_object_key_order_is_irrelevant_array_order_is_not() -> None:
    assert strict_diff({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}) == []
    assert strict_diff({"a": 1, "b": [1, 2]}, {"b": [2, 1], "a": 1}) == [
        "/'b'/0: expected int 1, got int 2",
        "/'b'/1: expected int 2, got int 1",
    ]


def test_subclasses_of_scalars_are_not_accepted() -> None:
    class Text(str):
        pass

    with pytest.raises(TypeError, match="unexpected value"):
        strict_diff("a", Text("a"))


def test_every_difference_is_reported_with_its_path() -> None:
    lossy = {**JSON, "u_one_float": 1, "u_neg_zero": 0.0}
    problems = strict_diff(ENV, dataclasses.replace(ENV, extra=lossy, handler_version=None))
    assert problems == [
        "/handler_version: expected str '', got null",
        "/extra/'u_neg_zero': expected float -0.0, got float 0.0",
        "/extra/'u_one_float': expected float 1.0, got int 1",
    ]


def test_envelope_defects_are_caught() -> None:
    """The defects of a store that the plugin tests rely on the comparison for."""
    no_null = {k: v for k, v in JSON.items() if k != "u_null"}
    defects = [
        dataclasses.replace(ENV, extra={**JSON, "u_int64_max": float(INT64_MAX)}),
        dataclasses.replace(ENV, extra=no_null),
        dataclasses.replace(ENV, handler_version=None),
        dataclasses.replace(ENV, attempts=tuple(reversed(ENV.attempts))),
        dataclasses.replace(ENV, headers={**ENV.headers, "A": "lower"}),
        dataclasses.replace(ENV, extra={**JSON, "u_one_float": True}),
        dataclasses.replace(ENV, extra={**JSON, "u_neg_zero": 0.0}),
        dataclasses.replace(ENV, created_at=ENV.created_at.replace(tzinfo=None)),
        dataclasses.replace(ENV, payload=bytearray(b"x")),  # type: ignore[arg-type]
        dataclasses.replace(ENV, attempts=(*ENV.attempts[:3], dataclasses.replace(
            ENV.attempts[3], error=ErrorInfo("E", "m", "", None, {"e": {}})))),
        None,
    ]
    for defect in defects:
        assert strict_diff(ENV, defect), defect


def test_independent_of_the_kits_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kit diff that finds nothing (every envelope "equal") does not blind the harness.
    monkeypatch.setattr(_model, "_equal", lambda a, b: True)
    wrong = dataclasses.replace(ENV, extra={**JSON, "u_one_float": 1})
    assert wrong == ENV
    assert strict_diff(ENV, wrong)
    with pytest.raises(pytest.fail.Exception, match="u_one_float"):
        assert_same(ENV, wrong)


# --- a store that loses a little: the contract must fail it ----------------------------


def _json_map(v: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(v, dict):
        return {k: _json_map(x, f) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_map(x, f) for x in v]
    return f(v)


def _lossy_json(f: Callable[[Any], Any]) -> Callable[[Envelope], Envelope]:
    def apply(env: Envelope) -> Envelope:
        return dataclasses.replace(env, extra=_json_map(dict(env.extra), f))
    return apply


LOSSES: dict[str, Callable[[Envelope], Envelope]] = {
    # What a store that goes through a lossy JSON or number type does.
    "1.0 stored as 1": _lossy_json(lambda v: int(v) if type(v) is float and v == 1.0 else v),
    "-0.0 stored as 0.0": _lossy_json(lambda v: 0.0 if type(v) is float and v == 0 else v),
    "true stored as 1": _lossy_json(lambda v: 1 if v is True else v),
    "int64 through a double": _lossy_json(
        lambda v: float(v) if type(v) is int and abs(v) > 2**53 else v),
    "null-valued key dropped": lambda env: dataclasses.replace(
        env, extra={k: v for k, v in env.extra.items() if v is not None}),
    "naive timestamp": lambda env: dataclasses.replace(
        env, created_at=env.created_at.replace(tzinfo=None)),
    "timestamp in the server's zone": lambda env: dataclasses.replace(
        env, created_at=env.created_at.astimezone(timezone(timedelta(hours=9)))),
    "attempts reordered": lambda env: dataclasses.replace(
        env, attempts=tuple(sorted(env.attempts, key=lambda a: a.attempt_no))),
    "payload as text": lambda env: dataclasses.replace(
        env, payload=env.payload.decode("latin-1")),  # type: ignore[arg-type]
    "empty string as null": lambda env: dataclasses.replace(
        env, handler_version=env.handler_version or None),
}


class _LossyAdapter:
    def __init__(self, inner: Adapter, loss: Callable[[Envelope], Envelope]) -> None:
        self.inner, self.loss = inner, loss

    def write(self, envelope: Envelope) -> None:
        self.inner.write(envelope)

    def read(self, id: str) -> Envelope | None:
        env = self.inner.read(id)
        return None if env is None else self.loss(env)

    def close(self) -> None:
        self.inner.close()


class _LossyStorage:
    def __init__(self, loss: Callable[[Envelope], Envelope]) -> None:
        self.inner = rdq_plugin_memory.rdq_storage_open({})
        self.loss = loss

    @property
    def info(self) -> StorageInfo:
        return self.inner.info

    def open(self, namespace: str) -> Adapter:
        return _LossyAdapter(self.inner.open(namespace), self.loss)

    def drop(self, namespace: str) -> None:
        self.inner.drop(namespace)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def lossy(request: pytest.FixtureRequest) -> Iterator[Live]:
    storage = _LossyStorage(LOSSES[request.param])
    assert isinstance(storage, Storage)
    yield storage, Namespaces("lo")
    storage.close()


@pytest.mark.parametrize("lossy", sorted(LOSSES), indirect=True)
def test_contract_fails_a_lossy_store(lossy: Live) -> None:
    with pytest.raises(pytest.fail.Exception, match="stored value differs"):
        StorageContract().test_awkward_round_trip(lossy)


def test_contract_passes_the_same_store_without_the_loss() -> None:
    # The control: the wrapper alone (a loss that changes nothing) passes.
    storage = _LossyStorage(lambda env: env)
    try:
        StorageContract().test_awkward_round_trip((storage, Namespaces("lo")))
        # Key order of objects is not a loss: JSON objects are unordered.
        reordered = _LossyStorage(lambda env: dataclasses.replace(
            env, headers=dict(reversed(list(env.headers.items()))),
            extra=dict(reversed(list(env.extra.items())))))
        StorageContract().test_awkward_round_trip((reordered, Namespaces("lo")))
        reordered.close()
    finally:
        storage.close()
