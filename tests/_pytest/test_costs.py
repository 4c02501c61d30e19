"""``_pytest/_costs.py``: the measured cost of each generated kit test, read from its node id,
and a table that names every generated kit test and nothing else."""

from __future__ import annotations

from rdq_compliance._pytest._costs import COSTS, cost
from tests._pytest._suite_functions import suite_test_functions

SUITE = "rdq_compliance/suites/test_x.py::"


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
    return {node.name: kind for _, node, kind in suite_test_functions()}


def test_every_generated_test_has_a_cost_and_every_cost_a_test() -> None:
    """A new property or state machine without a cost would be ordered as a fixed example
    (``_ordering``: among the examples, not with the long tests): the table must name it. A
    cost whose test was renamed or removed is stale."""
    tests = _suite_tests()
    generated = {name for name, kind in tests.items() if kind != "example"}
    listed = {key.split("[")[0] for key in COSTS}
    assert sorted(generated - listed) == [], "generated kit tests without an entry in COSTS"
    assert sorted(listed - set(tests)) == [], "COSTS names tests the suites do not have"
