"""One CPU per xdist worker when the workers take every CPU the run may use.

Every plugin call is handed to the guard's thread and answered back (``testing/_runner``;
about 14,000 hand-offs in a sqlite ``ci`` run). When the two threads sit on different
CPUs, each hand-off wakes the other CPU: a round trip took 40 µs on the 2-CPU virtual
machine of ``docs/performance.md`` and 13 µs with both threads on one CPU. Under
``-n N`` with N at least the CPUs this process may use, every CPU has a worker anyway,
so each worker keeps its threads (and the processes they start) on one CPU: worker
``gwK`` on the K-th allowed CPU, modulo their number. xdist deals tests as workers
finish them, so a worker slowed by another program on its CPU is dealt fewer.

Nothing is pinned with fewer workers than CPUs, without xdist, or on the controller:
there another program may load the CPU the kit would hold, and the scheduler could not
move the kit away. ``--rdq-pin-workers=off`` turns it off; it changes no check, only
where the worker's threads run. Linux only (``os.sched_setaffinity``).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from contextlib import suppress

import pytest

from ._options import option
from ._settings import usage

__all__ = ["PIN_CHOICES", "pin_worker", "pin_workers_setting", "worker_cpu"]

PIN_CHOICES = ("auto", "off")


def pin_workers_setting(config: pytest.Config) -> bool:
    """``--rdq-pin-workers``: True for ``auto`` (the default), False for ``off``."""
    raw = str(option(config, "rdq_pin_workers")).strip().lower()
    if raw not in PIN_CHOICES:
        raise usage(f"--rdq-pin-workers={raw!r} is not a choice; expected one of "
                    f"{', '.join(PIN_CHOICES)} ('off' leaves xdist workers free to move "
                    "between CPUs)")
    return raw == "auto"


def worker_cpu(worker_id: str, worker_count: int, allowed: Collection[int]) -> int | None:
    """The CPU xdist worker ``worker_id`` (``gw0``…) keeps its threads on, or None to leave
    it free: fewer workers than ``allowed`` CPUs, one CPU only, or an id not ``gw<K>``."""
    number = worker_id.removeprefix("gw")
    if len(allowed) < 2 or worker_count < len(allowed) or not number.isdigit():
        return None
    cpus = sorted(allowed)
    return cpus[int(number) % len(cpus)]


def pin_worker(config: pytest.Config) -> int | None:
    """In an xdist worker: keep this process' threads on :func:`worker_cpu`'s CPU; returns
    it, or None where nothing was pinned."""
    if not pin_workers_setting(config):
        return None
    workerinput = getattr(config, "workerinput", None)
    setaffinity = getattr(os, "sched_setaffinity", None)
    if not isinstance(workerinput, dict) or setaffinity is None:
        return None
    try:
        count = int(workerinput.get("workercount", 0))
    except (TypeError, ValueError):
        return None
    cpu = worker_cpu(str(workerinput.get("workerid", "")), count, os.sched_getaffinity(0))
    if cpu is None:
        return None
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]  # this thread only; the threads it starts inherit its CPU
    pinned = False
    for tid in threads:
        with suppress(OSError):  # a thread that ended meanwhile, a refusing sandbox
            setaffinity(tid, {cpu})
            pinned = True
    return cpu if pinned else None
