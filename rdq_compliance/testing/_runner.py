"""The worker thread that runs a plugin's calls one at a time, each with a deadline.

A plugin under test is untrusted code that may hang, so the kit never calls it on
the test's own thread: each call is handed to a daemon worker thread and waited for
at most ``--rdq-timeout`` seconds. A call that outlives it abandons the thread
(daemon: it cannot keep the process alive) and with it the runner. One runner per
plugin runs all its calls, so a plugin keeping thread-bound resources (a default
``sqlite3`` connection) works; the concurrency lanes (``_lanes.py``) get one each.
Plugin tracebacks start in :meth:`_Job.run`, so ``_failures`` cuts the frames of this
file from them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._failures import PluginFault

__all__ = ["Runner"]


@dataclass
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args)
        except BaseException as exc:  # the plugin's problem, reported by the caller
            self.error = exc
        finally:
            self.done.set()


class Runner:
    """A daemon worker thread that runs plugin calls one at a time, with a deadline."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()
        self.abandoned = False

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.run()

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float) -> Any:
        """Run ``fn(*args)`` on the worker thread.

        Returns its result; raises :class:`PluginFault` wrapping whatever it
        raised, or :class:`TimeoutError` when it did not finish within
        ``timeout`` seconds (the runner is then abandoned and must not be reused).
        """
        if self.abandoned:
            raise RuntimeError("this runner was abandoned after a timeout")
        job = _Job(fn, args)
        self._jobs.put(job)
        if not job.done.wait(timeout):
            self.abandoned = True
            raise TimeoutError
        if job.error is not None:
            raise PluginFault(job.error)
        return job.result

    def stop(self) -> None:
        if not self.abandoned:
            self._jobs.put(None)
