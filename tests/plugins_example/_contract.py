"""Shared material for the example-plugin tests: hand-made awkward envelopes, a
strict comparison that does not rely on the kit's own diff, and a contract
test class that test_memory.py and test_sqlite.py run against their plugin.

The comparison is deliberately independent of ``rdq_compliance.diff``: a store
must never be judged by the code under test alone (a diff that reported
nothing would otherwise make every test here pass).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from rdq_compliance import (
    Attempt,
    Envelope,
    ErrorCode,
    ErrorInfo,
    Outcome,
    Status,
    Storage,
    StorageError,
)

ID_A = "01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
ID_B = "01J2ZK7Q8XW5H3N9G4T6B8RDQ1"
ID_C = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"

T_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
T_MAX = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
T_1 = datetime(2026, 7, 20, 14, 3, 22, 117000, tzinfo=UTC)
T_2 = datetime(2026, 7, 20, 14, 3, 22, 950000, tzinfo=UTC)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# Every JSON type, with the values stores usually get wrong (C5, C9, C10).
AWKWARD_JSON: dict[str, Any] = {
    "u_null": None,
    "u_true": True,
    "u_false": False,
    "u_zero": 0,
    "u_one_float": 1.0,
    "u_int64_max": INT64_MAX,
    "u_int64_min": INT64_MIN,
    "u_2_53_plus_1": 2**53 + 1,
    "u_tiny": 5e-324,
    "u_huge": 1.7976931348623157e308,
    "u_tenth": 0.1,
    "u_neg_zero": -0.0,
    "u_str": "nul\x00 astral\U0001f600 rtl\u202e end",
    "u_empty_str": "",
    "u_empty_list": [],
    "u_empty_obj": {},
    "u_nested": {
        "": {"\x00": [True, None, [], {}, -1, 2.5]},
        "A": 1,
        "a": [{"deep": [[[INT64_MIN]]]}],
    },
    "payload_ref": "s3://bucket/key",
}


def awkward_envelope(id: str = ID_A) -> Envelope:
    """Every awkward value in one envelope, at every level that has unknown fields."""
    return Envelope(
        id=id,
        queue="payments.charge-v2_x",
        handler_ref="charge-payment",
        handler_version="",  # "" is not null (C9)
        payload=b"",  # the empty payload (C7)
        payload_content_type="application/x\x00\U0001f600",
        status=Status.DEAD,
        created_at=T_EPOCH,
        next_attempt_at=T_MAX,
        lease_expires_at=None,
        attempt_count=2**31 - 1,
        redrive_count=1,
        headers={
            "": "",
            "A": "upper",
            "a": "lower",
            "k\x00ey": "va\x00lue",
            "rdq.source": "kafka://payments/3/42351",
            "\U0001f600": "\U0001f642",
        },
        attempts=(
            # attempt_no repeats across the redrive: order is by position (C12)
            Attempt(
                attempt_no=2,
                started_at=T_1,
                finished_at=T_2,
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(
                    type="java.net.SocketTimeoutException",
                    message="connect timed out \x00 \U0001f600",
                    detail={"retry_in_ms": 500, "null": None, "big": INT64_MAX},
                    stack="at a\n\tat b\x00",
                    extra=dict(AWKWARD_JSON),
                ),
                extra={"a_null": None, "a_list": [INT64_MIN, 5e-324]},
            ),
            Attempt(attempt_no=1, started_at=T_1, outcome=Outcome.SUCCESS),
            Attempt(
                attempt_no=1,
                started_at=T_EPOCH,
                finished_at=None,
                outcome=Outcome.LEASE_EXPIRED,
                error=ErrorInfo(type="", message="", detail=None, stack=None, extra={}),
            ),
            Attempt(
                attempt_no=1,
                started_at=T_MAX,
                finished_at=T_MAX,
                outcome=Outcome.PERMANENT_FAILURE,
                error=ErrorInfo(type="E", message="m", detail="", stack="", extra={"e": {}}),
                extra={"": ""},
            ),
        ),
        extra=dict(AWKWARD_JSON),
    )


def minimal_envelope(id: str = ID_B) -> Envelope:
    return Envelope(
        id=id,
        queue="q",
        handler_ref="h",
        payload=b"\x00\xff\x00",
        payload_content_type="",
        status=Status.PENDING,
        created_at=T_1,
    )


def replacement_for(env: Envelope) -> Envelope:
    """Same id, fewer of everything: nothing of ``env`` may survive (C13)."""
    return Envelope(
        id=env.id,
        queue="other.queue",
        handler_ref="other",
        handler_version=None,
        payload=b"new",
        payload_content_type="text/plain",
        status=Status.SUCCEEDED,
        created_at=T_2,
        headers={"a": "only"},
        attempts=(Attempt(attempt_no=7, started_at=T_2, outcome=Outcome.SUCCESS),),
        extra={"u_null": 0},
    )


# --- strict, independent comparison ------------------------------------------


def _json_diff(a: object, b: object, where: str) -> list[str]:
    """Differences between two JSON values, type-strict (True is not 1, 1.0 is not 1,
    -0.0 is not 0.0): our plugins must give back exactly what they got."""
    if a is None or isinstance(a, bool | str):
        return [] if type(a) is type(b) and a == b else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, int):
        ok = type(b) is int and a == b
        return [] if ok else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, float):
        ok = type(b) is float and a == b and math.copysign(1, a) == math.copysign(1, b)
        return [] if ok else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping):
            return [f"{where}: object != {b!r}"]
        out = [f"{where}: keys {sorted(a)!r} != {sorted(b)!r}"] if a.keys() != b.keys() else []
        for k in a.keys() & b.keys():
            out += _json_diff(a[k], b[k], f"{where}/{k!r}")
        return out
    if isinstance(a, Sequence):
        if not isinstance(b, Sequence) or isinstance(b, str | bytes):
            return [f"{where}: array != {b!r}"]
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += _json_diff(x, y, f"{where}/{i}")
        return out
    return [f"{where}: unexpected value {a!r}"]


def _ts_diff(a: datetime | None, b: object, where: str) -> list[str]:
    if a is None:
        return [] if b is None else [f"{where}: None != {b!r}"]
    ok = isinstance(b, datetime) and b.utcoffset() is not None and a == b
    return [] if ok else [f"{where}: {a!r} != {b!r}"]


def _plain(a: object, b: object, where: str) -> list[str]:
    return [] if type(a) is type(b) and a == b else [f"{where}: {a!r} != {b!r}"]


def _error_diff(a: ErrorInfo | None, b: ErrorInfo | None, where: str) -> list[str]:
    if a is None or b is None:
        return [] if a is b else [f"{where}: {a!r} != {b!r}"]
    return (
        _plain(a.type, b.type, f"{where}/type")
        + _plain(a.message, b.message, f"{where}/message")
        + _json_diff(a.detail, b.detail, f"{where}/detail")
        + _plain(a.stack, b.stack, f"{where}/stack")
        + _json_diff(dict(a.extra), dict(b.extra), f"{where}/<unknown>")
    )


def strict_diff(a: Envelope, b: Envelope | None) -> list[str]:
    """Every field of ``a`` compared with ``b``, without the kit's diff."""
    if b is None:
        return ["read returned None"]
    out = []
    for name in ("id", "envelope_version", "queue", "handler_ref", "handler_version",
                 "payload_content_type", "attempt_count", "redrive_count"):  # fmt: skip
        out += _plain(getattr(a, name), getattr(b, name), f"/{name}")
    out += [] if bytes(b.payload) == a.payload else [f"/payload: {a.payload!r} != {b.payload!r}"]
    out += [] if str(a.status) == str(b.status) else [f"/status: {a.status} != {b.status}"]
    for name in ("next_attempt_at", "lease_expires_at", "created_at"):
        out += _ts_diff(getattr(a, name), getattr(b, name), f"/{name}")
    out += _json_diff(dict(a.headers), dict(b.headers), "/headers")
    out += _json_diff(dict(a.extra), dict(b.extra), "/<unknown>")
    if len(a.attempts) != len(b.attempts):
        return [*out, f"/attempts: {len(a.attempts)} != {len(b.attempts)}"]
    for i, (x, y) in enumerate(zip(a.attempts, b.attempts, strict=True)):
        w = f"/attempts/{i}"
        out += _plain(x.attempt_no, y.attempt_no, f"{w}/attempt_no")
        out += _ts_diff(x.started_at, y.started_at, f"{w}/started_at")
        out += _ts_diff(x.finished_at, y.finished_at, f"{w}/finished_at")
        out += [] if str(x.outcome) == str(y.outcome) else [f"{w}/outcome"]
        out += _error_diff(x.error, y.error, f"{w}/error")
        out += _json_diff(dict(x.extra), dict(y.extra), f"{w}/<unknown>")
    return out


