"""One selected plugin inside one pytest process: its storage, the guard and its state.

Every call into a plugin goes through the guard (:class:`Runner`): a plugin under
test is untrusted code that may hang, raise anything or return the wrong type, and
none of that may become a pytest internal error or a run that never ends. So each
call runs on a daemon worker thread with a deadline (``--rdq-timeout``); one worker
thread per plugin runs all its calls (a plugin keeping thread-bound resources, such
as a default ``sqlite3`` connection, works). Only the concurrency suite, and only for
a plugin that declares ``concurrent`` (C18), calls it from several lanes, each with a
worker of its own (``_lanes.py``). A call that outlives the timeout abandons its
thread (daemon: it cannot keep the process alive) and marks the storage broken.

Opened once per process at session start (on the xdist controller too, only to
learn what the plugin declares). After a hang the storage is abandoned and a
fresh one is opened for the next test; if that fails too, the plugin is given up
for the rest of the run so that the run still ends quickly. The namespaces the
abandoned storage held are dropped through the fresh one (they are still in the
store: a database keeps its tables); those that cannot be are named in one note.

Hangs are counted over the whole run (per process: each xdist worker has its own
budget), whatever answered in between and however often the storage or the testee
was restarted: after HANG_LIMIT of them the kit stops calling the plugin.

A call answered ``UNAVAILABLE`` (C20: the plugin's service is down) makes the test
one that could not run (:class:`CouldNotRun`, a skip), unless the same adapter
answers a read of another id at once and the same call, tried again, answers
``UNAVAILABLE`` again: the service is up, so that is a refusal (C17, C20), returned
to the test like any other ``StorageError``. A second try that succeeds is the call's
answer (a write replaces, C13, so writing again is harmless).
"""

from __future__ import annotations

import contextlib
import functools
import math
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from _pytest.outcomes import Skipped  # the class of pytest.skip.Exception, typed

from ..envelope._ids import new_id
from ..reporting._outage import could_not_run_reason
from ..storage._discovery import STDIO, LoadedPlugin
from ..storage._protocol import ErrorCode, Storage, StorageError, StorageInfo, StorageUnavailable
from ..storage._stdio import TesteeFault
from ._failures import OperationHung, PluginFault, format_plugin_traceback

__all__ = ["HANG_LIMIT", "CouldNotRun", "PluginRuntime", "Runner", "check_info"]

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


def check_info(info: object) -> str | None:
    """Why ``info`` is not an acceptable :class:`StorageInfo`, or None when it is."""
    if not isinstance(info, StorageInfo):
        return f"storage.info returned {info!r}; expected rdq_compliance.StorageInfo"
    if not isinstance(info.name, str) or not info.name:
        return f"storage.info.name={info.name!r}; expected a non-empty string"
    if not isinstance(info.version, str):
        return f"storage.info.version={info.version!r}; expected a string"
    versions = info.envelope_versions
    if not versions or not all(type(v) is int and v >= 0 for v in versions):
        return (
            f"storage.info.envelope_versions={set(versions)!r}; expected a non-empty set "
            "of non-negative ints such as {1}"
        )
    if not all(isinstance(c, str) for c in info.capabilities):
        return f"storage.info.capabilities={set(info.capabilities)!r}; expected strings"
    return None


