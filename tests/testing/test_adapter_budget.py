"""The adapter budget of one test, in process (issue 22 §3): at most
``MAX_OPEN_ADAPTERS`` open, the least recently used closed first, a closed handle
reopened on its next call (and said so when a check on it fails), lanes' adapters
closed when their lane ends, everything closed at teardown."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rdq_compliance._requirements import get_requirement
from rdq_compliance.testing import CheckFailed, Lane, base_envelope
from rdq_compliance.testing._context import KitSettings
from rdq_compliance.testing._handle import Rdq
from rdq_compliance.testing._namespace_handle import MAX_OPEN_ADAPTERS

from ._fake_plugin import Plugin
from ._fake_runtime import started_runtime


@pytest.fixture
def plugin() -> Plugin:
    return Plugin(frozenset({"concurrent"}))


@pytest.fixture
def rdq(plugin: Plugin) -> Rdq:
    runtime = started_runtime(plugin, 5.0)
    item: Any = SimpleNamespace(name="test_x", originalname="test_x")
    settings = KitSettings(("fake",), "quick", 0, 5.0, Path("unused"), None)
    return Rdq(item, get_requirement("RDQ-ST-003"), runtime, settings)


def test_at_most_the_budget_is_open_and_a_closed_handle_reopens(rdq: Rdq, plugin: Plugin) -> None:
    storage = plugin.storage
    handles = [rdq.namespace() for _ in range(MAX_OPEN_ADAPTERS + 3)]
    assert storage.most == MAX_OPEN_ADAPTERS
    assert len(storage.open_now) == MAX_OPEN_ADAPTERS
    # the first ones were closed, least recently used first
    assert [ns for op, ns in storage.log if op == "close"] == [h.name for h in handles[:3]]
    first = handles[0]
    assert first.closed
    env = base_envelope(1)
    first.write(env)  # opens a fresh adapter, closing the least recently used
    assert not first.closed and first.reopened == 1
    assert len(storage.open_now) == MAX_OPEN_ADAPTERS
    first.expect(env.id, env)
    rdq.teardown()
    assert storage.open_now == []


def test_using_a_handle_keeps_it_open(rdq: Rdq, plugin: Plugin) -> None:
    handles = [rdq.namespace() for _ in range(MAX_OPEN_ADAPTERS)]
    handles[0].write(base_envelope(2))  # now the most recently used
    rdq.namespace()
    assert not handles[0].closed and handles[1].closed
    rdq.teardown()


def test_a_failure_on_a_reopened_handle_says_the_kit_reopened_it(
    rdq: Rdq, plugin: Plugin
) -> None:
    first = rdq.namespace()
    env = base_envelope(3)
    first.write(env)
    for _ in range(MAX_OPEN_ADAPTERS):
        rdq.namespace()
    assert first.closed
    plugin.storage.forget_on_close = True
    with pytest.raises(CheckFailed, match="the kit had closed this namespace's adapter and "
                       "opened a fresh one"):
        first.expect(env.id, env)
    rdq.teardown()


def test_lane_adapters_are_closed_when_their_lane_ends(rdq: Rdq, plugin: Plugin) -> None:
    storage = plugin.storage
    main = [rdq.namespace() for _ in range(MAX_OPEN_ADAPTERS)]
    seen: list[int] = []
    # counted when every lane holds its adapter, before any goes on
    together = threading.Barrier(4, action=lambda: seen.append(len(storage.open_now)))

    def body(lane: Lane) -> None:
        rdq.namespace(main[0].name).write(base_envelope(10 + lane.index))
        together.wait(10)

    rdq.run_lanes([body] * 4)
    # a lane never closes another's adapter, nor the test's: all 4 + 4 were open at once
    assert seen == [MAX_OPEN_ADAPTERS + 4]
    assert storage.most == MAX_OPEN_ADAPTERS + 4
    assert len(storage.open_now) == MAX_OPEN_ADAPTERS  # the lanes' are closed
    assert not any(h.closed for h in main)
    rdq.teardown()
    assert storage.open_now == []
