"""Storage semantics: write replaces (C13), namespaces (C14), the size limit (C2),
a state machine of writes, rewrites, reads and drops checked against a plain
model, no eviction and no aliasing of the written object (C13a) (RDQ-ST-001 …
RDQ-ST-007, RDQ-ST-009, RDQ-ST-010; namespace names, RDQ-ST-008: test_namespaces.py)."""

from __future__ import annotations

import dataclasses
import random
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule

from rdq_compliance import (
    MAX_ENVELOPE_BYTES,
    Attempt,
    Envelope,
    ErrorCode,
    ErrorInfo,
    Outcome,
    Status,
    encode,
    validate,
)
from rdq_compliance.strategies import envelopes, ids
from rdq_compliance.suites._long_values import with_long
from rdq_compliance.suites._names import PAIRS, pair
from rdq_compliance.testing import (
    T0,
    Namespace,
    Rdq,
    base_envelope,
    requirement,
    ulid,
    with_attempt,
    with_error,
)


def _rich(n: int) -> Envelope:
    """An envelope with something in every place a rewrite must clear."""
    env = with_error(base_envelope(n, extra={"x_old": {"keep": False}, "payload_ref": "s3://x"}),
                     detail={"old": True}, extra={"x_old_error": 1})
    second = Attempt(attempt_no=2, started_at=T0, finished_at=T0,
                     outcome=Outcome.PERMANENT_FAILURE,
                     error=ErrorInfo(type="e.Old", message="old"), extra={"x_old_attempt": []})
    return dataclasses.replace(
        env, attempts=(*env.attempts, second), attempt_count=2,
        headers={**env.headers, "x-old": "1", "": "old empty key"},
        status=Status.IN_FLIGHT, lease_expires_at=T0 + timedelta(minutes=10),
    )


def _bare(n: int) -> Envelope:
    """The same id with nothing optional (no headers, attempts or unknown fields) and
    every required field other than ``_rich``'s: an upsert that leaves a column out
    (created_at kept as the insert time, queue as a partition key) fails too."""
    return base_envelope(n, handler_version=None, headers={}, attempts=(), attempt_count=0,
                         status=Status.SUCCEEDED, next_attempt_at=None, payload=b"",
                         queue="emails.send", handler_ref="send-email",
                         payload_content_type="text/plain", redrive_count=1,
                         created_at=T0 + timedelta(days=1))


@requirement("RDQ-ST-001")
@pytest.mark.parametrize("order", ["rich-then-bare", "bare-then-rich"])
def test_write_replaces(rdq: Rdq, order: str) -> None:
    """RDQ-ST-001 (C13): a second write with the same id wholly replaces the first:
    known fields, unknown fields, headers and attempts of the earlier version do not
    survive."""
    first, second = (_rich(51), _bare(51)) if order == "rich-then-bare" else (_bare(51),
                                                                              _rich(51))
    ns = rdq.namespace()
    ns.write(first)
    ns.write(second)
    ns.expect(second.id, second, why="the last write replaces the earlier one (C13)")


@requirement("RDQ-ST-001", carries=("RDQ-ST-002",))  # reads an id not written yet
def test_another_adapters_rewrite_is_read(rdq: Rdq) -> None:
    """RDQ-ST-001 (C13): ``read`` returns the last envelope written with that id in the
    namespace, whichever adapter wrote it. Two adapters are open on one namespace at once,
    as an rdq server's workers hold them: after both read an envelope, each in turn
    rewrites it and the other's next read returns the rewrite; an id one read as absent is
    found once the other wrote it. An adapter that answers from what it saw before (a
    long-lived ORM session's identity map, a connection left in the REPEATABLE READ
    snapshot its first read began) returns the earlier version."""
    name = rdq.new_name()
    a, b = rdq.namespace(name), rdq.namespace(name)
    first, second = _rich(62), _bare(62)
    third = dataclasses.replace(first, redrive_count=first.redrive_count + 3)
    a.write(first)
    a.expect(first.id, first)
    b.expect(first.id, first, why="the other adapter on this namespace wrote it")
    b.write(second)
    a.expect(second.id, second, why="the other adapter on this namespace rewrote it")
    a.write(third)
    b.expect(third.id, third, why="the other adapter on this namespace rewrote it")
    later = base_envelope(63)
    a.expect(later.id, None)
    b.write(later)
    a.expect(later.id, later, why="the other adapter on this namespace wrote it")


