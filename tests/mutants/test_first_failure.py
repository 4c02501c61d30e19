"""Issue 21 "Done when", by the same table, every other one-defect mutant of the zoo:
with ``-x`` the first cause names a requirement the mutant declares, and the first failed
test is one of that requirement's (or, for the defects every envelope carries, is marked as
explained by that cause, the kit having run the diagnosed requirement's tests before it
stopped: ``_ordering.StopOnCause``). One kit run per mutant (``-x`` ends a session), in
CI only (``slow_ci``); no xdist group, so that ``-n 2`` spreads them.
``python -m benchmarks.failing first-failure`` measures the same runs.
"""

from __future__ import annotations

import pytest

from ._entries import Kind
from ._harness import first_failed, run_kit
from .zoo import ENTRIES, by_id

pytestmark = [pytest.mark.zoo]


# Defects that every envelope of the kit carries, so that whichever test runs first
# fails on them: no order can make one of their requirement's own tests the first, and
# the kit runs that requirement's tests before it stops (``_ordering.StopOnCause``): the
# first cause names it and the first failure reads "explained by cause 1".
EVERY_ENVELOPE = {
    "local_tz_shift": "every instant shifted: the exact-types example, which must run "
                      "before the timestamp tests (a Decimal store fails every read), holds "
                      "instants too",
    "version_stamped_on_read": "every envelope read back as version 2",
    "mongodb_dotted_keys": "every envelope holds the dotted header key rdq.source",
    "t_b64_url": "base64url payloads: the exact-form examples with '+' or '/' in the "
                 "payload's base64 also carry a non-UTF-8 payload (RDQ-RT-008), whose "
                 "tests run first",
}


@pytest.mark.slow_ci
@pytest.mark.parametrize("mutant", sorted(e.id for e in ENTRIES if e.kind is Kind.MUTANT))
def test_x_stops_on_a_declared_requirement_for_every_zoo_mutant(mutant: str) -> None:
    """``-x``: the first cause names a declared requirement; the first failed test is one
    of its tests (for :data:`EVERY_ENVELOPE`, or is explained by that cause)."""
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
    if mutant in EVERY_ENVELOPE:
        assert owner[first]["id"] in entry.catches or owner[first].get("explained_by") == 1, (
            first, result.describe())
    else:
        assert owner[first]["id"] in entry.catches, (first, owner[first]["id"], entry.catches,
                                                     result.describe())
