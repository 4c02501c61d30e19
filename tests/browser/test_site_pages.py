"""The registry site in Chromium: matrix, plugin pages, badges, links that resolve,
the tampered report rejected, no console error, no serious axe violation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import EXAMPLES, HISTORY_NAME, REGRESSED, Page, Site

# One worker for every browser test: the session's kit runs, site and browser are made once
# (a marker added in a conftest hook comes too late for xdist's grouping).
pytestmark = pytest.mark.xdist_group("browser")


def test_the_matrix_has_every_plugin_and_links_to_its_run(page: Page, site: Site):
    page.open(site.root / "index.html")
    page.screenshot("site-index")
    names = {p["name"] for r in site.reports.values() for p in r["plugins"]
             if p["name"] is not None}
    header = page.page.locator("table.matrix thead").inner_text()
    for name in names:
        assert name in header, name
    assert {"memory", *EXAMPLES} <= set(site.reports)  # the six example plugins
    assert HISTORY_NAME in header
    # Each cell of the first row opens the run's report at that requirement.
    cell = page.page.locator("table.matrix tbody tr").first.locator("td a").first
    status = cell.inner_text()
    cell.click()
    page.page.wait_for_load_state("load")
    target = page.page.evaluate("location.hash")
    assert target.startswith("#req-")
    row = page.page.locator(target)
    assert row.count() == 1 and row.get_attribute("data-status") == status
    assert page.page.locator("a", has_text="conformance registry").count() == 1


def test_the_tampered_report_is_listed_as_rejected_only(page: Page, site: Site):
    page.open(site.root / "index.html")
    rejected = page.page.locator("ul.rejected li")
    assert rejected.count() == 1
    assert site.tampered.name in rejected.inner_text()
    assert "digest mismatch" in rejected.inner_text()
    assert "forged" not in page.page.locator("table.matrix").inner_text()
    data = json.loads((site.root / "data" / "registry.json").read_text(encoding="utf-8"))
    assert [r["path"] for r in data["rejected"]] == [str(site.tampered)]


def test_every_link_in_the_site_resolves(page: Page, site: Site):
    pages = [site.root / "index.html", *sorted((site.root / "plugins").glob("*.html"))]
    checked = 0
    for path in pages:
        page.open(path)
        hrefs = page.page.locator("a[href], img[src]").evaluate_all(
            "es => es.map(e => e.href || e.src)")
        for url in hrefs:
            assert url.startswith("file://"), (path, url)
            target = Path(url.removeprefix("file://").split("#")[0])
            assert target.is_file(), (path, url)
            fragment = url.partition("#")[2]
            if fragment and target.suffix == ".html":
                assert f'id="{fragment}"' in target.read_text(encoding="utf-8"), (path, url)
            checked += 1
        # Every image loaded (the badges).
        broken = page.page.locator("img").evaluate_all(
            "is => is.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
        assert broken == [], broken
    assert checked > 100


def test_a_plugin_page_shows_versions_and_copyable_badges(page: Page, site: Site):
    page.open(site.root / "plugins" / "memory.html")
    page.screenshot("site-plugin-memory")
    assert page.page.locator("table.versions tbody tr").count() >= 1
    markdown = page.page.get_by_label("Markdown").input_value()
    assert markdown == "[![rdq memory](badges/memory.svg)](plugins/memory.html)"
    assert page.page.get_by_label("HTML").input_value().startswith('<a href="plugins/memory')
    badge = page.page.locator("img[alt^='badge of memory']")
    assert badge.evaluate("i => i.naturalWidth") > 0
    svg = (site.root / "badges" / "memory.svg").read_text(encoding="utf-8")
    assert "quick profile" in svg  # the runs are quick: the badge says so


def test_the_site_pages_pass_axe(page: Page, site: Site):
    pages = [site.root / "index.html", *sorted((site.root / "plugins").glob("*.html")),
             *sorted((site.root / "runs").glob("*.html"))]
    for path in pages:
        page.open(path)
        name = f"site-{path.parent.name}-{path.stem}"
        blocking = page.axe(name)
        assert blocking == [], (path, [(v["id"], v["impact"], v["help"]) for v in blocking])


def test_a_plugin_page_shows_what_regressed_and_what_was_fixed(page: Page, site: Site):
    page.open(site.root / "plugins" / f"{HISTORY_NAME}.html")
    page.screenshot("site-plugin-history", full_page=True)
    rows = page.page.locator("table.versions tbody tr")
    assert [r.locator("td").first.inner_text() for r in rows.all()] == ["1.11", "1.10", "1.9"]
    newest, middle, oldest = rows.all()
    assert newest.locator("td.fixed").inner_text() == REGRESSED
    assert newest.locator("td.regressed").inner_text() == "none"
    assert middle.locator("td.regressed").inner_text() == REGRESSED
    assert middle.locator(".verdict").inner_text() == "non-compliant"
    assert oldest.locator("td.regressed").inner_text() == "none"
    # The middle version's verdict opens that run's report.
    middle.locator("a", has_text="non-compliant").click()
    page.page.wait_for_load_state("load")
    assert page.page.locator("h1 .verdict").inner_text().startswith("non-compliant")
