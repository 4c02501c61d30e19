"""How long each generated kit test takes: :data:`COSTS`, the one table the ordering reads.

:data:`COSTS` are seconds per test measured on sqlite at ``ci`` (see the table), keyed by
test function name, or ``name[param-id]`` for one parametrization; only their order
matters. ``_ordering`` runs the longest properties (:data:`SLOW`) before the other
properties, and under ``-n N`` puts the fixed examples first and the long tests at the end of
the collection, longest first, so that xdist's ``load`` scheduler deals them last, a few at
a time (``_ordering.longest_first``). ``tests/_pytest/test_costs.py`` checks that every
generated kit test has a cost and every cost names a kit test. Nothing here reads a clock.

The kit used to supply its own xdist scheduler, dealing these tests one at a time, longest
first (issue 25 §4). With today's test durations (none over 0.8 s at ``ci``) it made
``-n 2`` runs 4-9 % slower than xdist's own on an idle machine and no faster under load
(``docs/performance.md``, "Fourth round"), so xdist schedules.
"""

from __future__ import annotations

__all__ = ["COSTS", "SLOW", "cost"]

COSTS: dict[str, float] = {
    "test_drop_after_concurrent_writes": 0.67,
    "test_state_machine_agrees_with_model": 0.43,
    "test_isolation_under_concurrency": 0.23,
    "test_read_after_write": 0.20,
    "test_generated_envelopes_roundtrip": 0.19,
    "test_writes_are_atomic": 0.18,
    "test_many_envelopes_are_all_kept": 0.17,
    "test_several_envelopes_read_back_by_id": 0.17,
    "test_durable_across_reopen": 0.17,
    "test_generated_rewrites_replace": 0.16,
    "test_no_lost_updates": 0.12,
    "test_generated_returned_values_are_exact_models": 0.09,
    "test_generated_attempt_order_is_kept": 0.09,
    "test_generated_undeclared_versions": 0.07,
    "test_declared_version_roundtrips[v1]": 0.06,
    "test_generated_free_text_keeps_code_points": 0.05,
    "test_generated_long_values_roundtrip": 0.05,
    "test_generated_unknown_fields_everywhere": 0.05,
    "test_dropping_one_name_leaves_alike_names_intact": 0.04,
    "test_generated_top_level_unknown_fields": 0.04,
    "test_generated_attempt_unknown_fields": 0.03,
    "test_generated_error_unknown_fields": 0.03,
    "test_generated_numbers_are_exact": 0.03,
    "test_generated_timestamps_keep_milliseconds": 0.03,
    "test_generated_marker_lookalikes_are_kept": 0.03,
    "test_generated_headers_are_kept": 0.03,
    "test_generated_detail": 0.03,
    "test_generated_truncated_values_are_kept": 0.02,
    "test_generated_payloads_are_kept": 0.02,
    "test_more_headers_than_one_statement_binds_roundtrip": 0.02,
    "test_every_name_shape_is_a_namespace_of_its_own": 0.02,
    # Skipped on sqlite (it declares no other version): its sibling's cost.
    "test_other_declared_versions_roundtrip": 0.06,
}
"""Seconds per test, sqlite, ``ci``, serial: each test's setup, call and teardown, the
median of three runs (``-p benchmarks._timeline``, 2026-12-04 16:30 UTC); a test not listed
costs 0 (a fixed example: milliseconds; the one that reads the store from a new process,
RDQ-RT-003, took 0.28-0.33 s at 18:38 UTC, in runs of about 9.4 s on a slowed machine).
The concurrency examples are the longest tests today; only generated tests are ordered by
their cost."""

SLOW = 0.15
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
