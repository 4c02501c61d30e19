"""The guard's worker thread (testing/_runner.py): one request queue and one answer
queue per runner, reused by every call, so a call that was not answered (a timeout, an
interrupted wait) must retire the runner: no later call may take its late answer."""

from __future__ import annotations

import queue
import threading
from typing import Any

import pytest

from rdq_compliance.testing._failures import PluginFault
from rdq_compliance.testing._runner import Runner

WAIT = 10.0  # generous: these tests never wait for a deadline to pass but one


def test_each_call_gets_its_own_answer_in_order() -> None:
    runner = Runner("t")
    try:
        assert [runner.call(lambda i: i * 2, i, timeout=WAIT) for i in range(300)] == [
            i * 2 for i in range(300)]
        with pytest.raises(PluginFault) as info:
            runner.call(lambda: 1 / 0, timeout=WAIT)
        assert isinstance(info.value.exc, ZeroDivisionError)
        assert runner.call(lambda: "after a fault", timeout=WAIT) == "after a fault"
        assert not runner.abandoned
    finally:
        runner.stop()


def test_calls_run_on_the_one_worker_thread_and_it_ends_on_stop() -> None:
    runner = Runner("t")
    names = {runner.call(lambda: threading.current_thread().name, timeout=WAIT)
             for _ in range(5)}
    assert names == {"t"}
    runner.stop()
    runner._thread.join(WAIT)
    assert not runner._thread.is_alive()


def test_a_timeout_abandons_the_runner_and_its_worker_ends_after_the_late_call() -> None:
    release = threading.Event()
    runner = Runner("t")
    with pytest.raises(TimeoutError):
        runner.call(release.wait, WAIT, timeout=0.05)
    assert runner.abandoned
    with pytest.raises(RuntimeError, match="abandoned"):
        runner.call(lambda: "late answer taken for this one", timeout=WAIT)
    release.set()  # the late call returns; the stop queued after the timeout ends the worker
    runner._thread.join(WAIT)
    assert not runner._thread.is_alive()


class _InterruptedOnce:
    """The runner's answer queue, with a wait that is interrupted once (as a
    KeyboardInterrupt would be) while the worker is still busy."""

    def __init__(self, real: queue.SimpleQueue[Any]) -> None:
        self.real, self.interrupted = real, False

    def get(self, timeout: float) -> Any:
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return self.real.get(timeout=timeout)


def test_an_interrupted_wait_retires_the_runner_so_its_late_answer_is_never_taken() -> None:
    release = threading.Event()
    runner = Runner("t")
    answers = runner._answers
    runner._answers = _InterruptedOnce(answers)  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        runner.call(lambda: (release.wait(WAIT), "late answer")[1], timeout=WAIT)
    release.set()
    assert runner.abandoned
    with pytest.raises(RuntimeError, match="abandoned"):
        runner.call(lambda: "fresh answer", timeout=WAIT)
    runner._thread.join(WAIT)
    assert not runner._thread.is_alive()
    assert answers.get(timeout=WAIT) == (True, "late answer")  # left unread
