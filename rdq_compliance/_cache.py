"""The kit's per-user cache directory: ``$XDG_CACHE_HOME/rdq-compliance`` (``~/.cache``
without it).

Only what can be made again goes there (Hypothesis' caches, markers of checks already
passed by identical bytes); deleting it at any time is safe. Standard library only: the
corpus loader and the pytest layer both use it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """Where the kit keeps its per-user caches (not created here)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rdq-compliance"
