"""A pytest plugin for benchmark runs: ``-p benchmarks._timeline`` (xdist passes it on
to the workers).

It changes nothing in the run; every process (the xdist controller ``main`` and each
worker ``gw0``, ``gw1``…) writes ``<RDQ_BENCH_TIMELINE>/<name>.json`` at exit: when it
imported this module (interpreter and pytest's own start-up done), configured, finished
collecting, each test's start and end (seconds since ``RDQ_BENCH_T0``, the driver's clock
just before it started the process), and its CPU time at the end. :func:`summary` reads a directory
of them back: each worker's start-up, busy time and idle tail.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ENV_OUT = "RDQ_BENCH_TIMELINE"
ENV_T0 = "RDQ_BENCH_T0"

_T0 = float(os.environ.get(ENV_T0, time.time()))
_marks: dict[str, float] = {"imported": time.time() - _T0}
_tests: list[tuple[str, float, float]] = []


def _now() -> float:
    return time.time() - _T0


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    _marks["configured"] = _now()


def pytest_collection_finish(session: pytest.Session) -> None:
    _marks["collected"] = _now()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    start = _now()
    try:
        return (yield)
    finally:
        _tests.append((item.nodeid, start, _now()))


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get(ENV_OUT)
    if not out:
        return
    _marks["unconfigure"] = _now()
    times = os.times()
    _marks["cpu"] = times.user + times.system  # this process' CPU so far (no children)
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(out).mkdir(parents=True, exist_ok=True)
    data = {"name": name, "marks": _marks, "tests": _tests}
    (Path(out) / f"{name}.json").write_text(json.dumps(data), "utf-8")


@dataclass(frozen=True)
class Worker:
    name: str
    imported: float  # process start-up done (interpreter, pytest, plugins)
    collected: float  # collection done
    first: float  # first test starts
    last: float  # last test ends
    busy: float  # sum of the tests' durations
    tests: int
    longest: tuple[str, float]  # the longest test and its duration
    cpu: float  # the process' CPU time (user + system) at its end


def summary(directory: Path) -> tuple[dict[str, Any] | None, list[Worker]]:
    """The controller's marks (None without xdist) and each test-running process."""
    main: dict[str, Any] | None = None
    workers = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        tests = data["tests"]
        if data["name"] == "main" and not tests:
            main = data["marks"]
            continue
        if not tests:
            continue
        marks = data["marks"]
        longest = max(tests, key=lambda t: t[2] - t[1])
        workers.append(Worker(
            name=data["name"], imported=marks.get("imported", 0.0),
            collected=marks.get("collected", marks.get("imported", 0.0)),
            first=min(t[1] for t in tests), last=max(t[2] for t in tests),
            busy=sum(t[2] - t[1] for t in tests), tests=len(tests),
            longest=(longest[0].split("::", 1)[-1], longest[2] - longest[1]),
            cpu=marks.get("cpu", 0.0)))
    return main, workers
