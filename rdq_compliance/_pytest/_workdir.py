"""A kit run leaves nothing in the user's folder but the files asked for and the
failures directory (issue 14 §6).

Hypothesis keeps caches (``constants``, ``unicode_data``) under ``./.hypothesis``
even with the example database off, as the kit runs it. Unless the folder already
has a ``.hypothesis`` (the author's own Hypothesis tests: theirs stays where it is)
or ``HYPOTHESIS_STORAGE_DIRECTORY`` says where it goes, the kit points Hypothesis at
a per-user cache directory instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .._cache import cache_dir

__all__ = ["HYPOTHESIS_ENV", "hypothesis_home", "keep_hypothesis_out"]

HYPOTHESIS_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def hypothesis_home(invocation_dir: Path) -> Path | None:
    """Where Hypothesis should keep its files for a run from ``invocation_dir``, or None
    to leave Hypothesis alone."""
    if os.environ.get(HYPOTHESIS_ENV) or (invocation_dir / ".hypothesis").exists():
        return None
    return cache_dir() / "hypothesis"


def keep_hypothesis_out(invocation_dir: Path) -> Callable[[], None]:
    """Point Hypothesis away from ``invocation_dir``; returns the undo (for
    ``config.add_cleanup``: a run inside another process leaves its environment as it was)."""
    # Through the environment, read when Hypothesis first needs the directory: no
    # Hypothesis import here (the xdist controller runs no property), and xdist
    # workers, started later, inherit it.
    home = hypothesis_home(invocation_dir)
    if home is None:
        return lambda: None
    os.environ[HYPOTHESIS_ENV] = str(home)

    def undo() -> None:
        os.environ.pop(HYPOTHESIS_ENV, None)

    return undo
