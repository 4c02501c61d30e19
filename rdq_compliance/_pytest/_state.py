"""What the kit's pytest plugin knows about the run, shared with the report glue.

Set by :mod:`.kit` in ``pytest_configure``/``pytest_sessionstart`` (on the xdist
controller too) and read by :mod:`.reporting_plugin`. Per-test facts travel in
``item.user_properties`` so that they survive xdist and land in JUnit XML:

- ``("rdq_requirement", "RDQ-RT-001")``
- ``("rdq_level", "MUST")``
- ``("rdq_clauses", "C3 C4")``
- ``("rdq_plugin", "<plugin label>")``
- ``("rdq_not_applicable", "1")`` on a test skipped as not applicable (``Rdq.not_applicable``)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pytest

from ..storage._protocol import StorageInfo

__all__ = ["RUN_KEY", "KitRun", "PluginUnderTest"]


@dataclass
class PluginUnderTest:
    label: str
    """The name given to --rdq-plugin; it appears in every test id."""
    info: StorageInfo | None = None
    """What the plugin declared; None when it could not be opened."""
    unavailable: str | None = None
    """Why the plugin could not be opened (one clear message), if it could not."""
    broken: str | None = None
    """Why the plugin, once opened, could not be used (e.g. a malformed ``info``)."""


@dataclass
class KitRun:
    plugins: list[PluginUnderTest]
    profile: str
    seed: int
    timeout: float
    started_at: datetime
    kit_version: str
    fixture_hash: str
    aborted: str | None = None
    """Why the run stopped early (crashed testee, -x, interrupt), when it did."""
    notes: list[str] = field(default_factory=list)
    upgraded_from: str | None = None
    """The release an --rdq-upgrade-check run reads the corpus of (``name version``)."""
    run_token: str | None = None
    """In the name of every namespace of this run (shared by the xdist workers)."""


RUN_KEY = pytest.StashKey[KitRun]()
