"""Shared helpers for the server-backed plugin tests (postgres, redis, mariadb).

Only helpers and fixtures with server-specific names live here, nothing autouse,
so the other plugin tests in this directory are unaffected.

The comparison used here is deliberately independent of the kit: ``strict_form``
turns a model value into a tagged tree where ``1`` != ``1.0`` != ``True``,
``-0.0`` != ``0.0``, ``""`` != ``None`` and mappings compare key by key, so a
plugin is judged against the envelope it was given, not against itself or the
kit's own diff.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from types import ModuleType
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
    StorageUnavailable,
    new_id,
)

REQUIRE_ENV = "RDQ_REQUIRE_SERVICES"

# ---------------------------------------------------------------- comparison


def strict_form(v: Any) -> Any:
    """A tagged, order-aware tree of a model value; equal trees = identical values."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", int(v))
    if isinstance(v, float):
        return ("float", v.hex())  # hex tells -0.0 from 0.0 and is exact
    if isinstance(v, enum.Enum):
        return ("enum", type(v).__name__, v.value)
    if isinstance(v, str):
        return ("str", str(v))
    if isinstance(v, bytes | bytearray | memoryview):
        return ("bytes", bytes(v))
    if isinstance(v, datetime):
        assert v.tzinfo is not None and v.utcoffset() == timedelta(0), (
            f"timestamp {v!r} is not an aware UTC datetime"
        )
        return ("ts", v.astimezone(UTC).replace(tzinfo=None).isoformat())
    if isinstance(v, list | tuple):
        return ("list", [strict_form(x) for x in v])
    if isinstance(v, Mapping):
        return ("map", sorted((("str", k), strict_form(x)) for k, x in v.items()))
    if dataclasses.is_dataclass(v):
        return (type(v).__name__,
                {f.name: strict_form(getattr(v, f.name)) for f in dataclasses.fields(v)})
    raise TypeError(f"unexpected value in a model: {v!r} ({type(v).__name__})")


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if type(a) is not type(b) or not isinstance(a, tuple | list | dict):
        return f"at {path or '/'}: expected {a!r}, got {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}/{k}")
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"at {path or '/'}: length {len(a)} != {len(b)}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}/{i}")
    return f"at {path or '/'}: {a!r} != {b!r}"


def assert_same(expected: Any, actual: Any) -> None:
    """Fail with the first difference unless ``actual`` is exactly ``expected``."""
    fe, fa = strict_form(expected), strict_form(actual)
    if fe != fa:
        pytest.fail("stored value differs " + _first_difference(fe, fa), pytrace=False)


# ---------------------------------------------------------------- envelopes

T1970 = datetime(1970, 1, 1, tzinfo=UTC)
T9999 = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
TMID = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)
ASTRAL = "\U0001F600\U0010FFFF"


def every_json_type(tag: str) -> dict[str, Any]:
    """Unknown-field values of every JSON type, including the number edge cases (C5)."""
    return {
        f"{tag}_null": None,
        f"{tag}_true": True,
        f"{tag}_false": False,
        f"{tag}_zero": 0,
        f"{tag}_int64_min": -(2**63),
        f"{tag}_int64_max": 2**63 - 1,
        f"{tag}_denormal": 5e-324,
        f"{tag}_neg_zero": -0.0,
        f"{tag}_one_float": 1.0,
        f"{tag}_max_double": 1.7976931348623157e308,
        f"{tag}_pi": 3.141592653589793,
        f"{tag}_str": f"nul\x00{ASTRAL} trailing ",
        f"{tag}_empty_str": "",
        f"{tag}_empty_list": [],
        f"{tag}_empty_obj": {},
        f"{tag}_nested": {"": [1, -0.0, [None, {"\x00": "x"}], "é"], "A": {"a": [[]]}},
        "A": 1,
        "a": 2,
    }


