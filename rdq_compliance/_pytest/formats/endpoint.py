"""``--rdq-badge-endpoint PATH``: the verdict as a shields.io endpoint JSON (replaced on
each run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._badge import render_endpoint  # here: see _base
    from ...reporting._report import write_json

    write_json(path, render_endpoint(report))


FORMAT = ReportFormat(flag="--rdq-badge-endpoint", what="badge endpoint", order=30,
                      writer=_write,
                      help="write a shields.io endpoint JSON of the verdict to PATH")
