"""What a read that found the wrong thing broke: from what the test did before it
(``Namespaces.semantics``, issue 21 §1: storage-semantics failures get a cause of their
own requirement, not the requirement of whichever test happened to read)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rdq_compliance import ErrorCode, Status, StorageError, diff
from rdq_compliance._requirements import get_requirement
from rdq_compliance.envelope._diagnosis import find_rule
from rdq_compliance.testing import T0, CheckFailed, base_envelope, with_attempt, with_error
from rdq_compliance.testing._context import KitSettings
from rdq_compliance.testing._handle import Rdq
from rdq_compliance.testing._owned_namespaces import Namespaces
from rdq_compliance.testing._symptoms import _what_differs, symptom_of

from ._fake_plugin import Plugin
from ._fake_runtime import started_runtime


def semantics(history: list[tuple[str, str, str]], name: str, id: str, *, found: bool) -> str:
    owner = Namespaces(SimpleNamespace())  # type: ignore[arg-type]  # only its history is read
    owner.history.extend(history)
    return owner.semantics(name, id, found=found)


def W(name: str, id: str) -> tuple[str, str, str]:
    return ("write", name, id)


def D(name: str) -> tuple[str, str, str]:
    return ("drop", name, "")


R = ("restart", "", "")


@pytest.mark.parametrize(("history", "name", "id", "found", "expected"), [
    # found something where nothing was written
    ([W("a", "1"), D("a")], "a", "1", True, "survived-drop"),  # a drop left it
    ([W("a", "1")], "b", "1", True, "leaked"),  # written in another namespace only
    ([W("a", "1")], "a", "2", True, "absent"),  # never written anywhere
    ([], "a", "1", True, "absent"),
    # found nothing where an envelope was written
    ([W("a", "1"), D("b")], "a", "1", False, "taken-by-drop"),
    ([W("a", "0"), D("a"), W("a", "1")], "a", "1", False, "lost-after-drop"),
    ([W("a", "1"), W("a", "2")], "a", "1", False, "overwritten"),
    ([W("a", "1"), R], "a", "1", False, "not-durable"),  # closed and opened again
    ([R, W("a", "1")], "a", "1", False, ""),  # a restart before the write tells nothing
    ([W("a", "1"), W("b", "2")], "a", "1", False, ""),  # nothing tells: the test's own
    ([W("a", "1")], "a", "1", False, ""),
    # a drop before the write, in another namespace, tells nothing
    ([D("b"), W("a", "1")], "a", "1", False, ""),
])
def test_semantics_from_the_history(
    history: list[tuple[str, str, str]], name: str, id: str, found: bool, expected: str
) -> None:
    assert semantics(history, name, id, found=found) == expected


def _probe(answer: bool | None) -> Any:
    def overwrites() -> bool | None:
        return answer
    return overwrites


def _never() -> bool | None:
    raise AssertionError("probed where the history tells alone")


@pytest.mark.parametrize(("history", "answer", "expected"), [
    # another namespace dropped and another id written since: the probe tells which
    ([W("a", "1"), W("a", "2"), D("b")], True, "overwritten"),
    ([W("a", "1"), W("a", "2"), D("b")], False, "taken-by-drop"),
    ([W("a", "1"), D("b"), W("a", "2")], None, "taken-by-drop"),  # it told nothing
    ([D("a"), W("a", "1"), W("a", "2")], True, "overwritten"),
    ([D("a"), W("a", "1"), W("a", "2")], False, "lost-after-drop"),
    ([W("a", "1"), W("a", "2"), R], True, "overwritten"),  # RDQ-RT-003's test, too
    ([W("a", "1"), W("a", "2"), R], False, "not-durable"),
])
def test_a_probe_tells_a_drop_from_an_overwrite(
    history: list[tuple[str, str, str]], answer: bool | None, expected: str
) -> None:
    """RDQ-RT-002 / RDQ-ST-004: a key without the id keeps one envelope per namespace, and
    RDQ-ST-004's test, which drops one namespace after writing two ids to the other, then
    finds the first gone. Either could have taken it; a probe (two fresh ids written, the
    first read back) tells. Where the history tells alone, no probe runs."""
    owner = Namespaces(SimpleNamespace())  # type: ignore[arg-type]
    owner.history.extend(history)
    assert owner.semantics("a", "1", found=False, overwrites=_probe(answer)) == expected
    owner.history[:] = [W("a", "1"), D("b")]
    assert owner.semantics("a", "1", found=False, overwrites=_never) == "taken-by-drop"
    owner.history[:] = [W("a", "1"), W("a", "2")]
    assert owner.semantics("a", "1", found=False, overwrites=_never) == "overwritten"


@pytest.mark.parametrize("keeps_one", [True, False])
def test_the_overwrite_probe_on_a_store(keeps_one: bool) -> None:
    """The probe itself, on a store that keeps every id and on one that keeps the last
    envelope written to a namespace: the read that failed names the one it found."""
    rdq, storage = _handle("RDQ-ST-004")
    a, b = rdq.namespace(), rdq.namespace()
    first, second = base_envelope(1), base_envelope(2)
    a.write(first)
    a.write(second)
    b.write(first)
    rdq.drop(b.name)
    if keeps_one:
        adapter = a.adapter
        write = adapter.write

        def write_one(env: Any) -> None:  # the namespace's one row, whatever the id
            storage.data.get(a.name, {}).clear()
            write(env)

        adapter.write = write_one
    del storage.data[a.name][first.id]  # what either defect did before the read
    with pytest.raises(CheckFailed) as gone:
        a.expect(first.id, first)
    assert gone.value.symptom is not None
    assert gone.value.symptom.difference == ("overwritten" if keeps_one else "taken-by-drop")
    rdq.teardown()


def test_a_peek_names_a_cause_and_never_fails_the_test() -> None:
    """``Namespace.peek``, what the concurrency checks read to tell where a write landed:
    the envelope stored, else None: nothing stored, a refusal, an exception or a value
    that is no envelope, none of which fails the test (its check has failed already)."""
    rdq, _ = _handle("RDQ-CC-004")
    ns = rdq.namespace()
    env = base_envelope(1)
    ns.write(env)
    assert ns.peek(env.id) == env
    assert ns.peek(base_envelope(2).id) is None
    adapter = ns.adapter
    for answer in (StorageError(ErrorCode.UNAVAILABLE, "down"), RuntimeError("boom"), "text"):
        def read(id: str, answer: Any = answer) -> Any:
            if isinstance(answer, Exception):
                raise answer
            return answer

        adapter.read = read
        try:
            got = ns.peek(env.id)
        except BaseException as exc:  # an outage's skip too: it would hide the failure
            pytest.fail(f"peek raised {exc!r} for a read answering {answer!r}")
        assert got is None, answer
    rdq.teardown()


def test_an_invalid_read_is_classed_by_what_differs() -> None:
    """An invalid value read where a value was written says more than "invalid" when
    the written value tells (issue 21 §2): null for the empty map is the headers', an
    integer pushed past 64 bits a number changed, an aware instant off by microseconds or
    null where one was written (an in-flight task's lease, created_at) an instant changed;
    a naive datetime, or 1.0 for 1, stays the model's (RDQ-RT-004)."""
    env = base_envelope(1, headers={}, payload=b"", extra={"n": 2**63 - 1},
                        status=Status.IN_FLIGHT, lease_expires_at=T0)
    t = env.created_at
    cases = [
        ("/headers", dict(headers=None), "empty-null"),
        ("/payload", dict(payload=None), "bytes"),
        ("/n", dict(extra={"n": 2**63}), "number"),
        ("/attempt_count", dict(attempt_count=1.0), "invalid"),
        ("/created_at", dict(created_at=t.replace(microsecond=t.microsecond + 3)), "instant"),
        ("/created_at", dict(created_at=t.replace(tzinfo=None)), "invalid"),
        ("/created_at", dict(created_at=datetime(2026, 1, 1, tzinfo=UTC)), "instant"),
        ("/created_at", dict(created_at=None), "instant"),
        ("/lease_expires_at", dict(lease_expires_at=None), "instant"),
        ("/queue", dict(queue=7), "invalid"),
    ]
    for pointer, changes, expected in cases:
        got = dataclasses.replace(env, **changes)  # the model does not check types: reads may
        assert _what_differs(pointer, env, got) == expected, (pointer, changes)


@pytest.mark.parametrize("written, read, moved", [
    (["b", "a", "b"], ["a", "b"], True),  # a String Set: sorted, each value once
    ([2, 1, 2], [1, 2], True),
    ([0.0, -0.0, 1], [-0.0, 1], True),  # a Number Set keeps one zero
    ([[2], [1]], [[1], [2]], False),  # arrays of arrays: left to the diff (sets hold scalars)
    (["b", "a"], ["a", "b"], True),
    (["b", "a", "b"], ["a", "c"], False),  # a value changed, not moved
    ([1, 1, 2], [1, 2, 2], False),  # as many items, other repeats: not the same values
])
def test_an_array_kept_as_a_set_is_one_class_at_every_level(
        written: list[Any], read: list[Any], moved: bool) -> None:
    """The items of an array inside unknown fields or detail that came back reordered or
    with repeats dropped (a DynamoDB String Set, a Redis SET) are RDQ-UF-001's, at the top,
    in an attempt, in the error and in detail: one class, whatever item differs first."""
    places = {
        "/x": lambda v: base_envelope(5, extra={"x": v}),
        "/attempts/0/x": lambda v: with_attempt(base_envelope(5), extra={"x": v}),
        "/attempts/0/error/x": lambda v: with_error(base_envelope(5), extra={"x": v}),
        "/attempts/0/error/detail/x": lambda v: with_error(base_envelope(5), detail={"x": v}),
    }
    for at, build in places.items():
        expected, actual = build(written), build(read)
        found = diff(expected, actual)
        symptom = symptom_of(found[0], "C10", [], expected=expected, actual=actual, found=found)
        assert (symptom.difference == "items-reordered") is moved, (at, symptom)
        if moved:
            assert symptom.pointer == at, symptom
            rule = find_rule(symptom.pattern, symptom.difference)
            assert rule is not None and rule.requirement == "RDQ-UF-001", (at, rule)


@pytest.mark.parametrize("written, read", [("5", 5), ("null", None), ('"a"', "a"),
                                           ('{"k": [1]}', {"k": [1]}), ("true", True)])
def test_a_string_read_back_as_the_json_it_holds_is_one_change(written: str, read: Any) -> None:
    """A store that tries json.loads on every value it reads turns a string holding JSON
    into that JSON, whatever type comes out (a Redis hash field per unknown field): one
    class and one nature, so one cause, not a type change per type and a string change."""
    expected = base_envelope(5, extra={"x": written})
    actual = base_envelope(5, extra={"x": read})
    found = diff(expected, actual)
    symptom = symptom_of(found[0], "C10", [], expected=expected, actual=actual, found=found)
    assert (symptom.difference, symptom.change) == ("type", "JSON-decoded"), symptom
    assert "a string holding JSON came back as that JSON" in symptom.summary
    # a string "null" lost with its key is a lost field, not one read as null
    lost = base_envelope(5, extra={})
    found = diff(expected, lost)
    symptom = symptom_of(found[0], "C10", [], expected=expected, actual=lost, found=found)
    assert symptom.difference == "missing", symptom


def _handle(requirement: str) -> tuple[Rdq, Any]:
    """A test's handle on the in-memory fake plugin, and the fake's storage."""
    runtime = started_runtime(Plugin(), 5.0)
    item: Any = SimpleNamespace(name="test_x", originalname="test_x")
    settings = KitSettings(("fake",), "quick", 0, 5.0, Path("unused"), None)
    return Rdq(item, get_requirement(requirement), runtime, settings), runtime.storage


def test_a_read_of_another_namespaces_envelope_is_a_leak_not_a_changed_value() -> None:
    """RDQ-ST-003 / RDQ-ST-008 (C14): two namespaces of one test wrote different envelopes
    under one id, and a read in the first returned the second's (a key prefix cut short,
    the namespace left out of the key). That is the names taken for one another, "leaked",
    not whatever field the two envelopes differ in; a value changed otherwise stays a
    difference of that value."""
    rdq, storage = _handle("RDQ-ST-008")
    first, second = rdq.namespace(), rdq.namespace()
    mine = base_envelope(1, queue="queue-of-the-first")
    theirs = dataclasses.replace(mine, queue="queue-of-the-second")
    first.write(mine)
    second.write(theirs)
    storage.data[first.name][mine.id] = storage.data[second.name][mine.id]  # a collision
    with pytest.raises(CheckFailed, match=f"in namespace {second.name!r}") as leaked:
        first.expect(mine.id, mine)
    assert leaked.value.symptom is not None and leaked.value.symptom.difference == "leaked"
    storage.data[first.name][mine.id] = dataclasses.replace(mine, queue="queue-of-the-firs")
    with pytest.raises(CheckFailed) as changed:
        first.expect(mine.id, mine)
    assert changed.value.symptom is not None and changed.value.symptom.pattern == "/queue"
    rdq.teardown()


def test_a_read_that_only_lost_fields_is_no_leak() -> None:
    """RDQ-UF-001 (C10): a store that drops unknown fields reads back, of an envelope
    written with them, exactly what another namespace was written without them. That is
    its own loss, not the other namespace's envelope: only a read that holds something
    its envelope did not is a leak."""
    rdq, storage = _handle("RDQ-UF-001")
    first, second = rdq.namespace(), rdq.namespace()
    bare = base_envelope(1, extra={})
    first.write(dataclasses.replace(bare, extra={"x_top": "t"}))
    second.write(bare)
    storage.data[first.name][bare.id] = bare  # the unknown field dropped
    with pytest.raises(CheckFailed) as lost:
        first.expect(bare.id, dataclasses.replace(bare, extra={"x_top": "t"}))
    assert lost.value.symptom is not None
    assert (lost.value.symptom.difference, lost.value.symptom.pattern) == ("missing", "/*")
    rdq.teardown()


def test_a_read_of_an_unwritten_id_that_finds_another_ids_envelope_is_other_id() -> None:
    """RDQ-RT-002 (C13): a key cut short (CHAR(20) of a 26-character id) makes ids that
    share a prefix one: a read of an id never written returns its neighbour's envelope.
    The same defect as a written id reading its neighbour's ("other-id"), not "absent"
    (RDQ-ST-002) or, where the id was written elsewhere, "leaked" (RDQ-ST-006)."""
    rdq, storage = _handle("RDQ-ST-002")
    ns, other = rdq.namespace(), rdq.namespace()
    written, unwritten = base_envelope(1), base_envelope(2)
    ns.write(written)
    other.write(unwritten)  # the id exists elsewhere: once "leaked"
    storage.data[ns.name][unwritten.id] = written
    with pytest.raises(CheckFailed, match=f"written as id {written.id!r}") as found:
        ns.expect(unwritten.id, None)
    assert found.value.symptom is not None and found.value.symptom.difference == "other-id"
    storage.data[ns.name][unwritten.id] = dataclasses.replace(written, id=unwritten.id)
    with pytest.raises(CheckFailed) as absent:  # its own id: a read of nothing found one
        ns.expect(unwritten.id, None)
    assert absent.value.symptom is not None and absent.value.symptom.difference == "leaked"
    rdq.teardown()


@pytest.mark.parametrize("keeps_new", [True, False])
def test_a_value_an_earlier_version_held_is_the_rewrite_when_a_probe_says_so(
    keeps_new: bool,
) -> None:
    """RDQ-ST-001 (C13): a rewrite read back with the created_at of the version written
    first (an upsert that leaves the column). A store that mangles created_at could return
    the same value by itself, so a probe (the new version under a fresh id) tells: kept as
    written, the rewrite's defect ("stale"); changed there too, the instant's."""
    rdq, storage = _handle("RDQ-ST-001")
    ns = rdq.namespace()
    old = base_envelope(1)
    new = dataclasses.replace(old, created_at=old.created_at.replace(year=2027),
                              queue="emails.send")
    ns.write(old)
    ns.write(new)
    adapter = ns.adapter
    write = adapter.write

    def keep_created_at(env: Any) -> None:
        write(env if keeps_new else dataclasses.replace(env, created_at=old.created_at))

    adapter.write = keep_created_at
    storage.data[ns.name][old.id] = dataclasses.replace(new, created_at=old.created_at)
    with pytest.raises(CheckFailed) as kept:
        ns.expect(new.id, new)
    symptom = kept.value.symptom
    assert symptom is not None
    assert symptom.difference == ("stale" if keeps_new else "instant"), symptom
    if keeps_new:
        assert symptom.summary.startswith("kept from the version written before the rewrite")
    rdq.teardown()


def test_a_lease_error_type_changed_like_every_string_is_that_string_defect() -> None:
    """RDQ-RT-006 (C4): a store that lower-cases every error.type turns rdq.LeaseExpired
    into an invalid envelope (LEASE_EXPIRED_ERROR): the same string defect as every other
    type it lower-cased, not a cause of its own under RDQ-RT-004. Another value of a
    lease's error, or a violation with no rule on free text, stays "invalid"."""
    from rdq_compliance import ErrorInfo, Outcome
    from rdq_compliance.envelope._codes import ViolationCode

    env = base_envelope(1)
    lease = dataclasses.replace(env.attempts[0], outcome=Outcome.LEASE_EXPIRED,
                                error=ErrorInfo(type="rdq.LeaseExpired", message="m"))
    env = dataclasses.replace(env, attempts=(lease,))

    def read_with(type_: str) -> Any:
        error = dataclasses.replace(lease.error, type=type_)
        return dataclasses.replace(env, attempts=(dataclasses.replace(lease, error=error),))

    ptr = "/attempts/0/error/type"
    lowered = read_with("rdq.leaseexpired")
    assert _what_differs(ptr, env, lowered, ViolationCode.LEASE_EXPIRED_ERROR) == "text"
    assert _what_differs(ptr, env, read_with("rdq.Other"),
                         ViolationCode.LEASE_EXPIRED_ERROR) == "invalid"
    assert _what_differs(ptr, env, lowered, ViolationCode.FIELD_TYPE) == "invalid"


def test_a_read_too_large_by_what_the_store_added_names_the_addition() -> None:
    """RDQ-UF-001 (C10): an envelope written just under 1 MiB, read back with MongoDB's
    _id added, is past C2's limit. Nothing grew in place: the added field is the defect
    (the one of every other read of that store), not "invalid: PAYLOAD_TOO_LARGE"."""
    from rdq_compliance import MAX_ENVELOPE_BYTES, encode, validate
    from rdq_compliance.testing._symptoms import symptom_of_violation

    base = base_envelope(1, payload=b"")
    pad = MAX_ENVELOPE_BYTES - len(encode(base).encode()) - len(',"x_pad":""')
    env = dataclasses.replace(base, extra={"x_pad": "p" * pad})
    got = dataclasses.replace(env, extra={**env.extra, "_id": {"$oid": "0" * 24}})
    (violation,) = validate(got)
    s = symptom_of_violation(violation, "C2", [], expected=env, actual=got)
    assert (s.pattern, s.difference) == ("/*", "unexpected"), s
