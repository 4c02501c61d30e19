"""The kit's threads kept on one CPU per process (``--rdq-pin-threads``).

Every plugin call is handed to the guard's thread and answered back (``testing/_runner``;
about 14,000 hand-offs in a sqlite ``ci`` run), and the concurrency lanes take the GIL
from one another. When those threads sit on different CPUs, each hand-off wakes the
other CPU: a round trip took 40 µs on the 2-CPU virtual machine of
``docs/performance.md`` and 13 µs with both threads on one CPU.

- ``auto`` (the default): under ``-n N`` with N at least the CPUs this process may use,
  every CPU has a worker anyway, so each worker keeps its threads (and the processes
  they start) on one CPU: ``gwK`` on the K-th allowed CPU, modulo their number. xdist
  deals tests as workers finish them, so a worker slowed by another program on its CPU
  is dealt fewer. Nothing else is pinned: with fewer workers than CPUs, or in a run
  without xdist, another program may load the CPU the kit would hold, and the scheduler
  could not move the kit away.
- ``always``: every worker whatever their number, and a run without xdist on the CPU it
  started on (for a machine the run has to itself).
- ``off``: nothing.

The xdist controller is never pinned: its workers would inherit its CPU. What must run in
parallel is never pinned either: the concurrency suite's lanes and a stdio testee start
on every CPU the process had (``storage/_cpus.py``), so a race that needs two CPUs stays
findable. Pinning changes no check, only where the kit's own threads run. Linux only
(``os.sched_setaffinity``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from contextlib import suppress

import pytest

from ..storage._cpus import set_free
from ._options import option
from ._settings import usage

__all__ = ["PIN_CHOICES", "pin_threads", "pin_threads_setting", "worker_cpu"]

PIN_CHOICES = ("auto", "always", "off")


def pin_threads_setting(config: pytest.Config) -> str:
    """``--rdq-pin-threads``, checked: one of :data:`PIN_CHOICES`."""
    raw = str(option(config, "rdq_pin_threads")).strip().lower()
    if raw not in PIN_CHOICES:
        raise usage(f"--rdq-pin-threads={raw!r} is not a choice; expected one of "
                    f"{', '.join(PIN_CHOICES)} ('off' leaves the kit's threads free to move "
                    "between CPUs)")
    return raw


def worker_cpu(worker_id: str, worker_count: int, allowed: Collection[int], *,
               always: bool = False) -> int | None:
    """The CPU xdist worker ``worker_id`` (``gw0``…) keeps its threads on, or None to leave
    it free: one CPU only, an id not ``gw<K>``, or (unless ``always``) fewer workers than
    ``allowed`` CPUs."""
    number = worker_id.removeprefix("gw")
    if len(allowed) < 2 or not number.isdigit():
        return None
    if worker_count < len(allowed) and not always:
        return None
    cpus = sorted(allowed)
    return cpus[int(number) % len(cpus)]


def _current_cpu() -> int | None:
    """The CPU this thread last ran on (``/proc/thread-self/stat``, field 39)."""
    try:
        with open("/proc/thread-self/stat", encoding="ascii") as f:
            after_name = f.read().rpartition(")")[2].split()
        return int(after_name[36])  # fields from the 3rd on: the 39th
    except (OSError, ValueError, IndexError):
        return None


def _set_all_threads(cpus: Collection[int]) -> bool:
    """Every thread of this process on ``cpus``; the threads they start inherit it."""
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]  # this thread only
    done = False
    for tid in threads:
        with suppress(OSError):  # a thread that ended meanwhile, a refusing sandbox
            os.sched_setaffinity(tid, cpus)
            done = True
    return done


def pin_threads(config: pytest.Config) -> Callable[[], None]:
    """Keep this process' threads on one CPU as ``--rdq-pin-threads`` says. Returns the
    undo (for ``config.add_cleanup``: a run inside another process, pytester's, leaves
    that process' threads free again)."""
    setting = pin_threads_setting(config)
    if setting == "off" or not hasattr(os, "sched_setaffinity"):
        return _nothing
    allowed = os.sched_getaffinity(0)
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict):
        try:
            count = int(workerinput.get("workercount", 0))
        except (TypeError, ValueError):
            return _nothing
        cpu = worker_cpu(str(workerinput.get("workerid", "")), count, allowed,
                         always=setting == "always")
    elif setting == "always" and getattr(config.option, "dist", "no") == "no":
        current = _current_cpu()
        cpu = current if current in allowed else min(allowed)
    else:
        return _nothing  # a run without xdist (auto), or the controller: its workers inherit
    if cpu is None or not _set_all_threads({cpu}):
        return _nothing
    set_free(frozenset(allowed))  # lanes and stdio testees still start on every CPU

    def undo() -> None:
        set_free(None)
        _set_all_threads(allowed)

    return undo


def _nothing() -> None:
    pass
