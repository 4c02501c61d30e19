"""The one harness of the example-plugin tests: hand-made awkward envelopes, a strict
comparison, and ``StorageContract``, the behaviour every example storage plugin shows
(memory, sqlite, postgres, mariadb, redis; the Node testee uses the envelopes' values
and the comparison on the wire).

The comparison is deliberately independent of ``rdq_compliance.diff``: a store must
never be judged by the code under test alone (a diff that reported nothing would
otherwise make every test here pass). ``strict_form`` turns a value into a tagged tree
in which ``1``, ``1.0`` and ``True`` differ, ``-0.0`` is not ``0.0``, ``""`` is not
``None``, bytes are not text, a naive timestamp is not an aware one (nor one in another
zone), arrays keep their order and only JSON objects (mappings) ignore key order.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, ClassVar

import pytest

from rdq_compliance import (
    MAX_ENVELOPE_BYTES,
    STACK_LIMIT,
    Attempt,
    Envelope,
    ErrorCode,
    ErrorInfo,
    JSONValue,
    Outcome,
    Status,
    Storage,
    StorageError,
    StorageInfo,
    encode,
    new_id,
)

# ---------------------------------------------------------------- strict comparison


def strict_form(v: object) -> Any:
    """A tagged tree of a model or JSON value; equal trees = identical values.

    Scalars must be of the exact built-in type (a subclass is reported, not accepted)."""
    t = type(v)
    if v is None:
        return ("null",)
    if t is bool:
        return ("bool", v)
    if t is int:
        return ("int", v)
    if t is float:
        return ("float", v.hex())  # type: ignore[attr-defined]  # exact, tells -0.0 from 0.0
    if t is str:
        return ("str", v)
    if isinstance(v, enum.Enum):
        return ("enum", type(v).__name__, v.value)
    if isinstance(v, bytes | bytearray | memoryview):
        return ("bytes", bytes(v))
    if isinstance(v, datetime):
        # The wall time and the offset: the same instant in another zone differs, and
        # no arithmetic can overflow at year 1 or 9999.
        offset = v.utcoffset()
        zone = "naive" if offset is None else f"UTC{offset.total_seconds():+g}s"
        return ("ts", v.replace(tzinfo=None).isoformat(), zone)
    if isinstance(v, list | tuple):
        return ("list", [strict_form(x) for x in v])
    if isinstance(v, Mapping):
        # JSON objects are unordered: a dict of tagged keys compares regardless of order.
        return ("map", {strict_form(k): strict_form(x) for k, x in v.items()})
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: strict_form(getattr(v, f.name)) for f in dataclasses.fields(v)}
        return ("model", type(v).__name__, fields)
    raise TypeError(f"unexpected value in a model or JSON value: {v!r} ({t.__name__})")


def _show(form: Any) -> str:
    tag = form[0]
    if tag == "float":
        text = f"float {float.fromhex(form[1])!r}"
    elif tag in ("list", "map"):
        text = f"{'array' if tag == 'list' else 'object'} of {len(form[1])}"
    elif tag == "model":
        text = form[1]
    else:
        text = " ".join([tag, *(repr(x) for x in form[1:])])
    return text if len(text) <= 200 else text[:200] + "..."


def _walk(e: Any, a: Any, where: str) -> list[str]:
    if e == a:
        return []
    tag = e[0]
    if tag != a[0] or (tag == "model" and e[1] != a[1]):
        return [f"{where or '/'}: expected {_show(e)}, got {_show(a)}"]
    if tag == "list":
        if len(e[1]) != len(a[1]):
            return [f"{where or '/'}: expected {len(e[1])} items, got {len(a[1])}"]
        out: list[str] = []
        for i, (x, y) in enumerate(zip(e[1], a[1], strict=True)):
            out += _walk(x, y, f"{where}/{i}")
        return out
    if tag == "map":
        missing = [k[1] for k in e[1] if k not in a[1]]
        extra = [k[1] for k in a[1] if k not in e[1]]
        out = [f"{where or '/'}: keys {missing!r} missing"] if missing else []
        out += [f"{where or '/'}: keys {extra!r} not written"] if extra else []
        for k in (k for k in e[1] if k in a[1]):  # in the written order: stable messages
            out += _walk(e[1][k], a[1][k], f"{where}/{k[1]!r}")
        return out
    if tag == "model":
        out = []
        for name in e[2]:
            out += _walk(e[2][name], a[2][name], f"{where}/{name}")
        return out
    return [f"{where or '/'}: expected {_show(e)}, got {_show(a)}"]


def strict_diff(expected: object, actual: object) -> list[str]:
    """Every difference between ``expected`` and ``actual``, by path; [] = identical."""
    return _walk(strict_form(expected), strict_form(actual), "")


def assert_same(expected: object, actual: object) -> None:
    """Fail with every difference unless ``actual`` is exactly ``expected``."""
    problems = strict_diff(expected, actual)
    if problems:
        pytest.fail("stored value differs from what was written:\n" + "\n".join(problems),
                    pytrace=False)
    if isinstance(expected, Envelope):
        # And the kit's own equality (diff-based) agrees.
        assert actual == expected


# ---------------------------------------------------------------- envelopes

ID_A = "01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
ID_B = "01J2ZK7Q8XW5H3N9G4T6B8RDQ1"
ID_C = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"

T1970 = datetime(1970, 1, 1, tzinfo=UTC)
T9999 = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
TMID = datetime(2026, 7, 20, 14, 3, 22, 117_000, tzinfo=UTC)
TLATER = datetime(2026, 7, 20, 14, 3, 22, 950_000, tzinfo=UTC)
ASTRAL = "\U0001F600\U0010FFFF"
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def every_json_type(tag: str) -> dict[str, Any]:
    """Unknown-field values of every JSON type, with the values stores get wrong (C5, C9, C10)."""
    return {
        f"{tag}_null": None,
        f"{tag}_true": True,
        f"{tag}_false": False,
        f"{tag}_zero": 0,
        f"{tag}_int64_min": INT64_MIN,
        f"{tag}_int64_max": INT64_MAX,
        f"{tag}_2_53_plus_1": 2**53 + 1,
        f"{tag}_denormal": 5e-324,
        f"{tag}_neg_zero": -0.0,
        f"{tag}_one_float": 1.0,
        f"{tag}_tenth": 0.1,
        f"{tag}_max_double": 1.7976931348623157e308,
        f"{tag}_pi": 3.141592653589793,
        f"{tag}_str": f"nul\x00{ASTRAL} trailing ",
        f"{tag}_str_rtl": "nul\x00 astral\U0001f600 rtl\u202e end",
        f"{tag}_empty_str": "",
        f"{tag}_empty_list": [],
        f"{tag}_empty_obj": {},
        f"{tag}_nested": {"": [1, -0.0, [None, {"\x00": "x"}], "é"], "A": {"a": [[]]}},
        f"{tag}_deep": {
            "": {"\x00": [True, None, [], {}, -1, 2.5]},
            "A": 1,
            "a": [{"deep": [[[INT64_MIN]]]}],
        },
        "A": 1,
        "a": 2,
    }


def awkward_envelope(id: str | None = None) -> Envelope:
    """Every pitfall with content: every field set, every awkward value at every level
    that has unknown fields. ``awkward_empty_envelope`` is its twin of empties and nulls."""
    detail: JSONValue = {"k": [None, True, 0, INT64_MIN, INT64_MAX, 5e-324, -0.0, 1.0, "\x00", {}]}
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


def awkward_empty_envelope(id: str | None = None) -> Envelope:
    """The awkward values in their empty and null forms: the empty payload (C7), ""
    that is not null (C9), a null lease, DEAD, errors with nothing in them."""
    return Envelope(
        id=id or new_id(),
        queue="payments.charge-v2_x",
        handler_ref="charge-payment",
        handler_version="",
        payload=b"",
        payload_content_type="application/x\x00\U0001f600",
        status=Status.DEAD,
        created_at=T1970,
        next_attempt_at=T9999,
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
                started_at=TMID,
                finished_at=TLATER,
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(
                    type="java.net.SocketTimeoutException",
                    message="connect timed out \x00 \U0001f600",
                    detail={"retry_in_ms": 500, "null": None, "big": INT64_MAX},
                    stack="at a\n\tat b\x00",
                    extra={**every_json_type("u"), "payload_ref": "s3://bucket/key"},
                ),
                extra={"a_null": None, "a_list": [INT64_MIN, 5e-324]},
            ),
            Attempt(attempt_no=1, started_at=TMID, outcome=Outcome.SUCCESS),
            Attempt(
                attempt_no=1,
                started_at=T1970,
                finished_at=None,
                outcome=Outcome.LEASE_EXPIRED,
                error=ErrorInfo(type="", message="", detail=None, stack=None, extra={}),
            ),
            Attempt(
                attempt_no=1,
                started_at=T9999,
                finished_at=T9999,
                outcome=Outcome.PERMANENT_FAILURE,
                error=ErrorInfo(type="E", message="m", detail="", stack="", extra={"e": {}}),
                extra={"": ""},
            ),
        ),
        extra={**every_json_type("u"), "payload_ref": "s3://bucket/key"},
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
        created_at=TLATER,
        headers={"a": "only"},
        attempts=(Attempt(attempt_no=7, started_at=TLATER, outcome=Outcome.SUCCESS),),
        extra={"u_null": 0},
    )


def near_limit_envelope() -> Envelope:
    """An envelope whose compact JSON is just under the 1 MiB limit (C2).

    Most of it is payload; a full 65,536-byte stack and a 4,096-byte message ride
    along so the large-text columns are exercised too.
    """
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


# ---------------------------------------------------------------- storages


def resolve_options(module: ModuleType) -> dict[str, str]:
    """What the kit would hand the plugin with no --rdq-option: env, else default."""
    return {
        spec.name: os.environ.get(spec.env, spec.default or "") if spec.env
        else (spec.default or "")
        for spec in module.rdq_storage_options()
    }


class Namespaces:
    """Unique namespaces for one storage fixture (servers are shared with other runs)."""

    def __init__(self, label: str) -> None:
        self.prefix = f"h3b{label}{secrets.token_hex(3)}"
        self.used: list[str] = []

    def new(self) -> str:
        ns = f"{self.prefix}_{len(self.used)}"
        self.used.append(ns)
        return ns


Live = tuple[Storage, Namespaces]


class StorageContract:
    """Behaviour every example plugin must show. A subclass sets ``expected_info`` and
    provides the fixtures ``live`` -> (Storage, Namespaces) and ``reopen`` -> a callable
    opening another Storage on the same store (the test closes it)."""

    expected_info: ClassVar[StorageInfo]

    def test_info(self, live: Live) -> None:
        assert isinstance(live[0], Storage)
        assert live[0].info == self.expected_info

    def test_awkward_round_trip(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        for env in (awkward_envelope(), awkward_empty_envelope()):
            adapter.write(env)
            assert_same(env, adapter.read(env.id))

    def test_null_empty_and_absent_stay_apart(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        cases = [
            minimal_envelope(),
            minimal_envelope(payload=b"\x00\xff\x00"),
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

    def test_read_missing(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        assert adapter.read(ID_C) is None
        adapter.write(minimal_envelope(ID_B))
        assert adapter.read(ID_C) is None
        assert adapter.read(new_id()) is None
        assert adapter.read(ID_B.lower()) is None  # ids are case-sensitive text
        assert adapter.read("") is None
        assert adapter.read("x\x00") is None

    def test_write_replaces_wholly(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        for full in (awkward_envelope(), awkward_empty_envelope()):
            bare = minimal_envelope(full.id)
            for env in (full, bare, full, replacement_for(full), full, bare):
                adapter.write(env)
                assert_same(env, adapter.read(env.id))
            # A replaced envelope with fewer headers/attempts keeps none of the old ones.
            fewer = dataclasses.replace(full, headers={"a": "1"}, attempts=full.attempts[1:2],
                                        extra={"only": 1})
            adapter.write(full)
            adapter.write(fewer)
            assert_same(fewer, adapter.read(full.id))

    def test_write_replaces_only_its_id(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        adapter.write(awkward_envelope(ID_A))
        adapter.write(awkward_empty_envelope(ID_C))
        adapter.write(replacement_for(awkward_envelope(ID_A)))
        assert_same(awkward_empty_envelope(ID_C), adapter.read(ID_C))

    def test_many_envelopes(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        ids = [f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}" for i in range(50)]
        for i, id in enumerate(ids):
            adapter.write(awkward_empty_envelope(id) if i % 2 else minimal_envelope(id))
        for i, id in enumerate(ids):
            expected = awkward_empty_envelope(id) if i % 2 else minimal_envelope(id)
            assert_same(expected, adapter.read(id))

    def test_many_envelopes_keep_their_own_children(self, live: Live) -> None:
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

    def test_namespaces_are_isolated(self, live: Live) -> None:
        storage, spaces = live
        ns1, ns2 = spaces.new(), spaces.new()
        one, two = storage.open(ns1), storage.open(ns2)
        env = awkward_envelope()
        other = minimal_envelope(env.id, queue="other")  # same id, other namespace
        one.write(env)
        assert two.read(env.id) is None
        two.write(other)
        assert_same(env, one.read(env.id))
        assert_same(other, two.read(env.id))

    def test_drop_removes_one_namespace_only(self, live: Live) -> None:
        storage, spaces = live
        ns1, ns2 = spaces.new(), spaces.new()
        one, two = storage.open(ns1), storage.open(ns2)
        one.write(awkward_envelope(ID_A))
        one.write(minimal_envelope(ID_B))
        two.write(awkward_empty_envelope(ID_A))
        storage.drop(ns1)
        assert storage.open(ns1).read(ID_A) is None
        assert_same(awkward_empty_envelope(ID_A), two.read(ID_A))
        storage.drop(ns1)  # twice: not an error
        storage.drop(spaces.prefix + "_never_opened")  # unknown namespace: not an error
        fresh = storage.open(ns1)
        assert fresh.read(ID_A) is None
        assert fresh.read(ID_B) is None
        fresh.write(minimal_envelope(ID_B))
        assert_same(minimal_envelope(ID_B), storage.open(ns1).read(ID_B))
        assert_same(awkward_empty_envelope(ID_A), two.read(ID_A))

    def test_caller_mutation_after_write_does_not_reach_the_store(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        nested: dict[str, Any] = {"x": [1, {"y": None}]}
        env = minimal_envelope(ID_B, extra={"nested": nested})
        adapter.write(env)
        nested["x"][1]["y"] = "changed"
        nested["new"] = True
        expected = minimal_envelope(ID_B, extra={"nested": {"x": [1, {"y": None}]}})
        read = adapter.read(ID_B)
        assert_same(expected, read)
        # Mutating what was read does not reach the store either.
        assert read is not None
        read_nested: Any = read.extra["nested"]
        read_nested["x"].append(2)
        assert_same(expected, adapter.read(ID_B))

    def test_unsupported_version_is_refused(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        assert storage.info.envelope_versions == frozenset({1})
        for version in (0, 2):
            env = minimal_envelope(envelope_version=version)
            with pytest.raises(StorageError) as info:
                adapter.write(env)
            assert info.value.code == ErrorCode.UNSUPPORTED_ENVELOPE_VERSION
            assert "envelope_version" in info.value.message
            assert adapter.read(env.id) is None  # nothing was stored
        # A rejected rewrite leaves the stored version alone.
        env = minimal_envelope()
        adapter.write(env)
        with pytest.raises(StorageError):
            adapter.write(dataclasses.replace(env, envelope_version=2, queue="changed"))
        assert_same(env, adapter.read(env.id))

    @pytest.mark.parametrize("namespace", ["", "Upper", "1abc", "a-b", "a" * 41, "ns\x00"])
    def test_invalid_namespace_is_refused(self, live: Live, namespace: str) -> None:
        with pytest.raises(ValueError, match="namespace="):
            live[0].open(namespace)

    def test_near_one_mib_envelope(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = near_limit_envelope()
        adapter.write(env)
        assert_same(env, adapter.read(env.id))

    def test_durable_through_fresh_storage_as_claimed(
        self, live: Live, reopen: Callable[[], Storage]
    ) -> None:
        """Another Storage on the same store sees the data exactly when the plugin
        claims "durable" (memory: each open starts empty)."""
        storage, spaces = live
        ns = spaces.new()
        env = awkward_envelope()
        storage.open(ns).write(env)
        fresh = reopen()
        try:
            if "durable" in storage.info.capabilities:
                assert_same(env, fresh.open(ns).read(env.id))
            else:
                assert fresh.open(ns).read(env.id) is None
        finally:
            fresh.close()


class AdapterOutlivesDrop:
    """Mixed into the contract of the plugins whose adapter, opened before its namespace
    was dropped, keeps working on the emptied namespace. C14 does not require it (the
    postgres adapter fails once its schema is gone); the plugins that do it keep doing it."""

    def test_adapter_opened_before_a_drop_keeps_working(self, live: Live) -> None:
        storage, spaces = live
        ns = spaces.new()
        one = storage.open(ns)
        one.write(awkward_envelope(ID_A))
        one.write(minimal_envelope(ID_B))
        storage.drop(ns)
        assert one.read(ID_A) is None
        assert one.read(ID_B) is None
        one.write(minimal_envelope(ID_B))
        assert_same(minimal_envelope(ID_B), storage.open(ns).read(ID_B))
        assert_same(minimal_envelope(ID_B), one.read(ID_B))
        assert one.read(ID_A) is None


class ServerStorageContract(StorageContract):
    """The contract plus what a server lets us check behind the plugin's back: the
    fixture ``leftovers`` -> callable(namespace) -> the server objects still present."""

    def test_drop_leaves_nothing(
        self, live: Live, leftovers: Callable[[str], list[Any]]
    ) -> None:
        storage, spaces = live
        ns = spaces.new()
        adapter = storage.open(ns)
        for _ in range(3):
            adapter.write(awkward_envelope())
        assert leftovers(ns), "the check itself must see the namespace's data"
        storage.drop(ns)
        assert leftovers(ns) == []


__all__ = [
    "ID_A",
    "ID_B",
    "ID_C",
    "INT64_MAX",
    "INT64_MIN",
    "AdapterOutlivesDrop",
    "Live",
    "Namespaces",
    "ServerStorageContract",
    "StorageContract",
    "assert_same",
    "awkward_empty_envelope",
    "awkward_envelope",
    "every_json_type",
    "minimal_envelope",
    "near_limit_envelope",
    "replacement_for",
    "resolve_options",
    "strict_diff",
    "strict_form",
]
