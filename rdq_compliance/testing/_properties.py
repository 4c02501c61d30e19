"""Generated checks: ``rdq.for_all`` (a Hypothesis property), ``rdq.run_machine`` (a state
machine), the per-property seeds and how hard each profile searches.

The settings are built per property and applied to that property only: the kit
never registers or loads a global Hypothesis profile, so the author's own
Hypothesis tests in the same run are unaffected. Hypothesis itself is imported
where a property runs: the xdist controller loads the kit but runs no test.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ._budget import SHRINK_CALLS, Established, Unshrunk, established, failure_signature
from ._exampledb import ExampleDb, example_database

if TYPE_CHECKING:
    from hypothesis import settings
    from hypothesis.stateful import RuleBasedStateMachine
    from hypothesis.strategies import SearchStrategy

    from ._context import Context

__all__ = ["BUDGETS", "PROFILES", "derived_seed", "for_all", "hypothesis_settings",
           "run_machine"]

PROFILES = ("quick", "ci", "thorough")

# budget -> profile -> (max_examples, stateful_step_count)
BUDGETS: dict[str, dict[str, tuple[int, int]]] = {
    # read(write(e)) == e on arbitrary envelopes: the broadest search.
    "generic": {"quick": (10, 0), "ci": (40, 0), "thorough": (400, 0)},
    # properties aimed at one field (strings, timestamps, headers, ...).
    "targeted": {"quick": (8, 0), "ci": (25, 0), "thorough": (200, 0)},
    # several envelopes per example, or a storage restart per example.
    "heavy": {"quick": (3, 0), "ci": (10, 0), "thorough": (60, 0)},
    # the state machine: runs x steps.
    "stateful": {"quick": (8, 20), "ci": (20, 30), "thorough": (100, 50)},
}


def derived_seed(kit_seed: int, *parts: str) -> int:
    """A per-property seed: the same --rdq-seed gives the same examples on every run,
    and different properties do not all draw the same sequence."""
    text = "\x1f".join((str(kit_seed), *parts))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def hypothesis_settings(profile: str, budget: str, *, replay: bool = False,
                        example_db: ExampleDb | None = None) -> settings:
    """The settings of one property. ``example_db`` (``--rdq-example-db``): the failing
    examples saved there are replayed first (the reuse phase), and new ones saved."""
    # Imported here: the xdist controller loads the kit but runs no property, and
    # importing Hypothesis there would delay the start of every worker.
    from hypothesis import HealthCheck, Phase, settings

    # No example database unless --rdq-example-db names one: the same seed must give the
    # same examples on every machine, whatever ran before. A replay runs its saved case only.
    database = None if example_db is None or replay else example_database(example_db)

    max_examples, steps = BUDGETS[budget][profile]
    return settings(
        max_examples=max(max_examples, 1),
        stateful_step_count=max(steps, 1),
        # Adapters do real I/O (databases, subprocesses): wall-clock deadlines
        # would make verdicts depend on machine load. --rdq-timeout bounds hangs.
        deadline=None,
        database=database,
        derandomize=False,  # the explicit per-property seed decides
        # Generating whole envelopes (nested unknown fields, long strings) is
        # legitimately slow and large; those checks would only flake on a busy CI box.
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.large_base_example],
        report_multiple_bugs=False,  # one clear failure with one minimal envelope
        print_blob=False,
        phases=(Phase.explicit,) if replay else (
            *((Phase.reuse,) if database is not None else ()),
            Phase.explicit, Phase.generate, Phase.target, Phase.shrink,
        ),
    )


def _record(drawn: dict[str, Any], key: str, value: Any) -> Any:
    drawn[key] = value
    return value


def for_all(
    rdq: Context, check: Callable[..., None], budget: str,
    strategies: dict[str, SearchStrategy[Any]],
) -> None:
    """:meth:`Rdq.for_all`: run ``check`` on examples drawn from ``strategies``, or only on
    the saved example when this test is replayed; the failing example goes to
    ``rdq.example`` (for the saved case).

    A failure with a signature an earlier test established is not shrunk again, and no
    shrink runs past ``SHRINK_CALLS`` calls (see ``_budget``)."""
    __tracebackhide__ = True
    from hypothesis import example, given
    from hypothesis import seed as hypothesis_seed

    name = check.__name__
    case = rdq.replay
    if case is not None and case.example is not None and case.check != name:
        return  # replaying another property of this test
    replaying = case is not None and case.example is not None

    # The values of the example being run, recorded as they are drawn: the
    # last run before Hypothesis re-raises is the minimal failing example.
    # (Recording through the strategies keeps the drawing out of the failure's traceback.)
    drawn: dict[str, Any] = {}
    recorded = {
        key: strategy.map(functools.partial(_record, drawn, key))
        for key, strategy in strategies.items()
    }
    causes = established(rdq.runtime)
    guarded = check if replaying else _Guard(drawn, causes, rdq.item.nodeid).wrap(check)
    test = given(**recorded)(guarded)
    if replaying:
        assert case is not None
        test = example(**case.example_kwargs())(test)
    params = json.dumps(rdq.params, sort_keys=True)
    # The key of its examples in --rdq-example-db: the plugin, test, parameters and check
    # (the wrapped function's source is the same for every property). @seed first: it
    # turns the database off, and the settings applied after it decide.
    test.hypothesis.inner_test._hypothesis_internal_add_digest = (  # type: ignore[attr-defined]
        _db_key(rdq, params, name))
    test = hypothesis_seed(derived_seed(rdq.seed, rdq.test_name, params, name))(test)
    test = hypothesis_settings(rdq.profile, budget, replay=replaying,
                               example_db=rdq.settings.example_db)(test)
    cut: Unshrunk | None = None
    try:
        test()
    except Unshrunk as stop:
        cut = stop
    except BaseException as exc:
        rdq.example = (name, dict(drawn))
        causes.establish(failure_signature(exc), rdq.item.nodeid)
        raise
    if cut is not None:
        # Outside the except block: the failure keeps its own traceback and context.
        rdq.example = (name, cut.drawn)
        failure = cut.failure
        causes.establish(failure_signature(failure), rdq.item.nodeid)  # a budget's cut
        failure.add_note(cut.note)
        raise failure


def _db_key(rdq: Context, params: str, check: str) -> bytes:
    return "\x1f".join((rdq.label, rdq.test_name, params, check)).encode("utf-8")


def _budget_note() -> str:
    return (f"(shrinking stopped after {SHRINK_CALLS} examples: the shrink budget; this is "
            "the smallest failing example found by then)")


class _Guard:
    """Watches one property's or state machine's failures: counts the examples run after
    the first failure and cuts the search short (raises :class:`Unshrunk`) as ``_budget``
    says."""

    def __init__(self, drawn: dict[str, Any], causes: Established, nodeid: str) -> None:
        self.drawn = drawn
        self.causes = causes
        self.nodeid = nodeid
        self.signature: str | None = None
        """The first failure's signature (None until the check fails)."""
        self.calls_since = 0
        self.last: tuple[BaseException, dict[str, Any]] | None = None
        """The last failure with the first failure's signature, and its example."""

    def wrap(self, check: Callable[..., None]) -> Callable[..., None]:
        """``check`` watched: each call is an example, each exception a failure."""

        def guarded(*args: Any, **kwargs: Any) -> None:
            __tracebackhide__ = True
            self.before_example()
            try:
                check(*args, **kwargs)
            except Exception as exc:
                self.failed(exc)
                raise

        # Hypothesis calls the test through a proxy that takes the file and line of the
        # function it is given (hypothesis.internal.reflection.impersonate): let that be the
        # suite's check, as without the guard, so that no kit frame shows in the failure's
        # traceback (this frame itself hides by __tracebackhide__).
        function: Any = guarded  # functools.wraps' type has no __code__ for mypy
        function.__code__ = function.__code__.replace(
            co_filename=check.__code__.co_filename,
            co_firstlineno=check.__code__.co_firstlineno,
        )
        # After the code's replacement (mypy knows no __code__ on the wrapper type):
        # update_wrapper copies the name, doc and __wrapped__, never the code.
        return functools.wraps(check)(guarded)

    def before_example(self, *, cut: bool = True) -> None:
        """Count an example; past the budget, end the search with the last failure
        (``cut``) or leave that to the next failure (a state machine: raising before its
        first draw would leave Hypothesis' record of the search inconsistent)."""
        __tracebackhide__ = True
        if self.last is None:
            return
        self.calls_since += 1
        if cut and self.calls_since > SHRINK_CALLS:
            failure, drawn = self.last
            raise Unshrunk(failure, _budget_note(), drawn) from None

    def failed(self, exc: BaseException) -> None:
        __tracebackhide__ = True
        signature = failure_signature(exc)
        if signature is None:
            return
        first = self.causes.first(signature)
        # Only before this search found a cause of its own: a new defect being shrunk
        # must not be reported as an established one its shrink ran into.
        if self.signature is None and first is not None and first != self.nodeid:
            raise Unshrunk(
                exc, f"same cause as {first}: not shrunk again (that test shows the "
                "minimal example)", dict(self.drawn),
            ) from None
        if self.signature is None:
            self.signature = signature
        if signature == self.signature:
            self.last = (exc, dict(self.drawn))
            if self.calls_since > SHRINK_CALLS:
                raise Unshrunk(exc, _budget_note(), dict(self.drawn)) from None


