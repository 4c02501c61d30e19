"""What a zoo entry declares: the defect, the real system that has it, and its catcher."""

from __future__ import annotations

import enum
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FAULT_FOCUS", "TESTEE", "Entry", "Kind", "Via"]

TESTEE = Path(__file__).with_name("testee.py")
FAULT_FOCUS = ("RDQ-GOLD-001", "RDQ-RT-001", "RDQ-ST-002")
"""What a fault's focused run tests: many writes and reads, and reads of missing ids."""


class Kind(enum.StrEnum):
    MUTANT = "mutant"
    """One real-world defect: the kit must say non-compliant, and name ``catches``."""
    CORRECT = "correct"
    """Differs from the base only in ways the spec allows: the kit must say compliant."""
    FAULT = "fault"
    """A broken plugin (raises, hangs, crashes, garbage): non-compliant, fault named."""


class Via(enum.StrEnum):
    ADAPTER = "adapter"
    """A Python adapter loaded with --rdq-plugin=tests.mutants.zoo:<id>."""
    TESTEE = "testee"
    """tests/mutants/testee.py behind the kit's stdio bridge."""


@dataclass(frozen=True)
class Entry:
    id: str
    kind: Kind
    via: Via
    system: str
    """Which real system or library behaves like this."""
    defect: str
    """What goes wrong (for a correct variant: what differs)."""
    catches: tuple[str, ...] = ()
    """Requirement ids that must ALL come out failed (mutants)."""
    also: tuple[str, ...] = ()
    """Requirement ids the defect may fail too, not in every run: a race that another
    requirement's check meets by chance. A cause naming one is no wrong diagnosis
    (``gen_matrix --causes``); a run that does not fail it is no miss."""
    fault_text: tuple[str, ...] = ()
    """Faults: a failure message of the run must contain one of these (case-insensitive)."""
    testee_args: tuple[str, ...] = ()
    bridge_timeout: float = 10.0
    """The stdio bridge's answer deadline for this testee (faults that hang: short)."""
    cli: bool = False
    """Also run alone through the user-facing path `--rdq-plugin=stdio --rdq-testee CMD`."""
    notes: str = ""
    tags: frozenset[str] = field(default_factory=frozenset)
    profile: str = "quick"
    """The profile ``test_zoo`` runs the entry at: ``ci`` for a defect only ``ci`` reaches
    (an LRU of 1,024 envelopes, where ``quick`` writes 300 to a namespace)."""

    @property
    def label(self) -> str:
        """The --rdq-plugin value of a batched run (and the plugin label in test ids)."""
        return f"tests.mutants.zoo:{self.id}"

    @property
    def focus(self) -> tuple[str, ...]:
        """The requirements a focused run tests this entry on (empty: all of them)."""
        if self.kind is Kind.MUTANT:
            return self.catches
        if self.kind is Kind.FAULT:
            return FAULT_FOCUS
        return ()

    @property
    def testee_command(self) -> str:
        return shlex.join([sys.executable, str(TESTEE), *self.testee_args])

    @property
    def batch(self) -> str:
        """Entries of one batch share one kit run (repeated --rdq-plugin)."""
        at = "" if self.profile == "quick" else f"-{self.profile}"
        return f"{self.kind.value}-{self.via.value}{at}"
