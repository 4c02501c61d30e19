"""What a kit run produced, as plain values: the input of every verdict and report.

Nothing here knows pytest. The pytest glue (``_pytest/reporting_plugin.py``)
turns test reports into :class:`TestResult` values through :class:`ResultCollector`;
unit tests build them by hand.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from ._symptom import Symptom

__all__ = [
    "MESSAGE_MAX_CHARS",
    "MESSAGE_MAX_LINES",
    "PluginMeta",
    "RequirementStatus",
    "ResultCollector",
    "RunMeta",
    "TestResult",
    "TestStatus",
    "Verdict",
    "clip_message",
]

MESSAGE_MAX_LINES = 20
"""A failure message keeps its first lines only: enough to act on, small enough to ship."""
MESSAGE_MAX_CHARS = 4000
"""...and at most this many characters (a diff of a 1 MiB envelope would not fit a report)."""


class TestStatus(enum.StrEnum):
    """The outcome of one test (all its phases together)."""

    __test__ = False  # not a pytest test class, despite the name

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"
    """Setup or teardown failed: the check itself could not run cleanly."""


class RequirementStatus(enum.StrEnum):
    """The status of one requirement for one plugin."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"
    NOT_RUN = "not-run"
    """No test of the requirement reported (deselected, run stopped early)."""
    NOT_APPLICABLE = "not-applicable"
    """Gated on a capability the plugin does not declare."""


class Verdict(enum.StrEnum):
    COMPLIANT = "compliant"
    NON_COMPLIANT = "non-compliant"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class TestResult:
    """One kit test against one plugin."""

    __test__ = False

    nodeid: str
    requirement: str
    plugin: str
    """The plugin label (the name given to --rdq-plugin)."""
    status: TestStatus
    message: str | None = None
    """First lines of the failure, or the skip reason."""
    duration: float = 0.0
    """Seconds, all phases together."""
    not_applicable: bool = False
    """Skipped because the requirement does not apply to this plugin (the kit said so
    through the ``rdq_not_applicable`` user property), not because it could not run."""
    cause: Symptom | None = None
    """What differed, when the failure is a round trip that read back something else."""


@dataclass(frozen=True, slots=True)
class PluginMeta:
    """What the run knows about one plugin under test."""

    label: str
    name: str | None = None
    """The name the plugin declared (None when it could not be opened)."""
    version: str | None = None
    envelope_versions: frozenset[int] = frozenset()
    capabilities: frozenset[str] = frozenset()
    unavailable: str | None = None
    """Why the plugin could not be opened, when it could not."""


@dataclass(frozen=True, slots=True)
class RunMeta:
    kit_version: str
    fixture_hash: str
    profile: str
    seed: int
    started_at: datetime
    duration: float
    """Seconds."""
    plugins: tuple[PluginMeta, ...]
    aborted: str | None = None
    """Why the run stopped early (-x, interrupt, crashed testee), when it did."""
    notes: tuple[str, ...] = ()
    """What else the kit noticed (a storage that had to be reopened, a failed close)."""
    upgraded_from: str | None = None
    """``name version`` of the release whose corpus an --rdq-upgrade-check run read (C19)."""
    run_token: str | None = None
    """The token in the name of every namespace this run created."""
    spec_url: str | None = None
    """Where the spec is published (--rdq-spec-url): the report's ``spec`` when given."""


_KEPT_NOTES = ("replay: ", "replay note: ")
"""Lines a clipped message keeps wherever they are: the failure's replay command (the
kit adds it last, past the diff) is what a reader of the report acts on."""


def clip_message(text: str | None) -> str | None:
    """The first :data:`MESSAGE_MAX_LINES` lines of ``text``, at most :data:`MESSAGE_MAX_CHARS`,
    then its replay lines (each cut to :data:`MESSAGE_MAX_CHARS`)."""
    if text is None:
        return None
    lines = text.rstrip("\n").split("\n")
    kept = "\n".join(lines[:MESSAGE_MAX_LINES])
    more = len(lines) - MESSAGE_MAX_LINES
    notes = "".join("\n" + line[:MESSAGE_MAX_CHARS]
                    for line in lines[MESSAGE_MAX_LINES:] if line.startswith(_KEPT_NOTES))
    if len(kept) > MESSAGE_MAX_CHARS:
        kept = kept[:MESSAGE_MAX_CHARS]
        return kept + "\n… (message cut)" + notes
    if more > 0:
        return kept + f"\n… ({more} more lines)" + notes
    return kept


@dataclass
class _Pending:
    requirement: str
    plugin: str
    status: TestStatus | None = None
    message: str | None = None
    duration: float = 0.0
    not_applicable: bool = False
    order: int = 0
    cause: Symptom | None = None


@dataclass
class ResultCollector:
    """Folds the phase reports (setup, call, teardown) of tests into :class:`TestResult`.

    - setup failed -> error; setup skipped -> skipped (reason kept)
    - call failed -> failed; call skipped -> skipped; call passed -> passed
    - an expected failure (xfail) is a failure of the requirement: the check did fail
    - teardown failed -> error, unless the test already failed
    A test with no final status (interrupted inside it) is not reported.
    """

    _tests: dict[str, _Pending] = field(default_factory=dict)
    unattributed_failures: list[str] = field(default_factory=list)
    """Failed tests that carry no requirement (the author's own tests)."""

    def add_phase(
        self,
        nodeid: str,
        when: str,
        outcome: str,
        *,
        requirement: str | None,
        plugin: str | None,
        text: str | None = None,
        duration: float = 0.0,
        xfail: str | None = None,
        not_applicable: bool = False,
        cause: Symptom | None = None,
    ) -> None:
        """Record one phase. ``outcome`` is pytest's passed/failed/skipped; ``text``
        the failure text or the skip reason; ``xfail`` the reason of an expected failure."""
        if requirement is None:
            if outcome == "failed" and nodeid not in self.unattributed_failures:
                self.unattributed_failures.append(nodeid)
            return
        t = self._tests.get(nodeid)
        if t is None:
            t = self._tests[nodeid] = _Pending(requirement, plugin or "?", order=len(self._tests))
        t.duration += duration
        if when == "call" and xfail is not None and outcome == "skipped":
            outcome, text = "failed", f"expected failure (xfail) of a kit check: {xfail}"
        if outcome == "passed":
            if when == "call" and t.status is None:
                t.status = TestStatus.PASSED
        elif outcome == "skipped":
            if t.status is None:
                t.status, t.message = TestStatus.SKIPPED, text
                t.not_applicable = not_applicable
        elif outcome == "failed":
            if when == "call":
                t.status, t.message, t.cause = TestStatus.FAILED, text, cause
            elif t.status is not TestStatus.FAILED and t.status is not TestStatus.ERROR:
                t.status = TestStatus.ERROR
                t.message = f"{when} failed: {text}" if text else f"{when} failed"

    def results(self) -> list[TestResult]:
        return [
            TestResult(
                nodeid=nodeid,
                requirement=t.requirement,
                plugin=t.plugin,
                status=t.status,
                message=clip_message(t.message),
                duration=t.duration,
                not_applicable=t.not_applicable and t.status is TestStatus.SKIPPED,
                cause=t.cause if t.status is TestStatus.FAILED else None,
            )
            for nodeid, t in sorted(self._tests.items(), key=lambda kv: kv[1].order)
            if t.status is not None
        ]

    def failed_nodeids(self) -> list[str]:
        """Every kit test that failed or errored."""
        return [
            nodeid
            for nodeid, t in self._tests.items()
            if t.status in (TestStatus.FAILED, TestStatus.ERROR)
        ]
