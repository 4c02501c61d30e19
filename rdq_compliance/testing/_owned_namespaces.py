"""The namespaces one test owns: :class:`Namespaces`, the names it made or claimed and
the adapters it opened.

:class:`Namespaces` is the bookkeeping behind ``rdq.new_name``, ``rdq.namespace``,
``rdq.release`` and the teardown: every namespace a test used is closed and dropped at
its end, even after a failure or a hang. Each handle it opens is a
:class:`~._namespace_handle.Namespace`.

The connection budget: a process keeps at most :data:`MAX_OPEN_ADAPTERS` adapters open
(one storage, see ``_runtime``), so that a plugin holding a database connection per
adapter works on a server with a modest ``max_connections``, also under ``-n N``. A
test may hold more :class:`Namespace` handles than that: opening one more closes the
adapter used least recently (through the guard), and a handle whose adapter the kit
closed opens a fresh one on its next call (what a namespace holds outlives its
adapters, C14). Lanes of the concurrency suite open one adapter each besides, never
closed under them, and close it when the lane ends.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..envelope._model import Envelope
from ..storage._protocol import NAMESPACE_PATTERN, StorageError
from ._failures import (
    CheckFailed,
    OperationHung,
    PluginFault,
    describe_storage_error,
    format_plugin_traceback,
)
from ._namespace_handle import MAX_OPEN_ADAPTERS, Namespace

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Namespaces"]

EMPTY_DROP = "RDQ-ST-007"
"""The requirement (a SHOULD) of dropping a namespace that holds nothing."""

_ns_counter = itertools.count()
_PROCESS_TOKEN = secrets.token_hex(4)  # for an Rdq built without a run token (the kit's tests)


class Namespaces:
    """The namespaces one test owns (names made or claimed, adapters opened): what
    ``rdq.namespace`` and friends do, and what the teardown drops."""

    def __init__(self, rdq: Context) -> None:
        self.rdq = rdq
        self.opened: list[Namespace] = []
        """Every handle the test opened, closed or not."""
        self.names: list[str] = []
        self._lock = threading.Lock()  # lanes open and close from their own threads
        self._open: dict[Namespace, None] = {}
        """The handles with an adapter open outside the lanes, least recently used first."""
        self._lanes: dict[int, list[Namespace]] = {}
        """Thread id of a lane -> the handles it opened that are still open."""
        self.history: list[tuple[str, str, str]] = []
        """What the test did, in order: ``("write", name, id)``, ``("drop", name, "")`` and
        ``("restart", "", "")``, to say which storage semantics a read that found the
        wrong thing broke."""
        self.shared: set[str] = set()
        """Names no run can own that this test opened (``shared_namespace``)."""
        self.versions: dict[tuple[str, str], list[Envelope]] = {}
        """Every envelope written per (namespace, id), by any handle, in order: what an
        earlier version was, whichever adapter wrote it."""

    def semantics(self, name: str, id: str, *, found: bool,
                  overwrites: Callable[[], bool | None] | None = None) -> str:
        """The class of difference (``DIFFERENCES`` of the diagnosis table) of a read of
        ``id`` in ``name`` that found something where nothing was written (``found``) or
        nothing where an envelope was: what happened since the write tells which
        requirement broke; "" when it tells nothing. Where a drop (of ``name`` before the
        write, of another namespace after it) or a restart after it, and a write of
        another id to ``name`` after it, could both have taken the envelope,
        ``overwrites`` (a probe: does writing another id lose an envelope?) tells which
        did."""
        events = list(self.history)
        last = max((i for i, e in enumerate(events) if e == ("write", name, id)), default=-1)
        after = events[last + 1:]
        if found:
            if last >= 0 and ("drop", name, "") in after:
                return "survived-drop"
            if last < 0:
                elsewhere = any(k == "write" and n != name and i == id for k, n, i in events)
                return "leaked" if elsewhere else "absent"
            return ""
        if last < 0:
            return ""
        loss = ("lost-after-drop" if ("drop", name, "") in events[:last]
                else "taken-by-drop" if any(k == "drop" and n != name for k, n, _ in after)
                else "not-durable" if ("restart", "", "") in after
                else "")
        rewritten = any(k == "write" and n == name and i != id for k, n, i in after)
        if loss and rewritten and overwrites is not None:
            lost = overwrites()
            if lost is not None:
                return "overwritten" if lost else loss
        return loss or ("overwritten" if rewritten else "")

    def written_elsewhere(self, name: str, id: str, got: Envelope) -> str | None:
        """The namespace of this test, other than ``name``, that was written ``got``
        under ``id``, else None."""
        with self._lock:
            opened = list(self.opened)
        for ns in opened:
            if ns.name != name and any(e == got for e in ns.written.get(id, ())):
                return ns.name
        return None

    def new_name(self) -> str:
        settings = self.rdq.settings
        token = settings.run_token or _PROCESS_TOKEN
        name = f"t{token}{settings.worker}w{next(_ns_counter):x}"
        assert len(name) <= 20, name
        assert NAMESPACE_PATTERN.fullmatch(name), name
        self.names.append(name)
        return name

    def claim_name(self, name: str) -> str:
        if not isinstance(name, str) or not NAMESPACE_PATTERN.fullmatch(name):
            raise ValueError(f"namespace name={name!r} does not match "
                             f"{NAMESPACE_PATTERN.pattern} (C14)")
        if name not in self.names:
            self.names.append(name)
        return name

    def leave(self, name: str, why: str) -> None:
        """``name`` is not dropped: say so once per run, in a note of the report."""
        self.forget_name(name)
        note = (f"namespace {name!r} may remain in the store: {why}; drop it by hand "
                f"(storage.drop({name!r})) when no kit run is using the store")
        if note not in self.rdq.runtime.notes:
            self.rdq.runtime.notes.append(note)

    def forget_name(self, name: str) -> None:
        if name in self.names:
            self.names.remove(name)

    def open(self, name: str | None) -> Namespace:
        __tracebackhide__ = True
        rdq = self.rdq
        if rdq.runtime.storage is None:
            what = "a new namespace" if name is None else f"namespace {name!r}"
            rdq.fail(f"no storage to open {what} on: {rdq.runtime.dead}")
        if name is None:
            name = self.new_name()
        lane = self._in_lane()
        ns = Namespace(self, name, self._open_adapter(name, lane), lane=lane)
        with self._lock:
            self.opened.append(ns)
        self._register(ns)
        return ns

    def reopen(self, ns: Namespace) -> None:
        """A fresh adapter for a handle that was closed (see ``Namespace.adapter``)."""
        __tracebackhide__ = True
        ns.lane = self._in_lane()
        ns._adapter = self._open_adapter(ns.name, ns.lane)
        ns.reopened += 1
        self._register(ns)

    def touch(self, ns: Namespace) -> None:
        """``ns`` was just used: the last to be closed to make room."""
        with self._lock:
            if ns in self._open:
                del self._open[ns]
                self._open[ns] = None

    def forget(self, ns: Namespace) -> Any:
        """Mark ``ns`` closed; returns the adapter to close (None: it was closed)."""
        with self._lock:
            adapter, ns._adapter = ns._adapter, None
            self._open.pop(ns, None)
            for held in self._lanes.values():
                if ns in held:
                    held.remove(ns)
        return adapter

    def open_count(self) -> int:
        """Adapters open now (outside and on the lanes)."""
        with self._lock:
            return len(self._open) + sum(len(held) for held in self._lanes.values())

    def close_lane(self) -> None:
        """At the end of a lane, on its thread: close the adapters it opened."""
        __tracebackhide__ = True
        with self._lock:
            held = self._lanes.pop(threading.get_ident(), [])
        for ns in held:
            ns.close()

    def _in_lane(self) -> bool:
        return getattr(self.rdq.runtime.lane, "runner", None) is not None

    def _register(self, ns: Namespace) -> None:
        with self._lock:
            if ns.lane:
                self._lanes.setdefault(threading.get_ident(), []).append(ns)
            else:
                self._open[ns] = None

    def _make_room(self) -> None:
        """Close the least recently used adapters until one more fits the budget."""
        __tracebackhide__ = True
        while True:
            with self._lock:
                if len(self._open) < MAX_OPEN_ADAPTERS:
                    return
                oldest = next(iter(self._open))
            oldest.close()

    def _open_adapter(self, name: str, lane: bool) -> Any:
        __tracebackhide__ = True
        rdq = self.rdq
        if not lane:  # a lane's neighbours may be using theirs right now
            self._make_room()
        result = self._storage_call("open", name)
        missing = [m for m in ("write", "read", "close") if not callable(getattr(result, m, None))]
        if missing:
            rdq.fail(
                f"storage.open({name!r}) returned {result!r}, which has no "
                f"{', '.join(missing)}; expected an rdq_compliance.Adapter"
            )
        return result

    def drop(self, name: str) -> None:
        __tracebackhide__ = True
        if self.holds_nothing(name) and self.rdq.requirement.id != EMPTY_DROP:
            self._drop_nothing(name)
        else:
            self._storage_call("drop", name)
        self.history.append(("drop", name, ""))

    def holds_nothing(self, name: str) -> bool:
        """Whether ``name`` is one of this test's own names (made or claimed) or a shared
        one (``shared_namespace``: no kit run writes to those), which nothing but this
        test writes to, and nothing was written to it since it was made or last
        dropped."""
        if name not in self.names and name not in self.shared:
            return False
        for kind, n, _ in reversed(self.history):
            if n == name:
                return kind == "drop"
        return True

    def _drop_nothing(self, name: str) -> None:
        """Drop a namespace that holds nothing. C14 says only that this SHOULD succeed
        (RDQ-ST-007, whose own test judges it): a refusal or an exception here is not
        the failure of another requirement's test (the state machine dropping a
        namespace twice, a teardown), or a plugin failing a SHOULD would fail a MUST. A
        hang still fails the test; an outage still makes it one that could not run."""
        __tracebackhide__ = True
        rdq = self.rdq
        storage = rdq.runtime.storage
        if storage is None:
            rdq.fail(f"no storage to drop namespace {name!r} on: {rdq.runtime.dead}")
        try:
            rdq.runtime.call(f"storage.drop({name!r})", storage.drop, name)
        except OperationHung as exc:
            rdq.hung(exc, ())
        except PluginFault:
            pass  # RDQ-ST-007's test, which drops such a namespace itself, reports it

    def _storage_call(self, verb: Literal["open", "drop"], name: str) -> Any:
        """``storage.open(name)`` or ``storage.drop(name)`` through the guard; the test
        fails without a storage or when the plugin refuses."""
        __tracebackhide__ = True
        rdq = self.rdq
        storage = rdq.runtime.storage
        if storage is None:
            rdq.fail(f"no storage to {verb} namespace {name!r} on: {rdq.runtime.dead}")
        result = rdq.call(f"storage.{verb}({name!r})", getattr(storage, verb), name)
        if isinstance(result, StorageError):
            rdq.fail(f"storage.{verb}({name!r}) refused with {describe_storage_error(result)}")
        return result

    def restart(self, between: Callable[[], None] | None = None) -> None:
        __tracebackhide__ = True
        rdq = self.rdq
        self.close_all()
        self.history.append(("restart", "", ""))
        try:
            rdq.runtime.restart(between)
        except OperationHung as exc:
            rdq.hung(exc, ())
        except PluginFault as fault:
            err = fault.exc
            tb = format_plugin_traceback(err)
            rdq.fail(
                f"closing and reopening the storage failed: {type(err).__name__}: {err}",
                detail=f"plugin traceback:\n{tb}" if tb else "",
            )
        except RuntimeError as exc:
            rdq.fail(str(exc))

    def close_all(self) -> None:
        """Close every adapter the test holds open."""
        __tracebackhide__ = True
        for ns in list(self.opened):
            ns.close()

    def release(self, name: str) -> None:
        __tracebackhide__ = True
        for ns in self.opened:
            if ns.name == name:
                ns.close()
        with self._lock:
            self.opened = [ns for ns in self.opened if ns.name != name]
        try:
            self.drop(name)
        finally:
            # Forgotten unless the drop hung: then teardown hands it to the runtime,
            # which drops it through the next storage.
            if name in self.names and self.rdq.runtime.broken is None:
                self.names.remove(name)

    def teardown(self) -> None:
        __tracebackhide__ = True
        runtime = self.rdq.runtime
        refused: CheckFailed | None = None
        try:
            if runtime.broken is not None or runtime.storage is None or runtime.unreachable:
                return  # nothing can be called on an abandoned (or unreachable) storage
            self.close_all()
            while self.names:
                try:
                    self.drop(self.names[0])
                except CheckFailed as exc:  # refused: still drop the others, then report
                    refused = refused or exc
                del self.names[0]
            if refused is not None:
                raise refused
        finally:
            if runtime.broken is not None or runtime.storage is None or runtime.unreachable:
                runtime.abandon(self.names)
                self.names.clear()
