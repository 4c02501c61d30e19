"""The per-test API the suites use: the ``rdq`` fixture.

Everything a suite does to a plugin goes through :class:`Rdq` and
:class:`Namespace`, which call the plugin through the guard and judge what comes
back strictly against the kit's own expected values, never against an earlier
read from the same store.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
import secrets
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from .._requirements import Requirement
from ..envelope._clauses import clauses_for_pointer
from ..envelope._codec import encode, to_json
from ..envelope._codes import CODE_CLAUSES, ViolationCode
from ..envelope._deep import copy_json
from ..envelope._diff import diff, format_diff
from ..envelope._model import Attempt, Envelope, ErrorInfo
from ..envelope._validate import Violation, validate
from ..reporting._causes import Symptom
from ..storage._protocol import NAMESPACE_PATTERN, StorageError, StorageInfo
from ..storage._stdio import vouched_for
from ._case import Case
from ._guard import (
    CheckFailed,
    OperationHung,
    PluginFault,
    describe_storage_error,
    format_plugin_traceback,
    is_c17,
)
from ._profiles import derived_seed, hypothesis_settings
from ._runtime import PluginRuntime
from ._symptoms import symptom_of, symptom_of_violation

if TYPE_CHECKING:
    # Hypothesis itself is imported where a property runs (see Rdq.for_all): the xdist
    # controller loads this module but runs no test.
    from hypothesis.stateful import RuleBasedStateMachine
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "KitSettings", "Namespace", "Rdq", "clauses_for_pointer", "params_of", "skip_not_applicable",
]

_PRETTY_LIMIT = 6_000
_ns_counter = itertools.count()
_PROCESS_TOKEN = secrets.token_hex(4)  # for an Rdq built without a run token (the kit's tests)


def skip_not_applicable(item: pytest.Item, reason: str) -> NoReturn:
    """Skip ``item`` as not applicable: the report says ``not-applicable`` (the
    ``rdq_not_applicable`` user property), which never makes a verdict incomplete."""
    __tracebackhide__ = True
    item.user_properties.append(("rdq_not_applicable", "1"))
    pytest.skip(reason)


def params_of(item: pytest.Item, label: str) -> dict[str, str]:
    """``{"id": ...}``: the test id's parameter part without the plugin label
    (``test_x[memory-leap-day]`` -> ``leap-day``), or ``{}`` when there is none.

    pytest's own ids are short and stable across runs, unlike ``str()`` of the
    parameter values (a 64 KiB payload, say). The kit parametrizes the plugin
    label first, so it leads the id.
    """
    name, original = item.name, getattr(item, "originalname", item.name)
    inner = name[len(original) + 1 : -1] if name.startswith(original + "[") else ""
    for rest in (inner.removeprefix(label + "-"), inner.removesuffix("-" + label)):
        if rest != inner:
            return {"id": rest}
    return {}


@dataclass(frozen=True)
class KitSettings:
    """The validated kit options of this run."""

    labels: tuple[str, ...]
    profile: str
    seed: int
    timeout: float
    failures_dir: Path
    replay: Case | None
    run_token: str = ""
    """Shared by every process of one run; in every namespace name (see Rdq.new_name)."""
    worker: str = ""
    """The xdist worker number ("" outside xdist): names of two workers never collide."""


def pretty(env: Envelope) -> str:
    """Pretty canonical JSON of ``env``, cut when huge."""
    try:
        text = encode(env, pretty=True)
    except Exception as exc:  # a model the codec refuses; show its repr instead
        text = f"<cannot encode ({type(exc).__name__}: {exc})> {env!r}"
    if len(text) > _PRETTY_LIMIT:
        text = text[:_PRETTY_LIMIT] + f"\n… ({len(text) - _PRETTY_LIMIT:,} more characters)"
    return text


def _canonical(env: object) -> Any:
    if isinstance(env, Envelope):
        try:
            return to_json(env)
        except Exception:
            return repr(env)
    return repr(env)


def _id_of(env: Envelope) -> str:
    return repr(env.id)


class Rdq:
    """One kit test's handle on the plugin under test (the ``rdq`` fixture)."""

    def __init__(
        self,
        item: pytest.Item,
        requirement: Requirement,
        runtime: PluginRuntime,
        settings: KitSettings,
    ) -> None:
        self.item = item
        self.requirement = requirement
        self.runtime = runtime
        self.settings = settings
        self._namespaces: list[Namespace] = []
        self.example: tuple[str, dict[str, Any]] | None = None
        """The failing example of a property, state machine or concurrency plan:
        (check name, drawn values) for the saved case that --rdq-replay re-runs."""
        self._names: list[str] = []

    # -- facts ---------------------------------------------------------------

    @property
    def label(self) -> str:
        return self.runtime.label

    @property
    def info(self) -> StorageInfo:
        assert self.runtime.info is not None
        return self.runtime.info

    @property
    def params(self) -> dict[str, str]:
        """The test's parameter ids other than the plugin label (for case files)."""
        return params_of(self.item, self.label)

    @property
    def _test_name(self) -> str:
        return str(getattr(self.item, "originalname", self.item.name))

    @property
    def replay(self) -> Case | None:
        """The replayed case, when this very test is being replayed."""
        case = self.settings.replay
        if case is None or self._test_name != case.test:
            return None
        if case.plugin != self.label or case.params != self.params:
            return None
        return case

    def not_applicable(self, reason: str) -> NoReturn:
        """Skip a test that does not apply to this plugin by what it declares or by its
        nature (the undeclared-version case of a version it declares; C13a for an
        out-of-process testee). Reported ``not-applicable``: unlike a skip, it never makes
        the verdict incomplete. Never for a capability the plugin merely lacks."""
        __tracebackhide__ = True
        skip_not_applicable(self.item, reason)

    # -- failing -------------------------------------------------------------

    def message(self, summary: str, detail: str = "", envelopes: Iterable[Envelope] = ()) -> str:
        req = self.requirement
        lines = [
            f"{req.id} [{req.level}; {' '.join(req.clauses)}] {req.title}",
            f"plugin {self.label!r}: {summary}",
        ]
        if detail:
            lines.append(detail.rstrip("\n"))
        for env in envelopes:
            lines.append(f"envelope {env.id!r} (canonical JSON):")
            lines.append(pretty(env))
        return "\n".join(lines)

    def fail(
        self, summary: str, *, detail: str = "", envelopes: Collection[Envelope] = (),
        symptom: Symptom | None = None,
    ) -> NoReturn:
        """Fail the test with a message naming the requirement, its clauses and the plugin."""
        __tracebackhide__ = True
        exc = CheckFailed(self.message(summary, detail, envelopes))
        exc.symptom = symptom
        exc.envelopes = tuple(_canonical(e) for e in envelopes)
        raise exc from None  # the plugin's exception is already in the message

    def _hung(self, exc: OperationHung, envelopes: Collection[Envelope]) -> NoReturn:
        __tracebackhide__ = True
        new = OperationHung(self.message(str(exc), "", envelopes))
        new.envelopes = tuple(_canonical(e) for e in envelopes)
        raise new from None

    def call(
        self, operation: str, fn: Callable[..., Any], *args: Any,
        envelopes: Collection[Envelope] = (),
    ) -> Any:
        """Call the plugin: a hang or an exception other than StorageError fails the test;
        a StorageError is returned to the caller to judge."""
        __tracebackhide__ = True
        try:
            return self.runtime.call(operation, fn, *args)
        except OperationHung as exc:
            self._hung(exc, envelopes)
        except PluginFault as fault:
            err = fault.exc
            if isinstance(err, StorageError):
                if not is_c17(err.code):
                    self.fail(
                        f"{operation} raised {describe_storage_error(err)}, whose code is not "
                        "one of the C17 codes (UNSUPPORTED_ENVELOPE_VERSION, PAYLOAD_TOO_LARGE, "
                        "INVALID_ENVELOPE, NOT_SUPPORTED, INTERNAL)",
                        envelopes=envelopes,
                    )
                return err
            tb = format_plugin_traceback(err)
            detail = f"plugin traceback:\n{tb}" if tb else ""
            if tb:
                # A plugin whose every call raises the same exception: its traceback once
                # (per process), then a one-line pointer (issue 14 §4).
                key = (type(err).__name__, str(err), tb)
                first = self.runtime.shown_tracebacks.setdefault(key, self.item.nodeid)
                if first != self.item.nodeid:
                    detail = f"plugin traceback: the same as shown for {first}"
            violations = getattr(err, "violations", None)
            if isinstance(violations, list) and violations and all(
                isinstance(v, Violation) for v in violations
            ):
                # The stdio bridge judged the testee's wire JSON (RDQ-RT-004).
                clauses = sorted({c for v in violations for c in _clauses_of(v.code).split()})
                detail = (
                    "RDQ-RT-004: what a plugin returns is a valid envelope in exact form "
                    f"(canonical wire JSON for testees); clauses broken: {' '.join(clauses)}"
                )
            self.fail(
                f"{operation} raised {type(err).__name__}: {err}",
                detail=detail,
                envelopes=envelopes,
            )

    # -- namespaces ----------------------------------------------------------

    def new_name(self) -> str:
        """A namespace name no other test (or xdist worker, or other run) uses:
        ``t`` + the run's token + the worker number + ``w`` + a counter (hex), at most
        20 characters. Every name of one run starts with ``t<run token>``, so that two
        runs on one server never touch each other's data and a run can find exactly
        its own namespaces (issue 12 §4)."""
        token = self.settings.run_token or _PROCESS_TOKEN
        name = f"t{token}{self.settings.worker}w{next(_ns_counter):x}"
        assert len(name) <= 20, name
        assert NAMESPACE_PATTERN.fullmatch(name), name
        self._names.append(name)
        return name

    def claim_name(self, name: str) -> str:
        """Register ``name`` (a valid namespace name the test built, e.g. on top of
        :meth:`new_name`) so that teardown drops it like a fresh one; returns it.

        Only names unique to this test may be claimed: teardown drops them."""
        if not isinstance(name, str) or not NAMESPACE_PATTERN.fullmatch(name):
            raise ValueError(f"namespace name={name!r} does not match "
                             f"{NAMESPACE_PATTERN.pattern} (C14)")
        if name not in self._names:
            self._names.append(name)
        return name

    def forget_name(self, name: str) -> None:
        """Do not drop ``name`` at teardown: a :meth:`new_name` the test only built
        other names on and never opened (there is nothing to drop; whether dropping
        a namespace never opened succeeds is RDQ-ST-007's to judge)."""
        if name in self._names:
            self._names.remove(name)

    def namespace(self, name: str | None = None) -> Namespace:
        """Open an adapter on ``name`` (default: a fresh namespace).

        Every namespace the test used is closed and dropped at teardown.
        """
        __tracebackhide__ = True
        storage = self.runtime.storage
        if storage is None:
            what = "a new namespace" if name is None else f"namespace {name!r}"
            self.fail(f"no storage to open {what} on: {self.runtime.dead}")
        if name is None:
            name = self.new_name()
        result = self.call(f"storage.open({name!r})", storage.open, name)
        if isinstance(result, StorageError):
            self.fail(f"storage.open({name!r}) refused with {describe_storage_error(result)}")
        missing = [m for m in ("write", "read", "close") if not callable(getattr(result, m, None))]
        if missing:
            self.fail(
                f"storage.open({name!r}) returned {result!r}, which has no "
                f"{', '.join(missing)}; expected an rdq_compliance.Adapter"
            )
        ns = Namespace(self, name, result)
        self._namespaces.append(ns)
        return ns

    def drop(self, name: str) -> None:
        __tracebackhide__ = True
        storage = self.runtime.storage
        if storage is None:
            self.fail(f"no storage to drop namespace {name!r} on: {self.runtime.dead}")
        result = self.call(f"storage.drop({name!r})", storage.drop, name)
        if isinstance(result, StorageError):
            self.fail(f"storage.drop({name!r}) refused with {describe_storage_error(result)}")

    def restart(self) -> None:
        """Close every adapter and the storage, then open a fresh storage (C15)."""
        __tracebackhide__ = True
        for ns in self._namespaces:
            ns.close()
        try:
            self.runtime.restart()
        except OperationHung as exc:
            self._hung(exc, ())
        except PluginFault as fault:
            err = fault.exc
            tb = format_plugin_traceback(err)
            self.fail(
                f"closing and reopening the storage failed: {type(err).__name__}: {err}",
                detail=f"plugin traceback:\n{tb}" if tb else "",
            )
        except RuntimeError as exc:
            self.fail(str(exc))

    def release(self, name: str) -> None:
        """Close the adapters on ``name`` and drop it now rather than at teardown."""
        __tracebackhide__ = True
        for ns in self._namespaces:
            if ns.name == name:
                ns.close()
        self._namespaces = [ns for ns in self._namespaces if ns.name != name]
        try:
            self.drop(name)
        finally:
            # Forgotten unless the drop hung: then teardown hands it to the runtime,
            # which drops it through the next storage.
            if name in self._names and self.runtime.broken is None:
                self._names.remove(name)

    def teardown(self) -> None:
        """Close adapters and drop every namespace the test used, even after a failure.

        When the storage was abandoned after a hang (before or during teardown), the
        namespaces not dropped yet go to the runtime, which drops them through the
        fresh storage it opens next (a real store still holds them)."""
        __tracebackhide__ = True
        refused: CheckFailed | None = None
        try:
            if self.runtime.broken is not None or self.runtime.storage is None:
                return  # nothing can be called on an abandoned storage any more
            for ns in self._namespaces:
                ns.close()
            while self._names:
                try:
                    self.drop(self._names[0])
                except CheckFailed as exc:  # refused: still drop the others, then report
                    refused = refused or exc
                del self._names[0]
            if refused is not None:
                raise refused
        finally:
            if self.runtime.broken is not None or self.runtime.storage is None:
                self.runtime.abandon(self._names)
                self._names.clear()

    # -- properties ----------------------------------------------------------

    def for_all(
        self,
        check: Callable[..., None],
        *,
        budget: str = "generic",
        **strategies: SearchStrategy[Any],
    ) -> None:
        """Run ``check`` on examples drawn from ``strategies`` (Hypothesis), under the
        profile's budget and a seed derived from --rdq-seed, or only on the saved
        example when this test is replayed."""
        __tracebackhide__ = True
        from hypothesis import example, given
        from hypothesis import seed as hypothesis_seed

        name = check.__name__
        case = self.replay
        if case is not None and case.example is not None and case.check != name:
            return  # replaying another property of this test
        replaying = case is not None and case.example is not None

        # The values of the example being run, recorded as they are drawn: the
        # last run before Hypothesis re-raises is the minimal failing example.
        # (Recording through the strategies, not a wrapper around ``check``,
        # keeps kit frames out of the failure's traceback.)
        drawn: dict[str, Any] = {}
        recorded = {
            key: strategy.map(functools.partial(_record, drawn, key))
            for key, strategy in strategies.items()
        }
        test = given(**recorded)(check)
        if replaying:
            assert case is not None
            test = example(**case.example_kwargs())(test)
        test = hypothesis_settings(self.settings.profile, budget, replay=replaying)(test)
        params = json.dumps(self.params, sort_keys=True)
        test = hypothesis_seed(
            derived_seed(self.settings.seed, self._test_name, params, name)
        )(test)
        try:
            test()
        except BaseException:
            self.example = (name, dict(drawn))
            raise

    def run_machine(self, machine: type[RuleBasedStateMachine]) -> None:
        """Run a Hypothesis state machine under the profile's stateful budget and seed."""
        __tracebackhide__ = True
        from hypothesis import seed as hypothesis_seed
        from hypothesis.stateful import run_state_machine_as_test

        params = json.dumps(self.params, sort_keys=True)
        seeded = hypothesis_seed(
            derived_seed(self.settings.seed, self._test_name, params, "machine")
        )(machine)
        run_state_machine_as_test(
            seeded, settings=hypothesis_settings(self.settings.profile, "stateful")
        )


