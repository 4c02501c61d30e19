"""The one-character namespace (issue 22 §4), in process: RDQ-ST-008's test drops ``a``
like every namespace it opens, but only while no other kit run on the machine has it
open (``Rdq.shared_namespace``, ``testing/_shared.py``); else a note names it.

Another run is played by this test holding the machine's lock file (a private one per
test: ``lock_path`` is patched) through a descriptor of its own; ``flock`` locks of two
descriptors conflict, also within one process.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rdq_compliance.suites import test_namespaces as suite
from rdq_compliance.testing import CheckFailed, _shared
from rdq_compliance.testing._runtime import PluginRuntime

from ._gated_plugin import World, rdq_for

NOTE = "namespace 'a' may remain in the store"


@pytest.fixture
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "shared.lock"
    monkeypatch.setattr(_shared, "lock_path", lambda: path)
    return path


@pytest.fixture
def other_run(lock: Path) -> Iterator[int]:
    """A descriptor on the lock file, as another kit run holds it (shared) while it has
    ``a`` open."""
    fd = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_SH)
    yield fd
    os.close(fd)


def ops(world: World) -> list[str]:
    return [f"{op} {ns}" for op, _, ns in world.log]


def test_the_one_character_name_is_opened_then_dropped(
    world: World, runtime: PluginRuntime, lock: Path
) -> None:
    rdq = rdq_for(runtime)
    suite.test_one_character_name_is_accepted(rdq)
    assert ops(world) == ["open a", "drop a"]
    assert not any(NOTE in n for n in runtime.notes), runtime.notes


def test_it_is_dropped_only_once_no_other_run_has_it_open(
    world: World, runtime: PluginRuntime, other_run: int
) -> None:
    def other_run_closes_it() -> None:
        world.log.append(("released", 0, "a"))
        fcntl.flock(other_run, fcntl.LOCK_UN)

    timer = threading.Timer(0.15, other_run_closes_it)  # within the wait (timeout + GRACE)
    timer.start()
    try:
        suite.test_one_character_name_is_accepted(rdq_for(runtime))
    finally:
        timer.join()
    assert ops(world) == ["open a", "released a", "drop a"]
    assert not any(NOTE in n for n in runtime.notes), runtime.notes


def test_a_name_another_run_keeps_open_is_left_with_a_note(
    world: World, runtime: PluginRuntime, other_run: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_shared, "GRACE", 0.05)
    suite.test_one_character_name_is_accepted(rdq_for(runtime))
    assert ops(world) == ["open a"]
    [note] = [n for n in runtime.notes if NOTE in n]
    assert "another kit run on this machine kept it open for over 0.25 s" in note
    assert "storage.drop('a')" in note


def test_a_failing_test_still_drops_it(
    world: World, runtime: PluginRuntime, lock: Path
) -> None:
    rdq = rdq_for(runtime)
    with pytest.raises(CheckFailed, match="the test's own failure"):  # noqa: SIM117
        with rdq.shared_namespace("a"):
            rdq.fail("the test's own failure")
    assert ops(world) == ["open a", "drop a"]


def test_without_the_lock_file_the_name_is_left_with_a_note(
    world: World, runtime: PluginRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_shared, "lock_path", lambda: tmp_path / "missing" / "x.lock")
    suite.test_one_character_name_is_accepted(rdq_for(runtime))
    assert ops(world) == ["open a"]
    [note] = [n for n in runtime.notes if NOTE in n]
    assert "cannot be opened" in note and "no other kit run has it open" in note
