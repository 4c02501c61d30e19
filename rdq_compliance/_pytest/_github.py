"""pytest glue for CI: JUnit properties of a failure and GitHub annotations at the end.

- Every failed kit test gets the user properties ``rdq_cause`` (one line: the place and
  kind of the first difference, or the failure's first line) and ``rdq_replay`` (the
  command that replays its saved case) on its teardown report, the one pytest's
  ``--junitxml`` writes properties from; ``rdq_requirement`` is there already (kit.py).
  Put on the worker's report, they survive the trip to an xdist controller.
- Under GitHub Actions (``GITHUB_ACTIONS=true``) the controller prints the report's
  annotations (:mod:`rdq_compliance.reporting._github`) as workflow commands after the
  terminal summary.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

from ..testing._failures import CheckFailed, find_failure

__all__ = ["CAUSE_LINE_PROP", "REPLAY_PROP", "GithubGlue", "configure"]

CAUSE_LINE_PROP = "rdq_cause"
REPLAY_PROP = "rdq_replay"
_FAILURE = pytest.StashKey[list[tuple[str, str]]]()


def configure(config: pytest.Config) -> None:
    config.pluginmanager.register(GithubGlue(config), "rdq-github")


def _cause_line(exc: BaseException) -> str:
    failure = find_failure(exc, CheckFailed)
    symptom = failure.symptom if failure is not None else None
    if symptom is not None:
        return f"{symptom.pattern}: {symptom.summary} [{symptom.clause}]"
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return (first or type(exc).__name__)[:300]


def _replay_line(exc: BaseException) -> str | None:
    for note in getattr(exc, "__notes__", None) or ():
        if isinstance(note, str) and note.startswith("replay: "):
            return note.removeprefix("replay: ")
    return None


class GithubGlue:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.replays: dict[str, str] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call" and call.excinfo is not None and any(
                k == "rdq_requirement" for k, _ in item.user_properties):
            props = [(CAUSE_LINE_PROP, _cause_line(call.excinfo.value))]
            replay = _replay_line(call.excinfo.value)
            if replay is not None:
                props.append((REPLAY_PROP, replay))
            item.stash[_FAILURE] = props
        elif call.when == "teardown" and _FAILURE in item.stash:
            # a new list: the item's own is shared by its other reports
            report.user_properties = [*report.user_properties, *item.stash[_FAILURE]]
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == REPLAY_PROP:
                self.replays[report.nodeid] = str(value)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if os.environ.get("GITHUB_ACTIONS") != "true" or hasattr(self.config, "workerinput"):
            return
        reporting = self.config.pluginmanager.get_plugin("rdq-reporting")
        report = getattr(reporting, "report", None)
        if report is None:
            return
        from ..reporting._github import workflow_commands

        for line in workflow_commands(report, self.replays):
            terminalreporter.write_line(line)