def assert_same(expected: Envelope, actual: Envelope | None) -> None:
    problems = strict_diff(expected, actual)
    assert not problems, "\n".join(problems)
    # And the kit's own equality (diff-based) agrees.
    assert actual == expected


def with_(env: Envelope, **changes: Any) -> Envelope:
    fields = {name: getattr(env, name) for name in Envelope.__dataclass_fields__}
    fields.update(changes)
    return Envelope(**fields)


# --- the contract every example plugin passes --------------------------------


class StorageContract:
    """Subclass in a test module and provide the ``storage`` fixture."""

    @pytest.fixture
    def storage(self) -> Iterator[Storage]:
        raise NotImplementedError

    def test_awkward_envelope_round_trips(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        env = awkward_envelope()
        adapter.write(env)
        assert_same(awkward_envelope(), adapter.read(env.id))

    def test_minimal_envelope_round_trips(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        adapter.write(minimal_envelope())
        assert_same(minimal_envelope(), adapter.read(ID_B))

    def test_read_of_unknown_id_is_none(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        assert adapter.read(ID_C) is None
        adapter.write(minimal_envelope(ID_B))
        assert adapter.read(ID_C) is None
        assert adapter.read(ID_B.lower()) is None  # ids are case-sensitive text

    def test_write_replaces_wholly(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        old = awkward_envelope(ID_A)
        adapter.write(old)
        adapter.write(replacement_for(old))
        assert_same(replacement_for(old), adapter.read(ID_A))
        # ... and back: the richer version comes back whole again.
        adapter.write(awkward_envelope(ID_A))
        assert_same(awkward_envelope(ID_A), adapter.read(ID_A))

    def test_write_replaces_only_its_id(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        adapter.write(awkward_envelope(ID_A))
        adapter.write(awkward_envelope(ID_C))
        adapter.write(replacement_for(awkward_envelope(ID_A)))
        assert_same(awkward_envelope(ID_C), adapter.read(ID_C))

    def test_namespaces_are_isolated(self, storage: Storage) -> None:
        one, two = storage.open("ns_one"), storage.open("ns_two")
        one.write(awkward_envelope(ID_A))
        assert two.read(ID_A) is None
        two.write(minimal_envelope(ID_A))  # same id, other namespace
        assert_same(awkward_envelope(ID_A), one.read(ID_A))
        assert_same(minimal_envelope(ID_A), two.read(ID_A))

    def test_drop_removes_one_namespace_only(self, storage: Storage) -> None:
        one, two = storage.open("ns_one"), storage.open("ns_two")
        one.write(awkward_envelope(ID_A))
        one.write(minimal_envelope(ID_B))
        two.write(awkward_envelope(ID_A))
        storage.drop("ns_one")
        assert one.read(ID_A) is None
        assert one.read(ID_B) is None
        assert storage.open("ns_one").read(ID_A) is None
        assert_same(awkward_envelope(ID_A), two.read(ID_A))
        storage.drop("never_used")  # unknown namespace: not an error
        # An adapter opened before the drop keeps working on the emptied namespace.
        one.write(minimal_envelope(ID_B))
        assert_same(minimal_envelope(ID_B), storage.open("ns_one").read(ID_B))

    def test_caller_mutation_after_write_does_not_reach_the_store(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        nested: dict[str, Any] = {"x": [1, {"y": None}]}
        env = with_(minimal_envelope(), extra={"nested": nested})
        adapter.write(env)
        nested["x"][1]["y"] = "changed"
        nested["new"] = True
        expected = with_(minimal_envelope(), extra={"nested": {"x": [1, {"y": None}]}})
        read = adapter.read(ID_B)
        assert_same(expected, read)
        # Mutating what was read does not reach the store either.
        assert read is not None
        read_nested: Any = read.extra["nested"]
        read_nested["x"].append(2)
        assert_same(expected, adapter.read(ID_B))

    def test_unsupported_version_is_refused(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        assert storage.info.envelope_versions == frozenset({1})
        for version in (0, 2):
            with pytest.raises(StorageError) as info:
                adapter.write(with_(minimal_envelope(), envelope_version=version))
            assert info.value.code == ErrorCode.UNSUPPORTED_ENVELOPE_VERSION
            assert "envelope_version" in info.value.message
        assert adapter.read(ID_B) is None  # nothing was stored

    @pytest.mark.parametrize("namespace", ["", "Upper", "1abc", "a-b", "a" * 41, "ns\x00"])
    def test_invalid_namespace_is_refused(self, storage: Storage, namespace: str) -> None:
        with pytest.raises(ValueError, match="namespace="):
            storage.open(namespace)

    def test_many_envelopes(self, storage: Storage) -> None:
        adapter = storage.open("ns_one")
        ids = [f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}" for i in range(50)]
        for i, id in enumerate(ids):
            adapter.write(awkward_envelope(id) if i % 2 else minimal_envelope(id))
        for i, id in enumerate(ids):
            assert_same(awkward_envelope(id) if i % 2 else minimal_envelope(id), adapter.read(id))
