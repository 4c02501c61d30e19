"""Synthetic results for the reporting unit tests (no pytest run needed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from rdq_compliance._requirements import REQUIREMENTS, Level
from rdq_compliance.reporting import (
    PluginMeta,
    RunMeta,
    TestResult,
    TestStatus,
    build_report,
    evaluate,
    load_schema,
)

MUSTS = [r for r in REQUIREMENTS if r.level is Level.MUST and not r.retired]
SHOULDS = [r for r in REQUIREMENTS if r.level is Level.SHOULD and not r.retired]
GATED = [r for r in MUSTS if r.capability]
UNGATED_MUST = next(r for r in MUSTS if r.capability is None)


def meta(label: str = "mem", *, caps: Iterable[str] = (), name: str | None = "memory",
         version: str = "1.0", unavailable: str | None = None) -> PluginMeta:
    if unavailable is not None:
        return PluginMeta(label=label, unavailable=unavailable)
    return PluginMeta(label=label, name=name, version=version, envelope_versions=frozenset({1}),
                      capabilities=frozenset(caps))


def passing(label: str = "mem", *, caps: Iterable[str] = (),
            override: dict[str, TestStatus | None] | None = None,
            message: str | None = None) -> list[TestResult]:
    """One test per requirement, all passed (gated ones skipped unless declared);
    ``override`` sets a requirement's test status (None: no test reported)."""
    caps = set(caps)
    out = []
    for r in REQUIREMENTS:
        status: TestStatus | None = TestStatus.PASSED
        msg = None
        if r.capability and r.capability not in caps:
            status, msg = TestStatus.SKIPPED, f"plugin declares no {r.capability!r} capability"
        if override and r.id in override:
            status = override[r.id]
            msg = message if status is not TestStatus.PASSED else None
        if status is None:
            continue
        out.append(TestResult(f"suites/test_x.py::test_{r.id}[{label}]", r.id, label, status,
                              msg, 0.01))
    return out


def run_meta(plugins: Sequence[PluginMeta], aborted: str | None = None,
             notes: Sequence[str] = ()) -> RunMeta:
    return RunMeta(kit_version="0.1.0", fixture_hash="sha256:" + "0" * 64, profile="quick",
                   seed=0, started_at=datetime(2026, 7, 20, 14, 3, 22, 117000, tzinfo=UTC),
                   duration=1.5, plugins=tuple(plugins), aborted=aborted, notes=tuple(notes))


def report_for(plugins: Sequence[PluginMeta], tests: Sequence[TestResult],
               aborted: str | None = None, notes: Sequence[str] = (),
               **kw: Any) -> dict[str, Any]:
    results = evaluate(plugins, tests, aborted=aborted)
    return build_report(run_meta(plugins, aborted, notes), results, **kw)


def validate_schema(report: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(report, load_schema(),
                        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
