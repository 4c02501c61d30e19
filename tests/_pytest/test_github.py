"""_pytest/_github.py: GitHub annotations and JUnit properties of a failing kit run."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests._pytest._standin import run

# the stand-in drops milliseconds: a few failures of RDQ-RT-007, one cause
FAILING = ("--rdq-plugin=fake", "--rdq-option=fault=drop-ms", "-k",
           "test_timestamp_keeps_milliseconds or test_missing_id")


def _annotations(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if line.startswith("::")]


@pytest.mark.parametrize("xdist", [False, True])
def test_a_failing_run_under_github_actions_annotates_its_cause(
        kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: bool) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    extra = ("-n", "2") if xdist else ()
    result = run(kit, *FAILING, *extra, "--junitxml=j.xml", subprocess=xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = _annotations(result)
    errors = [line for line in lines if line.startswith("::error title=")]
    assert len(errors) == 1 == len(lines), lines  # one cause; non-compliant, so not incomplete
    first = errors[0]
    assert first.startswith("::error title=RDQ-RT-007 [C3] instant changed · fake::"), first
    assert "plugin 'fake': " in first and "[C3] → RDQ-RT-007: " in first
    assert "%0Areplay: pytest --rdq-plugin=fake --rdq-option=fault=drop-ms --rdq-replay " in first
    cases = {tc.get("name"): {p.get("name"): p.get("value") for p in tc.iter("property")}
             for tc in ET.parse(kit.path / "j.xml").iter("testcase")}
    failed = [props for props in cases.values() if props.get("rdq_cause")]
    assert failed and all(p["rdq_requirement"] == "RDQ-RT-007" for p in failed), cases
    assert all(p["rdq_cause"].startswith("/") and p["rdq_cause"].endswith("[C3]")
               for p in failed), failed
    assert all(p["rdq_replay"].startswith("pytest --rdq-plugin=fake") for p in failed)
    passed = cases["test_missing_id_reads_as_nothing[fake]"]
    assert passed["rdq_requirement"] == "RDQ-ST-002" and "rdq_cause" not in passed


def test_no_annotation_outside_github_actions(kit: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    result = run(kit, *FAILING)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert _annotations(result) == []


def test_the_summary_appended_to_a_nearly_full_step_summary_stays_under_1_mib(
        tmp_path) -> None:
    from rdq_compliance._pytest.formats.summary import FORMAT
    from rdq_compliance.reporting._github import SUMMARY_LIMIT
    from tests.reporting._synth import meta, passing, report_for

    path = tmp_path / "step_summary"
    path.write_text("x" * (SUMMARY_LIMIT - 3000), encoding="utf-8")  # earlier steps' output
    FORMAT.write(path, report_for([meta()], passing()))
    text = path.read_text(encoding="utf-8")
    assert len(text.encode()) <= SUMMARY_LIMIT
    assert text.endswith("the JSON report (--rdq-report) has every result.**\n")
