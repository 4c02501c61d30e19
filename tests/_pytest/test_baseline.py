"""_pytest/_baseline.py: ``--rdq-baseline`` makes the summaries lead with the changes."""

from __future__ import annotations

import pytest

from tests._pytest._standin import run

ONE = ("-k", "test_timestamp_keeps_milliseconds or test_missing_id",
       "--rdq-allow-incomplete")


def test_the_summaries_lead_with_the_fix_since_the_baseline(kit: pytest.Pytester) -> None:
    old = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=drop-ms", *ONE,
              "--rdq-report=old.json")
    assert old.ret == pytest.ExitCode.TESTS_FAILED
    summary = kit.path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    new = run(kit, "--rdq-plugin=fake", *ONE, "--rdq-baseline=old.json",
              f"--rdq-summary={summary}")
    assert new.ret == pytest.ExitCode.OK  # the exit status is the verdict's, as ever
    lines = new.stdout.lines
    start = next(i for i, line in enumerate(lines) if "rdq changes since old.json" in line)
    kit_section = next(i for i, line in enumerate(lines) if "= rdq compliance =" in line)
    assert start < kit_section
    assert lines[start + 1].startswith("changes: verdict non-compliant → incomplete; ")
    assert "  FIXED [fake] RDQ-RT-007 (MUST) failed → passed" in lines
    assert any(line.startswith("  FIXED [fake] cause /created_at ") for line in lines)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n\n### Changes since old.json\n"), text[:200]
    assert "| **fixed** | fake | RDQ-RT-007 (MUST) failed → passed |" in text
    assert text.index("### Changes since") < text.index("## rdq")


def test_a_baseline_that_is_not_a_report_is_a_usage_error(kit: pytest.Pytester) -> None:
    (kit.path / "old.json").write_text("{}", encoding="utf-8")
    result = run(kit, "--rdq-plugin=fake", *ONE, "--rdq-baseline=old.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "--rdq-baseline=" in errors[0], result.stderr.lines
