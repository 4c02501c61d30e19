"""A pytest plugin for benchmark runs: ``-p benchmarks._probe``.

It changes nothing in the run; it only records where the time went:

- Hypothesis generation vs. execution, per generated example, from Hypothesis'
  own per-test-case timing (its observability callback: ``generate:*`` keys are
  drawing examples, ``execute:*`` keys are running the check);
- the pytest phases: process start to end of collection, the sum of all test
  protocols (setup + call + teardown), and session finish.

- at exit, the process' threads' time on a CPU and waiting for one (run-queue wait, from
  ``/proc/self/task/*/schedstat``; threads that already ended are not counted): on a loaded
  machine, the part of the wall time the process was ready to run but had no CPU.

Written as JSON to the file named by ``RDQ_BENCH_PROBE`` at ``pytest_unconfigure``,
together with the totals of :mod:`benchmarks._timing` (plugin time) when the
timing proxy is the plugin under test. ``RDQ_BENCH_T0`` is the driver's
``time.time()`` just before it started the process.

Caveat, measured by the driver: with an observability callback registered,
Hypothesis also builds a printable representation of every example, so a
probed run is a little slower than a plain one.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis.internal import observability
from hypothesis.internal.observability import add_observability_callback

ENV_OUT = "RDQ_BENCH_PROBE"
ENV_T0 = "RDQ_BENCH_T0"

_lock = threading.Lock()
_hyp = {"examples": 0, "generate": 0.0, "execute": 0.0, "gc": 0.0}
_marks: dict[str, float] = {"imported": time.time()}
_items = {"count": 0, "seconds": 0.0}


def _observe(observation: Any, thread_id: int) -> None:
    if getattr(observation, "type", None) != "test_case":
        return
    timing: dict[str, float] = getattr(observation, "timing", {}) or {}
    gen = sum(v for k, v in timing.items() if k.startswith("generate:"))
    exe = sum(v for k, v in timing.items() if k.startswith("execute:"))
    with _lock:
        _hyp["examples"] += 1
        _hyp["generate"] += gen
        _hyp["execute"] += exe
        _hyp["gc"] += timing.get("overall:gc", 0.0)


# Hypothesis would otherwise trace line coverage of every example while a
# callback is registered (sys.settrace: ~10x slower on Python 3.11). The
# documented switch, HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER, also turns on
# writing every example to .hypothesis/observed/, so the flag is set directly.
observability.OBSERVABILITY_COLLECT_COVERAGE = False
add_observability_callback(_observe, all_threads=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    _marks["collected"] = time.time()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    start = time.perf_counter()
    _marks.setdefault("first_test", time.time())
    try:
        return (yield)
    finally:
        _items["count"] += 1
        _items["seconds"] += time.perf_counter() - start
        _marks["last_test"] = time.time()


def schedstat(task_dir: str = "/proc/self/task") -> dict[str, float] | None:
    """Seconds on a CPU and waiting for one, summed over the living threads (None where
    the kernel has no schedstat)."""
    run = wait = 0.0
    threads = 0
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return None
    for tid in tids:
        try:
            with open(os.path.join(task_dir, tid, "schedstat"), encoding="ascii") as fh:
                on_cpu, queued, _ = fh.read().split()
        except (OSError, ValueError):
            continue
        run += int(on_cpu) / 1e9
        wait += int(queued) / 1e9
        threads += 1
    return {"run": run, "wait": wait, "threads": threads} if threads else None


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get(ENV_OUT)
    if not path:
        return
    _marks["unconfigure"] = time.time()
    t0 = float(os.environ.get(ENV_T0, _marks["imported"]))
    plugin: dict[str, Any] | None = None
    try:
        from . import _timing
    except ImportError:  # pragma: no cover - the package is importable in benchmark runs
        _timing = None  # type: ignore[assignment]
    if _timing is not None and _timing.TOTALS:
        with _timing._lock:
            ops = {op: {"calls": int(n), "seconds": s} for op, (n, s) in _timing.TOTALS.items()}
        plugin = {"ops": ops, "total": sum(v["seconds"] for v in ops.values())}
    out = {
        "t0": t0,
        "marks": {k: v - t0 for k, v in _marks.items()},
        "items": dict(_items),
        "hypothesis": dict(_hyp),
        "plugin": plugin,
        "sched": schedstat(),
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