@requirement("RDQ-ST-001", kind="property")
def test_generated_rewrites_replace(rdq: Rdq) -> None:
    """RDQ-ST-001 (C13): generated pairs written under one id: the second one wins."""
    ns = rdq.namespace()

    def rewrite(first: Envelope, second: Envelope) -> None:
        second = dataclasses.replace(second, id=first.id)
        ns.write(first)
        ns.write(second)
        ns.expect(first.id, second, why="the last write replaces the earlier one (C13)")

    # Up to 3 attempts and unknown fields at every level: enough for the first write
    # to leave something behind that a merging store would keep.
    pairs = envelopes(max_attempts=3, max_payload_size=64)
    rdq.for_all(rewrite, budget="targeted", first=pairs, second=pairs)


@requirement("RDQ-ST-002")
def test_missing_id_reads_as_nothing(rdq: Rdq) -> None:
    """RDQ-ST-002 (C13): reading an id that was never written returns None, in an empty
    namespace and beside stored envelopes. The ids (near both ends of the range) are
    written by no kit test anywhere, so that a store leaking other namespaces' data fails
    RDQ-ST-003's test, not this one."""
    ns = rdq.namespace()
    ns.expect(ulid(52), None, why="nothing was written in this namespace")
    ns.write(base_envelope(53))
    for other in (ulid(52), ulid(54), "0" * 25 + "1", "7" + "Z" * 24 + "Y"):
        ns.expect(other, None, why=f"only {ulid(53)!r} was written")


@requirement("RDQ-ST-003")
def test_namespaces_are_isolated(rdq: Rdq) -> None:
    """RDQ-ST-003 (C14): what is written in one namespace is invisible in another, even
    under the same id."""
    a, b = rdq.namespace(), rdq.namespace()
    in_a = base_envelope(55)
    in_b = base_envelope(55, queue="other.queue", extra={"x": "b"})
    a.write(in_a)
    b.expect(in_a.id, None, why=f"it was written in namespace {a.name!r} only")
    b.write(in_b)
    a.expect(in_a.id, in_a, why=f"namespace {b.name!r} wrote the same id afterwards")
    b.expect(in_b.id, in_b)


@requirement("RDQ-ST-004")
def test_drop_removes_one_namespace_only(rdq: Rdq) -> None:
    """RDQ-ST-004 (C14): dropping a namespace removes all of its data and nothing else;
    the namespace can be used again afterwards, and a write there brings nothing of what
    was dropped back (a drop that only marks the namespace deleted, undone by the next
    write's upsert of the namespace row)."""
    a_name = rdq.new_name()
    a, b = rdq.namespace(a_name), rdq.namespace()
    shared, only_a, only_b = base_envelope(56), base_envelope(57), base_envelope(58)
    for env in (shared, only_a):
        a.write(env)
    for env in (shared, only_b):
        b.write(env)
    a.close()
    rdq.drop(a_name)
    again = rdq.namespace(a_name)
    for env in (shared, only_a):
        again.expect(env.id, None, why=f"namespace {a_name!r} was dropped")
    for env in (shared, only_b):
        b.expect(env.id, env, why=f"only namespace {a_name!r} was dropped")
    again.roundtrip(only_a)
    again.expect(shared.id, None, why=f"namespace {a_name!r} was dropped; another envelope "
                 "written there since brings nothing dropped back")


#: The payload of each of the two large envelopes RDQ-ST-004 adds to a namespace of
#: many: together past 1 MiB, the page a DynamoDB Query returns at most.
_PAGE_PAST = 600 * 1024


