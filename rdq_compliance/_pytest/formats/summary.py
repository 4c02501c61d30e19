"""``--rdq-summary PATH``: a Markdown summary, appended: a summary file is an append file
($GITHUB_STEP_SUMMARY collects every step's), so an existing one keeps what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._github import SUMMARY_LIMIT, fit_summary
    from ...reporting._markdown import render_markdown  # here: see _base

    with path.open("a", encoding="utf-8") as f:
        if f.tell() > 0:
            f.write("\n")
        # GitHub rejects a step summary (every step's appends) over 1 MiB
        f.write(fit_summary(render_markdown(report), max(SUMMARY_LIMIT - f.tell(), 0)))


FORMAT = ReportFormat(flag="--rdq-summary", what="summary", order=40, writer=_write,
                      help="append a Markdown summary (requirement table, causes, failures) "
                      "to PATH, e.g. $GITHUB_STEP_SUMMARY")
