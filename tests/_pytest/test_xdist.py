"""The kit under pytest-xdist: same collection on every worker, no namespace collisions,
every namespace dropped, and the storage's declaration known to the controller."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from rdq_compliance import NAMESPACE_PATTERN
from tests._pytest._standin import run

PROBE = """
import sys

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    if not hasattr(session.config, "workerinput"):  # the controller, its workers starting
        found = [m for m in ("hypothesis", "rdq_compliance.suites") if m in sys.modules]
        with open("controller-imports.txt", "w") as f:
            f.write(" ".join(found))
"""


def test_two_workers_use_disjoint_namespaces_and_drop_them(kit: pytest.Pytester) -> None:
    kit.makepyfile(controller_probe=PROBE)
    # {worker}: each process logs to a file of its own (a store per worker, _discovery.WORKER)
    result = run(kit, "-n", "2", "--rdq-plugin=fake", "-p", "controller_probe",
                 f"--rdq-option=log={kit.path}/calls-{{worker}}.log",
                 "-k", "test_storage or test_payload_bytes or test_namespaces",
                 "--junitxml=out.xml", "--rdq-allow-incomplete", "--rdq-report=report.json",
                 subprocess=True)
    assert result.ret == 0, result.stdout.str()[-3000:]
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= 15 and "failed" not in outcomes
    opened: dict[str, set[str]] = defaultdict(set)
    dropped: set[str] = set()
    written: set[str] = set()
    logs = sorted(p.name for p in kit.path.glob("calls-*.log"))
    assert logs == ["calls-gw0.log", "calls-gw1.log"], logs  # none for the controller
    lines = [ln for name in logs for ln in (kit.path / name).read_text().splitlines()]
    for line in lines:
        op, *rest = line.split()
        if op == "open":
            opened[rest[0]].add(rest[1])
        elif op == "drop":
            dropped.add(rest[0])
        elif op == "write":
            written.add(rest[0])
    pids = set().union(*opened.values())
    assert len(pids) == 2  # both workers ran tests (the controller opens no namespace)
    for name in logs:  # and each wrote its own file
        assert len({ln.split()[2] for ln in (kit.path / name).read_text().splitlines()
                    if ln.startswith("open ")}) == 1
    assert all(len(p) == 1 for p in opened.values())  # no namespace used by two workers
    assert all(NAMESPACE_PATTERN.fullmatch(ns) for ns in opened)
    # every namespace dropped, the one-character name of RDQ-ST-008 included (another run
    # may use it at the same time: it is only opened and read, never written, and dropped
    # under the machine-wide lock, testing/_shared.py)
    assert set(opened) <= dropped and "a" in opened and "a" not in written
    # One run, one token, shared by the workers and recorded in the report.
    token = json.loads((kit.path / "report.json").read_text(encoding="utf-8"))["run_token"]
    assert re.fullmatch("[0-9a-f]{8}", token), token
    kit_names = set(opened) - {"a"}
    assert all(ns.startswith(f"t{token}") for ns in kit_names), sorted(opened)
    workers = {ns[9:ns.index("w", 9)] for ns in kit_names}
    assert workers == {"0", "1"}, sorted(opened)
    # The controller runs no test: while its workers start on the same CPUs it imports
    # neither Hypothesis (a warning filter naming its category did) nor the suites.
    assert (kit.path / "controller-imports.txt").read_text() == ""
    # the report glue on the controller saw the plugin's declaration
    assert "plugin fake (standin 0.1" in result.stdout.str()


# -- one CPU per worker (_pytest/_affinity.py) -------------------------------------------

AFFINITY_PROBE = """
import json
import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None:  # every thread of the worker, after the kit's configure
        cpus = [sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")]
        with open(f"affinity-{workerinput['workerid']}.json", "w") as f:
            json.dump(cpus, f)
"""

_CAN_PIN = hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2


@contextmanager
def _two_cpus() -> Iterator[list[int]]:
    """This thread (and so the pytest it starts) on two CPUs: two workers take them all."""
    before = os.sched_getaffinity(0)
    cpus = sorted(before)[:2]
    os.sched_setaffinity(0, cpus)
    try:
        yield cpus
    finally:
        os.sched_setaffinity(0, before)


def _threads_cpus(kit: pytest.Pytester, worker: str) -> set[tuple[int, ...]]:
    found = json.loads((kit.path / f"affinity-{worker}.json").read_text())
    return {tuple(c) for c in found}


@pytest.mark.skipif(not _CAN_PIN, reason="needs os.sched_setaffinity and two CPUs")
def test_each_worker_keeps_its_threads_on_one_cpu(kit: pytest.Pytester) -> None:
    kit.makepyfile(affinity_probe=AFFINITY_PROBE)
    args = ("-n", "2", "--rdq-plugin=fake", "-p", "affinity_probe", "-k", "test_payload_bytes",
            "--rdq-allow-incomplete")
    with _two_cpus() as (first, second):
        result = run(kit, *args, subprocess=True)
        assert result.ret == 0, result.stdout.str()[-3000:]
        # every thread the worker had then (execnet's included) and those it starts later
        assert _threads_cpus(kit, "gw0") == {(first,)}
        assert _threads_cpus(kit, "gw1") == {(second,)}
        result = run(kit, *args, "--rdq-pin-threads=off", subprocess=True)
        assert result.ret == 0, result.stdout.str()[-3000:]
        assert _threads_cpus(kit, "gw0") == _threads_cpus(kit, "gw1") == {(first, second)}


@pytest.mark.skipif(not _CAN_PIN, reason="needs os.sched_setaffinity and two CPUs")
def test_always_pins_a_run_without_xdist_too(kit: pytest.Pytester) -> None:
    kit.makepyfile(affinity_probe=AFFINITY_PROBE.replace(
        "workerinput = getattr(session.config, \"workerinput\", None)",
        "workerinput = {\"workerid\": \"main\"}"))
    args = ("--rdq-plugin=fake", "-p", "affinity_probe", "-k", "test_payload_bytes",
            "--rdq-allow-incomplete")
    with _two_cpus() as cpus:
        result = run(kit, *args, "--rdq-pin-threads=always", subprocess=True)
        assert result.ret == 0, result.stdout.str()[-3000:]
        (pinned,) = _threads_cpus(kit, "main")  # one CPU, the same for every thread
        assert len(pinned) == 1 and pinned[0] in cpus
        result = run(kit, *args, subprocess=True)  # auto: a serial run is left free
        assert result.ret == 0, result.stdout.str()[-3000:]
        assert _threads_cpus(kit, "main") == {tuple(cpus)}


def test_pin_threads_takes_auto_always_or_off(kit: pytest.Pytester) -> None:
    result = run(kit, "--rdq-plugin=fake", "--rdq-pin-threads=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --rdq-pin-threads='sometimes' is not a choice; "
                                 "expected one of auto, always, off*"])


# -- Hypothesis' terminal summary on the controller (_pytest/_hypothesis_summary.py) -----

HYPOTHESIS_PROBE = """
import sys


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        with open("controller-end.txt", "w") as f:
            f.write("hypothesis" if "hypothesis" in sys.modules else "")
"""


def test_the_controller_never_imports_hypothesis(kit: pytest.Pytester) -> None:
    kit.makepyfile(hypothesis_probe=HYPOTHESIS_PROBE)
    args = ("-n", "2", "--rdq-plugin=fake", "-p", "hypothesis_probe", "-k",
            "test_generated_envelopes_roundtrip or test_payload_bytes", "--rdq-allow-incomplete")
    result = run(kit, *args, subprocess=True)
    assert result.ret == 0, result.stdout.str()[-3000:]
    # Its summary had nothing to say: the run ended without the 0.1-0.2 s import.
    assert (kit.path / "controller-end.txt").read_text() == ""
    # Asked for statistics, Hypothesis' summary is kept (under xdist its section is all
    # it prints: workers have no terminal reporter to hand the numbers to).
    result = run(kit, *args, "--hypothesis-show-statistics", subprocess=True)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*= Hypothesis Statistics =*"])
    assert (kit.path / "controller-end.txt").read_text() == "hypothesis"
