"""Bounded runs against a hung plugin (issue 12 §3).

After HANG_LIMIT calls in the run outlived the timeout (counted across every reopen of
the storage and restart of a testee, whatever answered in between), the kit stops
calling the plugin: the remaining tests fail at once naming the hangs, so a plugin that
hangs on every read, or after a warm-up in every process, costs about
(HANG_LIMIT + 1) x timeout, not a timeout per test (issue 12 §3, issue 21 §6). A plugin
that hangs fewer times keeps being tested.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rdq_compliance import StorageInfo, hookimpl
from rdq_compliance.testing import OperationHung
from rdq_compliance.testing._guard import HANG_LIMIT
from rdq_compliance.testing._runtime import PluginRuntime

from ._fake_runtime import started_runtime

TESTEE = Path(__file__).resolve().parents[1] / "mutants" / "testee.py"
TIMEOUT = 0.2


class Storage:
    info = StorageInfo("fake", "0", frozenset({1}), frozenset())

    def __init__(self, hang: threading.Event, release: threading.Event) -> None:
        self.hang, self.release = hang, release

    def open(self, namespace: str) -> object:
        return object()

    def drop(self, namespace: str) -> None:
        if self.hang.is_set():
            self.release.wait(30)

    def close(self) -> None: ...


class Plugin:
    def __init__(self) -> None:
        self.hang, self.release = threading.Event(), threading.Event()

    @hookimpl
    def rdq_storage_open(self, options: dict[str, str]) -> Storage:
        return Storage(self.hang, self.release)


def _runtime(plugin: Plugin) -> PluginRuntime:
    return started_runtime(plugin, TIMEOUT)


def _drop(rt: PluginRuntime, name: str) -> None:
    rt.ensure_usable()  # what the kit does before each test
    assert rt.storage is not None
    rt.call(f"storage.drop({name!r})", rt.storage.drop, name)


def test_a_plugin_hanging_again_and_again_is_given_up_naming_the_hangs() -> None:
    plugin = Plugin()
    rt = _runtime(plugin)
    plugin.hang.set()
    try:
        for n in range(HANG_LIMIT):
            with pytest.raises(OperationHung):
                _drop(rt, f"n{n}")  # the storage is reopened in between: that answers
        assert rt.dead is not None
        assert f"hung {HANG_LIMIT} times in this run, in storage.drop" in rt.dead
        assert "storage.drop('n0'); storage.drop('n1'); storage.drop('n2')" in rt.dead
        start = time.monotonic()
        with pytest.raises(OperationHung, match="not attempted"):
            rt.call("storage.drop('n3')", lambda: None)  # not even called
        assert time.monotonic() - start < TIMEOUT
    finally:
        plugin.release.set()
        rt.close()


def test_hangs_count_across_answered_calls_and_reopens() -> None:
    plugin = Plugin()
    rt = _runtime(plugin)
    try:
        for n in range(HANG_LIMIT):
            plugin.hang.clear()
            for m in range(3):
                _drop(rt, f"a{n}{m}")  # answered calls in between reset nothing
            plugin.hang.set()
            with pytest.raises(OperationHung):
                _drop(rt, f"n{n}")
            assert (rt.dead is None) == (n < HANG_LIMIT - 1)
        assert rt.dead is not None
        assert f"hung {HANG_LIMIT} times in this run, in storage.drop" in rt.dead
    finally:
        plugin.release.set()
        rt.close()


def test_a_plugin_that_hangs_less_keeps_being_tested() -> None:
    plugin = Plugin()
    rt = _runtime(plugin)
    try:
        for n in range(HANG_LIMIT - 1):
            plugin.hang.set()
            with pytest.raises(OperationHung):
                _drop(rt, f"n{n}")
        plugin.hang.clear()
        for n in range(10):
            _drop(rt, f"a{n}")
        assert rt.dead is None
    finally:
        plugin.release.set()
        rt.close()


@pytest.mark.parametrize(("defect", "limit"), [
    # Done when (issue 12): every read hangs: the whole run (the default profile, every
    # suite) ends in under 60 s.
    ("hang_every_read", 60),
    # Done when (issue 21 §6): the testee answers 6 requests per process and then hangs on
    # reads (each restarted process works for a while, then hangs): under 90 s, as the hang
    # budget is the run's, not the process's.
    ("hang_after_warmup", 90),
])
def test_a_hanging_testee_ends_the_whole_run_quickly(
    tmp_path: Path, defect: str, limit: int
) -> None:
    """--rdq-timeout 5 and a testee that hangs on reads: non-compliant, naming the hang,
    within ``limit`` seconds."""
    command = shlex.join([sys.executable, str(TESTEE), "--defect", defect])
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
           "--rdq-plugin=stdio", "--rdq-testee", command, "--rdq-timeout", "5",
           "--rdq-report", "report.json"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True,
                          timeout=limit * 5,
                          env={**__import__("os").environ, "RDQ_STATE_DIR": str(tmp_path)})
    elapsed = time.monotonic() - start
    out = proc.stdout[-4000:]
    assert proc.returncode == 1, out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "non-compliant"
    assert "hung 3 times in this run, in read (each call outlived --rdq-timeout)" in (
        proc.stdout), out
    assert elapsed < limit, f"the run took {elapsed:.1f} s"
