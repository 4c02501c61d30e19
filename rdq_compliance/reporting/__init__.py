"""Conformance reports: results, verdicts, the report JSON, badges and summaries.

Imports no pytest, no Hypothesis and no suite: it reads results. The pytest glue
is :mod:`rdq_compliance._pytest.reporting_plugin`.
"""

from ._badge import render_badge, render_endpoint
from ._known import (
    GateOutcome,
    KnownFailures,
    KnownFailuresError,
    format_known_failures,
    gate,
    load_known_failures,
    parse_known_failures,
)
from ._markdown import render_markdown
from ._model import (
    PluginMeta,
    RequirementStatus,
    ResultCollector,
    RunMeta,
    TestResult,
    TestStatus,
    Verdict,
)
from ._report import (
    SCHEMA_VERSION,
    ReportError,
    build_report,
    compute_digest,
    load_report,
    load_schema,
    verify_report,
    write_json,
)
from ._terminal import terminal_lines
from ._text import terminal_safe
from ._verdict import PluginResult, RequirementResult, evaluate, evaluate_plugin, worst

__all__ = [
    "SCHEMA_VERSION",
    "GateOutcome",
    "KnownFailures",
    "KnownFailuresError",
    "PluginMeta",
    "PluginResult",
    "ReportError",
    "RequirementResult",
    "RequirementStatus",
    "ResultCollector",
    "RunMeta",
    "TestResult",
    "TestStatus",
    "Verdict",
    "build_report",
    "compute_digest",
    "evaluate",
    "evaluate_plugin",
    "format_known_failures",
    "gate",
    "load_known_failures",
    "load_report",
    "load_schema",
    "parse_known_failures",
    "render_badge",
    "render_endpoint",
    "render_markdown",
    "terminal_lines",
    "terminal_safe",
    "verify_report",
    "worst",
    "write_json",
]
