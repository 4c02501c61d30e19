"""What the upgrade suite (C19) reads: the corpus a previous release saved.

``--rdq-upgrade-save DIR`` (the pytest plugin's ``_upgrade``) writes the corpus through
the previous release and records it in ``DIR/manifest.json``; in the run given
``--rdq-upgrade-check DIR`` the ``rdq_upgrade`` fixture hands the suite a :class:`Saved`,
whose expected envelopes come from the manifest, never from an earlier read of the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..envelope._model import Envelope

__all__ = ["DROPPED", "KEPT_ROLES", "ROLES", "Saved"]

KEPT_ROLES = ("golden", "generated", "rewritten", "bulk", "writable")
"""Namespaces left stored by the save; ``bulk`` holds more envelopes than a migration's
batch; ``writable`` is the one RDQ-UP-003 writes to."""
DROPPED = "dropped"
"""The namespace the save wrote and then dropped (RDQ-UP-002)."""
ROLES = (*KEPT_ROLES, DROPPED)


@dataclass(frozen=True)
class Saved:
    """What ``--rdq-upgrade-save`` recorded in DIR (``manifest.json``), checked and parsed."""

    directory: Path
    plugin_label: str
    plugin_name: str
    plugin_version: str
    kit_version: str
    seed: int
    saved_at: str
    namespaces: dict[str, str]
    """role -> namespace name in the store."""
    expected: dict[str, dict[str, Envelope]]
    """kept role -> id -> the envelope it must read back as."""
    dropped_ids: tuple[str, ...]

    @property
    def release(self) -> str:
        return f"{self.plugin_name} {self.plugin_version}".strip()
