"""One selected plugin inside one pytest process: its storage, opened, reopened, closed.

Every call into the plugin goes through the guard (:class:`~._guard.Guard`, which this
runtime extends); this module is the storage's lifecycle around those calls. Opened
once per process at session start (on the xdist controller too, only to learn what
the plugin declares), and checked: what the hook returned must be a storage, and what
it declares (:func:`check_info`) a usable ``StorageInfo``. After a hang the storage
is abandoned and a fresh one is opened for the next test; if that fails too, the
plugin is given up for the rest of the run so that the run still ends quickly. The
namespaces the abandoned storage held are dropped through the fresh one (they are
still in the store: a database keeps its tables); those that cannot be are named in
one note.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from ..reporting._outage import could_not_run_reason
from ..storage._discovery import STDIO, LoadedPlugin
from ..storage._protocol import Storage, StorageInfo, StorageUnavailable
from ._failures import OperationHung, PluginFault, format_plugin_traceback
from ._guard import CouldNotRun, Guard, format_seconds

__all__ = ["PluginRuntime", "check_info"]


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


class PluginRuntime(Guard):
    """The storage of one plugin label, opened and guarded."""

    def __init__(self, loaded: LoadedPlugin, timeout: float) -> None:
        super().__init__(loaded.label, timeout)
        self.loaded = loaded
        self.storage: Storage | None = None
        self.info: StorageInfo | None = None
        self.unavailable: str | None = None
        """StorageUnavailable: tests are skipped with this reason."""
        self.notes: list[str] = []
        self.orphans: dict[str, None] = {}
        """Namespaces of an abandoned storage, to drop through the next one (ordered set)."""
        self.left_behind: dict[str, str] = {}
        """Namespaces the kit could not drop: name -> why (reported once, at close)."""
        self._reopen_failure: str | None = None
        self.shown_tracebacks: dict[tuple[str, str, str], str] = {}
        """(exception type, message, plugin traceback) -> the test that showed it first."""

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
                within = format_seconds(self.timeout)
                self.left_behind[name] = f"{op} did not return within {within}"
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

    def restart(self, between: Callable[[], None] | None = None) -> None:
        """Close the storage and open a new one through the hook (C15); ``between`` runs
        while it is closed (another process reads the store then, see ``_elsewhere``:
        a store that locks its files for one process lets the other in). It must not
        raise.

        Raises :class:`OperationHung` / :class:`PluginFault` from close or open,
        :class:`RuntimeError` when the fresh storage is unusable.
        """
        __tracebackhide__ = True
        old = self.storage
        try:
            if old is not None:
                self.storage = None
                self.call("storage.close()", old.close)
            if between is not None:
                between()
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
        self.stop_workers()
        note = self.left_behind_note()
        if note is not None:
            self.notes.append(note)
            self.left_behind.clear()


_NAMES_SHOWN = 12


def _some(names: list[str]) -> str:
    """The names, or the first few of many (an outage can leave one per test behind;
    every name of a run starts with its token, see Rdq.new_name)."""
    if len(names) <= _NAMES_SHOWN:
        return ", ".join(names)
    return f"{', '.join(names[:_NAMES_SHOWN])} and {len(names) - _NAMES_SHOWN} more"


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
