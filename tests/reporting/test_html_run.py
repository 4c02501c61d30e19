"""--rdq-html and --rdq-spec-url in a real kit run (a child pytest, memory plugin, quick)."""

from __future__ import annotations

from pathlib import Path

from rdq_compliance.reporting import verify_report
from rdq_compliance.reporting._html import render_html
from tests.mutants._harness import run_kit

PUBLISHED = "https://rdq.example/spec/clarifications.md"


def test_a_run_writes_its_html_page_and_records_the_spec_url(tmp_path: Path) -> None:
    page = tmp_path / "out" / "report.html"
    r = run_kit(["--rdq-plugin=memory"], timeout=600,
                extra=[f"--rdq-html={page}", f"--rdq-spec-url={PUBLISHED}"])
    assert r.returncode == 0, r.describe()
    assert r.report is not None
    verify_report(r.report)
    assert r.report["spec"] == PUBLISHED
    assert "HTML report written:" in r.output
    assert page.read_text(encoding="utf-8") == render_html(r.report)
    assert f'href="{PUBLISHED}#c' in page.read_text(encoding="utf-8")


def test_a_spec_url_that_is_not_http_is_a_usage_error(tmp_path: Path) -> None:
    r = run_kit(["--rdq-plugin=memory"], timeout=600,
                extra=["--rdq-spec-url=docs/spec/clarifications.md"])
    assert r.returncode == 4, r.describe()
    assert "--rdq-spec-url='docs/spec/clarifications.md' is not an http(s) address" in r.output
