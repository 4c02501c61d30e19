"""reporting/_merge.py: shards of one run merged into the run's report."""

from __future__ import annotations

from typing import Any

import pytest

from rdq_compliance.reporting import TestStatus, verify_report
from rdq_compliance.reporting._merge import MergeError, merge_reports, shard_note, shard_of
from rdq_compliance.reporting._model import TestResult
from rdq_compliance.reporting._symptom import Symptom
from tests.reporting._synth import MUSTS, meta, passing, report_for

RID = next(r.id for r in MUSTS if r.capability is None)


def _tests(failing: bool) -> list[TestResult]:
    tests = passing()
    if failing:
        tests += [TestResult(f"t::{RID}-{i}[mem]", RID, "mem", TestStatus.FAILED, "x", 0.0,
                             cause=Symptom(f"/f{i}", "/created_at", "instant changed", "C3",
                                           f"by -{i} ms", f"diff {i}")) for i in range(5)]
    return tests


def _shards(tests: list[TestResult], n: int, **kw: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(f"s{k}.json", report_for([meta()], tests[k - 1::n], notes=[shard_note(k, n)],
                                      **kw)) for k in range(1, n + 1)]


def _outcome(report: dict[str, Any]) -> tuple[Any, ...]:
    (p,) = report["plugins"]
    return (report["verdict"], {r["id"]: r["status"] for r in p["requirements"]}, p["causes"])


@pytest.mark.parametrize("failing", [False, True])
def test_merged_shards_give_the_whole_runs_outcome(failing: bool) -> None:
    tests = _tests(failing)
    whole = report_for([meta()], tests)
    merged = merge_reports(_shards(tests, 3))
    verify_report(merged)  # a fresh digest
    assert _outcome(merged) == _outcome(whole)
    assert merged["verdict"] == ("non-compliant" if failing else "compliant")
    assert merged["notes"] == ["merged from shards 1, 2, 3 of 3"]


def test_a_missing_shard_makes_it_incomplete_never_compliant() -> None:
    shards = _shards(_tests(False), 3)
    merged = merge_reports([shards[0], shards[2]])
    assert merged["verdict"] == "incomplete"
    assert merged["notes"] == ["merged from shards 1, 3 of 3; missing: 2"]
    # every requirement with a passed test in shard 1 and another in the missing shard 2
    twice = [TestResult(f"{t.nodeid}-{n}", t.requirement, t.plugin, t.status, t.message)
             for t in _tests(False) for n in "ab"]
    halves = _shards(twice, 2)
    assert merge_reports(halves)["verdict"] == "compliant"
    assert merge_reports(halves[:1])["verdict"] == "incomplete"
    failing = _shards(_tests(True), 3)
    assert merge_reports(failing[:1])["verdict"] in ("non-compliant", "incomplete")


def test_reports_that_are_not_shards_of_one_run_are_refused() -> None:
    shards = _shards(_tests(False), 2)
    other_seed = _shards(_tests(False), 2)[1][1] | {"seed": 7}
    cases = [
        ([shards[0], ("x.json", other_seed)], "x.json: seed=7, but s1.json has seed=0"),
        ([shards[0], shards[0]], "s1.json: shard 1/2 again (also s1.json)"),
        ([shards[0], _shards(_tests(False), 3)[1]], "s2.json: shard 2/3, but s1.json is a "
                                                     "shard of 2"),
        ([("plain.json", report_for([meta()], _tests(False)))],
         "plain.json: not the report of a --rdq-shard run"),
        ([shards[0], ("y.json", _shards(_tests(False), 2, )[1][1] | {
            "plugins": [shards[1][1]["plugins"][0] | {"version": "9"}]})],
         "y.json: plugins"),
    ]
    for reports, message in cases:
        with pytest.raises(MergeError, match="^" + message.replace("(", r"\(").replace(
                ")", r"\)")):
            merge_reports(reports)
    assert shard_of(shards[1][1]) == (2, 2)


def test_merged_shards_group_causes_as_the_whole_run() -> None:
    """The grouping reads the class of difference, the nature of the change and the
    triggers: the merged report keeps them, so one string defect seen at many places,
    in tests dealt to different shards, is still one cause with its signature, example
    and trigger (issue 21 §2)."""
    def text(i: int, pattern: str) -> Symptom:
        return Symptom(f"/p{i}", pattern, "string changed", "C4", f"s{i}", f"diff {i}",
                       difference="text", change="U+0000 stripped")

    refusal = Symptom("/", "/", "write refused: StorageError INTERNAL", "C17", "r", "refused",
                      difference="refused", triggers="nul")
    patterns = ["/headers/*", "/attempts/*/error/message", "/*", "/handler_version",
                "/attempts/*/error/detail/*/*"]
    tests = passing() + [
        TestResult(f"t::{RID}-{i}[mem]", RID, "mem", TestStatus.FAILED, "x", 0.0,
                   cause=text(i, p)) for i, p in enumerate(patterns)] + [
        TestResult(f"t::{RID}-r{i}[mem]", RID, "mem", TestStatus.FAILED, "x", 0.0,
                   cause=refusal) for i in range(2)]
    whole = report_for([meta()], tests)
    merged = merge_reports(_shards(tests, 3))
    assert _outcome(merged) == _outcome(whole)
    causes = whole["plugins"][0]["causes"]
    assert [c["failures"] for c in causes] == [5, 2]
    assert causes[1]["trigger"] == "U+0000 in a string"


def test_merged_shards_keep_an_empty_value_in_the_loss_it_joined() -> None:
    """An empty value read as null joins the loss at its place (RDQ-UF-006): in the
    merged report too, with the example the whole run shows."""
    def lost(i: int, difference: str, change: str) -> TestResult:
        return TestResult(f"t::{RID}-{i}[mem]", RID, "mem", TestStatus.FAILED, "x", 0.0,
                          cause=Symptom(f"/attempts/{i}/error/detail", "/attempts/*/error/detail",
                                        "type changed", "C10", f"s{i}", f"diff {i}",
                                        difference=difference, change=change))

    tests = [*passing(), lost(0, "empty-null", "empty read as null"),
             lost(1, "type", "read as null"), lost(2, "type", "read as null")]
    whole = report_for([meta()], tests)
    (cause,) = whole["plugins"][0]["causes"]
    assert cause["failures"] == 3 and cause["example"] == "diff 0"
    # two shards: the empty value and a loss in one, the other loss in the other
    assert _outcome(merge_reports(_shards(tests, 2))) == _outcome(whole)
