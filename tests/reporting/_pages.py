"""Synthetic reports for the HTML report and site tests: a failing round trip whose
diff holds look-alike code points, and releases of one plugin over time."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from rdq_compliance.reporting import TestResult, TestStatus, build_report, evaluate
from rdq_compliance.reporting._symptom import Symptom

from ._synth import meta, passing, run_meta

# A header value whose "Å" (U+00C5) came back as "A" + U+030A: looks the same, differs.
DIFF = ("  /headers/x-name: string changed: expected 4 bytes, got 5 bytes; first difference "
        "at code point 1: expected U+00C5 'Å', got U+0041 'A' (expected 'aÅb', got "
        "'aA\u030ab')  [C4]")
SYMPTOM = Symptom(pointer="/headers/x-name", pattern="/headers/*", kind="string changed",
                  clause="C4", summary="string changed at code point 1", diff=DIFF)
REPLAY = "pytest --rdq-plugin=mem --rdq-replay .rdq/failures/test_x-5481eed1ae6c.json"
FAILING = "RDQ-RT-006"


def failing_tests(label: str = "mem", message: str | None = None) -> list[TestResult]:
    msg = message or f"E header changed\n{DIFF}\nreplay: {REPLAY}"
    out = []
    for t in passing(label, override={FAILING: TestStatus.FAILED}, message=msg):
        out.append(replace(t, cause=SYMPTOM) if t.status is TestStatus.FAILED else t)
    return out


def failing_report(**meta_kw: Any) -> dict[str, Any]:
    plugins = [meta(**meta_kw)]
    return build_report(run_meta(plugins), evaluate(plugins, failing_tests()))


def release(version: str, *, failing: Iterable[str] = (), name: str = "memory",
            day: int = 1, profile: str = "quick") -> dict[str, Any]:
    """A genuine report of ``name`` ``version`` in which the requirements ``failing`` fail."""
    plugins = [meta(name=name, version=version)]
    tests = passing(override=dict.fromkeys(failing, TestStatus.FAILED), message="E broke")
    run = replace(run_meta(plugins), profile=profile,
                  started_at=datetime(2026, 7, day, 12, 0, tzinfo=UTC))
    return build_report(run, evaluate(plugins, tests))
