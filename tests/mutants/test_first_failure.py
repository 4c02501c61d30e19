"""Issue 21 "Done when", by the same table, every other one-defect mutant of the zoo:
with ``-x`` the first cause names a requirement the mutant declares, and the first failed
test is one of that requirement's. The defects every envelope carries (instants shifted,
the version stamped on read, dotted header keys refused, base64url payloads) fail their
own narrow example first (``suites/_first_looks``). One kit run per mutant (``-x`` ends a
session), in CI only (``slow_ci``); no xdist group, so that ``-n 2`` spreads them.
``python -m benchmarks.failing first-failure`` measures the same runs.
"""

from __future__ import annotations

import pytest

from ._entries import Kind
from ._harness import first_failed, run_kit
from .zoo import ENTRIES, by_id

pytestmark = [pytest.mark.zoo]


@pytest.mark.slow_ci
@pytest.mark.parametrize("mutant", sorted(e.id for e in ENTRIES if e.kind is Kind.MUTANT))
def test_x_stops_on_a_declared_requirement_for_every_zoo_mutant(mutant: str) -> None:
    """``-x``: the first cause names a declared requirement; the first failed test is one
    of its tests."""
    entry = by_id(mutant)
    result = run_kit([f"--rdq-plugin={entry.label}"], extra=("-x",), profile="ci",
                     timeout=600)
    assert result.report is not None, result.describe()
    plugin = result.plugin(entry.label)
    assert plugin["causes"], result.describe()
    assert plugin["causes"][0]["requirement"] in entry.catches, (
        plugin["causes"][0]["requirement"], entry.catches, result.describe())
    first = first_failed(result)
    owner = {t["nodeid"]: r for r in plugin["requirements"] for t in r["tests"]}
    assert owner[first]["id"] in entry.catches, (first, owner[first]["id"], entry.catches,
                                                 result.describe())
