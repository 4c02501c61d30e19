"""``_pytest/_schedule.py``: under ``-n N`` the longest kit tests are dealt first, one at a
time (issue 25 §4).

The scheduler is driven here as xdist's controller drives it, with fake workers that behave
as xdist's do (a worker runs a test only once it holds the next one, or was told to shut
down), in virtual time: every test takes its :data:`COSTS` seconds (a fixed example
10 ms). No clock is read; the checks are on which worker ran what.
"""

from __future__ import annotations

import ast
import heapq
from types import SimpleNamespace
from typing import Any

import pytest

from rdq_compliance._pytest._schedule import COSTS, LONG, CostFirst, cost, cost_first_scheduling
from rdq_compliance._pytest.kit import SUITE_FILES

pytest.importorskip("xdist")
from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

CHEAP = 0.01
SUITE = "rdq_compliance/suites/test_x.py::"


class Config:
    """What xdist's schedulers read of the config."""

    def __init__(self, dist: str = "load", maxfail: int = 0, workers: int = 2) -> None:
        self.values = {"dist": dist, "maxfail": maxfail, "maxschedchunk": None,
                       "tx": [f"{workers}*popen"], "numprocesses": workers}

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    getvalue = getoption


class Worker:
    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.name = name
        self.queue: list[int] = []
        self.shutting_down = False
        self.ran: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def send_runtest_all(self) -> None:  # pragma: no cover - not used by load
        raise AssertionError

    def shutdown(self) -> None:
        self.shutting_down = True

    def __repr__(self) -> str:
        return self.name


