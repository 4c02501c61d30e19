"""The worker thread that runs a plugin's calls one at a time, each with a deadline.

A plugin under test is untrusted code that may hang, so the kit never calls it on
the test's own thread: each call is handed to a daemon worker thread and waited for
at most ``--rdq-timeout`` seconds. A call that outlives it abandons the thread
(daemon: it cannot keep the process alive) and with it the runner. One runner per
plugin runs all its calls, so a plugin keeping thread-bound resources (a default
``sqlite3`` connection) works; the concurrency lanes (``_lanes.py``) get one each.
Plugin tracebacks start in :func:`_run`, so ``_failures`` cuts the frames of this
file from them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from ._failures import PluginFault

__all__ = ["Runner"]


def _run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """``(True, result)`` or ``(False, what it raised)``: where a plugin's traceback starts."""
    try:
        return True, fn(*args)
    except BaseException as exc:  # the plugin's problem, reported by the caller
        return False, exc


class Runner:
    """A daemon worker thread that runs plugin calls one at a time, with a deadline.

    One request queue and one answer queue per runner, reused by every call (a call
    used to build a ``threading.Event``, i.e. a ``Condition`` and its locks). Calls are
    one at a time, so the answer waiting in the answer queue is always the current
    call's, as long as a call that was not answered retires the runner: a timeout, or
    anything raised in the caller while it waited (a ``KeyboardInterrupt``), abandons
    it and queues a stop, so its worker ends when the late call returns and no later
    call can ever take that late answer for its own.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue())
        self._answers: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        self.abandoned = False

    def _loop(self) -> None:
        jobs, answers = self._jobs, self._answers
        while True:
            job = jobs.get()
            if job is None:
                return
            answers.put(_run(*job))

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float) -> Any:
        """Run ``fn(*args)`` on the worker thread.

        Returns its result; raises :class:`PluginFault` wrapping whatever it
        raised, or :class:`TimeoutError` when it did not finish within
        ``timeout`` seconds (the runner is then abandoned and must not be reused).
        """
        if self.abandoned:
            raise RuntimeError("this runner was abandoned after a timeout")
        self._jobs.put((fn, args))
        try:
            ok, value = self._answers.get(timeout=timeout)
        except BaseException as exc:  # queue.Empty: the deadline; anything else: interrupted
            self.abandoned = True
            self._jobs.put(None)
            if isinstance(exc, queue.Empty):
                raise TimeoutError from None
            raise
        if not ok:
            raise PluginFault(value)
        return value

    def stop(self) -> None:
        if not self.abandoned:
            self._jobs.put(None)
