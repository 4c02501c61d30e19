"""Namespaces: the adapter a test writes and reads through, and the names a test owns.

:class:`Namespace` calls an adapter through the guard and judges what comes back
strictly against the kit's own expected values, never against an earlier read from
the same store. :class:`Namespaces` is the bookkeeping behind ``rdq.new_name``,
``rdq.namespace``, ``rdq.release`` and the teardown: every namespace a test used is
closed and dropped at its end, even after a failure or a hang.

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

import dataclasses
import itertools
import secrets
import threading
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ..envelope._clauses import clauses_for_pointer
from ..envelope._diagnosis import find_rule
from ..envelope._diff import diff
from ..envelope._difference import format_diff
from ..envelope._ids import id_from_int
from ..envelope._model import Envelope
from ..envelope._validate import validate
from ..storage._protocol import NAMESPACE_PATTERN, StorageError
from ..storage._stdio import vouched_for
from ._copy import private_copy, untouched
from ._failures import (
    CheckFailed,
    OperationHung,
    PluginFault,
    clauses_of,
    describe_storage_error,
    format_plugin_traceback,
    pretty,
    violation_lines,
)
from ._symptoms import symptom_of, symptom_of_semantics, symptom_of_violation

if TYPE_CHECKING:
    from ..reporting._causes import Symptom
    from ._context import Context

__all__ = ["MAX_OPEN_ADAPTERS", "Namespace", "Namespaces"]

MAX_OPEN_ADAPTERS = 4
"""Adapters one kit process keeps open at once outside the concurrency lanes."""

_ns_counter = itertools.count()
_PROCESS_TOKEN = secrets.token_hex(4)  # for an Rdq built without a run token (the kit's tests)


class Namespace:
    """An adapter opened on one namespace, called through the guard."""

    def __init__(self, owner: Namespaces, name: str, adapter: Any, *, lane: bool) -> None:
        self.rdq = owner.rdq
        self.name = name
        self._owner = owner
        self._adapter: Any = adapter
        """None: closed (by the test, or by the kit to stay within the budget)."""
        self.lane = lane
        """Opened on a concurrency lane: never closed under it, closed when it ends."""
        self.reopened = 0
        """How often the kit opened a fresh adapter for this handle (see ``adapter``)."""
        self.written: dict[str, list[Envelope]] = {}
        """Every envelope written per id (the kit's own copies): a read that returns an
        earlier one names the cause, a rewrite that was ignored (RDQ-ST-001)."""
        self.last_given: Envelope | None = None
        """The object the plugin got in the last successful ``write`` (C13a: the
        kit may change it afterwards; what is stored must not change)."""

    @property
    def closed(self) -> bool:
        return self._adapter is None

    @property
    def adapter(self) -> Any:
        """The plugin's adapter on this namespace; a closed handle opens a fresh one."""
        __tracebackhide__ = True
        if self._adapter is None:
            self._owner.reopen(self)
        else:
            self._owner.touch(self)
        return self._adapter

    def write(self, env: Envelope, *, allow: Collection[str] = ()) -> StorageError | None:
        """Write ``env``. A refusal with a code in ``allow`` is returned; any other
        refusal of a valid envelope within the limits fails the test (C17)."""
        __tracebackhide__ = True
        rdq = self.rdq
        op = f"write(envelope id={env.id!r}) in namespace {self.name!r}"
        # The plugin gets a copy: whatever it does to it, the expected value
        # (``env``) stays what the generator produced.
        given_env = private_copy(env)
        result = rdq.call(op, self.adapter.write, given_env, envelopes=(env,))
        if isinstance(result, StorageError):
            if result.code in allow:
                return result
            rdq.fail(
                f"{op} refused a valid envelope within the limits with "
                f"{describe_storage_error(result)} (C17: a valid envelope within the limits "
                "must never be rejected)",
                envelopes=(env,),
            )
        if result is not None:
            rdq.fail(f"{op} returned {result!r}; expected None", envelopes=(env,))
        mutated = [] if untouched(env, given_env) else diff(env, given_env)  # see untouched
        if mutated:
            rdq.fail(
                f"{op} changed the envelope object it was given (the kit compares against "
                "its own copy, but a plugin must not mutate its input):",
                detail=format_diff(mutated),
                envelopes=(env,),
            )
        self.last_given = given_env
        self.written.setdefault(env.id, []).append(env)
        self._owner.history.append(("write", self.name, env.id))
        return None

    def read(self, id: str, *, expected: Envelope | None = None) -> Envelope | None:
        """``read(id)`` with its type checked (``expected`` only feeds failure messages)."""
        __tracebackhide__ = True
        rdq = self.rdq
        op = f"read({id!r}) in namespace {self.name!r}"
        shown = () if expected is None else (expected,)
        result = rdq.call(op, self.adapter.read, id, envelopes=shown)
        if isinstance(result, StorageError):
            summary = (f"{op} raised {describe_storage_error(result)}; reading must not fail "
                       "(C13: read returns the last envelope written, or nothing)")
            absent = self._owner.semantics(self.name, id, found=True)
            rdq.fail(summary, envelopes=shown, symptom=None if absent != "absent" else
                     symptom_of_semantics("absent", f"{op} raised {result.code}", summary))
        if result is not None and not isinstance(result, Envelope):
            rdq.fail(
                f"{op} returned {type(result).__name__} {result!r:.200}; expected "
                "rdq_compliance.Envelope or None",
                envelopes=shown,
            )
        return result

    def expect(self, id: str, expected: Envelope | None, *, why: str = "") -> None:
        """Read ``id`` and require exactly ``expected`` (None: nothing stored)."""
        __tracebackhide__ = True
        rdq = self.rdq
        got = self.read(id, expected=expected)
        op = f"read({id!r}) in namespace {self.name!r}"
        if self.reopened:
            why = (f"{why}; " if why else "") + (
                f"the kit had closed this namespace's adapter and opened a fresh one "
                f"(it keeps at most {MAX_OPEN_ADAPTERS} open): what a namespace holds "
                "outlives its adapters (C14)")
        because = f" ({why})" if why else ""
        if expected is None:
            if got is not None:
                summary = f"{op} returned an envelope, expected None{because}"
                rdq.fail(summary, detail="returned:\n" + pretty(got),
                         symptom=self._semantic_symptom(id, summary, found=True))
            return
        if got is None:
            summary = f"{op} returned None, expected the envelope written{because}"
            rdq.fail(summary, envelopes=(expected,),
                     symptom=self._semantic_symptom(id, summary, found=False))
        if got.id != id and got.id in {i for k, _, i in self._owner.history if k == "write"}:
            summary = f"{op} returned the envelope written as id {got.id!r}{because}"
            rdq.fail(summary, envelopes=(expected,), detail="returned:\n" + pretty(got),
                     symptom=symptom_of_semantics("other-id", "read returned another id's "
                                                  "envelope", summary))
        try:
            # A model the stdio bridge built from wire JSON it validated is not
            # validated twice (same versions=None and size limit there).
            violations = [] if vouched_for(got) else validate(got, versions=None)
        except Exception as exc:
            violations = []
            rdq.fail(f"{op} returned a value the kit cannot check: {type(exc).__name__}: {exc}",
                     envelopes=(expected,))
        if violations and self.rdq.judges is not None:
            violations = [v for v in violations if self._judged(symptom_of_violation(
                v, clauses_of(v.code) or "C11", [], expected=expected, actual=got))]
        if violations:
            lines = violation_lines(violations)
            first = violations[0]
            rdq.fail(
                f"{op} returned an invalid envelope (RDQ-RT-004: what a plugin returns is a "
                f"valid envelope in exact model form){because}:",
                detail="\n".join(lines),
                envelopes=(expected,),
                symptom=symptom_of_violation(first, clauses_of(first.code) or "C11", lines,
                                             expected=expected, actual=got),
            )
        differences = diff(expected, got)
        if self.rdq.judges is not None:
            differences = [d for d in differences if self._judged(
                symptom_of(d, clauses_for_pointer(d), []))]
        earlier = self.written.get(id, [])[:-1]
        if differences:
            # One line per difference, at most 20, then one "… and N more" (format_diff's
            # own would be a 21st line, tagged with the clause of a difference not shown).
            lines = [f"  {d}  [{clauses_for_pointer(d)}]" for d in differences[:20]]
            if len(differences) > 20:
                lines.append(f"  … and {len(differences) - 20} more")
            rdq.fail(
                f"{op} returned an envelope that differs from the one written{because}:",
                detail="\n".join(lines),
                envelopes=(expected,),
                symptom=symptom_of(differences[0], clauses_for_pointer(differences[0]), lines,
                                   expected=expected, actual=got, earlier=earlier,
                                   rewrite_ignored=self._rewrite_ignored(expected, got, earlier)),
            )

    def _judged(self, symptom: Symptom) -> bool:
        """Whether a narrow example judges this difference: the diagnosis table gives it
        the example's own requirement (``@requirement(..., narrow=True)``; the whole
        envelope is another test's to judge)."""
        rule = find_rule(symptom.pattern, symptom.difference)
        return rule is not None and rule.requirement == self.rdq.judges

    def _rewrite_ignored(
        self, expected: Envelope, got: Envelope, earlier: list[Envelope]
    ) -> bool | None:
        """An earlier version of the id came back: was the rewrite ignored, or does the
        store turn the latest version into the earlier one (trimming "m " to "m")? A
        probe tells: the latest version written once under a fresh id and read back. As
        written: the store keeps it, so the rewrite was ignored (RDQ-ST-001); as the
        earlier one: the store changes it. None when no earlier version came back or the
        probe tells nothing (the failure is judged already: this only names its cause)."""
        if not any(e == got for e in earlier):
            return None
        probe = dataclasses.replace(expected, id=id_from_int(secrets.randbits(80)))
        runtime = self.rdq.runtime  # straight to the guard: a probe never fails the test
        try:
            if runtime.call("probe write", self.adapter.write, private_copy(probe)) is not None:
                return None
            back = runtime.call("probe read", self.adapter.read, probe.id)
        except Exception:  # a refusal, a hang, an exception: the probe tells nothing
            return None
        if back == probe:
            return True
        return False if isinstance(back, Envelope) and back.id == probe.id else None

    def _semantic_symptom(self, id: str, summary: str, *, found: bool) -> Symptom | None:
        difference = self._owner.semantics(self.name, id, found=found)
        if not difference:
            return None
        what = "found an envelope" if found else "found nothing"
        return symptom_of_semantics(difference, f"read {what}", summary)

    def roundtrip(self, env: Envelope) -> None:
        """write(env) then read(env.id) == env."""
        __tracebackhide__ = True
        self.write(env)
        self.expect(env.id, env)

    def close(self) -> None:
        """Close the adapter now (a later call on this handle opens a fresh one)."""
        __tracebackhide__ = True
        adapter = self._owner.forget(self)
        if adapter is None:
            return
        result = self.rdq.call(f"adapter.close() of namespace {self.name!r}", adapter.close)
        if isinstance(result, StorageError):
            self.rdq.fail(
                f"adapter.close() of namespace {self.name!r} raised "
                f"{describe_storage_error(result)}"
            )


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
        """What the test did, in order: ``("write", name, id)`` and ``("drop", name, "")``,
        to say which storage semantics a read that found the wrong thing broke."""

    def semantics(self, name: str, id: str, *, found: bool) -> str:
        """The class of difference (``DIFFERENCES`` of the diagnosis table) of a read of
        ``id`` in ``name`` that found something where nothing was written (``found``) or
        nothing where an envelope was: what happened since the write tells which
        requirement broke; "" when it tells nothing."""
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
        if ("drop", name, "") in events[:last]:
            return "lost-after-drop"
        if any(k == "drop" and n != name for k, n, _ in after):
            return "taken-by-drop"
        if any(k == "write" and n == name and i != id for k, n, i in after):
            return "overwritten"
        return ""

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
        storage = rdq.runtime.storage
        if storage is None:
            rdq.fail(f"no storage to open namespace {name!r} on: {rdq.runtime.dead}")
        result = rdq.call(f"storage.open({name!r})", storage.open, name)
        if isinstance(result, StorageError):
            rdq.fail(f"storage.open({name!r}) refused with {describe_storage_error(result)}")
        missing = [m for m in ("write", "read", "close") if not callable(getattr(result, m, None))]
        if missing:
            rdq.fail(
                f"storage.open({name!r}) returned {result!r}, which has no "
                f"{', '.join(missing)}; expected an rdq_compliance.Adapter"
            )
        return result

    def drop(self, name: str) -> None:
        __tracebackhide__ = True
        rdq = self.rdq
        storage = rdq.runtime.storage
        if storage is None:
            rdq.fail(f"no storage to drop namespace {name!r} on: {rdq.runtime.dead}")
        result = rdq.call(f"storage.drop({name!r})", storage.drop, name)
        if isinstance(result, StorageError):
            rdq.fail(f"storage.drop({name!r}) refused with {describe_storage_error(result)}")
        self.history.append(("drop", name, ""))

    def restart(self) -> None:
        __tracebackhide__ = True
        rdq = self.rdq
        self.close_all()
        try:
            rdq.runtime.restart()
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
