"""The guard: every call into a plugin, under the timeout, its hangs and outages told apart.

A plugin under test may hang, raise anything or return the wrong type, and none of
that may become a pytest internal error or a run that never ends. So each call runs
on a :class:`~._runner.Runner` with a deadline (``--rdq-timeout``); only the
concurrency suite, and only for a plugin that declares ``concurrent`` (C18), calls it
from several lanes, each with a worker of its own (``_lanes.py``). A call that
outlives the timeout marks the storage broken (the runtime reopens it, see
``_runtime``).

Hangs are counted over the whole run (per process: each xdist worker has its own
budget), whatever answered in between and however often the storage or the testee
was restarted: after HANG_LIMIT of them the kit stops calling the plugin.

A call answered ``UNAVAILABLE`` (C20: the plugin's service is down) makes the test
one that could not run (:class:`CouldNotRun`, a skip), unless the same adapter
answers a read of another id at once and the same call, tried again, answers
``UNAVAILABLE`` again: the service is up, so that is a refusal (C17, C20), returned
to the test like any other ``StorageError``. A second try that succeeds is the call's
answer (a write replaces, C13, so writing again is harmless). A lost connection the
plugin let through as an exception (``ConnectionRefusedError``) is told apart the same
way: the service down, the test could not run (its reason says what the plugin should
have answered); the service up, the exception is the call's defect.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from _pytest.outcomes import Skipped  # the class of pytest.skip.Exception, typed

from ..envelope._ids import new_id
from ..reporting._outage import could_not_run_reason
from ..storage._protocol import ErrorCode, StorageError
from ..storage._stdio import TesteeFault
from ._failures import OperationHung, PluginFault
from ._runner import Runner

__all__ = ["HANG_LIMIT", "CouldNotRun", "Guard", "format_seconds"]

HANG_LIMIT = 3
"""Calls that outlive the timeout, in the whole run (per process), before the kit gives
up on a plugin: a plugin that hangs after a warm-up costs about HANG_LIMIT + 1 timeouts."""


class CouldNotRun(Skipped):
    """The plugin's service was unavailable (C20): the test could not run. A skip, so
    that the verdict is incomplete, never compliant and never non-compliant for it;
    a BaseException, so Hypothesis neither shrinks on it nor calls the plugin again."""

    # Shown as pytest shows its own skips ("Skipped: reason"), not under this class's path.
    __module__ = "builtins"
    __qualname__ = "Skipped"


class Guard:
    """The calls into one plugin label: the deadline, the hang budget, the outages.
    :class:`~._runtime.PluginRuntime` adds the storage's lifecycle on top."""

    def __init__(self, label: str, timeout: float) -> None:
        self.label = label
        self.timeout = timeout
        self.broken: str | None = None
        """The storage hung or failed: the next test reopens it (see ensure_usable)."""
        self.dead: str | None = None
        """Reopening failed too: every remaining test fails with this reason."""
        self._runner = Runner(f"rdq-plugin-{self.label}")
        self._hangs: list[str] = []
        """Every call of the run that outlived the timeout, never reset: a plugin that
        answers a few calls after each restart and then hangs (a leaking pool) still
        runs out of budget (issue 21 §6)."""
        self._hung_testee: int | None = None
        """The pid of the testee whose hang was counted last: requests in flight together
        (C18) that one killed process ends are one hang."""
        self.unreachable = False
        """The last call met an outage (C20): teardown calls nothing more, and hands the
        test's namespaces to the next test (see abandon)."""
        self.lane = threading.local()
        """``lane.runner``: the worker of a kit thread of the concurrency suite (C18, see
        ``_lanes``); unset, calls go to the plugin's one worker thread."""
        self._idle_lanes: dict[int, Runner] = {}
        """Lane workers between two runs of lanes, by lane index: the next run's lane of
        that index reuses it (a worker is a thread start saved per lane and run)."""
        self._idle_lock = threading.Lock()

    def lane_runner(self, index: int) -> Runner:
        """A worker for lane ``index``: the idle one of that index, else a new one."""
        with self._idle_lock:
            runner = self._idle_lanes.pop(index, None)
        return runner or Runner(f"rdq-plugin-{self.label}-lane{index}")

    def lane_ended(self, index: int, runner: Runner) -> None:
        """Lane ``index`` ended: keep its worker for the next run of lanes. An abandoned
        one (a call that was never answered) is not kept: it ends with its late call."""
        if runner.abandoned:
            return
        with self._idle_lock:
            previous = self._idle_lanes.get(index)
            self._idle_lanes[index] = runner
        if previous is not None:  # pragma: no cover - one lane of an index at a time
            previous.stop()

    def stop_workers(self) -> None:
        """Stop the plugin's worker and the idle lane workers (at session end)."""
        with self._idle_lock:
            idle, self._idle_lanes = list(self._idle_lanes.values()), {}
        for runner in (self._runner, *idle):
            runner.stop()

    def call(self, operation: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run one plugin operation under the timeout.

        Raises :class:`OperationHung` on timeout (and marks the storage broken),
        :class:`PluginFault` when the plugin raised, :class:`CouldNotRun` when it
        answered ``UNAVAILABLE`` because its service is down (C20, see the module doc).
        """
        __tracebackhide__ = True
        try:
            result = self._guarded(operation, fn, *args)
        except PluginFault as fault:
            if not (_is_unavailable(fault.exc) or _disconnected(fault.exc)):
                raise
            first = fault.exc
        else:
            self.unreachable = False
            return result
        return self._after_unavailable(operation, fn, args, first)

    def _after_unavailable(
        self, operation: str, fn: Callable[..., Any], args: tuple[Any, ...], exc: BaseException
    ) -> Any:
        """An outage (the test could not run), or a refusal when the same adapter answers
        a probe read at once and the call, tried again, answers UNAVAILABLE again; ``exc``
        may be a lost connection the plugin raised, which the same probe tells apart."""
        __tracebackhide__ = True
        probe = _probe_of(fn)
        if probe is not None:
            try:
                self._guarded(f"read of an id never written (probe after {operation})", probe)
            except PluginFault:
                pass  # the service is down (or the probe says nothing): an outage
            else:
                try:
                    result = self._guarded(operation, fn, *args)
                except PluginFault as again:
                    if not _is_unavailable(again.exc):
                        raise
                    message = getattr(again.exc, "message", str(again.exc))
                    raise PluginFault(StorageError(
                        ErrorCode.UNAVAILABLE,
                        f"{message} (answered twice, while a read of another id on the same "
                        "adapter, in between, was answered: the service is up, so this is a "
                        "refusal, not an outage; C17, C20)",
                    )) from None
                self.unreachable = False
                return result
        self.unreachable = True
        now = datetime.now(UTC)
        if _is_unavailable(exc):
            message = getattr(exc, "message", None) or str(exc)
            raise CouldNotRun(could_not_run_reason(now, operation, str(message)))
        raise CouldNotRun(could_not_run_reason(
            now, operation, f"{exc} (C20: a plugin answers StorageError(UNAVAILABLE) when its "
            "service cannot be reached)", answer=f"raised {type(exc).__name__}"))

    def _guarded(self, operation: str, fn: Callable[..., Any], *args: Any) -> Any:
        __tracebackhide__ = True
        if self.broken is not None:
            raise OperationHung(f"{operation} not attempted: {self.broken}")
        if self._runner.abandoned:  # pragma: no cover - defensive
            self._runner = Runner(f"rdq-plugin-{self.label}")
        runner: Runner = getattr(self.lane, "runner", None) or self._runner
        try:
            result = runner.call(fn, *args, timeout=self.timeout)
        except TimeoutError:
            first = self.broken is None
            self.broken = (
                f"{operation} did not return within "
                f"{format_seconds(self.timeout)} (--rdq-timeout); the storage was abandoned"
            )
            if runner is self._runner:  # an abandoned lane worker ends with its lane
                self._runner = Runner(f"rdq-plugin-{self.label}")
            if first:  # the lanes of one test that time out together are one hang
                self._count_hang(operation)
            raise OperationHung(self.broken) from None
        except PluginFault as fault:
            exc = fault.exc
            if isinstance(exc, TesteeFault) and exc.kind == "timeout":
                # the stdio bridge's own deadline: the testee hung (and was killed)
                if exc.pid is None or exc.pid != self._hung_testee:
                    self._hung_testee = exc.pid
                    self._count_hang(operation)
                if self.dead is not None:
                    raise OperationHung(self.dead) from None
            raise
        return result

    def _count_hang(self, operation: str) -> None:
        """A hang; after HANG_LIMIT in the run the kit stops calling the plugin, so that
        a run against a plugin that hangs on every call, or on some calls of every
        restarted process, ends in about (HANG_LIMIT + 1) x timeout instead of a
        timeout per test (issue 12 §3, issue 21 §6)."""
        self._hangs.append(operation)
        if len(self._hangs) < HANG_LIMIT or self.dead is not None:
            return
        kinds = ", ".join(dict.fromkeys(_kind(op) for op in self._hangs))
        self.dead = (
            f"plugin {self.label!r} hung {len(self._hangs)} times in this run, in {kinds} "
            f"(each call outlived --rdq-timeout): {'; '.join(self._hangs)}; the kit stopped "
            "calling it and fails every remaining test"
        )
        self.broken = self.dead


def _kind(operation: str) -> str:
    """``read('x') in namespace 'n'`` -> ``read``."""
    return operation.split("(", 1)[0].strip()


def _is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, StorageError) and exc.code == ErrorCode.UNAVAILABLE


def _disconnected(exc: BaseException) -> bool:
    """The plugin let a lost connection through (ConnectionRefusedError, a driver's error
    raised from one) instead of answering UNAVAILABLE: told from a defect as an answered
    UNAVAILABLE is, by a probe (C20). A crashed or garbled testee is no outage."""
    seen: BaseException | None = exc
    for _ in range(8):  # the exception, what it was raised from, and so on
        if seen is None or isinstance(seen, TesteeFault):
            return False
        if isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _probe_of(fn: Callable[..., Any]) -> Callable[[], Any] | None:
    """For an adapter's write or read: a read of an id nobody wrote on the same adapter
    (it answers at once while the service is up). None for other calls."""
    owner = getattr(fn, "__self__", None)
    if getattr(fn, "__name__", "") not in ("write", "read"):
        return None
    read = getattr(owner, "read", None)
    return functools.partial(read, new_id()) if callable(read) else None


def format_seconds(value: float) -> str:
    return f"{value:g} s" if math.isfinite(value) else str(value)