def simulate(scheduler_class: Any, collection: list[str], workers: int = 2,
             ) -> tuple[float, list[Worker]]:
    """Run ``collection`` under the scheduler on fake workers; returns the virtual time at
    which the last test ends and the workers (``.ran``: the indices each ran, in order)."""
    sched = scheduler_class(Config(workers=workers))
    nodes = [Worker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    sched.schedule()
    now, running, events = 0.0, {}, []
    durations = [COSTS.get(nid.split("::")[-1].split("[")[0], 0.0) or cost(nid) or CHEAP
                 for nid in collection]
    while True:
        for node in nodes:
            can_run = len(node.queue) >= 2 or (node.queue and node.shutting_down)
            if node.name not in running and can_run:
                index = node.queue.pop(0)
                running[node.name] = index
                heapq.heappush(events, (now + durations[index], node.name, index))
        if not events:
            break
        now, name, index = heapq.heappop(events)
        node = next(n for n in nodes if n.name == name)
        del running[name]
        node.ran.append(index)
        sched.mark_test_complete(node, index, durations[index])
    assert all(not n.queue for n in nodes), "a worker was left holding tests"
    return now, nodes


def kit_collection() -> list[str]:
    """A collection like a kit run's under ``-n``: the fixed examples first (the workers'
    ``longest_first`` order), then the state machine and the properties."""
    cheap = [f"{SUITE}test_example_{i}[sqlite]" for i in range(200)]
    costly = [f"{SUITE}{name}[sqlite]" for name in COSTS if "[" not in name]
    return cheap + costly


def test_costs_come_from_the_node_id() -> None:
    assert cost(f"{SUITE}test_state_machine_agrees_with_model[sqlite]") == COSTS[
        "test_state_machine_agrees_with_model"]
    assert cost(f"{SUITE}test_more_headers_than_one_statement_binds_roundtrip[sqlite]") == COSTS[
        "test_more_headers_than_one_statement_binds_roundtrip"]
    # One parametrization has its own cost, matched on the ids after the plugin label.
    assert cost(f"{SUITE}test_declared_version_roundtrips[memory-v1]") == COSTS[
        "test_declared_version_roundtrips[v1]"]
    assert cost(f"{SUITE}test_declared_version_roundtrips[tests.mutants.zoo:x-v1]") > 0
    assert cost(f"{SUITE}test_declared_version_roundtrips[memory-v2]") == 0.0
    assert cost("tests/test_mine.py::test_users_own") == 0.0


def _suite_tests() -> dict[str, str]:
    """Every kit test function -> its declared kind (example, property, machine)."""
    found = {}
    for path in SUITE_FILES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            kind = "example"
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "requirement":
                    for kw in dec.keywords:
                        if kw.arg == "kind":
                            kind = ast.literal_eval(kw.value)
            found[node.name] = kind
    return found


def test_every_generated_test_has_a_cost_and_every_cost_a_test() -> None:
    """A new property or state machine without a cost would be dealt as a fixed example
    (in a chunk, possibly last): the table must name it. A cost whose test was renamed or
    removed is stale."""
    tests = _suite_tests()
    generated = {name for name, kind in tests.items() if kind != "example"}
    listed = {key.split("[")[0] for key in COSTS}
    assert sorted(generated - listed) == [], "generated kit tests without an entry in COSTS"
    assert sorted(listed - set(tests)) == [], "COSTS names tests the suites do not have"


def test_longest_tests_go_to_different_workers_first() -> None:
    collection = kit_collection()
    _, nodes = simulate(cost_first_scheduling(), collection)
    longest = sorted(COSTS.values(), reverse=True)
    firsts = [cost(collection[node.ran[0]]) for node in nodes]
    assert sorted(firsts, reverse=True) == longest[:2]


def test_every_test_runs_once() -> None:
    collection = kit_collection()
    _, nodes = simulate(cost_first_scheduling(), collection, workers=3)
    ran = sorted(i for node in nodes for i in node.ran)
    assert ran == list(range(len(collection)))


def test_cost_first_ends_sooner_than_xdists_load_and_near_the_bound() -> None:
    """Virtual time: the run's end against xdist's own ``load`` scheduler on the same
    collection, and against the lower bound (the total over the workers)."""
    collection = kit_collection()
    ours, _ = simulate(cost_first_scheduling(), collection)
    theirs, _ = simulate(LoadScheduling, collection)
    total = sum(cost(n) or CHEAP for n in collection)
    assert ours < theirs
    assert ours <= total / 2 + 0.1, (ours, total / 2)


def test_long_tests_are_dealt_one_at_a_time() -> None:
    """While a long test is pending no worker holds more than two (the one it runs and
    the next); the cheap ones come after every long one."""
    collection = kit_collection()
    sched = cost_first_scheduling()(Config())
    nodes = [Worker("gw0"), Worker("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    assert [len(n.queue) for n in nodes] == [2, 2]
    dealt = [i for pair in zip(nodes[0].queue, nodes[1].queue, strict=True) for i in pair]
    assert [cost(collection[i]) for i in dealt] == sorted(COSTS.values(), reverse=True)[:4]
    costs = [cost(collection[i]) for i in sched.pending]
    longs = [c for c in costs if c >= LONG]
    assert costs[:len(longs)] == sorted(longs, reverse=True)
    assert all(c < LONG for c in costs[len(longs):])


def test_without_kit_tests_the_dealing_is_xdists() -> None:
    """A run of the user's own tests only (nothing costly): dealt as xdist's ``load`` deals."""
    collection = [f"tests/test_mine.py::test_{i}" for i in range(50)]
    ours, ours_nodes = simulate(cost_first_scheduling(), collection)
    theirs, their_nodes = simulate(LoadScheduling, collection)
    assert [n.ran for n in ours_nodes] == [n.ran for n in their_nodes]
    assert ours == theirs


@pytest.mark.parametrize(("dist", "maxfail", "ours"), [
    ("load", 0, True), ("loadgroup", 0, False), ("worksteal", 0, False), ("load", 1, False),
])
def test_used_only_for_xdists_load_distribution(dist: str, maxfail: int, ours: bool) -> None:
    made = CostFirst().pytest_xdist_make_scheduler(Config(dist, maxfail), None)
    assert isinstance(made, cost_first_scheduling()) if ours else made is None
