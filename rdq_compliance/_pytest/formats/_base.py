"""What a report format unit defines: :class:`ReportFormat`.

Imported by every pytest run (the options are added from the units): pytest and the
standard library only. A unit imports its renderer inside its writer, so that
``pytest --help`` and a run without ``--rdq-plugin`` never load the reporting package.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ReportFormat", "Writer"]

Writer = Callable[[Path, Mapping[str, Any]], None]
"""Writes the report (the JSON object of ``--rdq-report``) to a path, as the format."""

_FLAG = re.compile(r"--rdq-[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class ReportFormat:
    """One file a kit run can write: its option, its configure check and its writer.

    ``order`` places the format among the others: in ``--help``, in the order the files
    are written and in the "written:" lines of the terminal summary.
    """

    flag: str
    """The command-line option, ``--rdq-<name>``; its ini twin is ``rdq_<name>``."""
    what: str
    """The file's name in messages: "<what> written: PATH"."""
    help: str
    """The help of the option and of its ini twin."""
    order: int
    writer: Writer
    metavar: str = "PATH"

    def __post_init__(self) -> None:
        if _FLAG.fullmatch(self.flag) is None:
            raise ValueError(f"report format flag={self.flag!r} is not an option name; "
                             "expected '--rdq-' and lowercase words joined by '-'")

    @property
    def ini(self) -> str:
        """The ini twin of the option, also its ``dest``: ``--rdq-badge-endpoint`` →
        ``rdq_badge_endpoint``."""
        return self.flag.removeprefix("--").replace("-", "_")

    def configure(self, path: Path) -> None:
        """Check the path given for this format at start-up: a usage error now is better
        than a report lost at the end of a long run."""
        if path.is_dir():
            raise pytest.UsageError(f"{self.flag}={str(path)!r} is a directory; expected the "
                                    f"path of the {self.what} file to write")
        # Proved by creating (and at once removing) a file beside it: permission bits say
        # nothing to root, nor about /proc or a read-only mount.
        folder = path.parent
        why = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            why = exc.strerror or str(exc)
        else:
            if path.exists() and not os.access(path, os.W_OK):
                why = "the file is read-only"
        if why is not None:
            raise pytest.UsageError(
                f"{self.flag}={str(path)!r}: the {self.what} cannot be written there ({why}); "
                f"expected a path in a folder this run can write to")

    def write(self, path: Path, report: Mapping[str, Any]) -> None:
        """Write the file, creating its folder."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.writer(path, report)
