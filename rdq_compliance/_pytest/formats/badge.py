"""``--rdq-badge PATH``: an SVG badge of the verdict (replaced on each run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._badge import render_badge  # here: see _base

    path.write_text(render_badge(report), encoding="utf-8")


FORMAT = ReportFormat(flag="--rdq-badge", what="badge", order=20, writer=_write,
                      help="write an SVG badge of the verdict to PATH")
