"""The machinery of the concurrency suite (C18): lanes of the guard, the versions and the
history check, in process.

- lanes: each runs on a worker of its own, so plugin calls of different lanes overlap,
  and each call keeps the --rdq-timeout deadline; a plugin without lanes is still called
  by its one worker thread;
- versions: whole versions are told apart, and a mix of two matches neither;
- the history check flags a stale read only when the read started after a newer write
  returned, never for a read that merely overlapped that write.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rdq_compliance import StorageInfo, hookimpl, validate
from rdq_compliance._requirements import get_requirement
from rdq_compliance.storage._cpus import set_free
from rdq_compliance.suites._history import History
from rdq_compliance.suites._versions import Key, Op, version
from rdq_compliance.testing import CheckFailed, OperationHung
from rdq_compliance.testing._lanes import Lane, run_lanes
from rdq_compliance.testing._runtime import PluginRuntime

from ._fake_runtime import started_runtime

TIMEOUT = 0.5


class Storage:
    info = StorageInfo("fake", "0", frozenset({1}), frozenset({"concurrent"}))

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.threads: set[str] = set()
        self.lock = threading.Lock()
        self.hang = threading.Event()
        self.release = threading.Event()

    def call(self) -> str:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.threads.add(threading.current_thread().name)
        try:
            if self.hang.is_set():
                self.release.wait(10)
            else:
                self.release.wait(0.05)  # long enough for the other lanes to get in
        finally:
            with self.lock:
                self.inside -= 1
        return "ok"

    def open(self, namespace: str) -> Any: ...
    def drop(self, namespace: str) -> None: ...
    def close(self) -> None: ...


class Plugin:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    @hookimpl
    def rdq_storage_open(self, options: dict[str, str]) -> Storage:
        return self.storage


@pytest.fixture
def fake() -> Iterator[Storage]:
    storage = Storage()
    yield storage
    storage.release.set()


@pytest.fixture
def runtime(fake: Storage) -> PluginRuntime:
    rt = started_runtime(Plugin(fake), TIMEOUT)
    assert rt.storage is fake
    return rt


def test_lanes_call_the_plugin_at_the_same_time(runtime: PluginRuntime, fake: Storage) -> None:
    def body(lane: Lane) -> None:
        for _ in range(3):
            assert runtime.call("fake.call()", fake.call) == "ok"

    run_lanes(runtime, [body] * 4)
    assert fake.most >= 2, "the lanes' calls never overlapped"
    assert len({t for t in fake.threads if "lane" in t}) == 4
    # Without lanes: one worker thread, one call at a time.
    fake.most = 0
    for _ in range(3):
        runtime.call("fake.call()", fake.call)
    assert fake.most == 1


def test_a_hang_in_one_lane_ends_within_the_deadline(runtime: PluginRuntime,
                                                     fake: Storage) -> None:
    fake.hang.set()

    def body(lane: Lane) -> None:
        runtime.call("fake.call()", fake.call)

    with pytest.raises(OperationHung, match=r"did not return within 0\.5 s"):
        run_lanes(runtime, [body] * 3)
    assert runtime.broken is not None  # the kit reopens the storage before the next test


def test_the_first_check_failure_of_a_lane_is_raised(runtime: PluginRuntime) -> None:
    def body(lane: Lane) -> None:
        if lane.index == 2:
            raise CheckFailed("lane 2 saw a torn read")
        lane.stop.wait(5)  # stopped early by the failure
        assert lane.stopped

    with pytest.raises(CheckFailed, match="lane 2"):
        run_lanes(runtime, [body] * 3)


def _workers(runtime: PluginRuntime, count: int, answer: Any = "ok") -> list[threading.Thread]:
    """Run ``count`` lanes once; the worker thread (the object) each lane's call ran on,
    by lane index. Each call answers ``(answer, lane index)``: a lane must get its own."""
    seen: list[threading.Thread | None] = [None] * count

    def body(lane: Lane) -> None:
        def where(i: int) -> tuple[Any, int]:
            seen[i] = threading.current_thread()
            return answer, i

        assert runtime.call("fake.where()", where, lane.index) == (answer, lane.index)

    run_lanes(runtime, [body] * count)
    assert all(t is not None for t in seen)
    return seen  # type: ignore[return-value]


def test_lane_workers_are_kept_for_the_next_run_of_lanes(runtime: PluginRuntime) -> None:
    first = _workers(runtime, 3)
    assert len(set(first)) == 3 and threading.main_thread() not in first
    assert _workers(runtime, 3) == first  # the same threads, lane by lane
    more = _workers(runtime, 4)
    assert more[:3] == first and more[3] not in first
    runtime.close()  # the idle lane workers end with the plugin's own worker
    for thread in more:
        thread.join(5)
        assert not thread.is_alive()


def test_a_lane_worker_whose_call_hung_is_never_reused(runtime: PluginRuntime,
                                                       fake: Storage) -> None:
    first = _workers(runtime, 3)
    hung: list[threading.Thread] = []

    def body(lane: Lane) -> None:
        if lane.index == 1:
            hung.append(threading.current_thread())  # the lane's own thread, not its worker
            runtime.call("fake.call()", lambda: (fake.hang.set(), fake.call())[1])

    with pytest.raises(OperationHung):
        run_lanes(runtime, [body] * 3)
    fake.release.set()  # the late answer ("ok") arrives now, on lane 1's old worker
    first[1].join(5)
    assert not first[1].is_alive()  # the stop queued after the timeout ended it
    fake.hang.clear()
    runtime.ensure_usable()  # the storage is reopened, as before the next test
    again = _workers(runtime, 3, answer="fresh")  # each call asserts its own answer
    assert again[0] is first[0] and again[2] is first[2] and again[1] is not first[1]


# -- versions -------------------------------------------------------------------------------


def test_versions_are_valid_and_a_mix_of_two_matches_neither() -> None:
    key = Key("ns", 7)
    versions = [key.make(k) for k in range(12)]
    for env in versions:
        assert validate(env) == []
    for k, env in enumerate(versions):
        assert key.match(env) == k
        # a torn write: the new task row with the attempts of the version before it
        if k:
            torn = dataclasses.replace(env, attempts=versions[k - 1].attempts)
            assert key.match(torn) is None
            torn = dataclasses.replace(versions[k - 1], headers=env.headers)
            assert key.match(torn) is None
    assert key.match(None) is None
    # The same values in another form (C11: key order carries no meaning) still match.
    v5 = versions[5]
    reordered = dataclasses.replace(v5, headers=dict(reversed(list(v5.headers.items()))),
                                    extra=dict(reversed(list(v5.extra.items()))))
    assert key.match(reordered) == 5


# -- the history check ----------------------------------------------------------------------


class FakeRdq:
    example: tuple[str, dict[str, Any]] | None = None
    difference: str | None = None
    """What the last failure said it found (``Rdq.fail``'s ``difference``)."""

    def fail(self, summary: str, *, detail: str = "", envelopes: Any = (),
             difference: str = "") -> None:
        self.difference = difference
        raise CheckFailed(summary + "\n" + detail)


def history_with(reads: list[tuple[int, int, int]]) -> tuple[History, Key]:
    """Writes v0 [0,10] v1 [20,30] v2 [40,50]; reads (start, end, version returned)."""
    rdq: Any = FakeRdq()
    history = History(rdq, "fresh", seed=1, rounds=1)
    history.t0 = 0
    key = Key("ns", 9)
    for k, (start, end) in enumerate([(0, 10), (20, 30), (40, 50)]):
        key.make(k)
        key.writes.append(Op("w0", "write", key.id, start, end, k))
    for start, end, k in reads:
        history.reads.append((key, Op("r0", "read", key.id, start, end,
                                      got=version(key.n, k))))
    return history, key


@pytest.mark.parametrize("start, end, k", [
    (25, 28, 0),   # overlaps the write of v1: the old version is allowed
    (25, 28, 1),   # ... and so is the new one
    (31, 35, 1),   # after v1 returned
    (31, 45, 2),   # overlaps v2
    (5, 60, 0),    # a long read overlapping everything
])
def test_reads_a_correct_plugin_may_return_pass(start: int, end: int, k: int) -> None:
    history, _key = history_with([(start, end, k)])
    history.check_reads(atomic=True, fresh=True)


def test_a_read_after_a_newer_write_returned_is_stale() -> None:
    history, _key = history_with([(31, 35, 0)])
    with pytest.raises(CheckFailed, match="returned version 0 although version 1 had been "
                       "written and returned before this read started") as info:
        history.check_reads(atomic=False, fresh=True)
    assert "<- this read" in str(info.value)
    assert history.rdq.difference == "outdated"  # RDQ-CC-003's, whichever check saw it
    history, _key = history_with([(31, 35, 0)])
    history.check_reads(atomic=True, fresh=False)  # a whole version: not CC-001's concern


def test_what_a_read_of_no_version_holds_is_told() -> None:
    """A read that matched no version: parts of two of the id's versions are torn
    (RDQ-CC-001's), a part of another namespace's crossed (RDQ-CC-004's), anything
    else unknown (the failing check's own requirement)."""
    key = Key("ns", 4, "A")
    v1, v2 = key.make(1), key.make(2)
    torn = dataclasses.replace(v2, attempts=v1.attempts)
    other = version(key.n, 1003, "B")  # what namespace B wrote under the same id
    assert key.mixture(torn) == "torn"
    assert key.mixture(other) == "crossed"
    assert key.mixture(dataclasses.replace(v2, headers=other.headers)) == "crossed"
    assert key.mixture(dataclasses.replace(v2, queue="q.mangled")) == ""
    assert key.mixture(dataclasses.replace(v2, headers={}, attempts=(), extra={})) == ""
    assert key.mixture(dataclasses.replace(v2, queue=7, payload=None, headers=[])) == ""
    history, hkey = history_with([])
    history.reads.append((hkey, Op("r0", "read", hkey.id, 31, 35, got=dataclasses.replace(
        version(hkey.n, 1), attempts=version(hkey.n, 0).attempts))))
    with pytest.raises(CheckFailed, match="no version written under this id"):
        history.check_reads(atomic=True, fresh=False)
    assert history.rdq.difference == "torn"
    history, hkey = history_with([])
    history.reads.append((hkey, Op("r0", "read", hkey.id, 31, 35, got=None)))
    with pytest.raises(CheckFailed, match="returned nothing"):
        history.check_reads(atomic=True, fresh=False)
    assert history.rdq.difference == ""
    # nothing, where another namespace holds a version of the id: that write landed there
    history, hkey = history_with([])
    history.reads.append((hkey, Op("r0", "read", hkey.id, 31, 35, got=None)))
    with pytest.raises(CheckFailed, match="returned nothing"):
        history.check_reads(atomic=True, fresh=False, elsewhere={hkey.id})
    assert history.rdq.difference == "crossed"


def test_a_version_whose_write_had_not_begun_is_flagged() -> None:
    history, _key = history_with([(11, 15, 2)])
    with pytest.raises(CheckFailed, match="whose write had not begun"):
        history.check_reads(atomic=True, fresh=False)


def test_every_profile_has_rounds() -> None:
    from rdq_compliance.suites._history import ROUNDS
    from rdq_compliance.testing import PROFILES

    assert set(ROUNDS) == set(PROFILES)
    assert get_requirement("RDQ-CC-001").capability == "concurrent"


def test_a_concurrency_failure_names_its_plan_and_replays(tmp_path: Path) -> None:
    """The failing case is saved with its seed and round; --rdq-replay runs that plan again
    (for REPLAY_ROUNDS rounds: the interleaving differs from run to run)."""
    from rdq_compliance.suites._history import REPLAY_ROUNDS

    root = Path(__file__).resolve().parents[2]
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "--rdq-plugin=tests.mutants.zoo:torn_two_statement_write",
            f"--rdq-failures-dir={tmp_path / 'failures'}"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    first = subprocess.run([*base, "-k", "test_writes_are_atomic"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 1, first.stdout[-3000:]
    assert "history of id" in first.stdout and "replay: pytest" in first.stdout
    (case,) = (tmp_path / "failures").glob("test_writes_are_atomic-*.json")
    saved = json.loads(case.read_text())
    assert saved["requirement"] == "RDQ-CC-001" and saved["check"] == "atomic"
    seed = saved["example"]["seed"]
    assert f"seed {seed}" in first.stdout
    again = subprocess.run([*base, f"--rdq-replay={case}"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 1, again.stdout[-3000:]
    assert f"of {REPLAY_ROUNDS}, seed {seed}" in again.stdout


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs os.sched_setaffinity and two CPUs")
def test_lanes_run_on_every_cpu_while_the_test_thread_is_pinned(runtime: PluginRuntime) -> None:
    """--rdq-pin-threads keeps the test's thread on one CPU; the lanes, and the plugin calls
    they make, start on every CPU the process had (storage/_cpus.py): a race that needs two
    CPUs at once stays findable."""
    allowed = os.sched_getaffinity(0)
    seen: list[set[int]] = []

    def body(lane: Lane) -> None:
        seen.append(os.sched_getaffinity(0))
        seen.append(runtime.call("affinity", os.sched_getaffinity, 0))  # its worker's

    os.sched_setaffinity(0, {min(allowed)})
    set_free(frozenset(allowed))
    try:
        run_lanes(runtime, [body] * 2)
    finally:
        set_free(None)
        os.sched_setaffinity(0, allowed)
    assert seen == [allowed] * 4