@requirement("RDQ-ST-004")
def test_drop_removes_a_namespace_of_many_envelopes(rdq: Rdq) -> None:
    """RDQ-ST-004 (C14): dropping a namespace of as many envelopes as RDQ-ST-009 writes
    (300 quick, 1,100 ci, 10,000 thorough), over 1 MiB in all, removes every one: a drop
    that deletes one page and forgets the rest (Redis SCAN without its cursor, DynamoDB's
    1 MiB Query page, DELETE … LIMIT 1,000 run once) leaves envelopes behind."""
    count = MANY[rdq.profile]
    name = rdq.new_name()
    ns, other = rdq.namespace(name), rdq.namespace()
    rng = random.Random(count)
    written = [base_envelope(20_000 + n) for n in range(count)]
    written += [base_envelope(20_000 + count + n, payload=rng.randbytes(_PAGE_PAST))
                for n in range(2)]
    for env in written:
        ns.write(env)
    kept = written[:3]
    for env in kept:
        other.write(env)
    ns.close()
    rdq.drop(name)
    again = rdq.namespace(name)
    for n, env in enumerate(written):
        again.expect(env.id, None, why=f"envelope {n + 1} of {len(written)} written to namespace "
                     f"{name!r}, which was dropped")
    for env in kept:
        other.expect(env.id, env, why=f"only namespace {name!r} was dropped")


_BELOW_TOP = ("detail", "attempt-unknown-field", "error-unknown-field")


