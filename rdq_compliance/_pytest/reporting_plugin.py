"""pytest glue of the reporting: results, report files, terminal summary, gate.

- Results come from ``pytest_runtest_logreport``, which also runs on the xdist
  controller (reports carry ``user_properties``); kit tests are the ones tagged
  ``rdq_requirement`` by the kit at collection.
- The report and its renderings are written in ``pytest_sessionfinish`` in every
  case (-x, Ctrl-C, -k), once per run: never on an xdist worker. Which files, and
  how, is up to the report format units (``formats/``): this module only iterates them.
- ``--rdq-known-failures`` turns the pytest exit status into "no *new* failures".
"""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Generator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .. import __version__
from ..reporting import (
    GateOutcome,
    KnownFailures,
    KnownFailuresError,
    PluginMeta,
    ResultCollector,
    RunMeta,
    build_report,
    evaluate,
    gate,
    load_known_failures,
    terminal_lines,
    terminal_safe,
)
from ..reporting._clauses_text import is_absolute_url
from ..reporting._symptom import Symptom
from ..reporting._verdict import in_other_shards
from ..testing._failures import CheckFailed, OperationHung, find_failure
from ..testing._symptoms import symptom_of_exception
from ._incomplete import untested, untested_line
from ._options import option, path_option
from ._shard import OTHER_SHARD
from ._state import RUN_KEY, KitRun
from .formats import ReportFormat, report_formats

__all__ = ["ReportingPlugin", "configure"]


def _check_spec_url(config: pytest.Config) -> None:
    url = option(config, "rdq_spec_url")
    if url and not is_absolute_url(str(url)):
        raise pytest.UsageError(
            f"--rdq-spec-url={url!r} is not an http(s) address; expected where the spec's "
            "clarifications.md is published, e.g. https://example.org/spec/clarifications.md")


def configure(config: pytest.Config) -> None:
    """Called by the kit's entry ``pytest_configure`` when --rdq-plugin is given."""
    _check_spec_url(config)
    outputs: list[tuple[ReportFormat, Path]] = []
    for fmt in report_formats():
        path = path_option(config, fmt.ini)
        if path is None:
            continue
        fmt.configure(path)
        outputs.append((fmt, path))
    known = None
    known_path = path_option(config, "rdq_known_failures")
    if known_path is not None:
        try:
            known = load_known_failures(known_path)
        except KnownFailuresError as e:
            raise pytest.UsageError(f"--rdq-known-failures: {e}") from None
    config.pluginmanager.register(ReportingPlugin(config, outputs, known), "rdq-reporting")


def write_usage_error_outputs(config: pytest.Config, error: str) -> None:
    """After a usage error: write every output whose path was given and can be used
    (every report format), verdict incomplete, the error as the reason."""
    if hasattr(config, "workerinput"):
        return
    reason = f"usage error: {error}"
    labels = option(config, "rdq_plugins")
    metas = tuple(PluginMeta(label=str(label), unavailable=reason)
                  for label in (labels if isinstance(labels, list) else []))
    meta = RunMeta(kit_version=__version__, fixture_hash="unknown",
                   profile=str(option(config, "rdq_profile")), seed=0,
                   started_at=datetime.now(UTC), duration=0.0, plugins=metas, aborted=reason)
    report = build_report(meta, evaluate(meta.plugins, [], aborted=reason))
    for fmt in report_formats():
        try:
            path = path_option(config, fmt.ini)
            if path is None or path.is_dir():
                continue
            fmt.write(path, report)
        except (OSError, ValueError):
            continue  # the usage error is what the user must see; nothing to add


def _props(report: pytest.TestReport) -> dict[str, str]:
    # user_properties are (name, value) pairs; after an xdist round trip they may be lists
    found: dict[str, str] = {}
    for item in report.user_properties:
        name, value = item
        found.setdefault(str(name), str(value))
    return found


_DESELECTED_KEY = "rdq_deselected"
_OTHER_SHARDS_KEY = "rdq_other_shards"
_CAUSE_PROP = "rdq_cause"
"""The user property that carries a failure's :class:`Symptom` (as JSON) from the test,
maybe on an xdist worker, to the report."""


_E_LINE = re.compile(r"^E(?: |$)")


