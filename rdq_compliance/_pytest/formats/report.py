"""``--rdq-report PATH``: the JSON conformance report itself (replaced on each run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import ReportFormat


def _write(path: Path, report: Mapping[str, Any]) -> None:
    from ...reporting._report import write_json  # here: see _base

    write_json(path, report)


FORMAT = ReportFormat(flag="--rdq-report", what="report", order=10, writer=_write,
                      help="write the JSON conformance report to PATH")