def _filled(base: Envelope, size: int, seed: int) -> Envelope:
    """``base`` with a payload of random bytes that takes its compact encoding to at most
    ``size`` bytes, within 4 of it (base64: 4 characters for 3 bytes)."""
    size0 = len(encode(dataclasses.replace(base, payload=b"")).encode("utf-8"))
    k = ((size - size0) // 4) * 3
    return dataclasses.replace(base, payload=random.Random(seed).randbytes(k))


def _near_limit(n: int, kind: str) -> Envelope:
    """A valid envelope whose compact encoding is 1,040,000..1,048,576 bytes (C2)."""
    base = base_envelope(n, payload=b"")
    size0 = len(encode(base).encode("utf-8"))
    if kind == "exact-limit":
        env = _filled(base, MAX_ENVELOPE_BYTES - 100, n)
        gap = MAX_ENVELOPE_BYTES - len(encode(env).encode("utf-8"))
        # an unknown field appends ,"x_pad":"<pad>" : 11 bytes plus the pad
        env = dataclasses.replace(env, extra={"x_pad": "p" * (gap - 11)})
        assert len(encode(env).encode("utf-8")) == MAX_ENVELOPE_BYTES
    elif kind == "payload":
        env = _filled(base, MAX_ENVELOPE_BYTES - 2_000, n)
    elif kind == "multibyte-text":  # in an unknown field: bytes, not characters, count
        room = MAX_ENVELOPE_BYTES - 2_000 - size0
        env = dataclasses.replace(base, extra={"x_big": "\u20ac\U0001f600" * (room // 7)})
    else:  # multi-byte text below the top level (LONG_FIELDS: detail, unknown fields)
        size0 = len(encode(dataclasses.replace(with_long(kind, "", n), payload=b"")).encode())
        text = "\u20ac\U0001f600" * ((MAX_ENVELOPE_BYTES - 2_000 - size0) // 7)
        env = dataclasses.replace(with_long(kind, text, n), payload=b"")
    size = len(encode(env).encode("utf-8"))
    assert 1_040_000 <= size <= MAX_ENVELOPE_BYTES, (kind, size)
    assert validate(env) == [], kind
    return env


@requirement("RDQ-ST-005")
@pytest.mark.parametrize("kind", ["payload", "multibyte-text", "exact-limit", *_BELOW_TOP])
def test_near_one_mib_envelope(rdq: Rdq, kind: str) -> None:
    """RDQ-ST-005 (C2, C17): a valid envelope whose compact encoding is just under (or
    exactly) 1,048,576 bytes is accepted and round-trips: its bulk in the payload, in an
    unknown field, or in error.detail or an unknown field of an attempt or of its error
    (where a store keeping that part in a 64 KiB TEXT column of its own loses it)."""
    rdq.namespace().roundtrip(_near_limit(59, kind))


def _past_limit(earlier: Envelope) -> Envelope:
    """``earlier`` rewritten with a payload that takes its compact encoding 64 KiB past
    C2's 1 MiB: a write a plugin may refuse (PAYLOAD_TOO_LARGE, C17)."""
    return _filled(dataclasses.replace(earlier, queue="other.queue"),
                   MAX_ENVELOPE_BYTES + 65_536, 62)


@requirement("RDQ-ST-005")
def test_a_refused_oversized_rewrite_leaves_the_earlier_version(rdq: Rdq) -> None:
    """RDQ-ST-005 (C2, C17, C13): a rewrite of an id past 1 MiB may be refused; refused,
    it stores nothing, and the earlier version stays whole. A store that deletes the old
    row and then fails the INSERT for its size (two statements in autocommit, MySQL's
    ``max_allowed_packet``, a size CHECK) has lost it. A plugin that stores the rewrite
    has nothing to show here (C2 asks nothing past 1 MiB): not applicable."""
    ns = rdq.namespace()
    earlier = base_envelope(62)
    ns.write(earlier)
    rewrite = _past_limit(earlier)
    size = len(encode(rewrite).encode("utf-8"))
    refused = ns.write(rewrite, allow=frozenset(c.value for c in ErrorCode))
    if refused is None:
        rdq.not_applicable(f"the plugin stored a rewrite of {size:,} bytes, past C2's "
                           f"{MAX_ENVELOPE_BYTES:,}: no refusal to check")
    ns.expect(earlier.id, earlier, why=f"its rewrite of {size:,} bytes, past C2's 1 MiB, was "
              f"refused ({refused.code}): a refused write stores nothing (C13, C17)")


class _World:
    """Two namespaces of the plugin and the plain model they must agree with; their
    names have the ``shape`` of one of ``_names.PAIRS`` (C14: alike names)."""

    def __init__(self, rdq: Rdq, shape: str = "unrelated") -> None:
        self.rdq = rdq
        self.shape = shape
        self.names = pair(rdq, shape)
        self.ns: list[Namespace] = [rdq.namespace(n) for n in self.names]
        self.model: list[dict[str, Envelope]] = [{}, {}]
        self.ops: list[tuple[Any, ...]] = []

    def apply(self, op: tuple[Any, ...]) -> None:
        __tracebackhide__ = True
        self.ops.append(op)
        try:
            self._apply(op)
        except BaseException:
            self.rdq.example = ("machine", {"ops": list(self.ops), "shape": self.shape})
            raise

    def _apply(self, op: tuple[Any, ...]) -> None:
        __tracebackhide__ = True
        kind, i = op[0], op[1]
        name = self.names[i]
        if kind == "write":
            env = op[2]
            self.ns[i].write(env)
            self.model[i][env.id] = env
        elif kind == "read":
            expected = self.model[i].get(op[2])
            why = (f"step {len(self.ops)}: the model holds "
                   + ("this envelope" if expected else "nothing") + f" under this id in {name!r}")
            self.ns[i].expect(op[2], expected, why=why)
        elif kind == "drop":
            self.ns[i].close()
            self.rdq.drop(name)
            self.ns[i] = self.rdq.namespace(name)
            self.model[i] = {}
        elif kind == "reopen":
            self.ns[i].close()
            self.ns[i] = self.rdq.namespace(name)
        else:  # pragma: no cover - only the machine below builds ops
            raise ValueError(f"unknown op {kind!r}")

    def release(self) -> None:
        for name in self.names:
            self.rdq.release(name)


@requirement("RDQ-ST-006", kind="machine")
def test_state_machine_agrees_with_model(rdq: Rdq) -> None:
    """RDQ-ST-006 (C13, C14): random sequences of writes, rewrites, reads, adapter reopens
    and drops across two namespaces agree with a plain dict model. The two names are
    unrelated, or alike as C14 lists (a prefix of the other, a LIKE look-alike, equal in
    the first 32 characters)."""
    case = rdq.replay
    if case is not None and case.check == "machine":
        kwargs = case.example_kwargs()
        world = _World(rdq, kwargs.get("shape", "unrelated"))
        for op in kwargs["ops"]:
            world.apply(tuple(op))
        return

    namespaces = st.integers(0, 1)
    # What is stored matters less here than the order of operations: small but still
    # varied envelopes (unknown fields included), so that two versions of an id differ.
    stored = envelopes(max_attempts=1, max_payload_size=64)

    class StorageMachine(RuleBasedStateMachine):
        written = Bundle("written")

        def __init__(self) -> None:
            super().__init__()
            self._world: _World | None = None

        @initialize(shape=st.sampled_from(PAIRS))
        def names(self, shape: str) -> None:
            self._world = _World(rdq, shape)

        @property
        def world(self) -> _World:
            assert self._world is not None, "initialize runs before every rule"
            return self._world

        # Every write is read straight back as well: a store that loses writes
        # only in some state (after a drop, say) is caught at the first one.
        @rule(target=written, env=stored, i=namespaces)
        def write(self, env: Envelope, i: int) -> str:
            self.world.apply(("write", i, env))
            self.world.apply(("read", i, env.id))
            return env.id

        @rule(id=written, env=stored, i=namespaces)
        def rewrite(self, id: str, env: Envelope, i: int) -> None:
            self.world.apply(("write", i, dataclasses.replace(env, id=id)))
            self.world.apply(("read", i, id))

        @rule(id=written, i=namespaces)
        def read_written(self, id: str, i: int) -> None:
            self.world.apply(("read", i, id))

        @rule(id=ids(), i=namespaces)
        def read_other(self, id: str, i: int) -> None:
            self.world.apply(("read", i, id))

        # One rule for both, so that they are drawn less often than reads and writes.
        @rule(kind=st.sampled_from(["drop", "reopen"]), i=namespaces)
        def drop_or_reopen(self, kind: str, i: int) -> None:
            self.world.apply((kind, i))

        def teardown(self) -> None:
            if self._world is not None:
                self._world.release()

    rdq.run_machine(StorageMachine)


@requirement("RDQ-ST-007")
def test_dropping_an_empty_namespace_succeeds(rdq: Rdq) -> None:
    """RDQ-ST-007 (C14, SHOULD): dropping a namespace that holds nothing — never opened,
    or opened and left empty — succeeds, and the namespace reads as empty afterwards."""
    never_opened = rdq.new_name()
    rdq.drop(never_opened)
    empty = rdq.namespace()
    empty.close()
    rdq.drop(empty.name)
    rdq.namespace(empty.name).expect(ulid(60), None, why="the namespace was dropped")


# -- many envelopes in one namespace (C13a: no eviction) -------------------------------------

#: How many envelopes RDQ-ST-009 writes to one namespace before reading any back: at
#: ``ci`` past the common cache and list caps (1,000, 1,024: an LRU in front of a lossy
#: store passed 500), at ``thorough`` C13a's ten-thousandth.
MANY = {"quick": 300, "ci": 1_100, "thorough": 10_000}
_REWRITE_EVERY = 7


def _numbered(n: int, version: int) -> Envelope:
    """Envelope ``n`` of RDQ-ST-009 as of its ``version``-th write: every one differs in
    its timestamps (milliseconds), payload, headers, unknown fields and ``detail``."""
    rng = random.Random(n * 31 + version)
    env = with_error(
        base_envelope(
            1_000 + n,
            payload=rng.randbytes(rng.randrange(0, 48)),
            headers={"x-n": str(n), "x-version": str(version)},
            created_at=T0 + timedelta(milliseconds=n * 7 + version),
            extra={"x_n": n, "x_version": version, "x_float": n / 8},
        ),
        detail={"n": n, "version": version, "trace": [n, str(version)]},
    )
    return env


@requirement("RDQ-ST-009")
def test_many_envelopes_are_all_kept(rdq: Rdq) -> None:
    """RDQ-ST-009 (C13, C13a: no eviction): several hundred envelopes are written to one
    namespace, every seventh is then rewritten, and only then is every one read back:
    each returns its last write (a store that keeps only the latest few, or serves them
    from a bounded cache over a lossy store, fails)."""
    count = MANY[rdq.profile]
    ns = rdq.namespace()
    for n in range(count):
        ns.write(_numbered(n, 0))
    rewritten = range(0, count, _REWRITE_EVERY)
    for n in rewritten:
        ns.write(_numbered(n, 1))
    for n in range(count):
        version = 1 if n % _REWRITE_EVERY == 0 else 0
        ns.expect(ulid(1_000 + n), _numbered(n, version),
                  why=f"envelope {n + 1} of {count} written to this namespace"
                  + (" (rewritten after all of them)" if version else ""))


# -- what is stored is what was written (C13a) ------------------------------------------------


def _aliasable(n: int) -> Envelope:
    """An envelope with a mutable container in every place C13a names: headers, unknown
    fields at every level, ``detail`` (nested: a store that copies one level deep fails)."""
    env = with_error(
        base_envelope(n, extra={"x_obj": {"list": [1, {"k": "v"}], "empty": {}},
                                "x_list": [[], "s"]}),
        detail={"retry": [1, 2], "ctx": {"a": {}}},
        extra={"x_err": [{"a": 1}]},
    )
    return with_attempt(env, extra={"x_att": {"n": [1]}})


def _deface(value: Any) -> None:
    """Change every JSON container inside ``value`` in place, innermost first."""
    if isinstance(value, dict):
        for item in value.values():
            _deface(item)
        value["x_changed_by_caller"] = True
    elif isinstance(value, list):
        for item in value:
            _deface(item)
        value.append("changed by the caller")


def _change_written(env: Envelope) -> None:
    """What a caller may do to its own envelope object after ``write`` returned: change
    every container the model lets it change (the model objects themselves are frozen;
    ``attempts`` is a tuple)."""
    headers = env.headers
    if isinstance(headers, dict):
        headers.clear()
        headers["x-changed-by-caller"] = "yes"
    _deface(env.extra)
    for attempt in env.attempts:
        _deface(attempt.extra)
        if attempt.error is not None:
            _deface(attempt.error.detail)
            _deface(attempt.error.extra)


@requirement("RDQ-ST-010")
def test_changing_the_written_object_changes_nothing_stored(rdq: Rdq) -> None:
    """RDQ-ST-010 (C13a): after ``write`` returns, the kit changes the very object the
    plugin was given (its headers, unknown fields, ``detail``, nested values included):
    what is read back, before and after that change, is what was written.

    Python adapters only: a testee gets JSON text, through which it cannot keep a
    reference to the caller's object, so the requirement does not apply to it."""
    if rdq.out_of_process:
        rdq.not_applicable("C13a concerns Python adapters: a testee is sent JSON text and "
                           "cannot keep a reference to the kit's envelope object")
    ns = rdq.namespace()
    written = [_aliasable(n) for n in (90, 91, 92)]
    given: list[Envelope] = []
    for env in written:
        ns.write(env)
        assert ns.last_given is not None
        given.append(ns.last_given)
    # Read once before the change: a store that keeps the object and copies it on each
    # read still fails afterwards.
    ns.expect(written[0].id, written[0])
    for obj in given:
        _change_written(obj)
    for env in written:
        ns.expect(env.id, env, why="the kit changed the object it had passed to write, "
                  "after write returned (C13a: the stored envelope is the value at the call)")
