"""Several kit threads calling one plugin at once: the lanes of the concurrency suite (C18).

The guard normally runs every call of a plugin on its one worker thread. Only for a
plugin that declares ``concurrent`` does the concurrency suite start *lanes*: each
lane is a kit thread bound to a worker of its own (``PluginRuntime.lane``), so each
of its calls keeps the ``--rdq-timeout`` deadline while the lanes' calls overlap; a
lane's worker is kept for the next run's lane of that index unless a call of it was
never answered (``Guard.lane_runner``).
The lanes start together at a barrier; the first failure stops the others and is
raised in the test's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from ..storage._cpus import free_this_thread
from ._failures import CheckFailed, OperationHung
from ._guard import CouldNotRun
from ._runtime import PluginRuntime

__all__ = ["Lane", "now_ns", "run_lanes"]

_START_TIMEOUT = 60.0
"""Seconds the lanes may take to reach the start barrier (only thread start-up)."""

now_ns = time.monotonic_ns
"""The history clock: one monotonic clock shared by every thread of the process.

An operation's start is read before its request is handed to the worker and its end
after the answer came back, so a recorded interval always contains the real one: an
operation recorded as starting after another's recorded end really did start after
it returned (the only timing fact the checks rely on)."""


class Lane:
    """What a lane body gets: its index and the flag that asks it to stop early."""

    def __init__(self, index: int, stop: threading.Event) -> None:
        self.index = index
        self.stop = stop

    @property
    def stopped(self) -> bool:
        return self.stop.is_set()


def run_lanes(runtime: PluginRuntime, bodies: Sequence[Callable[[Lane], None]],
              at_end: Callable[[], None] = lambda: None) -> None:
    """Run every body on its own lane, all released together; return when all ended.

    ``at_end`` runs on each lane after its body, still on the lane's worker (the kit
    closes there the adapters the lane opened). Raises the first failure of a lane (a
    check that failed, a hang, the plugin's exception as the kit reports it) after
    every lane stopped.
    """
    __tracebackhide__ = True
    count = len(bodies)
    barrier = threading.Barrier(count)
    stop = threading.Event()
    errors: list[BaseException | None] = [None] * count

    def main(i: int) -> None:
        __tracebackhide__ = True  # a lane's failure shows the check's frames, not these
        free_this_thread()  # truly parallel where the kit's own threads are pinned
        runner = runtime.lane_runner(i)
        runtime.lane.runner = runner
        try:
            barrier.wait(_START_TIMEOUT)
            bodies[i](Lane(i, stop))
        except threading.BrokenBarrierError:
            pass  # another lane failed before the start
        except BaseException as exc:  # reported by the test's thread below
            errors[i] = exc
            stop.set()
            barrier.abort()
        finally:
            try:
                at_end()
            except BaseException as exc:
                errors[i] = errors[i] or exc
                stop.set()
            runtime.lane.runner = None
            runtime.lane_ended(i, runner)

    threads = [
        threading.Thread(target=main, args=(i,), name=f"rdq-lane-{i}", daemon=True)
        for i in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = [e for e in errors if e is not None]
    if found:
        # An outage first (what the other lanes saw meanwhile proves nothing, C20); then
        # a check's own verdict; a lane stopped by another's hang says less.
        found.sort(key=lambda e: -1 if isinstance(e, CouldNotRun) else
                   0 if isinstance(e, CheckFailed) else
                   1 if isinstance(e, OperationHung) else 2)
        raise found[0]
