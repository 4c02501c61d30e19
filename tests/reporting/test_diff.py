"""reporting/_diff.py and ``rdq-compliance diff``: what changed between two reports."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rdq_compliance._cli import main
from rdq_compliance.reporting import TestStatus, write_json
from rdq_compliance.reporting._diff import diff_markdown, diff_reports, diff_text
from rdq_compliance.reporting._model import TestResult
from rdq_compliance.reporting._symptom import Symptom
from tests.reporting._synth import MUSTS, meta, passing, report_for, run_meta

UNGATED = [r for r in MUSTS if r.capability is None]
A, B, C = UNGATED[0].id, UNGATED[1].id, UNGATED[2].id
DURABLE = next(r.id for r in MUSTS if r.capability == "durable")


def _cause(n: int) -> Symptom:
    return Symptom(pointer=f"/f{n}", pattern=f"/f{n}", kind=f"kind {n}", clause="C3",
                   summary=f"instant changed by -{n} ms", diff="  /f: …")


def _run(failing: dict[str, int], *, caps: tuple[str, ...] = (),
         untested: tuple[str, ...] = ()) -> list[TestResult]:
    """Every requirement passes but ``failing`` (id → cause number) and ``untested``."""
    tests = [t for t in passing(caps=caps) if t.requirement not in failing
             and t.requirement not in untested]
    for rid, n in failing.items():
        tests.append(TestResult(f"t::{rid}[mem]", rid, "mem", TestStatus.FAILED, "x", 0.0,
                                cause=_cause(n)))
    for rid in untested:
        tests.append(TestResult(f"t::{rid}[mem]", rid, "mem", TestStatus.SKIPPED,
                                "server down", 0.0))
    return tests


def _kinds(d: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for c in d.changes:
        found.setdefault(c.kind, []).append(c.subject)
    return found


def test_a_fix_and_a_new_regression_are_listed() -> None:
    before = report_for([meta()], _run({A: 1, B: 2}))
    after = report_for([meta()], _run({B: 2, C: 3}))
    d = diff_reports(before, after)
    kinds = _kinds(d)
    # a cause names the most specific failing requirement of its clause: not checked here
    assert [k.split(" → ")[0] for k in kinds["fixed"]] == [A, "/f1 instant changed by -1 ms [C3]"]
    assert [k.split(" → ")[0] for k in kinds["new regression"]] == [
        C, "/f3 instant changed by -3 ms [C3]"]
    assert [k.split(" → ")[0] for k in kinds["still failing"]] == [
        B, "/f2 instant changed by -2 ms [C3]"]
    assert set(kinds) == {"fixed", "new regression", "still failing"}
    assert d.regressed and d.caveats == []
    text = diff_text(d)
    assert text[0] == ("changes: verdict non-compliant → non-compliant; 2 new regression, "
                       "2 fixed, 2 still failing")
    assert f"  NEW REGRESSION [mem] {C} (MUST) passed → failed" in text
    assert f"  FIXED [mem] {A} (MUST) failed → passed" in text
    md = diff_markdown(d, baseline="old.json")
    assert md.startswith("### Changes since old.json\n")
    assert f"| **new regression** | mem | {C} (MUST) passed → failed |" in md


def test_only_fixes_is_no_regression() -> None:
    d = diff_reports(report_for([meta()], _run({A: 1})), report_for([meta()], _run({})))
    assert not d.regressed and set(_kinds(d)) == {"fixed"}


def test_not_run_not_applicable_and_passing_again() -> None:
    before = report_for([meta(caps=("durable",))], _run({}, caps=("durable",)))
    after = report_for([meta()], _run({}, untested=(A,)))
    d = diff_reports(before, after)
    kinds = _kinds(d)
    assert kinds["newly not run"] == [A]
    assert DURABLE in kinds["newly not applicable"]
    assert d.regressed  # a MUST requirement no longer tested
    back = diff_reports(after, before)
    assert A in _kinds(back)["newly passing"] and DURABLE in _kinds(back)["newly passing"]
    assert not back.regressed


def test_reports_of_different_runs_are_compared_with_that_said() -> None:
    before = report_for([meta()], _run({}))
    results_meta = replace(run_meta([meta(version="2.0")]), kit_version="0.2.0", seed=7,
                           profile="thorough")
    from rdq_compliance.reporting import build_report, evaluate

    after = build_report(results_meta, evaluate(results_meta.plugins, _run({})))
    d = diff_reports(before, after)
    assert d.caveats == ["different kit version: '0.1.0' → '0.2.0'",
                         "different profile: 'quick' → 'thorough'", "different seed: 0 → 7",
                         "plugin 'mem': memory 1.0 → memory 2.0"]
    assert "  note: different kit version: '0.1.0' → '0.2.0'" in diff_text(d)


def test_the_command_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new, same = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "same.json"
    write_json(old, report_for([meta()], _run({A: 1})))
    write_json(new, report_for([meta()], _run({C: 3})))
    write_json(same, report_for([meta()], _run({A: 1})))
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert f"NEW REGRESSION [mem] {C}" in out and f"FIXED [mem] {A}" in out
    assert main(["diff", str(old), str(same)]) == 0
    assert capsys.readouterr().out.startswith("changes: verdict non-compliant → non-compliant;")
    assert main(["diff", str(old), str(new), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressed"] is True and {c["kind"] for c in doc["changes"]} == {
        "new regression", "fixed"}
    tampered = json.loads(new.read_text())
    tampered["verdict"] = "compliant"
    new.write_text(json.dumps(tampered))
    assert main(["diff", str(old), str(new)]) == 2
    assert "digest" in capsys.readouterr().err
    assert main(["diff", str(old), str(tmp_path / "missing.json")]) == 2


def test_one_defect_seen_first_elsewhere_is_still_failing() -> None:
    """Causes are matched by signature (issue 21 §2): a string defect that shows mostly in
    headers in one run and mostly in handler_version in the next is the same cause, not
    one fixed and one new."""
    def run(patterns: list[str]) -> list[TestResult]:
        tests = [t for t in passing() if t.requirement != A]
        return tests + [TestResult(f"t::{A}-{i}[mem]", A, "mem", TestStatus.FAILED, "x", 0.0,
                                   cause=Symptom(f"/p{i}", p, "string changed", "C4", "s", "d",
                                                 difference="text", change="U+0000 stripped"))
                        for i, p in enumerate(patterns)]

    before = report_for([meta()], run(["/headers/*", "/headers/*", "/handler_version"]))
    after = report_for([meta()], run(["/handler_version", "/handler_version", "/headers/*"]))
    assert before["plugins"][0]["causes"][0]["pointer"] == "/headers/*"
    assert after["plugins"][0]["causes"][0]["pointer"] == "/handler_version"
    kinds = _kinds(diff_reports(before, after))
    assert set(kinds) == {"still failing"} and len(kinds["still failing"]) == 2