def awkward_envelope(id: str | None = None) -> Envelope:
    """One envelope that exercises every pitfall the server-backed plugins face."""
    detail = {"k": [None, True, 0, -(2**63), 2**63 - 1, 5e-324, -0.0, 1.0, "\x00", {}]}
    full_error = ErrorInfo(
        type="java.lang.\x00Weird" + ASTRAL,
        message="m\x00" + ASTRAL + " ",
        detail=detail,
        stack="\tat x\x00\r\n" + ASTRAL,
        extra={**every_json_type("err"), "id": "looks known elsewhere"},
    )
    attempts = (
        # C12: repeated and decreasing attempt_no; the list order is what counts.
        Attempt(attempt_no=2, started_at=TMID, outcome=Outcome.LEASE_EXPIRED,
                finished_at=T9999,
                error=ErrorInfo(type="rdq.LeaseExpired", message="", detail=None, stack=None)),
        Attempt(attempt_no=1, started_at=T1970, outcome=Outcome.RETRYABLE_FAILURE,
                finished_at=TMID, error=full_error,
                extra={**every_json_type("att"), "queue": "unknown at this level"}),
        Attempt(attempt_no=2, started_at=T9999, outcome=Outcome.SUCCESS),
        Attempt(attempt_no=0, started_at=TMID, outcome=Outcome.PERMANENT_FAILURE,
                finished_at=None,
                error=ErrorInfo(type="", message="x", detail={}, stack="")),
        Attempt(attempt_no=2**31 - 1, started_at=TMID, outcome=Outcome.PERMANENT_FAILURE,
                error=ErrorInfo(type="t", message="x", detail=[], stack=None)),
        Attempt(attempt_no=5, started_at=TMID, outcome=Outcome.PERMANENT_FAILURE,
                error=ErrorInfo(type="t", message="x", detail="")),
    )
    return Envelope(
        id=id or new_id(),
        queue="payments.charge-v2_x",
        handler_ref="charge-payment",
        handler_version="v\x003 " + ASTRAL,
        payload=bytes(range(256)),
        payload_content_type="application/x\x00; charset=\u00fc ",
        headers={
            "": "",
            "A": "upper",
            "a": "lower",
            "a ": "trailing space",
            " a": "leading space",
            "\u00e9": "precomposed",
            "e\u0301": "decomposed",
            "k\x00": "v\x00",
            "rdq.source": "kafka://payments/3/42351",
            ASTRAL: ASTRAL,
            "long" * 1000: "v" * 5000,
        },
        status=Status.IN_FLIGHT,
        attempt_count=2**31 - 1,
        redrive_count=0,
        next_attempt_at=T9999,
        lease_expires_at=T1970,
        created_at=datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC),
        attempts=attempts,
        extra={**every_json_type("top"), "payload_ref": None, "attempt_no": "x"},
    )


def minimal_envelope(id: str | None = None, **changes: Any) -> Envelope:
    env = Envelope(
        id=id or new_id(),
        queue="q",
        handler_ref="h",
        payload=b"",
        payload_content_type="",
        status=Status.PENDING,
        created_at=TMID,
    )
    return dataclasses.replace(env, **changes)


# ---------------------------------------------------------------- live storages


def resolve_options(module: ModuleType) -> dict[str, str]:
    """What the kit would hand the plugin with no --rdq-option: env, else default."""
    return {
        spec.name: os.environ.get(spec.env, spec.default or "") if spec.env
        else (spec.default or "")
        for spec in module.rdq_storage_options()
    }


def open_or_skip(module: ModuleType, **overrides: str) -> Storage:
    """Open the plugin on its live server; skip (or fail if required) when it is down."""
    try:
        return module.rdq_storage_open({**resolve_options(module), **overrides})  # type: ignore[no-any-return]
    except StorageUnavailable as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and the server is unavailable: {exc}", pytrace=False)
        pytest.skip(f"server unavailable (set {REQUIRE_ENV}=1 to fail instead): {exc}")


class Namespaces:
    """Unique namespaces for one test module, all dropped and checked at the end."""

    def __init__(self, label: str) -> None:
        self.prefix = f"h3b{label}{secrets.token_hex(3)}"
        self.used: list[str] = []

    def new(self) -> str:
        ns = f"{self.prefix}_{len(self.used)}"
        self.used.append(ns)
        return ns


def cycle_storage(
    module: ModuleType, remaining: Callable[[str], list[str]]
) -> Iterator[tuple[Storage, Namespaces]]:
    """The module's live storage; at the end, drop every namespace the tests used and
    check with ``remaining(prefix)`` (the server's own view) that nothing of this run
    is left. Only this run's prefix is checked: other runs share the servers."""
    storage = open_or_skip(module)
    spaces = Namespaces(storage.info.name[:2])
    try:
        yield storage, spaces
    finally:
        for ns in spaces.used:
            storage.drop(ns)
        storage.close()
    left = remaining(spaces.prefix)
    assert left == [], f"objects of this run left on the server after drop: {left}"


