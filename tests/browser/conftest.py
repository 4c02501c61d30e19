"""Browser tests: the HTML report and the site in headless Chromium (issue 24 §5).

Debian's Chromium (``/usr/bin/chromium``) driven by Playwright for Python (never
``playwright install``: it downloads a browser), and axe-core from npm
(``npm ci`` in this folder) injected into each page. Missing either, the tests skip
with the reason, or fail when ``RDQ_REQUIRE_SERVICES=1`` (CI: ``.ci/run`` installs both).

The reports are real kit runs (``--rdq-profile quick``), made once per session: the
memory plugin (compliant), a zoo mutant (non-compliant), the six example plugins and
a tampered report for the site. Screenshots, axe results and the pages are kept in
``tests/browser/artifacts/`` (git-ignored; CI can upload it).

``RDQ_BROWSER_REPORTS=DIR`` (a local loop on the pages, never in CI): take each run's report
from ``DIR/<name>.json`` when it is there (e.g. ``tests/browser/artifacts/runs`` of the last
session) and render its page with ``rdq-compliance html`` instead of running the kit.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.mutants._harness import KitResult, run_kit

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# One folder per xdist worker: each worker's session makes its own kit runs and site (the
# group marker does not keep the browser tests on one worker here), and two workers must
# never rebuild one site under each other's feet.
ARTIFACTS = HERE / "artifacts" / os.environ.get("PYTEST_XDIST_WORKER", "main")
CHROMIUM = Path("/usr/bin/chromium")
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
REQUIRE_ENV = "RDQ_REQUIRE_SERVICES"
REUSE_ENV = "RDQ_BROWSER_REPORTS"
MUTANT = "tests.mutants.zoo:drop_unknown_error"
BLOCKING = ("serious", "critical")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker")
    config.addinivalue_line(
        "markers", "browser: opens the HTML report and the site in headless Chromium "
        "(needs /usr/bin/chromium, playwright and tests/browser/node_modules/axe-core)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 and {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {REQUIRE_ENV}=1 to fail instead)")


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    if not AXE.exists():
        return f"axe-core is not installed at {AXE} (npm ci in tests/browser)"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = _missing()
    if reason is not None:
        unavailable(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM))
        yield b
        b.close()


@dataclass
class Page:
    """A Playwright page that records console errors and uncaught exceptions."""

    page: Any
    errors: list[str] = field(default_factory=list)

    def open(self, path: Path) -> None:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def axe(self, name: str) -> list[dict[str, Any]]:
        """Run axe-core on the page; its results are kept as an artifact; returns the
        serious and critical violations."""
        self.page.add_script_tag(path=str(AXE))
        result = self.page.evaluate("() => axe.run()")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"axe-{name}.json").write_text(
            json.dumps(result["violations"], indent=2), encoding="utf-8")
        return [v for v in result["violations"] if v.get("impact") in BLOCKING]

    def screenshot(self, name: str, *, full_page: bool = False) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    p = Page(context.new_page())
    p.page.on("console", lambda m: p.errors.append(f"console {m.type}: {m.text}")
              if m.type in ("error", "warning") else None)
    p.page.on("pageerror", lambda e: p.errors.append(f"page error: {e}"))
    yield p
    context.close()
    assert p.errors == [], p.errors


def _kit(name: str, plugin_args: list[str]) -> tuple[KitResult, Path]:
    """A quick kit run writing its HTML report to artifacts/runs/<name>.html."""
    runs = ARTIFACTS / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    html = runs / f"{name}.html"
    saved = Path(os.environ.get(REUSE_ENV, "/nonexistent")) / f"{name}.json"
    if os.environ.get(REUSE_ENV) and saved.is_file():
        from rdq_compliance._cli import main

        report = json.loads(saved.read_text(encoding="utf-8"))
        (runs / f"{name}.json").write_text(json.dumps(report, ensure_ascii=False),
                                           encoding="utf-8")
        assert main(["html", str(runs / f"{name}.json"), "-o", str(html)]) == 0
        code = 0 if report["verdict"] == "compliant" else 1
        return KitResult([f"(reused {saved})"], code, "", report, 0.0, saved.parent), html
    html.unlink(missing_ok=True)
    if name in SHARED:
        result = _shared(name)
        shutil.copyfile(result.cwd / "report.html", html)
    else:
        result = run_kit(plugin_args, profile="quick", timeout=900,
                         extra=[f"--rdq-html={html}"])
    assert result.report is not None, result.describe()
    assert result.kit_tracebacks() == [], result.describe()
    (runs / f"{name}.json").write_text(json.dumps(result.report, ensure_ascii=False),
                                       encoding="utf-8")
    return result, html


SHARED = ("memory",)
"""Runs that tests/plugins_example/test_kit_runs.py makes too, with its checks
(``_kit_runs.quick_run``, once per session for both)."""


def _shared(name: str) -> KitResult:
    from tests.plugins_example._kit_runs import quick_run

    run = quick_run(name).run
    assert run is not None, f"the quick run of {name} wrote no report"
    return KitResult([f"(tests/plugins_example/_kit_runs.quick_run({name!r}))"],
                     run.returncode, run.output, run.report, 0.0, run.work)


@dataclass
class Runs:
    compliant: KitResult
    compliant_html: Path
    failing: KitResult
    failing_html: Path


@pytest.fixture(scope="session")
def runs(browser: Any) -> Runs:
    """The memory plugin (compliant) and a zoo mutant (non-compliant), quick profile."""
    memory, memory_html = _kit("memory", ["--rdq-plugin=memory"])
    assert memory.returncode == 0 and memory.report["verdict"] == "compliant", memory.describe()
    mutant, mutant_html = _kit("mutant", [f"--rdq-plugin={MUTANT}"])
    assert mutant.returncode == 1 and mutant.report["verdict"] == "non-compliant", (
        mutant.describe())
    return Runs(memory, memory_html, mutant, mutant_html)


EXAMPLES = ("sqlite", "node", "postgres", "mariadb", "redis")
"""The example plugins besides memory: their quick runs are tests/plugins_example's
(``_kit_runs.quick_run``, made once per session for both; the server ones use their
default options)."""


HISTORY_NAME = "history-example"
REGRESSED = "RDQ-RT-007"
HISTORY = (("1.9", ()), ("1.10", (REGRESSED,)), ("1.11", ()))


@dataclass
class Site:
    root: Path
    reports: dict[str, dict[str, Any]]
    tampered: Path


def _example(name: str) -> dict[str, Any]:
    """The quick run of an example plugin that tests/plugins_example/test_kit_runs.py checks
    (made by the first of the two to ask), its report kept in artifacts/runs/<name>.json."""
    saved = Path(os.environ.get(REUSE_ENV, "/nonexistent")) / f"{name}.json"
    if os.environ.get(REUSE_ENV) and saved.is_file():
        report: dict[str, Any] = json.loads(saved.read_text(encoding="utf-8"))
    else:
        result = _shared(name)
        assert result.kit_tracebacks() == [], result.describe()
        report = result.report
    runs = ARTIFACTS / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    (runs / f"{name}.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    return report


@pytest.fixture(scope="session")
def site(runs: Runs) -> Site:
    """``rdq-compliance site`` over the six example plugins, two mutants and a tampered
    report. A plugin whose server is down is reported as not opened (incomplete)."""
    from rdq_compliance._cli import main

    reports = {"memory": runs.compliant.report, "mutant": runs.failing.report}
    for name in EXAMPLES:
        report = _example(name)
        reports[name] = report
        unopened = [p["unavailable"] for p in report["plugins"] if p["unavailable"]]
        if unopened and os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 and {name} could not be opened: {unopened}")
    second, _ = _kit("mutant2", ["--rdq-plugin=tests.mutants.zoo:nfc_normalization"])
    reports["mutant2"] = second.report
    paths = [ARTIFACTS / "runs" / f"{name}.json" for name in reports]
    # Versions over time: three genuine (synthetic) releases of one plugin, the second
    # regressing a requirement the third fixes.
    from tests.reporting._pages import release

    for i, (version, failing) in enumerate(HISTORY, 1):
        path = ARTIFACTS / "runs" / f"history-{version}.json"
        path.write_text(json.dumps(release(version, name=HISTORY_NAME, day=i,
                                           failing=failing)), encoding="utf-8")
        paths.append(path)
    forged = dict(runs.failing.report)
    forged["plugins"] = [{**p, "verdict": "compliant", "label": "forged"}
                         for p in forged["plugins"]]
    forged["verdict"] = "compliant"
    tampered = ARTIFACTS / "runs" / "tampered.json"
    tampered.write_text(json.dumps(forged), encoding="utf-8")
    root = ARTIFACTS / "site"
    shutil.rmtree(root, ignore_errors=True)
    assert main(["site", *map(str, paths), str(tampered), "-o", str(root)]) == 0
    return Site(root, reports, tampered)