class PluginRuntime:
    """The storage of one plugin label, opened and guarded."""

    def __init__(self, loaded: LoadedPlugin, timeout: float) -> None:
        self.label = loaded.label
        self.loaded = loaded
        self.timeout = timeout
        self.storage: Storage | None = None
        self.info: StorageInfo | None = None
        self.unavailable: str | None = None
        """StorageUnavailable: tests are skipped with this reason."""
        self.broken: str | None = None
        """The storage hung or failed: the next test reopens it (see ensure_usable)."""
        self.dead: str | None = None
        """Reopening failed too: every remaining test fails with this reason."""
        self.notes: list[str] = []
        self.orphans: dict[str, None] = {}
        """Namespaces of an abandoned storage, to drop through the next one (ordered set)."""
        self.left_behind: dict[str, str] = {}
        """Namespaces the kit could not drop: name -> why (reported once, at close)."""
        self._reopen_failure: str | None = None
        self._runner = Runner(f"rdq-plugin-{self.label}")
        self.shown_tracebacks: dict[tuple[str, str, str], str] = {}
        """(exception type, message, plugin traceback) -> the test that showed it first."""
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

    # -- calling the plugin --------------------------------------------------

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
            if not _is_unavailable(fault.exc):
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
        a probe read at once and the call, tried again, answers UNAVAILABLE again."""
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
        message = getattr(exc, "message", None) or str(exc)
        raise CouldNotRun(could_not_run_reason(datetime.now(UTC), operation, str(message)))

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
                f"{_seconds(self.timeout)} (--rdq-timeout); the storage was abandoned"
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

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> None:
        """Open the storage and read what it declares (at session start)."""
        self.storage, self.info = None, None
        try:
            storage = self.call(
                "rdq_storage_open(options)", self._open_hook, dict(self.loaded.resolved)
            )
        except OperationHung as exc:
            self.dead = f"plugin {self.label!r}: {exc}"
            return
        except CouldNotRun as exc:  # StorageError(UNAVAILABLE) from the hook
            self.unavailable = f"plugin {self.label!r} is unavailable: {exc.msg}"
            return
        except PluginFault as fault:
            if isinstance(fault.exc, StorageUnavailable):
                self.unavailable = _unavailable_message(self.label, fault.exc)
                return
            tb = format_plugin_traceback(fault.exc)
            self.dead = (
                f"plugin {self.label!r}: rdq_storage_open(options) raised "
                f"{type(fault.exc).__name__}: {fault.exc}" + (f"\n{tb}" if tb else "")
            )
            return
        problem = _storage_shape(storage)
        if problem is None:
            try:
                info = self.call("storage.info", lambda: storage.info)
            except OperationHung as exc:
                self.dead = f"plugin {self.label!r}: {exc}"
                return
            except CouldNotRun as exc:
                self.unavailable = f"plugin {self.label!r} is unavailable: {exc.msg}"
                return
            except PluginFault as fault:
                tb = format_plugin_traceback(fault.exc)
                problem = f"storage.info raised {type(fault.exc).__name__}: {fault.exc}" + (
                    f"\n{tb}" if tb else ""
                )
            else:
                problem = check_info(info)
        if problem is not None:
            self.dead = f"plugin {self.label!r}: {problem}"
            return
        self.storage, self.info = storage, info

    def _open_hook(self, options: dict[str, str]) -> object:
        return self.loaded.pm.hook.rdq_storage_open(options=options)

    def abandon(self, names: Iterable[str]) -> None:
        """Namespaces a test could not drop because the storage was abandoned (a hang)
        or is gone: they are dropped through the next storage (see ensure_usable)."""
        for name in names:
            self.orphans[name] = None

    def ensure_usable(self) -> None:
        """Before a test: replace a storage abandoned after a hang by a fresh one, and
        drop through it the namespaces the abandoned one (or a test that met an outage)
        held. Raises :class:`CouldNotRun` when reopening meets an outage (C20)."""
        if self.dead is not None:
            return
        if self.broken is not None:
            self._reopen()
        if self.orphans and self.storage is not None and self.broken is None:
            self._drop_orphans()
            if self.broken is not None:  # a drop hung: that storage is abandoned too
                self._reopen()

    def _reopen(self) -> None:
        reason = self.broken
        old = self.storage
        self.broken = None
        note = f"reopened after: {reason}"
        if note not in self.notes:  # an outage may take several attempts
            self.notes.append(note)
        if old is not None:
            # Closing may hang as well; do it on the (fresh) worker, bounded.
            try:
                self.call("storage.close()", old.close)
            except (OperationHung, PluginFault, CouldNotRun):
                self.broken = None
        self.unavailable = None
        self.start()
        if self.storage is None and self.dead is None and self.unavailable is not None:
            # The service is down (C20): not the plugin's fault; try again before the
            # next test, and this one could not run.
            why, self.unavailable = self.unavailable, None
            self.broken, self.unreachable = reason, True
            raise CouldNotRun(could_not_run_reason(
                datetime.now(UTC), "rdq_storage_open(options)", why))
        if self.storage is None and self.dead is None:
            self.dead = "the storage could not be reopened"
        if self.dead is not None:
            self._reopen_failure = self.dead.splitlines()[0]
            self.dead = f"{reason}; reopening it failed: {self.dead}"

    def _drop_orphans(self) -> None:
        # One attempt each: a drop that fails now would fail again, and retrying a
        # hanging drop before every test would cost the timeout each time.
        storage = self.storage
        assert storage is not None
        while self.orphans:
            name = next(iter(self.orphans))
            del self.orphans[name]
            op = f"storage.drop({name!r})"
            try:
                self.call(op, storage.drop, name)
            except CouldNotRun:  # the service is still down: later (or at close)
                self.orphans[name] = None
                return
            except OperationHung:
                self.left_behind[name] = f"{op} did not return within {_seconds(self.timeout)}"
                self._give_up_orphans("not attempted after that hang")
                return
            except PluginFault as fault:
                self.left_behind[name] = f"{op} raised {type(fault.exc).__name__}: {fault.exc}"

    def _give_up_orphans(self, why: str) -> None:
        for name in self.orphans:
            self.left_behind[name] = why
        self.orphans.clear()

    def left_behind_note(self) -> str | None:
        """One note naming every namespace left in the store, or None."""
        if not self.left_behind:
            return None
        by_reason: dict[str, list[str]] = {}
        for name, why in self.left_behind.items():
            by_reason.setdefault(why, []).append(repr(name))
        reasons = "; ".join(f"{_some(names)}: {why}" for why, names in by_reason.items())
        many = len(self.left_behind) > 1
        them = "them" if many else "it"
        why = ("its service was unavailable (C20)" if all("C20" in w for w in by_reason)
               else "a storage was abandoned after a hang")
        return (
            f"{len(self.left_behind)} namespace{'s' if many else ''} left behind in the store: "
            f"{why} and the kit could not drop {them} "
            f"({reasons}); drop {them} by hand (storage.drop(name)) or clear the store"
        )

    def restart(self) -> None:
        """Close the storage and open a new one through the hook (C15).

        Raises :class:`OperationHung` / :class:`PluginFault` from close or open,
        :class:`RuntimeError` when the fresh storage is unusable.
        """
        __tracebackhide__ = True
        old = self.storage
        try:
            if old is not None:
                self.storage = None
                self.call("storage.close()", old.close)
            storage = self.call(
                "rdq_storage_open(options)", self._open_hook, dict(self.loaded.resolved)
            )
        except (CouldNotRun, PluginFault) as exc:
            down = isinstance(exc, CouldNotRun) or isinstance(exc.exc, StorageUnavailable)
            if self.storage is None and self.broken is None and down:
                # An outage (C20) between close and open: the next test reopens it.
                self.broken = "the storage was closed for a restart during an outage (C20)"
                self.unreachable = True
                if isinstance(exc, PluginFault):
                    raise CouldNotRun(could_not_run_reason(
                        datetime.now(UTC), "rdq_storage_open(options)", str(exc.exc))
                    ) from None
            raise
        problem = _storage_shape(storage)
        if problem is None:
            info = self.call("storage.info", lambda: storage.info)
            problem = check_info(info)
        if problem is not None:
            self.dead = f"plugin {self.label!r} after reopening: {problem}"
            raise RuntimeError(self.dead)
        self.storage, self.info = storage, info

    def close(self) -> None:
        """At session end: drop what an abandoned storage left (reopening it if the
        last test hung), close the storage, never raising."""
        if self.orphans:
            with contextlib.suppress(CouldNotRun):  # still down: given up below
                self.ensure_usable()
            if self.orphans and self.storage is not None and self.broken is None:
                self._drop_orphans()
            if self.orphans and self.storage is not None and self.broken is None:
                self._give_up_orphans("its service was still unavailable (C20) at the end")
            if self.orphans:
                why = self._reopen_failure or (
                    self.dead or "the storage was closed and not reopened"
                ).splitlines()[0]
                self._give_up_orphans(f"no storage to drop it on ({why})")
        storage, self.storage = self.storage, None
        if storage is not None and self.broken is None:
            try:
                self.call("storage.close()", storage.close)
            except (OperationHung, PluginFault, CouldNotRun) as exc:
                self.notes.append(f"storage.close() failed: {exc}")
        self._runner.stop()
        note = self.left_behind_note()
        if note is not None:
            self.notes.append(note)
            self.left_behind.clear()


def _kind(operation: str) -> str:
    """``read('x') in namespace 'n'`` -> ``read``."""
    return operation.split("(", 1)[0].strip()


_NAMES_SHOWN = 12


def _some(names: list[str]) -> str:
    """The names, or the first few of many (an outage can leave one per test behind;
    every name of a run starts with its token, see Rdq.new_name)."""
    if len(names) <= _NAMES_SHOWN:
        return ", ".join(names)
    return f"{', '.join(names[:_NAMES_SHOWN])} and {len(names) - _NAMES_SHOWN} more"


def _is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, StorageError) and exc.code == ErrorCode.UNAVAILABLE


def _probe_of(fn: Callable[..., Any]) -> Callable[[], Any] | None:
    """For an adapter's write or read: a read of an id nobody wrote on the same adapter
    (it answers at once while the service is up). None for other calls."""
    owner = getattr(fn, "__self__", None)
    if getattr(fn, "__name__", "") not in ("write", "read"):
        return None
    read = getattr(owner, "read", None)
    return functools.partial(read, new_id()) if callable(read) else None


def _storage_shape(storage: object) -> str | None:
    if storage is None:
        return "rdq_storage_open(options) returned None; expected a Storage"
    missing = [m for m in ("open", "drop", "close") if not callable(getattr(storage, m, None))]
    if missing or (not hasattr(type(storage), "info") and not hasattr(storage, "info")):
        return (
            f"rdq_storage_open(options) returned {storage!r}, which lacks "
            f"{', '.join(missing) or 'info'}; expected an rdq_compliance.Storage "
            "(info, open, drop, close)"
        )
    return None


def _unavailable_message(label: str, exc: StorageUnavailable) -> str:
    hint = f" (set it with --rdq-option {label}.{exc.setting}=VALUE)" if exc.setting else ""
    if label == STDIO and exc.setting == "command":
        hint = " (change --rdq-testee CMD, or RDQ_TESTEE)"
    return f"plugin {label!r} is unavailable: {exc.message}{hint}"


def _seconds(value: float) -> str:
    return f"{value:g} s" if math.isfinite(value) else str(value)
