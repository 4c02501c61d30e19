"""``--rdq-baseline FILE``: the summaries lead with what changed since a previous report.

The terminal summary gets a section of the changes (:mod:`rdq_compliance.reporting._diff`)
before the kit's own; the ``--rdq-summary`` Markdown gets it before the part this run
appended. The exit status is the verdict's, as without a baseline: a gate on "no new
failure" is ``--rdq-known-failures`` (``rdq-compliance known-failures OLD.json``).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ..reporting import ReportError, load_report, verify_report
from ..reporting._diff import diff_markdown, diff_reports, diff_text
from ..reporting._github import SUMMARY_LIMIT, fit_summary
from ._options import path_option

__all__ = ["BaselinePlugin", "configure"]


def configure(config: pytest.Config) -> None:
    path = path_option(config, "rdq_baseline")
    if path is None:
        return
    try:
        baseline = load_report(path)
        verify_report(baseline)
    except ReportError as e:
        raise pytest.UsageError(f"--rdq-baseline={str(path)!r}: {e}; expected a report "
                                "written by --rdq-report") from None
    config.pluginmanager.register(BaselinePlugin(config, path, baseline), "rdq-baseline")


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


class BaselinePlugin:
    def __init__(self, config: pytest.Config, path: Path, baseline: Mapping[str, Any]) -> None:
        self.config = config
        self.path = path
        self.baseline = baseline

    def _summary(self) -> Path | None:
        """Where this run appends its Markdown summary: the output of the format unit that
        writes Markdown (``what`` "summary"), if the run was given one."""
        reporting = self.config.pluginmanager.get_plugin("rdq-reporting")
        for fmt, path in getattr(reporting, "outputs", ()):
            if fmt.what == "summary":
                return Path(path)
        return None

    def _report(self) -> Mapping[str, Any] | None:
        reporting = self.config.pluginmanager.get_plugin("rdq-reporting")
        report: Mapping[str, Any] | None = getattr(reporting, "report", None)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        summary = self._summary()
        before = _size(summary)
        result = yield  # the reporting plugin writes the report and the summary
        report = self._report()
        if (report is None or hasattr(self.config, "workerinput") or summary is None
                or _size(summary) <= before):
            return result
        diff = diff_reports(self.baseline, report)
        data = summary.read_bytes()
        if data[before:before + 1] == b"\n":
            before += 1  # the blank line the summary writer puts after earlier content
        head, ours = data[:before], data[before:].decode("utf-8")
        section = diff_markdown(diff, baseline=self.path.name) + "\n"
        # the section leads; what this run appended keeps to GitHub's limit with it
        text = section + fit_summary(ours, max(SUMMARY_LIMIT - len(head) - len(
            section.encode("utf-8")), 0))
        summary.write_bytes(head + text.encode("utf-8"))
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        report = self._report()
        if report is None:
            return
        tr = terminalreporter
        tr.write_sep("=", f"rdq changes since {self.path.name}")
        diff = diff_reports(self.baseline, report)
        for n, line in enumerate(diff_text(diff)):
            new = n > 0 and " NEW REGRESSION " in f" {line.strip()[:15]} "
            tr.write_line(line, bold=n == 0, red=new)