class StorageCases:
    """Behaviour every server-backed plugin must show. Subclasses provide fixtures:

    ``live`` -> (Storage, Namespaces) for the module, ``plugin`` -> the plugin module,
    ``leftovers`` -> callable(namespace) -> list of server objects still present.
    """

    expected_name: str = ""

    def test_info(self, live: tuple[Storage, Namespaces]) -> None:
        info = live[0].info
        assert info.name == self.expected_name
        assert info.envelope_versions == frozenset({1})
        assert info.capabilities == frozenset({"durable", "concurrent"})

    def test_awkward_round_trip(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = awkward_envelope()
        adapter.write(env)
        assert_same(env, adapter.read(env.id))

    def test_null_empty_and_absent_stay_apart(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        cases = [
            minimal_envelope(handler_version=None),
            minimal_envelope(handler_version=""),
            minimal_envelope(headers={}, extra={}),
            minimal_envelope(headers={"": ""}, extra={"": None}),
            minimal_envelope(extra={"x": None}),
            minimal_envelope(extra={"x": ""}),
            minimal_envelope(extra={"x": []}),
            minimal_envelope(extra={"x": {}}),
            minimal_envelope(payload=b"\x00", payload_content_type="\x00"),
        ]
        for env in cases:
            adapter.write(env)
        for env in cases:
            assert_same(env, adapter.read(env.id))

    def test_write_replaces_wholly(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        full = awkward_envelope()
        bare = minimal_envelope(full.id)
        for env in (full, bare, full, bare):
            adapter.write(env)
            assert_same(env, adapter.read(env.id))
        # A replaced envelope with fewer headers/attempts keeps none of the old ones.
        fewer = dataclasses.replace(full, headers={"a": "1"}, attempts=full.attempts[1:2],
                                    extra={"only": 1})
        adapter.write(full)
        adapter.write(fewer)
        assert_same(fewer, adapter.read(full.id))

    def test_read_missing(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        adapter.write(minimal_envelope())
        assert adapter.read(new_id()) is None
        assert adapter.read("") is None
        assert adapter.read("x\x00") is None

    def test_many_envelopes_keep_their_own_children(
        self, live: tuple[Storage, Namespaces]
    ) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        envs = [
            minimal_envelope(headers={"n": str(i)}, attempts=tuple(
                Attempt(attempt_no=i, started_at=TMID, outcome=Outcome.SUCCESS,
                        extra={"i": i}) for _ in range(i)))
            for i in range(6)
        ]
        for env in envs:
            adapter.write(env)
        for env in envs:
            assert_same(env, adapter.read(env.id))

    def test_isolation_and_drop(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        ns1, ns2 = spaces.new(), spaces.new()
        a1, a2 = storage.open(ns1), storage.open(ns2)
        env = awkward_envelope()
        other = minimal_envelope(env.id, queue="other")
        a1.write(env)
        assert a2.read(env.id) is None
        a2.write(other)
        assert_same(env, a1.read(env.id))
        assert_same(other, a2.read(env.id))
        storage.drop(ns1)
        assert_same(other, a2.read(env.id))
        assert storage.open(ns1).read(env.id) is None
        storage.drop(ns1)
        storage.drop(spaces.prefix + "_never_opened")  # unknown namespace: not an error

    def test_durable_through_fresh_storage(
        self, live: tuple[Storage, Namespaces], plugin: ModuleType
    ) -> None:
        storage, spaces = live
        ns = spaces.new()
        env = awkward_envelope()
        storage.open(ns).write(env)
        fresh = open_or_skip(plugin)
        try:
            assert_same(env, fresh.open(ns).read(env.id))
        finally:
            fresh.close()

    def test_rejects_other_versions(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        for version in (0, 2):
            env = minimal_envelope(envelope_version=version)
            with pytest.raises(StorageError) as info:
                adapter.write(env)
            assert info.value.code == ErrorCode.UNSUPPORTED_ENVELOPE_VERSION
            assert adapter.read(env.id) is None
        # A rejected rewrite leaves the stored version alone.
        env = minimal_envelope()
        adapter.write(env)
        with pytest.raises(StorageError):
            adapter.write(dataclasses.replace(env, envelope_version=2, queue="changed"))
        assert_same(env, adapter.read(env.id))

    def test_near_one_mib_envelope(self, live: tuple[Storage, Namespaces]) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = near_limit_envelope()
        adapter.write(env)
        assert_same(env, adapter.read(env.id))

    def test_drop_leaves_nothing(
        self, live: tuple[Storage, Namespaces], leftovers: Callable[[str], list[str]]
    ) -> None:
        storage, spaces = live
        ns = spaces.new()
        adapter = storage.open(ns)
        for _ in range(3):
            adapter.write(awkward_envelope())
        assert leftovers(ns), "the check itself must see the namespace's data"
        storage.drop(ns)
        assert leftovers(ns) == []


def near_limit_envelope() -> Envelope:
    """An envelope whose compact JSON is just under the 1 MiB limit (C2).

    Most of it is payload; a full 65,536-byte stack and a 4,096-byte message ride
    along so the large-text columns are exercised too.
    """
    from rdq_compliance import MAX_ENVELOPE_BYTES, STACK_LIMIT, encode

    stack = ("\tat a.b(C.java:1)\n" * 4000).encode()[:STACK_LIMIT - 4].decode() + "\U0001F600"
    assert len(stack.encode()) == STACK_LIMIT
    base = minimal_envelope(
        attempts=(Attempt(
            attempt_no=1, started_at=TMID, outcome=Outcome.RETRYABLE_FAILURE,
            finished_at=TMID,
            error=ErrorInfo(type="t", message="m" * 4096, stack=stack)),),
        headers={"h": "\x00" * 100},
    )
    room = MAX_ENVELOPE_BYTES - len(encode(base).encode())
    payload = bytes(range(256)) * (room // 4 * 3 // 256 + 1)
    payload = payload[: room // 4 * 3]
    env = dataclasses.replace(base, payload=payload)
    size = len(encode(env).encode())
    assert MAX_ENVELOPE_BYTES - 8 <= size <= MAX_ENVELOPE_BYTES, size
    return env


__all__ = [
    "StorageCases",
    "assert_same",
    "awkward_envelope",
    "cycle_storage",
    "minimal_envelope",
    "open_or_skip",
    "resolve_options",
    "strict_form",
]