def _clauses_of(code: ViolationCode) -> str:
    """The clauses a violation code breaks, space-separated ("" for a code the core
    does not map)."""
    return " ".join(CODE_CLAUSES.get(code, ((), ""))[0])


def _copy_json(value: Any) -> Any:
    # Any depth (no recursion); not plain JSON (an invalid model): copy it anyway.
    return copy_json(value, copy.deepcopy)


def _copy_error(error: Any) -> Any:
    if type(error) is not ErrorInfo:
        return copy.deepcopy(error)
    return dataclasses.replace(error, detail=_copy_json(error.detail),
                               extra=_copy_json(error.extra))


def _copy_attempt(attempt: Any) -> Any:
    if type(attempt) is not Attempt:
        return copy.deepcopy(attempt)
    return dataclasses.replace(attempt, error=_copy_error(attempt.error),
                               extra=_copy_json(attempt.extra))


def _private_copy(env: Envelope) -> Envelope:
    """A copy of ``env`` that shares nothing mutable with it: new model objects, new
    containers (headers, attempts, ``extra``, ``detail``); the immutable leaves
    (str, bytes, int, datetime, enum members) are shared. What copy.deepcopy gives,
    at a fraction of its cost."""
    if type(env) is not Envelope:
        return copy.deepcopy(env)
    attempts = env.attempts
    return dataclasses.replace(
        env,
        headers=_copy_json(env.headers),
        attempts=(tuple(_copy_attempt(a) for a in attempts)
                  if type(attempts) is tuple else copy.deepcopy(attempts)),
        extra=_copy_json(env.extra),
    )


