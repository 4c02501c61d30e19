"""The per-test handle on the plugin under test: the ``rdq`` fixture's :class:`Rdq`.

Everything a suite does to a plugin goes through it: facts (the plugin's label and
declaration, the test's parameters, the replayed case), failing with a message that
names the requirement, calling the plugin through the guard, namespaces (see
``_owned_namespaces``) and generated checks (see ``_properties``, ``_lanes``). The pytest
plugin builds one per test from the run's settings and the plugin's runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from .._requirements import Requirement
from ..envelope._diagnosis import DIFFERENCES
from ..envelope._model import Envelope
from ..reporting._symptom import Symptom
from ..storage._protocol import StorageError, StorageInfo
from ..storage._stdio import StdioStorage
from . import _elsewhere, _lanes, _properties
from ._case import Case
from ._context import KitSettings
from ._failures import (
    C17_TEXT,
    CheckFailed,
    OperationHung,
    PluginFault,
    canonical,
    describe_storage_error,
    format_plugin_traceback,
    is_c17,
    pretty,
    testee_violations,
)
from ._marker import MARKER
from ._namespace_handle import Namespace
from ._owned_namespaces import Namespaces
from ._runtime import PluginRuntime
from ._shared import shared_namespace
from ._symptoms import symptom_of_semantics

if TYPE_CHECKING:
    from hypothesis.stateful import RuleBasedStateMachine
    from hypothesis.strategies import SearchStrategy

    from ._lanes import Lane

__all__ = ["Rdq", "params_of", "skip_not_applicable"]


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
        get_marker = getattr(item, "get_closest_marker", None)  # a stand-in item has none
        mark = get_marker(MARKER) if get_marker is not None else None
        self.judges: str | None = (
            requirement.id if mark is not None and mark.kwargs.get("narrow") else None)
        """A narrow example's requirement (``@requirement(..., narrow=True)``): its reads
        are judged only by the differences the diagnosis table gives it; None: whole."""
        self.runtime = runtime
        self.settings = settings
        self.example: tuple[str, dict[str, Any]] | None = None
        """The failing example of a property, state machine or concurrency plan:
        (check name, drawn values) for the saved case that --rdq-replay re-runs. Set by
        ``for_all``; a check that draws its own examples sets it itself."""
        self.on_check_failed: Callable[[CheckFailed], None] | None = None
        """Called with each check failure as it is raised; may raise instead (set by
        ``run_machine``: a cause already established ends the machine's search)."""
        self._namespaces = Namespaces(self)

    # -- facts ---------------------------------------------------------------

    @property
    def label(self) -> str:
        return self.runtime.label

    @property
    def info(self) -> StorageInfo:
        assert self.runtime.info is not None
        return self.runtime.info

    @property
    def profile(self) -> str:
        """The search profile of the run (``--rdq-profile``): quick, ci or thorough."""
        return self.settings.profile

    @property
    def seed(self) -> int:
        """The run's ``--rdq-seed``; see :func:`derived_seed` for a check's own seed."""
        return self.settings.seed

    @property
    def out_of_process(self) -> bool:
        """The plugin under test is a testee behind the stdio bridge: what it stores is
        never the object the kit gave it (C13a does not apply)."""
        return isinstance(self.runtime.storage, StdioStorage)

    @property
    def params(self) -> dict[str, str]:
        """The test's parameter ids other than the plugin label (for case files)."""
        return params_of(self.item, self.label)

    @property
    def test_name(self) -> str:
        """The test function's name, without its parameters."""
        return str(getattr(self.item, "originalname", self.item.name))

    @property
    def replay(self) -> Case | None:
        """The replayed case, when this very test is being replayed."""
        case = self.settings.replay
        if case is None or self.test_name != case.test:
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
        symptom: Symptom | None = None, difference: str = "",
    ) -> NoReturn:
        """Fail the test with a message naming the requirement, its clauses and the plugin.

        ``difference``: the class of what the check found (``DIFFERENCES`` of the
        diagnosis table: ``torn``, ``outdated``, ``crossed``...), which names the cause's
        requirement whichever test found it; "" leaves it to the failing test's."""
        __tracebackhide__ = True
        if difference:
            if difference not in DIFFERENCES:
                raise ValueError(
                    f"difference={difference!r} is no class of the diagnosis table: "
                    f"expected one of {', '.join(sorted(DIFFERENCES))}")
            symptom = symptom or symptom_of_semantics(difference, "read", summary)
        exc = CheckFailed(self.message(summary, detail, envelopes))
        exc.symptom = symptom
        exc.envelopes = tuple(canonical(e) for e in envelopes)
        if self.on_check_failed is None:
            raise exc from None  # the plugin's exception is already in the message
        try:
            raise exc from None
        except CheckFailed:
            self.on_check_failed(exc)
            raise

    def hung(self, exc: OperationHung, envelopes: Collection[Envelope]) -> NoReturn:
        """Re-raise a hang with the message of this test (requirement, plugin)."""
        __tracebackhide__ = True
        new = OperationHung(self.message(str(exc), "", envelopes))
        new.envelopes = tuple(canonical(e) for e in envelopes)
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
            self.hung(exc, envelopes)
        except PluginFault as fault:
            err = fault.exc
            if isinstance(err, StorageError):
                if not is_c17(err.code):
                    self.fail(
                        f"{operation} raised {describe_storage_error(err)}, whose code is not "
                        f"{C17_TEXT}",
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
            symptom = None
            judged = testee_violations(getattr(err, "violations", None),
                                       getattr(err, "document", None), next(iter(envelopes), None))
            if judged is not None:
                detail, symptom = judged
            self.fail(
                f"{operation} raised {type(err).__name__}: {err}",
                detail=detail,
                envelopes=envelopes,
                symptom=symptom,
            )

    # -- namespaces (see _owned_namespaces) -------------------------------------

    def new_name(self) -> str:
        """A namespace name no other test (or xdist worker, or other run) uses:
        ``t`` + the run's token + the worker number + ``w`` + a counter (hex), at most
        20 characters. Every name of one run starts with ``t<run token>``, so that two
        runs on one server never touch each other's data and a run can find exactly
        its own namespaces (issue 12 §4)."""
        return self._namespaces.new_name()

    def claim_name(self, name: str) -> str:
        """Register ``name`` (a valid namespace name the test built, e.g. on top of
        :meth:`new_name`) so that teardown drops it like a fresh one; returns it.

        Only names unique to this test may be claimed: teardown drops them."""
        return self._namespaces.claim_name(name)

    def forget_name(self, name: str) -> None:
        """Do not drop ``name`` at teardown: a :meth:`new_name` the test only built
        other names on and never opened (there is nothing to drop; whether dropping
        a namespace never opened succeeds is RDQ-ST-007's to judge)."""
        self._namespaces.forget_name(name)

    def leave(self, name: str, why: str) -> None:
        """Never drop ``name`` (a name the test cannot own, shared with other runs) and
        name it, with ``why``, in a note of the terminal summary and the report, so that
        whoever reads them knows what the run may have left in the store."""
        self._namespaces.leave(name, why)

    def namespace(self, name: str | None = None) -> Namespace:
        """Open an adapter on ``name`` (default: a fresh namespace).

        Every namespace the test used is closed and dropped at teardown. The kit keeps
        at most ``MAX_OPEN_ADAPTERS`` (4) adapters open: opening another closes the one
        used least recently, and a handle whose adapter was closed opens a fresh one
        when it is used again. Close (``Namespace.close``) or release (:meth:`release`)
        what the test no longer needs.
        """
        __tracebackhide__ = True
        return self._namespaces.open(name)

    def shared_namespace(self, name: str) -> AbstractContextManager[Namespace]:
        """``with rdq.shared_namespace("a") as ns:`` opens ``name``, a namespace no run
        can own (a one-character name, C14: every run on the store uses the same one),
        and at the end of the block closes it and drops it, once no kit run on this
        machine has it open (a lock file shared by the kit runs of the machine, see
        ``_shared``). When it cannot be dropped safely, a note of the run names it."""
        return shared_namespace(self._namespaces, name)

    def drop(self, name: str) -> None:
        """``storage.drop(name)``; a refusal fails the test."""
        __tracebackhide__ = True
        self._namespaces.drop(name)

    def restart(self) -> None:
        """Close every adapter and the storage, then open a fresh storage (C15)."""
        __tracebackhide__ = True
        self._namespaces.restart()

    def read_in_new_process(self, ns: Namespace, envelopes: Sequence[Envelope]) -> None:
        """Close the storage, read each of ``envelopes`` by its id in ``ns`` from a new
        Python process (the plugin loaded and opened there as here), open the storage
        again, and require each read to be exactly as written (C15: a durable store
        keeps what it wrote outside the process that wrote it; see ``_elsewhere``)."""
        __tracebackhide__ = True
        _elsewhere.read_in_new_process(self, ns, envelopes, self._namespaces.restart)

    def release(self, name: str) -> None:
        """Close the adapters on ``name`` and drop it now rather than at teardown."""
        __tracebackhide__ = True
        self._namespaces.release(name)

    def teardown(self) -> None:
        """Close adapters and drop every namespace the test used, even after a failure.

        When the storage was abandoned after a hang (before or during teardown), the
        namespaces not dropped yet go to the runtime, which drops them through the
        fresh storage it opens next (a real store still holds them)."""
        __tracebackhide__ = True
        self._namespaces.teardown()

    # -- generated checks (see _properties, _lanes) -----------------------------

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
        _properties.for_all(self, check, budget, strategies)

    def run_machine(self, machine: type[RuleBasedStateMachine]) -> None:
        """Run a Hypothesis state machine under the profile's stateful budget and seed."""
        __tracebackhide__ = True
        _properties.run_machine(self, machine)

    def run_lanes(self, bodies: Sequence[Callable[[Lane], None]]) -> None:
        """Run every body on a lane of its own, the lanes' plugin calls overlapping
        (C18, for a plugin that declares ``concurrent``); raises the first failure.

        A lane's adapters are closed when it ends; the test's others stay open."""
        __tracebackhide__ = True
        _lanes.run_lanes(self.runtime, bodies, at_end=self._namespaces.close_lane)
