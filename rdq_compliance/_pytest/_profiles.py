"""How hard each profile searches, and the Hypothesis settings of a kit property.

The settings are built per property and applied to that property only: the kit
never registers or loads a global Hypothesis profile, so the author's own
Hypothesis tests in the same run are unaffected.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hypothesis import settings

__all__ = ["BUDGETS", "PROFILES", "derived_seed", "hypothesis_settings"]

PROFILES = ("quick", "ci", "thorough")

# budget -> profile -> (max_examples, stateful_step_count)
BUDGETS: dict[str, dict[str, tuple[int, int]]] = {
    # read(write(e)) == e on arbitrary envelopes: the broadest search.
    "generic": {"quick": (10, 0), "ci": (40, 0), "thorough": (400, 0)},
    # properties aimed at one field (strings, timestamps, headers, ...).
    "targeted": {"quick": (8, 0), "ci": (25, 0), "thorough": (200, 0)},
    # several envelopes per example, or a storage restart per example.
    "heavy": {"quick": (3, 0), "ci": (10, 0), "thorough": (60, 0)},
    # the state machine: runs x steps.
    "stateful": {"quick": (8, 20), "ci": (20, 30), "thorough": (100, 50)},
}


def derived_seed(kit_seed: int, *parts: str) -> int:
    """A per-property seed: the same --rdq-seed gives the same examples on every run,
    and different properties do not all draw the same sequence."""
    text = "\x1f".join((str(kit_seed), *parts))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def hypothesis_settings(profile: str, budget: str, *, replay: bool = False) -> settings:
    # Imported here: the xdist controller loads the kit but runs no property, and
    # importing Hypothesis there would delay the start of every worker.
    from hypothesis import HealthCheck, Phase, settings

    max_examples, steps = BUDGETS[budget][profile]
    return settings(
        max_examples=max(max_examples, 1),
        stateful_step_count=max(steps, 1),
        # Adapters do real I/O (databases, subprocesses): wall-clock deadlines
        # would make verdicts depend on machine load. --rdq-timeout bounds hangs.
        deadline=None,
        # No example database: the same seed must give the same examples on
        # every machine, whatever ran before.
        database=None,
        derandomize=False,  # the explicit per-property seed decides
        # Generating whole envelopes (nested unknown fields, long strings) is
        # legitimately slow and large; those checks would only flake on a busy CI box.
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.large_base_example],
        report_multiple_bugs=False,  # one clear failure with one minimal envelope
        print_blob=False,
        phases=(Phase.explicit,) if replay else (
            Phase.explicit, Phase.generate, Phase.target, Phase.shrink
        ),
    )
