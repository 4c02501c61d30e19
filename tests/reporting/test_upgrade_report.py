"""The report of an upgrade check (C19): not-applicable upgrade tests, ``upgraded_from``."""

from __future__ import annotations

import dataclasses

from rdq_compliance.reporting import (
    RequirementStatus,
    TestResult,
    TestStatus,
    build_report,
    evaluate,
    evaluate_plugin,
    render_badge,
    render_endpoint,
    terminal_lines,
    verify_report,
)

from ._synth import meta, passing, run_meta, validate_schema

UP = ("RDQ-UP-001", "RDQ-UP-002", "RDQ-UP-003")


def _not_applicable(tests: list[TestResult]) -> list[TestResult]:
    """The upgrade tests of a run without --rdq-upgrade-check: skipped as not applicable."""
    return [dataclasses.replace(t, status=TestStatus.SKIPPED, not_applicable=True,
                                message="applies to a run given --rdq-upgrade-check DIR only")
            if t.requirement in UP else t for t in tests]


def test_upgrade_not_checked_is_compliant_and_durable_still_verified() -> None:
    r = evaluate_plugin(meta(caps={"durable"}), _not_applicable(passing(caps={"durable"})))
    assert r.verdict.value == "compliant"
    statuses = {x.requirement.id: x.status for x in r.requirements}
    assert {statuses[i] for i in UP} == {RequirementStatus.NOT_APPLICABLE}
    assert r.capabilities_verified == ("durable",)


def test_upgrade_check_failing_is_non_compliant_and_unverified() -> None:
    tests = passing(caps={"durable"}, override={"RDQ-UP-002": TestStatus.FAILED},
                    message="RDQ-UP-002 ... namespace 'upx_dropped' returned an envelope")
    r = evaluate_plugin(meta(caps={"durable"}), tests)
    assert r.verdict.value == "non-compliant"
    assert r.capabilities_verified == ()


def test_report_and_badge_name_the_release_upgraded_from() -> None:
    plugins = [meta(caps={"durable"}, name="sqlite", version="2.0.0")]
    results = evaluate(plugins, passing(caps={"durable"}))
    report = build_report(dataclasses.replace(run_meta(plugins), upgraded_from="sqlite 1.0.0"),
                          results)
    validate_schema(report)
    verify_report(report)
    assert report["upgraded_from"] == "sqlite 1.0.0"
    assert "upgrade from sqlite 1.0.0" in render_endpoint(report)["message"]
    assert "upgrade from sqlite 1.0.0" in render_badge(report)
    assert any("from release sqlite 1.0.0" in line for line in terminal_lines(report))
    plain = build_report(run_meta(plugins), results)
    assert "upgraded_from" not in plain
    assert "upgrade" not in render_endpoint(plain)["message"]
