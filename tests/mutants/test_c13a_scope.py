"""RDQ-ST-010 (C13a, no aliasing of the written object) is for Python adapters only: a
testee gets JSON text. Through the stdio bridge the requirement comes out
``not-applicable`` (never ``skipped``, which would make a testee's verdict incomplete);
a Python adapter that keeps the caller's object fails it in the same run."""

from __future__ import annotations

import pytest

from ._harness import run_kit

pytestmark = pytest.mark.zoo


def test_st010_is_not_applicable_to_testees_and_applies_to_adapters() -> None:
    testee, adapter = "tests.mutants.zoo:tok_good", "tests.mutants.zoo:keeps_caller_object"
    res = run_kit([f"--rdq-plugin={testee}", f"--rdq-plugin={adapter}"],
                  focus={testee: ["RDQ-ST-010"], adapter: ["RDQ-ST-010"]})
    assert res.statuses(testee)["RDQ-ST-010"] == "not-applicable", res.describe()
    assert res.statuses(adapter)["RDQ-ST-010"] == "failed", res.describe()
    # (A full run of a correct testee stays compliant: tests/plugins_example/test_kit_runs.py.)
    reasons = [r for r in res.plugin(testee)["requirements"] if r["id"] == "RDQ-ST-010"]
    assert "Python adapters" in (reasons[0]["reason"] or ""), reasons
