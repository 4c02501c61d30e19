"""Issue 14 "Done when": one defect, one cause line naming the right clause and the specific
requirement, and ``-x`` stops first on that requirement.

Three zoo mutants, each a kit run (quick profile) in a child process: timestamps kept to the
second (C3, RDQ-RT-007), error.detail lost (C10, RDQ-UF-006), header keys lower-cased (C8,
RDQ-RT-009). Without ``-x`` each fails tests of many requirements (the golden corpus, the
generic round trip, ...); the report must still show one cause.
"""

from __future__ import annotations

import re

import pytest

from ._harness import KitResult, run_kit
from .zoo import by_id

pytestmark = [pytest.mark.zoo, pytest.mark.xdist_group("zoo-causes")]

CASES = {
    # mutant: (clause of the cause, specific requirement, kind of difference)
    "mysql_datetime_no_fsp": ("C3", "RDQ-RT-007", "instant changed"),
    "detail_dropped": ("C10 C5", "RDQ-UF-006", "type changed"),
    "header_keys_casefold": ("C8 C4", "RDQ-RT-009", "header missing"),
}
_RUNS: dict[tuple[str, bool], KitResult] = {}


def _run(mutant: str, *, stop_first: bool) -> KitResult:
    key = (mutant, stop_first)
    if key not in _RUNS:
        _RUNS[key] = run_kit([f"--rdq-plugin={by_id(mutant).label}"],
                             extra=("-x",) if stop_first else (), timeout=600)
    return _RUNS[key]


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_one_defect_is_one_cause_line(mutant: str) -> None:
    clause, requirement, kind = CASES[mutant]
    result = _run(mutant, stop_first=False)
    label = by_id(mutant).label
    plugin = result.plugin(label)
    failed = [r["id"] for r in plugin["requirements"] if r["status"] == "failed"]
    assert requirement in failed, result.describe()
    (cause,) = plugin["causes"]
    assert (cause["clause"], cause["requirement"], cause["kind"]) == (clause, requirement, kind)
    assert cause["failures"] == sum(
        t["status"] == "failed" and t.get("cause") is not None
        for r in plugin["requirements"] for t in r["tests"])
    # the terminal: one headline, one cause line with the clause and the requirement
    assert re.search(r"^  1 cause explains \d+ failures?:$", result.output, re.M), result.describe()
    lines = [ln for ln in result.output.splitlines() if "\u2192 RDQ-" in ln]
    assert len(lines) == 1 and f"[{clause}] \u2192 {requirement} (" in lines[0], lines


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_stop_at_first_failure_names_the_specific_requirement(mutant: str) -> None:
    _clause, requirement, _kind = CASES[mutant]
    result = _run(mutant, stop_first=True)
    plugin = result.plugin(by_id(mutant).label)
    failed = [r["id"] for r in plugin["requirements"] if r["status"] in ("failed", "error")]
    assert failed == [requirement], result.describe()
    assert result.report is not None
    assert result.report["aborted"] == "after the first failure (-x)"
