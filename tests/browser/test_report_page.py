"""The HTML report of a real run, in Chromium: verdict and first cause with its diff
above the fold, filters, in-page links, no console error, no serious axe violation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import Page, Runs

# One worker for every browser test: the session's kit runs, site and browser are made once
# (a marker added in a conftest hook comes too late for xdist's grouping).
pytestmark = pytest.mark.xdist_group("browser")


def _visible_in_viewport(page: Page, selector: str) -> bool:
    box = page.page.locator(selector).first.bounding_box()
    view = page.page.viewport_size
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= view["height"]


def test_a_failing_run_shows_verdict_and_first_cause_above_the_fold(page: Page, runs: Runs):
    page.open(runs.failing_html)
    shot = page.screenshot("report-failing-fold")
    assert shot.stat().st_size > 0
    plugin = runs.failing.report["plugins"][0]
    cause = plugin["causes"][0]
    verdict = page.page.locator("h1 .verdict")
    assert verdict.inner_text() == "non-compliant"
    assert _visible_in_viewport(page, "h1 .verdict")
    first = page.page.locator("article.cause").first
    assert cause["summary"] in first.locator("h3").inner_text()
    assert _visible_in_viewport(page, "article.cause h3")
    # The first diff line, written and read back, is on screen too.
    assert _visible_in_viewport(page, "article.cause table.diff tbody tr")
    assert first.locator("table.diff td.side").first.inner_text() == "written"
    # The failing tests are folded, and open on a click.
    details = first.locator("details")
    assert not details.evaluate("d => d.open")
    details.locator("summary").click()
    assert details.evaluate("d => d.open")
    assert first.locator("details li").count() == len(cause["tests"])


def test_the_failed_only_filter_hides_the_passed_rows(page: Page, runs: Runs):
    page.open(runs.failing_html)
    requirements: list[dict[str, Any]] = runs.failing.report["plugins"][0]["requirements"]
    failed = [r["id"] for r in requirements if r["status"] in ("failed", "error")]
    rows = page.page.locator("tr[data-status]")
    assert rows.count() == len(requirements)
    assert len(failed) not in (0, len(requirements))
    page.page.get_by_label("failed only").check()
    visible = [r for r in rows.all() if r.is_visible()]
    assert len(visible) == len(failed)
    assert {r.locator("td").first.inner_text() for r in visible} == set(failed)
    page.page.get_by_label("failed only").uncheck()
    assert sum(r.is_visible() for r in rows.all()) == len(requirements)


def test_the_family_filter_shows_one_family(page: Page, runs: Runs):
    page.open(runs.compliant_html)
    requirements = runs.compliant.report["plugins"][0]["requirements"]
    family = requirements[0]["suite"]
    page.page.select_option("#filter-family", family)
    visible = [r for r in page.page.locator("tr[data-status]").all() if r.is_visible()]
    assert len(visible) == sum(r["suite"] == family for r in requirements)
    assert {r.get_attribute("data-family") for r in visible} == {family}
    page.page.select_option("#filter-family", "")
    assert sum(r.is_visible() for r in page.page.locator("tr[data-status]").all()) == len(
        requirements)


def test_clause_links_land_on_the_embedded_clause_text(page: Page, runs: Runs):
    page.open(runs.failing_html)
    links = page.page.locator("a[href^='#clause-']")
    assert links.count() > 0
    targets = set(links.evaluate_all("as => as.map(a => a.getAttribute('href'))"))
    for href in targets:
        section = page.page.locator(href)
        assert section.count() == 1, href
        assert len(section.locator(".clause-text").inner_text()) > 40, href
    links.first.click()
    assert page.page.evaluate("location.hash").startswith("#clause-")
    # No link leaves the page: no network, no relative path into the kit's repository.
    others = page.page.locator("a[href]:not([href^='#'])")
    assert others.count() == 0, others.evaluate_all("as => as.map(a => a.href)")


def test_the_pages_pass_axe(page: Page, runs: Runs):
    for name, path in (("report-failing", runs.failing_html),
                       ("report-compliant", runs.compliant_html)):
        page.open(path)
        page.screenshot(name, full_page=True)
        blocking = page.axe(name)
        assert blocking == [], [(v["id"], v["impact"], v["help"]) for v in blocking]


def test_white_space_in_keys_and_values_shows_as_written(page: Page, tmp_path: Path):
    """Keys a PAD SPACE collation merges ('k', 'k ', 'k  ') differ only in trailing
    spaces: the page shows them as written, in the cause's title and in the diff (its
    field column too), not collapsed to one space by HTML."""
    from dataclasses import replace

    from rdq_compliance.reporting import TestStatus, build_report, evaluate
    from rdq_compliance.reporting._html import render_html
    from rdq_compliance.reporting._symptom import Symptom
    from tests.reporting._synth import meta, passing, run_meta

    diff = "  /headers/k  : header 'k  ' missing: expected 'two  '  [C8 C4]"
    symptom = Symptom(pointer="/headers/k  ", pattern="/headers/*", kind="keys merged",
                      clause="C8 C4", difference="missing", diff=diff,
                      summary="'k' came back holding the value written to 'k  '")
    tests = [replace(t, cause=symptom) if t.status is TestStatus.FAILED else t
             for t in passing(override={"RDQ-RT-009": TestStatus.FAILED},
                              message=f"E keys merged\n{diff}")]
    report = build_report(run_meta([meta()]), evaluate([meta()], tests))
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page.open(path)
    cause = page.page.locator("article.cause").first
    assert "written to 'k  '" in cause.locator("h3").inner_text()
    row = cause.locator("table.diff tbody tr").first
    assert row.locator("td").first.inner_text() == "/headers/k  "
    assert "'two  '" in row.inner_text()
