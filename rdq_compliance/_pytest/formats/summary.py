"""``--rdq-summary PATH``: a Markdown summary, appended: a summary file is an append file
($GITHUB_STEP_SUMMARY collects every step's), so an existing one keeps what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._markdown import render_markdown  # here: see _base

    text = render_markdown(report)
    with path.open("a", encoding="utf-8") as f:
        if f.tell() > 0:
            f.write("\n")
        f.write(text)


FORMAT = ReportFormat(flag="--rdq-summary", what="summary", order=40, writer=_write,
                      help="append a Markdown summary (requirement table, causes, failures) "
                      "to PATH, e.g. $GITHUB_STEP_SUMMARY")
