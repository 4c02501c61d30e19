"""A stdio testee starts on every CPU the kit's process had, also while ``--rdq-pin-threads``
keeps the kit's own threads on one (``storage/_cpus.py``): the testee's threads serve the
concurrency suite's lanes, and a race that needs two CPUs at once must stay findable."""

from __future__ import annotations

import json
import os
import sys

import pytest

from rdq_compliance.storage._cpus import set_free
from rdq_compliance.storage._stdio._process import Process

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs os.sched_setaffinity and two CPUs")

_REPORT = "import os; print(sorted(os.sched_getaffinity(0)), flush=True)"


def _cpus_of_a_testee() -> list[int]:
    proc = Process([sys.executable, "-c", _REPORT], os.environ)
    try:
        line = proc.lines.get(timeout=60)
        assert line is not None
        return list(json.loads(line))
    finally:
        proc.kill()


def test_a_testee_starts_on_every_cpu_while_the_kit_is_pinned() -> None:
    allowed = os.sched_getaffinity(0)
    pinned = {min(allowed)}
    os.sched_setaffinity(0, pinned)
    try:
        assert _cpus_of_a_testee() == sorted(pinned)  # what a child inherits by itself
        set_free(frozenset(allowed))
        assert _cpus_of_a_testee() == sorted(allowed)
        assert os.sched_getaffinity(0) == pinned  # the kit's thread is back on its CPU
    finally:
        set_free(None)
        os.sched_setaffinity(0, allowed)
