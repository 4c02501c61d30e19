"""The namespaces of an abandoned storage, in process: which ones the test hands to the
runtime (``Rdq.release`` / ``Rdq.teardown``) and how the runtime drops them through the
next storage (``PluginRuntime.ensure_usable`` / ``close``).

A fake plugin records every call with the number of the storage it reached; a drop
blocks (a hang) until the test ends.
"""

from __future__ import annotations

import pytest

from rdq_compliance.testing import CheckFailed, OperationHung, base_envelope
from rdq_compliance.testing._runtime import PluginRuntime

from ._gated_plugin import World, rdq_for


def drops(world: World, storage: int) -> list[str]:
    return [ns for op, n, ns in world.log if op == "drop" and n == storage]


def test_namespace_whose_drop_hung_in_release_is_dropped_through_the_next_storage(
    world: World, runtime: PluginRuntime
) -> None:
    rdq = rdq_for(runtime)
    kept, released = rdq.namespace().name, rdq.namespace().name
    world.hang_drops_on = {1}
    with pytest.raises(OperationHung):
        rdq.release(released)
    rdq.teardown()  # the storage is abandoned: nothing is called on it, nothing raised
    assert list(runtime.orphans) == [kept, released]
    runtime.ensure_usable()
    assert drops(world, 2) == [kept, released]
    assert not runtime.orphans and runtime.broken is None and runtime.dead is None
    runtime.close()
    assert not any("left behind" in n for n in runtime.notes)


def test_names_not_dropped_when_teardown_hung_go_to_the_runtime(
    world: World, runtime: PluginRuntime
) -> None:
    rdq = rdq_for(runtime)
    names = [rdq.namespace().name for _ in range(3)]
    world.hang_drops_on = {1}
    with pytest.raises(OperationHung):
        rdq.teardown()  # hangs on the first drop
    assert list(runtime.orphans) == names
    runtime.close()  # no test follows: the runtime reopens to drop them
    assert drops(world, 2) == names
    assert not any("left behind" in n for n in runtime.notes)


def test_names_that_cannot_be_dropped_are_named_once(
    world: World, runtime: PluginRuntime
) -> None:
    rdq = rdq_for(runtime)
    names = [rdq.namespace().name for _ in range(2)]
    world.hang_drops_on = {1, 2}  # the first fresh storage hangs too; the third works
    with pytest.raises(OperationHung):
        rdq.teardown()
    runtime.ensure_usable()
    assert drops(world, 2) == names[:1]  # one attempt; the rest is not tried after a hang
    assert runtime.storage is not None and runtime.broken is None  # storage 3, usable
    assert world.storages == 3
    runtime.close()
    left = [n for n in runtime.notes if "left behind" in n]
    assert left == [
        f"2 namespaces left behind in the store: a storage was abandoned after a hang and "
        f"the kit could not drop them ({names[0]!r}: storage.drop({names[0]!r}) did not "
        f"return within 0.2 s; {names[1]!r}: not attempted after that hang); drop them by "
        "hand (storage.drop(name)) or clear the store"
    ]


def test_names_are_left_behind_when_no_storage_can_be_opened(
    world: World, runtime: PluginRuntime
) -> None:
    rdq = rdq_for(runtime)
    name = rdq.namespace().name
    world.hang_drops_on = {1}
    world.open_fails_after = 1
    with pytest.raises(OperationHung):
        rdq.teardown()
    runtime.ensure_usable()
    assert runtime.dead is not None and runtime.storage is None
    runtime.close()
    (left,) = [n for n in runtime.notes if "left behind" in n]
    assert f"({name!r}: no storage to drop it on (plugin 'fake': rdq_storage_open(options) " \
           "raised RuntimeError: cannot reopen" in left


def test_a_refused_drop_does_not_keep_teardown_from_dropping_the_others(
    world: World, runtime: PluginRuntime
) -> None:
    rdq = rdq_for(runtime)
    handles = [rdq.namespace() for _ in range(3)]
    for n, ns in enumerate(handles):
        ns.write(base_envelope(n))
    names = [ns.name for ns in handles]
    world.refuse_drops = {names[0]}
    with pytest.raises(CheckFailed, match=r"storage\.drop\('.*'\) refused"):
        rdq.teardown()
    assert drops(world, 1) == names  # every namespace was tried, the refusal reported
    assert not runtime.orphans and runtime.broken is None


def test_a_refused_drop_of_a_namespace_that_holds_nothing_is_not_the_tests(
    world: World, runtime: PluginRuntime
) -> None:
    """C14 says only that dropping a namespace that holds nothing SHOULD succeed
    (RDQ-ST-007, whose own test judges it): at another test's teardown its refusal is
    no failure of that test (a MUST), though the drop is still made."""
    rdq = rdq_for(runtime)
    names = [rdq.namespace().name for _ in range(2)]
    world.refuse_drops = {names[0]}
    rdq.teardown()
    assert drops(world, 1) == names
    assert not runtime.orphans and runtime.broken is None