def run_machine(rdq: Context, machine: type[RuleBasedStateMachine]) -> None:
    """:meth:`Rdq.run_machine`: a state machine under the profile's stateful budget and a
    seed derived from --rdq-seed. Its check failures (``rdq.fail``) are watched as a
    property's are: a cause already established ends the search at the first failing
    run, and the shrink budget holds (the machine saves its own failing steps)."""
    __tracebackhide__ = True
    from hypothesis import seed as hypothesis_seed
    from hypothesis.stateful import run_state_machine_as_test

    causes = established(rdq.runtime)
    guard = _Guard({}, causes, rdq.item.nodeid)
    replaying = rdq.replay is not None

    def factory() -> RuleBasedStateMachine:
        guard.before_example(cut=False)
        return machine()

    params = json.dumps(rdq.params, sort_keys=True)
    # The key of its examples in --rdq-example-db (Hypothesis digests the factory).
    factory._hypothesis_internal_add_digest = _db_key(  # type: ignore[attr-defined]
        rdq, params, "machine")
    # "anything which returns an instance of RuleBasedStateMachine" (its docstring); the
    # annotation says a class.
    seeded = cast("type[RuleBasedStateMachine]", hypothesis_seed(
        derived_seed(rdq.seed, rdq.test_name, params, "machine"))(
        machine if replaying else factory))
    cut: Unshrunk | None = None
    if not replaying:
        rdq.on_check_failed = guard.failed
    try:
        run_state_machine_as_test(seeded, settings=hypothesis_settings(
            rdq.profile, "stateful",
            example_db=None if replaying else rdq.settings.example_db))
    except Unshrunk as stop:
        cut = stop
    except BaseException as exc:
        causes.establish(failure_signature(exc), rdq.item.nodeid)
        raise
    finally:
        rdq.on_check_failed = None
    if cut is not None:
        # The steps from this call down to the failed check, as pytest shows them.
        failure = cut.failure.with_traceback(cut.__traceback__)
        failure.add_note(cut.note)
        causes.establish(failure_signature(failure), rdq.item.nodeid)
        raise failure
