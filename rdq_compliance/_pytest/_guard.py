"""Every call into a plugin goes through here: timeout, exceptions, return types.

A plugin under test is untrusted code. It may hang, raise anything, return the
wrong type or change the object it was given. None of that may become a pytest
internal error or a run that never ends, so each call runs on a worker thread
with a deadline, and every way it can go wrong becomes a test failure whose
message names the operation and shows the plugin's own traceback.

One worker thread per plugin runs all its calls (so a plugin keeping
thread-bound resources, such as a default ``sqlite3`` connection, works). Only
the concurrency suite, and only for a plugin that declares ``concurrent`` (C18),
calls it from several lanes, each with a worker of its own (``_lanes.py``). When a
call outlives ``--rdq-timeout`` the thread is abandoned (daemon: it cannot keep
the process alive) and the storage is marked broken; the kit opens a fresh one
for the next test.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pluggy

from ..reporting._causes import Symptom
from ..storage._protocol import ErrorCode, StorageError

__all__ = [
    "CheckFailed",
    "OperationHung",
    "PluginFault",
    "Runner",
    "format_plugin_traceback",
]

_C17_CODES = frozenset(c.value for c in ErrorCode)


class CheckFailed(AssertionError):
    """A compliance check failed. Raised inside tests; Hypothesis shrinks on it."""

    symptom: Symptom | None = None
    """What a round trip read back differently (its first difference), for the report's
    root causes; set by :meth:`Rdq.fail`, read by the reporting plugin."""
    envelopes: tuple[object, ...] = ()
    """The envelopes the failure is about, as canonical JSON, for the saved case."""


class OperationHung(BaseException):
    """A plugin operation outlived the timeout.

    A ``BaseException`` on purpose: Hypothesis does not catch it, so a hung
    plugin is not re-run dozens of times while shrinking (each run would cost
    the whole timeout). pytest still reports it as an ordinary test failure.
    """

    envelopes: tuple[object, ...] = ()
    """The envelopes the hung operation was about, as canonical JSON, for the saved case."""


class PluginFault(Exception):
    """What the worker thread caught from the plugin (kept to be reported)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


def is_c17(code: object) -> bool:
    return isinstance(code, str) and code in _C17_CODES


_KIT_DIR = str(Path(__file__).resolve().parent.parent)
_PLUGGY_DIR = str(Path(pluggy.__file__).resolve().parent)


def format_plugin_traceback(exc: BaseException, limit_lines: int = 60) -> str:
    """The traceback of ``exc`` without the kit's guard frames, indented; "" when
    every frame is the kit's own (the built-in stdio bridge: its message says it all)."""
    te = traceback.TracebackException.from_exception(exc)
    frames = [f for f in te.stack if f.filename != __file__]
    if all(f.filename.startswith(_KIT_DIR) for f in frames):
        return ""
    # The calls that lead into the plugin (the kit's hook call, pluggy) say nothing.
    while frames and frames[0].filename.startswith((_KIT_DIR, _PLUGGY_DIR)):
        del frames[0]
    te.stack = traceback.StackSummary.from_list(frames)
    lines = "".join(te.format()).rstrip("\n").splitlines()
    if len(lines) > limit_lines:
        lines = ["  ...", *lines[-limit_lines:]]
    return "\n".join("    " + ln for ln in lines)


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


def fail(message: str) -> NoReturn:
    __tracebackhide__ = True
    raise CheckFailed(message)


def describe_storage_error(exc: StorageError) -> str:
    return f"StorageError(code={exc.code!r}, message={exc.message!r})"
