"""reporting/_github.py: GitHub annotations of a report and the step summary's limit."""

from __future__ import annotations

from rdq_compliance.reporting import TestStatus
from rdq_compliance.reporting._github import (
    SUMMARY_LIMIT,
    escape_data,
    escape_property,
    fit_summary,
    github_annotations,
    workflow_commands,
)
from rdq_compliance.reporting._markdown import render_markdown
from rdq_compliance.reporting._model import TestResult
from rdq_compliance.reporting._symptom import Symptom
from tests.reporting._synth import MUSTS as ALL_MUSTS
from tests.reporting._synth import SHOULDS, meta, passing, report_for

MUSTS = [r for r in ALL_MUSTS if r.capability is None]  # they apply to every plugin


def _symptom(n: int, deep: int = 1) -> Symptom:
    return Symptom(pointer=f"/field{n}" + "/0" * (deep - 1), pattern=f"/field{n}" + "/*" * (
        deep - 1), kind=f"kind {n}", clause="C3", summary=f"changed ({n})", diff="  diff")


def _failing(causes: int, *, per: int = 1, label: str = "mem") -> list[TestResult]:
    """``causes`` distinct causes over as many MUST requirements, cause k failing
    ``per * (causes - k)`` tests (so the first is the most important)."""
    tests = [t for t in passing(label) if t.requirement not in {r.id for r in MUSTS[:causes]}]
    for k, r in enumerate(MUSTS[:causes]):
        for i in range(per * (causes - k)):
            tests.append(TestResult(f"suites/test_x.py::test_{r.id}_{i}[{label}]", r.id, label,
                                    TestStatus.FAILED, f"CheckFailed: {r.id} broke\nmore", 0.01,
                                    cause=_symptom(k)))
    return tests


def test_escaping_follows_the_runner() -> None:
    assert escape_data("100% a\r\nb:c,d") == "100%25 a%0D%0Ab:c,d"
    assert escape_property("100% a\r\nb:c,d") == "100%25 a%0D%0Ab%3Ac%2Cd"


def test_a_compliant_report_has_no_annotation() -> None:
    assert workflow_commands(report_for([meta()], passing())) == []


def test_at_most_ten_errors_most_important_first_and_the_rest_counted() -> None:
    report = report_for([meta()], _failing(15))
    lines = workflow_commands(report)
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10 == len(lines)
    # most failures first: cause k belongs to MUSTS[k]
    for k, line in enumerate(errors):
        # the cause's requirement is the most specific one of its clause (C3: RDQ-RT-007)
        assert f"title=RDQ-RT-007 [C3] kind {k} · mem::" in line, line
        assert f"in 1 requirement ({MUSTS[k].id})%0Arerun: pytest --rdq-plugin=mem -k " in line
        assert "\n" not in line
    assert errors[-1].endswith("%0A… and 5 more errors: see the job summary or the JSON report")
    assert "more error" not in "".join(errors[:-1])


def test_nine_or_ten_errors_say_nothing_more() -> None:
    assert not any("more error" in line
                   for line in workflow_commands(report_for([meta()], _failing(10))))


def test_each_annotation_names_requirement_cause_and_replay() -> None:
    report = report_for([meta(label="x:y,z")], _failing(2, label="x:y,z"))
    nodeid = f"suites/test_x.py::test_{MUSTS[0].id}_0[x:y,z]"
    (first, second) = workflow_commands(report, {nodeid: "pytest --rdq-replay a.json"})
    c0, c1 = (c["requirement"] for c in report["plugins"][0]["causes"])
    assert first.startswith(f"::error title={c0} [C3] kind 0 · x%3Ay%2Cz::")
    assert f"plugin 'x:y,z': /field0 changed (0) [C3] → {c0}: 2 failed tests" in first
    assert first.endswith("%0Areplay: pytest --rdq-replay a.json")
    assert second.endswith(f"%0Arerun: pytest --rdq-plugin=x:y,z -k {c1}")


def test_a_failure_without_a_difference_is_annotated_by_its_message_cause() -> None:
    # Every failure is in a cause (issue 21 §1): one that carries no difference is
    # grouped by its (masked) message, and the annotation says so.
    rid = MUSTS[0].id
    report = report_for([meta()], passing(override={rid: TestStatus.FAILED},
                                          message="pkg.CheckFailed: the store lost it\nx"))
    (line,) = workflow_commands(report)
    assert line.startswith(f"::error title={rid} ["), line
    assert "the store lost it" in line and "%0Arerun: " in line and f"-k {rid}" in line


def _two_failures() -> list[TestResult]:
    must, should = MUSTS[0].id, SHOULDS[0].id
    tests = passing(override={must: TestStatus.FAILED, should: TestStatus.FAILED})
    out = []
    for t in tests:  # a different message each: two causes
        if t.requirement in (must, should):
            t = TestResult(t.nodeid, t.requirement, t.plugin, t.status,
                           f"E: broken in {t.requirement}", t.duration)
        out.append(t)
    return out


def test_levels_should_is_a_warning_known_is_a_notice_incomplete_is_an_error() -> None:
    must = MUSTS[0].id
    known = report_for([meta()], _two_failures(), known_failures={("mem", must): True})
    levels = [a.level for a in github_annotations(known)]
    assert levels == ["warning", "notice"], github_annotations(known)
    unknown = report_for([meta()], _two_failures())
    assert [a.level for a in github_annotations(unknown)] == ["error", "warning"]
    incomplete = report_for([meta()], passing(override={MUSTS[1].id: None}))
    (a,) = github_annotations(incomplete)
    assert (a.level, a.title) == ("error", "incomplete · mem")
    assert "1 MUST requirement not tested" in a.message and MUSTS[1].id in a.message


def test_a_cause_over_a_known_must_and_a_new_should_failure_is_a_warning() -> None:
    must, should = MUSTS[0].id, SHOULDS[0].id
    tests = passing(override={must: TestStatus.FAILED, should: TestStatus.FAILED},
                    message="E: broken")  # one message: one cause over both
    known = report_for([meta()], tests, known_failures={("mem", must): True})
    (a,) = github_annotations(known)
    assert a.level == "warning", a


def test_deep_pointer_patterns_are_shortened() -> None:
    tests = [t for t in passing() if t.requirement != MUSTS[0].id]
    tests.append(TestResult(f"t[{MUSTS[0].id}]", MUSTS[0].id, "mem", TestStatus.FAILED, "x",
                            0.0, cause=_symptom(0, deep=300)))
    (line,) = workflow_commands(report_for([meta()], tests))
    assert "/field0/*/*/…295 more levels…/*/*" in line and len(line) < 1000


def test_summary_fits_githubs_limit_and_closes_a_cut_code_block() -> None:
    text = render_markdown(report_for([meta()], _failing(3)))
    assert fit_summary(text) == text
    big = "# s\n\n```text\n" + ("x" * 99 + "\n") * 20_000 + "```\n"
    assert len(big.encode()) > SUMMARY_LIMIT
    cut = fit_summary(big)
    assert len(cut.encode()) <= SUMMARY_LIMIT
    assert cut.rstrip().endswith("the JSON report (--rdq-report) has every result.**")
    assert cut.count("```") == 2  # the block it cut is closed before the note
    small = fit_summary(big, 5000)
    assert len(small.encode()) <= 5000 and small.startswith("# s\n")