def _record(drawn: dict[str, Any], key: str, value: Any) -> Any:
    drawn[key] = value
    return value


class Namespace:
    """An adapter opened on one namespace, called through the guard."""

    def __init__(self, rdq: Rdq, name: str, adapter: Any) -> None:
        self.rdq = rdq
        self.name = name
        self.adapter = adapter
        self.closed = False
        self.last_given: Envelope | None = None
        """The object the plugin got in the last successful ``write`` (C13a: the
        kit may change it afterwards; what is stored must not change)."""

    def write(self, env: Envelope, *, allow: Collection[str] = ()) -> StorageError | None:
        """Write ``env``. A refusal with a code in ``allow`` is returned; any other
        refusal of a valid envelope within the limits fails the test (C17)."""
        __tracebackhide__ = True
        rdq = self.rdq
        op = f"write(envelope id={_id_of(env)}) in namespace {self.name!r}"
        # The plugin gets a copy: whatever it does to it, the expected value
        # (``env``) stays what the generator produced.
        given_env = _private_copy(env)
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
        mutated = diff(env, given_env)
        if mutated:
            rdq.fail(
                f"{op} changed the envelope object it was given (the kit compares against "
                "its own copy, but a plugin must not mutate its input):",
                detail=format_diff(mutated),
                envelopes=(env,),
            )
        self.last_given = given_env
        return None

    def read(self, id: str, *, expected: Envelope | None = None) -> Envelope | None:
        """``read(id)`` with its type checked (``expected`` only feeds failure messages)."""
        __tracebackhide__ = True
        rdq = self.rdq
        op = f"read({id!r}) in namespace {self.name!r}"
        shown = () if expected is None else (expected,)
        result = rdq.call(op, self.adapter.read, id, envelopes=shown)
        if isinstance(result, StorageError):
            rdq.fail(
                f"{op} raised {describe_storage_error(result)}; reading must not fail "
                "(C13: read returns the last envelope written, or nothing)",
                envelopes=shown,
            )
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
        because = f" ({why})" if why else ""
        if expected is None:
            if got is not None:
                rdq.fail(
                    f"{op} returned an envelope, expected None{because}",
                    detail="returned:\n" + pretty(got),
                )
            return
        if got is None:
            rdq.fail(f"{op} returned None, expected the envelope written{because}",
                     envelopes=(expected,))
        try:
            # A model the stdio bridge built from wire JSON it validated is not
            # validated twice (same versions=None and size limit there).
            violations = [] if vouched_for(got) else validate(got, versions=None)
        except Exception as exc:
            violations = []
            rdq.fail(f"{op} returned a value the kit cannot check: {type(exc).__name__}: {exc}",
                     envelopes=(expected,))
        if violations:
            lines = []
            for v in violations[:20]:
                lines.append(f"  {v.pointer or '/'}: {v.code} [{_clauses_of(v.code)}]: "
                             f"{v.message}")
            first = violations[0]
            rdq.fail(
                f"{op} returned an invalid envelope (RDQ-RT-004: what a plugin returns is a "
                f"valid envelope in exact model form){because}:",
                detail="\n".join(lines),
                envelopes=(expected,),
                symptom=symptom_of_violation(first, _clauses_of(first.code) or "C11", lines),
            )
        differences = diff(expected, got)
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
                symptom=symptom_of(differences[0], clauses_for_pointer(differences[0]), lines),
            )

    def roundtrip(self, env: Envelope) -> None:
        """write(env) then read(env.id) == env."""
        __tracebackhide__ = True
        self.write(env)
        self.expect(env.id, env)

    def close(self) -> None:
        __tracebackhide__ = True
        if self.closed:
            return
        self.closed = True
        result = self.rdq.call(f"adapter.close() of namespace {self.name!r}", self.adapter.close)
        if isinstance(result, StorageError):
            self.rdq.fail(
                f"adapter.close() of namespace {self.name!r} raised "
                f"{describe_storage_error(result)}"
            )