def _failure_text(report: pytest.TestReport) -> str:
    """The exception lines of a failure (pytest's ``E`` lines), not the source code that
    precedes them; the whole text when there are none (e.g. ``pytest.fail(pytrace=False)``)."""
    text = report.longreprtext
    found = [line[1:] for line in text.splitlines() if _E_LINE.match(line)]
    # pytest indents E lines like the failing source line: drop that common indent
    return textwrap.dedent("\n".join(found)).strip("\n") if found else text


_MAXFAIL = re.compile(r"stopping after (\d+) failures?")


def _stop_reason(why: object) -> str:
    """Why the run stopped, as the clause after "the run stopped early:"; pytest's and
    xdist's "stopping after N failures" (-x, --maxfail) said once, in words."""
    text = str(why)
    m = _MAXFAIL.fullmatch(text.strip())
    if m is None:
        return text
    n = int(m.group(1))
    return ("after the first failure (-x)" if n == 1
            else f"after {n} failures (--maxfail={n})")


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple | list) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    return str(longrepr)


class ReportingPlugin:
    def __init__(
        self,
        config: pytest.Config,
        outputs: list[tuple[ReportFormat, Path]],
        known: KnownFailures | None,
    ) -> None:
        self.config = config
        self.outputs = outputs
        self.known = known
        self.is_worker = hasattr(config, "workerinput")
        self.collector = ResultCollector()
        self.t0 = time.monotonic()
        self.interrupted: str | None = None
        self.report: dict[str, Any] | None = None
        self.gate_outcome: GateOutcome | None = None
        self.exit_note: str | None = None
        self.incomplete_note: str | None = None
        self.written: list[tuple[str, Path]] = []
        self.deselected: set[tuple[str, str]] = set()
        self.other_shards: dict[tuple[str, str], set[int]] = {}
        """(plugin label, requirement id) -> the other shards that run its tests."""
        self.shard: tuple[int, int] | None = None
        self.write_errors: list[str] = []

    # -- results --------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call" and call.excinfo is not None and report.failed:
            # Every failure gets a symptom (issue 21 §1): a check's difference, a refusal
            # or exception of the plugin, else the masked first line of the failure.
            found = find_failure(call.excinfo.value, (CheckFailed, OperationHung))
            symptom = symptom_of_exception(found if found is not None else call.excinfo.value)
            if symptom is not None:  # user_properties survive the trip from an xdist worker
                # a new list: the report shares the item's, which the teardown report reuses
                report.user_properties = [*report.user_properties,
                                          (_CAUSE_PROP, symptom.to_json())]
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = _props(report)
        text: str | None = None
        if report.failed:
            text = _failure_text(report)
        elif report.skipped:
            text = _skip_reason(report)
        xfail = getattr(report, "wasxfail", None)
        self.collector.add_phase(
            report.nodeid,
            report.when,
            report.outcome,
            requirement=props.get("rdq_requirement"),
            plugin=props.get("rdq_plugin"),
            text=text,
            duration=report.duration,
            xfail=None if xfail is None else str(xfail),
            not_applicable=bool(props.get("rdq_not_applicable")),
            cause=Symptom.from_json(props[_CAUSE_PROP]) if _CAUSE_PROP in props else None,
        )

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        # -k/-m run before the kit tags its items: read the marker and parameter directly.
        for item in items:
            props = {str(k): str(v) for k, v in item.user_properties}
            mark = item.get_closest_marker("rdq_requirement")
            rid = props.get("rdq_requirement") or (mark.args[0] if mark and mark.args else None)
            label = props.get("rdq_plugin") or getattr(
                getattr(item, "callspec", None), "params", {}).get("rdq_plugin")
            if rid is None or label is None:
                continue
            shard = item.stash.get(OTHER_SHARD, None)
            if shard is None:
                self.deselected.add((str(label), str(rid)))
            else:
                self.other_shards.setdefault((str(label), str(rid)), set()).add(shard[0])
                self.shard = shard[1:]

    def _other_shard_reasons(self) -> dict[tuple[str, str], str]:
        if self.shard is None:
            return {}
        k, n = self.shard
        return {key: in_other_shards(shards, k, n) for key, shards in self.other_shards.items()}

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # Ctrl-C, but also pytest.exit() and pytest's own Interrupted (collection errors;
        # how xdist stops a -x run on the controller).
        if excinfo.type is KeyboardInterrupt:
            self.interrupted = "interrupted (KeyboardInterrupt, e.g. Ctrl-C)"
        elif isinstance(excinfo.value, pytest.exit.Exception):
            self.interrupted = f"stopped by pytest.exit(): {excinfo.value}"
        else:
            self.interrupted = _stop_reason(excinfo.value)

    # -- the report -----------------------------------------------------------------------
    def _run_meta(self, session: pytest.Session, exitstatus: int) -> RunMeta:
        kit: KitRun | None = self.config.stash.get(RUN_KEY, None)
        metas: list[PluginMeta] = []
        if kit is not None:
            for p in kit.plugins:
                info = p.info
                unavailable = p.unavailable
                if info is None and unavailable is None:
                    unavailable = (
                        f"opened, then unusable: {p.broken}" if p.broken
                        else "the kit did not open this plugin (--collect-only, or the run "
                        "ended before)"
                    )
                metas.append(PluginMeta(
                    label=p.label,
                    name=None if info is None else info.name,
                    version=None if info is None else info.version,
                    envelope_versions=frozenset() if info is None else info.envelope_versions,
                    capabilities=frozenset() if info is None else info.capabilities,
                    unavailable=unavailable,
                ))
        else:
            labels = option(self.config, "rdq_plugins")
            for label in labels if isinstance(labels, list) else []:
                metas.append(PluginMeta(label=str(label),
                                        unavailable="the kit recorded nothing about this plugin"))
        aborted = kit.aborted if kit is not None else None
        if not aborted:
            aborted = self.interrupted
        if not aborted and session.shouldfail:
            aborted = _stop_reason(session.shouldfail)
        if not aborted and session.shouldstop:
            aborted = _stop_reason(session.shouldstop)
        if not aborted and exitstatus == pytest.ExitCode.INTERRUPTED:
            aborted = "interrupted (errors during collection?)"
        return RunMeta(
            kit_version=kit.kit_version if kit is not None else __version__,
            fixture_hash=kit.fixture_hash if kit is not None else "unknown",
            profile=kit.profile if kit is not None else str(option(self.config, "rdq_profile")),
            seed=kit.seed if kit is not None else 0,
            started_at=kit.started_at if kit is not None else datetime.now(UTC),
            duration=time.monotonic() - self.t0,
            plugins=tuple(metas),
            aborted=aborted,
            notes=tuple(kit.notes) if kit is not None else (),
            upgraded_from=kit.upgraded_from if kit is not None else None,
            run_token=kit.run_token if kit is not None else None,
            spec_url=str(option(self.config, "rdq_spec_url") or "") or None,
        )

    def _write(self, fmt: ReportFormat, path: Path, report: Mapping[str, Any]) -> None:
        try:
            fmt.write(path, report)
        except OSError as e:
            self.write_errors.append(f"could not write the {fmt.what} to {str(path)!r}: {e}")
        else:
            self.written.append((fmt.what, path))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist controller: the workers collected (and deselected) the tests."""
        found = getattr(node, "workeroutput", {}).get(_DESELECTED_KEY, [])
        self.deselected.update((str(label), str(rid)) for label, rid in found)
        for label, rid, shard, k, n in getattr(node, "workeroutput", {}).get(
                _OTHER_SHARDS_KEY, []):
            self.other_shards.setdefault((str(label), str(rid)), set()).add(int(shard))
            self.shard = (int(k), int(n))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            workeroutput = getattr(self.config, "workeroutput", None)
            if isinstance(workeroutput, dict):
                workeroutput[_DESELECTED_KEY] = sorted(self.deselected)
                k, n = self.shard or (0, 0)
                workeroutput[_OTHER_SHARDS_KEY] = sorted(
                    [label, rid, shard, k, n]
                    for (label, rid), shards in self.other_shards.items() for shard in shards)
            return  # the controller writes the one report of an xdist run
        if self.config.option.collectonly:
            return  # nothing ran: do not overwrite the report of a real run
        meta = self._run_meta(session, exitstatus)
        results = evaluate(meta.plugins, self.collector.results(), aborted=meta.aborted,
                           deselected=self.deselected,
                           other_shards=self._other_shard_reasons())
        known_map = {}
        if self.known is not None:
            # First without the marks, to know each requirement's causes; a requirement is
            # a known failure when it is listed for every cause it fails by.
            draft = build_report(meta, results)
            known_map = {
                (p["label"], r["id"]): True
                for p in draft["plugins"] for r in p["requirements"]
                if self.known.lists(p["label"], r["id"], [
                    p["causes"][n - 1]["signature"] for n in r.get("causes") or ()])
            }
        report = build_report(meta, results, known_failures=known_map)
        self.report = report
        for fmt, path in self.outputs:
            self._write(fmt, path, report)
        self._gate(session, report)
        self._incomplete_gate(session, report)
        if self.write_errors and session.exitstatus in (0, 1):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _gate(self, session: pytest.Session, report: dict[str, Any]) -> None:
        if self.known is None:
            return
        g = self.gate_outcome = gate(report, self.known)
        unattributed = self.collector.unattributed_failures
        # A run stopped early (-x, interrupt) cannot show that no *new* failure exists.
        if (session.exitstatus == pytest.ExitCode.TESTS_FAILED and g.listed and not g.unlisted
                and not unattributed and not report["aborted"]):
            session.exitstatus = pytest.ExitCode.OK
            self.exit_note = (f"every failure is a known failure listed in {self.known.source}: "
                              "exit status 0 (the verdict is unchanged)")
        if g.stale and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.exit_note = "stale known failures: exit status 1"

    def _incomplete_gate(self, session: pytest.Session, report: dict[str, Any]) -> None:
        """An applicable MUST requirement not tested fails an otherwise green run
        (see ``_incomplete``); the known-failures gate above only excuses failures."""
        # A replay re-runs one saved case on purpose: its exit status is that case's.
        replay = bool(option(self.config, "rdq_replay"))
        allowed = bool(option(self.config, "rdq_allow_incomplete") or replay)
        flipped = False
        if session.exitstatus == pytest.ExitCode.OK and not allowed and untested(report):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            flipped = True
        # A replay runs one test on purpose: the INCOMPLETE block of a full run (every
        # other requirement "not run") says nothing about it (issue 21 §7).
        if (flipped or report["verdict"] == "incomplete") and not replay:
            self.incomplete_note = untested_line(
                report, allowed=allowed, exit_status=int(session.exitstatus))

    # -- terminal -------------------------------------------------------------------------
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        tr = terminalreporter
        tr.write_sep("=", "rdq compliance")
        verdict = self.report["verdict"]
        report_path = next((str(path) for what, path in self.written if what == "report"), None)
        replay = bool(option(self.config, "rdq_replay"))
        for n, line in enumerate(terminal_lines(self.report, report_path=report_path,
                                                replay=replay)):
            if n == 0:
                tr.write_line(line, bold=True, green=verdict == "compliant",
                              red=verdict == "non-compliant", yellow=verdict == "incomplete")
            else:
                tr.write_line(line)
        g, known = self.gate_outcome, self.known
        if g is not None and known is not None:
            src = terminal_safe(known.source)
            for plugin, rid in g.listed:
                tr.write_line(f"known failure {rid} [{terminal_safe(plugin)}]: listed in {src}")
            for plugin, rid in g.unlisted:
                new = g.new_causes.get((plugin, rid))
                why = (f"it fails by a cause not listed in {src} (cause={', '.join(new)})"
                       if new else f"not listed in {src}")
                tr.write_line(f"NEW failure {rid} [{terminal_safe(plugin)}]: {why}", red=True)
            for plugin, rid in g.stale:
                tr.write_line(f"STALE known failure {rid} [{terminal_safe(plugin)}]: it passes "
                              f"now; remove its line from {src}", red=True)
            if g.not_checked:
                shown = ", ".join(rid for _, rid in g.not_checked[:8])
                more = f" and {len(g.not_checked) - 8} more" if len(g.not_checked) > 8 else ""
                tr.write_line(f"known failures not checked by this run (not exercised: "
                              f"profile, selection or capability): {shown}{more}")
            for label in g.unused_labels:
                tr.write_line(f"known failures: plugin label {terminal_safe(label)!r} in {src} "
                              "is not under test in this run; its lines were ignored")
            for nodeid in self.collector.unattributed_failures:
                tr.write_line(f"failed outside the kit (no known failure can cover it): "
                              f"{terminal_safe(nodeid)}")
        if self.exit_note:
            tr.write_line(self.exit_note)
        for what, path in self.written:
            tr.write_line(f"{what} written: {terminal_safe(str(path))}")
        for err in self.write_errors:
            tr.write_line(terminal_safe(err), red=True)
        if self.incomplete_note:
            tr.write_line(self.incomplete_note, bold=True, yellow=True)

