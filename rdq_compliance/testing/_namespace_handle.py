"""A namespace as a test sees it: :class:`Namespace`, the adapter a test writes and
reads through.

:class:`Namespace` calls an adapter through the guard and judges what comes back
strictly against the kit's own expected values, never against an earlier read from
the same store. The collection that opens each handle, keeps the adapters within the
connection budget (:data:`MAX_OPEN_ADAPTERS`) and drops the names at the end of the
test is ``_owned_namespaces``; a handle knows it only as an :class:`Owner`.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from ..envelope._clauses import clauses_for_pointer
from ..envelope._diagnosis import find_rule
from ..envelope._diff import diff
from ..envelope._difference import Difference, format_diff
from ..envelope._ids import id_from_int
from ..envelope._model import Envelope
from ..envelope._validate import validate
from ..storage._protocol import StorageError
from ..storage._stdio import vouched_for
from ._copy import private_copy, untouched
from ._failures import (
    clauses_of,
    describe_storage_error,
    pretty,
    violation_lines,
)
from ._guard import CouldNotRun
from ._symptoms import kept_in_place, symptom_of, symptom_of_semantics, symptom_of_violation

if TYPE_CHECKING:
    from ..reporting._symptom import Symptom
    from ._context import Context

__all__ = ["MAX_OPEN_ADAPTERS", "Namespace", "Owner"]

# Kept by ``_owned_namespaces``; here because a handle's failure messages name it too.
MAX_OPEN_ADAPTERS = 4
"""Adapters one kit process keeps open at once outside the concurrency lanes."""


_UNTOLD = object()
"""What a probe (``Namespace._probe``) returns when it could not tell anything."""

_PROBE_FAILURES = (Exception, CouldNotRun)
"""What a probe's call may raise and tell nothing by. An outage (C20) too: the failure
it would name was found before; a skip for the outage would lose it."""

_ADDED = frozenset({"changed", "unexpected", "type"})
"""Kinds of difference that put into a read what its envelope did not hold."""


class Owner(Protocol):
    """What a :class:`Namespace` needs of the collection that opened it
    (``_owned_namespaces.Namespaces``, which documents each), asked for as a protocol
    so that this module does not import that one back (no cycle, type-only imports
    included)."""

    rdq: Context
    history: list[tuple[str, str, str]]
    versions: dict[tuple[str, str], list[Envelope]]

    def semantics(self, name: str, id: str, *, found: bool,
                  overwrites: Callable[[], bool | None] | None = None) -> str: ...

    def written_elsewhere(self, name: str, id: str, got: Envelope) -> str | None: ...

    def reopen(self, ns: Namespace) -> None: ...

    def touch(self, ns: Namespace) -> None: ...

    def forget(self, ns: Namespace) -> Any: ...


class Namespace:
    """An adapter opened on one namespace, called through the guard."""

    def __init__(self, owner: Owner, name: str, adapter: Any, *, lane: bool) -> None:
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
        self._owner.versions.setdefault((self.name, env.id), []).append(env)
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
            self.read_refused(op, id, describe_storage_error(result), str(result.code),
                              shown)
        if result is not None and not isinstance(result, Envelope):
            rdq.fail(
                f"{op} returned {type(result).__name__} {result!r:.200}; expected "
                "rdq_compliance.Envelope or None",
                envelopes=shown,
            )
        return result

    def peek(self, id: str) -> Envelope | None:
        """Read ``id`` to name the cause of a failure already found, never to judge: what
        the read returned, or None when it found nothing, refused, hung, raised or
        returned no envelope (it never fails the test)."""
        try:
            got = self.rdq.runtime.call("probe read", self.adapter.read, id)
        except _PROBE_FAILURES:
            return None
        return got if isinstance(got, Envelope) else None

    def read_refused(self, op: str, id: str, error: str, code: str,
                     shown: Collection[Envelope]) -> NoReturn:
        """Fail: a read answered with a StorageError (``error``, its ``code``)."""
        __tracebackhide__ = True
        summary = (f"{op} raised {error}; reading must not fail "
                   "(C13: read returns the last envelope written, or nothing)")
        # Whatever made the id absent here (never written, dropped since, written only
        # to another namespace): a read of an absent id must answer nothing (RDQ-ST-002).
        absent = self._owner.semantics(self.name, id, found=True)
        self.rdq.fail(summary, envelopes=shown, symptom=None if not absent else
                      symptom_of_semantics("absent", f"{op} raised {code}", summary))

    def expect(self, id: str, expected: Envelope | None, *, why: str = "") -> None:
        """Read ``id`` and require exactly ``expected`` (None: nothing stored)."""
        __tracebackhide__ = True
        got = self.read(id, expected=expected)
        if self.reopened:
            why = (f"{why}; " if why else "") + (
                f"the kit had closed this namespace's adapter and opened a fresh one "
                f"(it keeps at most {MAX_OPEN_ADAPTERS} open): what a namespace holds "
                "outlives its adapters (C14)")
        self.judge(f"read({id!r}) in namespace {self.name!r}", id, expected, got, why=why)

    def judge(
        self, op: str, id: str, expected: Envelope | None, got: Envelope | None, *, why: str = ""
    ) -> None:
        """Require that ``got``, what ``op`` (a read of ``id``) returned, is exactly
        ``expected`` (None: nothing stored); ``why`` says how it was read."""
        __tracebackhide__ = True
        rdq = self.rdq
        because = f" ({why})" if why else ""
        if expected is None:
            if got is not None:
                # Another id's envelope (a key cut short): one defect with the reads of
                # written ids that find it, whether or not this id was ever written.
                if got.id != id and ("write", self.name, got.id) in self._owner.history:
                    summary = (f"{op} returned the envelope written as id {got.id!r}, "
                               f"expected None{because}")
                    rdq.fail(summary, detail="returned:\n" + pretty(got),
                             symptom=_other_id(summary))
                summary = f"{op} returned an envelope, expected None{because}"
                rdq.fail(summary, detail="returned:\n" + pretty(got),
                         symptom=self._semantic_symptom(id, summary, found=True))
            return
        if got is None:
            summary = f"{op} returned None, expected the envelope written{because}"
            rdq.fail(summary, envelopes=(expected,),
                     symptom=self._semantic_symptom(id, summary, found=False, like=expected))
        if got.id != id and got.id in {i for k, _, i in self._owner.history if k == "write"}:
            summary = f"{op} returned the envelope written as id {got.id!r}{because}"
            rdq.fail(summary, envelopes=(expected,), detail="returned:\n" + pretty(got),
                     symptom=_other_id(summary))
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
        found = diff(expected, got)
        differences = found
        if self.rdq.judges is not None:
            differences = [d for d in found if self._judged(
                symptom_of(d, clauses_for_pointer(d), []))]
        # Whichever handle on this namespace wrote them: another adapter's rewrite that
        # this one does not see reads back as an earlier version (C13).
        earlier = self._owner.versions.get((self.name, id), [])[:-1]
        if differences:
            other = self._owner.written_elsewhere(self.name, id, got)
            if other is not None and any(d.kind in _ADDED for d in found):
                # Not a changed value: names the store took for one another (a key prefix
                # cut short, the namespace left out of the key). Only where the read holds
                # what the written envelope did not: a store that loses fields can read
                # back, by itself, what another namespace was written without them.
                summary = (f"{op} returned the envelope written under this id in namespace "
                           f"{other!r}{because}")
                rdq.fail(summary, envelopes=(expected,), detail="returned:\n" + pretty(got),
                         symptom=symptom_of_semantics("leaked", "read returned another "
                                                      "namespace's envelope", summary))
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
                                   rewrite_ignored=self._rewrite_ignored(expected, got, earlier,
                                                                         found),
                                   found=found),
            )

    def _judged(self, symptom: Symptom) -> bool:
        """Whether a narrow example judges this difference: the diagnosis table gives it
        the example's own requirement (``@requirement(..., narrow=True)``; the whole
        envelope is another test's to judge)."""
        rule = find_rule(symptom.pattern, symptom.difference)
        return rule is not None and rule.requirement == self.rdq.judges

    def _rewrite_ignored(
        self, expected: Envelope, got: Envelope, earlier: list[Envelope],
        found: list[Difference],
    ) -> bool | None:
        """An earlier version of the id came back, whole or in the values that differ
        (``found``): was the rewrite ignored, or does the store turn the latest version
        into the earlier one (trimming "m " to "m")? A probe tells: the latest version
        written once under a fresh id and read back. As written: the store keeps it, so
        the rewrite was ignored (RDQ-ST-001); as the earlier one: the store changes it.
        None when no earlier version came back or the probe tells nothing (the failure
        is judged already: this only names its cause)."""
        if not (any(e == got for e in earlier) or kept_in_place(found, expected, earlier)):
            return None
        probe = dataclasses.replace(expected, id=id_from_int(secrets.randbits(80)))
        back = self._probe([probe])
        if back is _UNTOLD:
            return None
        if back == probe:
            return True
        return False if isinstance(back, Envelope) and back.id == probe.id else None

    def _overwrites(self, like: Envelope) -> bool | None:
        """Probe: does writing another id to this namespace lose an envelope? ``like``
        written under two fresh ids in turn, the first read back: gone (True), back as
        written (False), else None (the probe tells nothing; it never fails the test)."""
        first, second = (dataclasses.replace(like, id=id_from_int(secrets.randbits(80)))
                         for _ in range(2))
        back = self._probe([first, second])
        return True if back is None else False if back == first else None

    def _probe(self, envelopes: list[Envelope]) -> Any:
        """Write ``envelopes`` in turn and read the first back, straight through the guard
        (a probe never fails the test): what the read returned, or ``_UNTOLD`` when a
        write was refused or a call hung or raised."""
        runtime = self.rdq.runtime
        try:
            for env in envelopes:
                if runtime.call("probe write", self.adapter.write, private_copy(env)) is not None:
                    return _UNTOLD
            return runtime.call("probe read", self.adapter.read, envelopes[0].id)
        except _PROBE_FAILURES:  # a refusal, a hang, an exception: the probe tells nothing
            return _UNTOLD

    def _semantic_symptom(self, id: str, summary: str, *, found: bool,
                          like: Envelope | None = None) -> Symptom | None:
        difference = self._owner.semantics(
            self.name, id, found=found,
            overwrites=None if like is None else lambda: self._overwrites(like))
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


def _other_id(summary: str) -> Symptom:
    return symptom_of_semantics("other-id", "read returned another id's envelope", summary)
