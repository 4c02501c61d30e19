"""The CPUs the kit's concurrent work may use when its own threads are kept on one.

``--rdq-pin-threads`` (``_pytest/_affinity.py``) keeps a process' threads on one CPU,
for the hand-offs between a test's thread and the guard's. What must run truly in
parallel is not pinned: the concurrency suite's lanes (``testing/_lanes.py``) and a
stdio testee (``storage/_stdio``), whose own threads serve the lanes' requests, start
on every CPU the process had before: a race that needs two CPUs at once must stay
findable. Standard library only: the stdio bridge imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["free_this_thread", "set_free", "unpinned"]

_free: frozenset[int] | None = None
"""The CPUs of the process before its threads were pinned; None when nothing is pinned."""


def set_free(cpus: frozenset[int] | None) -> None:
    """Record the process' CPUs before pinning (None: nothing is pinned any more)."""
    global _free
    _free = cpus


def free_this_thread() -> None:
    """The calling thread (and the threads and processes it starts) on every CPU the
    process had before pinning; nothing where nothing is pinned."""
    if _free is not None:
        with suppress(OSError):
            os.sched_setaffinity(0, _free)


@contextmanager
def unpinned() -> Iterator[None]:
    """The calling thread free for the block (a process it starts keeps every CPU), then
    back on its CPUs."""
    if _free is None:
        yield
        return
    before = os.sched_getaffinity(0)
    free_this_thread()
    try:
        yield
    finally:
        with suppress(OSError):
            os.sched_setaffinity(0, before)
