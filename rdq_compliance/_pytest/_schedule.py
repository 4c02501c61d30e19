"""Under ``-n N`` (xdist's ``load`` distribution, the default of ``-n``): the kit's longest
tests are dealt first, one at a time, the cheap ones after them in chunks (issue 25 §4).

xdist's ``load`` scheduler hands each worker a quarter of its share of the collection as one
consecutive chunk, then chunks of up to half the rest on demand; a worker keeps what it was
given. With the long tests (the state machine, the generated properties: 0.3–3 s each on
sqlite at ``ci``, more than half a run) dealt in those chunks, one worker often ran two
of the longest at the end while the other had finished. :class:`CostFirst` (registered in
the controller only) makes xdist use :func:`cost_first_scheduling`'s scheduler instead,
when the distribution is ``load``: the pending tests sorted by :func:`cost`, longest first
(a stable sort: the cheap ones keep their collection order), each worker holding two at a
time (the one it runs and the next: an xdist worker needs the next test before it runs
one) while a long test is pending — the longest-processing-time-first rule — and xdist's
own chunking for the cheap rest, which fills the gaps at the end.

:data:`COSTS` are seconds per test measured on sqlite at ``ci`` (``--durations``), keyed by
test function name, or ``name[param-id]`` for one parametrization; only their order
matters, and only for how fast a run ends: the tests, their results and the order within
a worker's tests are unchanged. ``tests/_pytest/test_schedule.py`` checks that every
generated kit test has a cost and every cost names a kit test. Nothing here reads a clock.
With ``-x``/``--maxfail`` or any other ``--dist`` the scheduler is xdist's own.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["COSTS", "LONG", "SLOW", "CostFirst", "cost", "cost_first_scheduling"]

COSTS: dict[str, float] = {
    "test_state_machine_agrees_with_model": 3.1,
    "test_generated_rewrites_replace": 1.9,
    "test_generated_envelopes_roundtrip": 1.9,
    "test_several_envelopes_read_back_by_id": 1.6,
    "test_generated_attempt_order_is_kept": 1.4,
    "test_generated_unknown_fields_everywhere": 1.1,
    "test_writes_are_atomic": 0.94,
    "test_many_envelopes_are_all_kept": 0.94,
    "test_durable_across_reopen": 0.79,
    "test_more_headers_than_one_statement_binds_roundtrip": 0.77,
    "test_drop_after_concurrent_writes": 0.72,
    "test_generated_attempt_unknown_fields": 0.65,
    "test_read_after_write": 0.51,
    "test_generated_free_text_keeps_code_points": 0.50,
    "test_generated_timestamps_keep_milliseconds": 0.47,
    "test_dropping_one_name_leaves_alike_names_intact": 0.46,
    "test_generated_undeclared_versions": 0.45,
    "test_generated_top_level_unknown_fields": 0.39,
    "test_isolation_under_concurrency": 0.39,
    "test_generated_error_unknown_fields": 0.36,
    "test_generated_detail": 0.34,
    "test_declared_version_roundtrips[v1]": 0.33,
    "test_generated_headers_are_kept": 0.29,
    "test_generated_long_values_roundtrip": 0.28,
    "test_no_lost_updates": 0.27,
    "test_generated_returned_values_are_exact_models": 0.25,
    "test_generated_numbers_are_exact": 0.13,
    "test_every_name_shape_is_a_namespace_of_its_own": 0.13,
    "test_generated_payloads_are_kept": 0.11,
    "test_generated_marker_lookalikes_are_kept": 0.10,
    "test_generated_truncated_values_are_kept": 0.09,
    # Skipped on sqlite (it declares no other version): its sibling's cost.
    "test_other_declared_versions_roundtrip": 0.33,
}
"""Seconds per test, sqlite, ``ci``, serial (``--durations``, 2026-12-03); a test not
listed costs 0 (a fixed example: milliseconds)."""

LONG = 0.1
"""A pending test of at least this cost is dealt one at a time."""

SLOW = 1.25
"""A generated test of at least this cost is one of the longest properties: it runs before
the other properties (``_ordering.cost_rank``), in the order of the kit's tests and of its
shards. The same table, not a second list: a test's ``@requirement(..., slow=True)`` only
adds tests :data:`COSTS` does not know (a suite of the user's)."""


def _split(nodeid: str) -> tuple[str, list[str]]:
    """The test function's name and its parameter ids (``[sqlite-11000-headers]``)."""
    name = nodeid.rsplit("::", 1)[-1]
    base, _, params = name.partition("[")
    return base, params[:-1].split("-") if params else []


def cost(nodeid: str) -> float:
    """The cost of a kit test from its node id: its parametrization's entry in
    :data:`COSTS` (its parameter ids ending with the entry's), else its function's."""
    base, params = _split(nodeid)
    best = COSTS.get(base, 0.0)
    for key, value in COSTS.items():
        head, _, want = key.partition("[")
        if head == base and want:
            ids = want[:-1].split("-")
            if params[-len(ids):] == ids:
                return value
    return best


_SCHEDULER: dict[str, Any] = {}


def cost_first_scheduling() -> Any:
    """The scheduler class (built on first use: xdist is imported only under ``-n``)."""
    if "class" in _SCHEDULER:
        return _SCHEDULER["class"]
    from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

    base: Any = LoadScheduling

    class CostFirstScheduling(base):  # type: ignore[misc]
        """xdist's ``load`` scheduler, longest test first, long tests one at a time."""

        collection: list[str] | None
        maxschedchunk: int | None
        pending: list[int]
        node2pending: dict[Any, list[int]]
        node2collection: dict[Any, list[str]]
        _costs: list[float]

        def schedule(self) -> None:
            if self.collection is not None or not self.collection_is_completed:
                super().schedule()
                return
            if not self._check_nodes_have_same_collection():
                super().schedule()  # logs and aborts as xdist does
                return
            collection: list[str] = next(iter(self.node2collection.values()))
            costs = [cost(nodeid) for nodeid in collection]
            self._costs = costs
            if not any(c >= LONG for c in costs):
                super().schedule()  # no kit test to deal out: xdist's own distribution
                return
            self.collection = collection
            self.pending[:] = sorted(range(len(collection)),
                                     key=lambda i: -costs[i] if costs[i] >= LONG else 0.0)
            if self.maxschedchunk is None:
                self.maxschedchunk = len(collection)
            for _ in range(2):  # round robin: the longest to the first node, the next to the next
                for node in self.nodes:
                    if (self.pending and costs[self.pending[0]] >= LONG
                            and len(self.node2pending[node]) < 2):
                        self._send_tests(node, 1)
            for node in self.nodes:
                self.check_schedule(node)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if node.shutting_down or not self.pending:
                super().check_schedule(node, duration)
                return
            held = len(self.node2pending[node])
            costs = getattr(self, "_costs", None)
            if costs is not None and costs[self.pending[0]] >= LONG:
                if held < 2:
                    self._send_tests(node, 2 - held)
                return
            super().check_schedule(node, duration)

    _SCHEDULER["class"] = CostFirstScheduling
    return CostFirstScheduling


class CostFirst:
    """The controller's plugin: xdist's ``load`` distribution uses the cost-first scheduler."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "load" or config.getoption("maxfail", 0):
            return None  # xdist's own (its hook implementation runs last)
        return cost_first_scheduling()(config, log)
