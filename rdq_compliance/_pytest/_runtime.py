"""One selected plugin inside one pytest process: its storage, worker thread and state.

Opened once per process at session start (on the xdist controller too, only to
learn what the plugin declares). After a hang the storage is abandoned and a
fresh one is opened for the next test; if that fails too, the plugin is given up
for the rest of the run so that the run still ends quickly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..storage import Storage, StorageInfo, StorageUnavailable
from ..storage._discovery import LoadedPlugin
from ._guard import OperationHung, PluginFault, Runner, format_plugin_traceback

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
        self._runner = Runner(f"rdq-plugin-{self.label}")

    # -- calling the plugin --------------------------------------------------

    def call(self, operation: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run one plugin operation under the timeout.

        Raises :class:`OperationHung` on timeout (and marks the storage broken),
        :class:`PluginFault` when the plugin raised.
        """
        __tracebackhide__ = True
        if self.broken is not None:
            raise OperationHung(f"{operation} not attempted: {self.broken}")
        if self._runner.abandoned:  # pragma: no cover - defensive
            self._runner = Runner(f"rdq-plugin-{self.label}")
        try:
            return self._runner.call(fn, *args, timeout=self.timeout)
        except TimeoutError:
            self.broken = (
                f"{operation} did not return within "
                f"{_seconds(self.timeout)} (--rdq-timeout); the storage was abandoned"
            )
            self._runner = Runner(f"rdq-plugin-{self.label}")
            raise OperationHung(self.broken) from None

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

    def ensure_usable(self) -> None:
        """Before a test: replace a storage abandoned after a hang by a fresh one."""
        if self.broken is None or self.dead is not None:
            return
        reason = self.broken
        old = self.storage
        self.broken = None
        self.notes.append(f"reopened after: {reason}")
        if old is not None:
            # Closing may hang as well; do it on the (fresh) worker, bounded.
            try:
                self.call("storage.close()", old.close)
            except (OperationHung, PluginFault):
                self.broken = None
        self.start()
        if self.storage is None and self.dead is None:
            self.dead = self.unavailable or "the storage could not be reopened"
        if self.dead is not None:
            self.dead = f"{reason}; reopening it failed: {self.dead}"

    def restart(self) -> None:
        """Close the storage and open a new one through the hook (C15).

        Raises :class:`OperationHung` / :class:`PluginFault` from close or open,
        :class:`RuntimeError` when the fresh storage is unusable.
        """
        __tracebackhide__ = True
        old = self.storage
        if old is not None:
            self.storage = None
            self.call("storage.close()", old.close)
        storage = self.call(
            "rdq_storage_open(options)", self._open_hook, dict(self.loaded.resolved)
        )
        problem = _storage_shape(storage)
        if problem is None:
            info = self.call("storage.info", lambda: storage.info)
            problem = check_info(info)
        if problem is not None:
            self.dead = f"plugin {self.label!r} after reopening: {problem}"
            raise RuntimeError(self.dead)
        self.storage, self.info = storage, info

    def close(self) -> None:
        """At session end: close the storage, never raising."""
        storage, self.storage = self.storage, None
        if storage is not None and self.broken is None:
            try:
                self.call("storage.close()", storage.close)
            except (OperationHung, PluginFault) as exc:
                self.notes.append(f"storage.close() failed: {exc}")
        self._runner.stop()


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
    return f"plugin {label!r} is unavailable: {exc.message}{hint}"


def _seconds(value: float) -> str:
    return f"{value:g} s" if math.isfinite(value) else str(value)
