"""``--rdq-html PATH``: the run as one self-contained HTML page (replaced on each run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._html import render_html  # here: see _base

    path.write_text(render_html(report), encoding="utf-8")


FORMAT = ReportFormat(flag="--rdq-html", what="HTML report", order=50, writer=_write,
                      help="write the run as one self-contained HTML page to PATH (verdict, "
                      "causes with their diffs, requirements, clause text; opens from disk)")
