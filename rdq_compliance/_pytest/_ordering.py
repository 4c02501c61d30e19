"""The order the kit's tests run in, and where ``-x`` stops (issue 14 §2, issue 21 §2).

The order comes from the one diagnosis table (:data:`~rdq_compliance.envelope._diagnosis.
DEFECT_RULES`): a requirement's tests run at the place of its first row, so that what
every envelope carries (the model's Python types, timestamps, null against empty
values) is checked before the tests that merely carry it along, and the golden corpus
and the generic round trip (no row of their own) come last.

A test runs after the requirements whose values it carries (:func:`item_rank`): those
its parameters hold (an envelope with instants to the millisecond or two attempts, ""
or astral text, found by ``requirements_carried``) and those its marker names
(``@requirement(..., carries=...)``: every JSON type in unknown fields). So a store
that returns counters as ``Decimal`` (every read) fails first the exact-types example
whose instants are whole seconds, and one that cuts timestamps passes it and fails
RDQ-RT-007 first: ``-x`` stops on the defect's own requirement.

What every envelope holds cannot order anything: an instant, an envelope_version, the
dotted header key of the base envelope. Defects in those (instants shifted, the version
stamped on read, dotted keys refused) would fail whichever test runs first; the narrow
examples (``@requirement(..., narrow=True)``) run before all others and each judges only
its own requirement's differences (the diagnosis table's), so that each such defect fails
its own narrow example first; RDQ-RT-001 judges the same envelopes whole, later.

Where a defect still reaches another requirement's test first, :class:`StopOnCause` runs the
diagnosed requirement's pending tests before the run stops, and that first failure
reads "explained by cause 1". A refused envelope that held several triggers names
several candidates; their tests run in turn until one fails.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest

from .._requirements import get_requirement
from ..envelope._carried import requirements_carried
from ..envelope._codec import to_json
from ..envelope._diagnosis import requirement_rank
from ..envelope._model import Envelope
from ..envelope._triggers import triggers_of
from ..reporting._causes import diagnose
from ..testing._builders import base_envelope
from ..testing._failures import CheckFailed, OperationHung, find_failure
from ..testing._marker import MARKER
from ..testing._symptoms import symptom_of_exception
from ._costs import SLOW, cost

__all__ = [
    "SUITE_MODULE_PREFIX", "StopOnCause", "carried", "cost_rank", "examples_first", "is_kit_test",
    "is_narrow", "item_rank", "longest_first", "specificity",
]

SUITE_MODULE_PREFIX = "rdq_compliance.suites."


def is_kit_test(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return module is not None and module.__name__.startswith(SUITE_MODULE_PREFIX)


_MACHINE, _SLOW, _PROPERTY, _EXAMPLE = range(4)


def _marker(item: pytest.Item) -> pytest.Mark | None:
    get_marker = getattr(item, "get_closest_marker", None)
    return get_marker(MARKER) if get_marker is not None else None


def _requirement_id(item: pytest.Item) -> str | None:
    mark = _marker(item)
    return str(mark.args[0]) if mark is not None and mark.args else None


def is_narrow(item: pytest.Item) -> bool:
    """A narrow example (``@requirement(..., narrow=True)``): it judges only its own
    requirement's differences and runs before every other test."""
    mark = _marker(item)
    return mark is not None and bool(mark.kwargs.get("narrow"))


def cost_rank(item: pytest.Item) -> int:
    """0 the state machine (the longest test), 1 one of the longest properties (its cost
    in ``_costs.COSTS`` at least ``SLOW``, or ``@requirement(..., slow=True)`` for a test
    the table does not know), 2 another property, 3 a fixed example: the order of the
    kit's tests and of its shards."""
    mark = _marker(item)
    kind = "example" if mark is None else mark.kwargs.get("kind", "example")
    if kind == "machine":
        return _MACHINE
    if kind != "property":
        return _EXAMPLE
    slow = ((mark is not None and mark.kwargs.get("slow"))
            or cost(getattr(item, "nodeid", "")) >= SLOW)
    return _SLOW if slow else _PROPERTY


def _is_generated(item: pytest.Item) -> bool:
    """A kit test that runs a Hypothesis property or state machine."""
    return cost_rank(item) < _EXAMPLE


def specificity(item: pytest.Item) -> tuple[int, int]:
    """Where the item's requirement runs: the place of its first row in the diagnosis
    table, then requirements citing fewer clauses first (those without a row: the
    golden corpus and the generic round trip, nine clauses each, come last)."""
    rid = _requirement_id(item)
    try:
        req = get_requirement(rid) if rid is not None else None
    except KeyError:
        req = None
    if req is None:
        return (1_000, 99)
    return (requirement_rank(req.id), len(req.clauses))


_COMMON = triggers_of(to_json(base_envelope()))
"""The triggers every example's envelope holds (a dotted header key): they order nothing."""


_CARRIED: dict[int, tuple[object, frozenset[str]]] = {}
"""id of a parameter value -> (the value, what it carries): a batch run's plugins share
their parametrizations' values, which are looked at once (the value is kept, so that
its id is not reused)."""


def _values_carried(value: object) -> frozenset[str]:
    known = _CARRIED.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    found = _carried_by(value)
    _CARRIED[id(value)] = (value, found)
    return found


def _carried_by(value: object) -> frozenset[str]:
    if isinstance(value, Envelope):
        try:
            return requirements_carried(to_json(value), envelope=True, common=_COMMON)
        except (TypeError, ValueError):  # not encodable: nothing to learn from it
            return frozenset()
    if isinstance(value, list | tuple) and value and all(
            isinstance(v, Envelope) for v in value):
        return frozenset().union(*(_values_carried(v) for v in value))
    if isinstance(value, str | bytes | bytearray | dict | list | int | float):
        return requirements_carried(value, envelope=False)
    return frozenset()


def carried(item: pytest.Item) -> frozenset[str]:
    """The other requirements whose values the item writes: its marker's ``carries``
    and what its parameters hold (``requirements_carried``)."""
    mark = _marker(item)
    found: set[str] = set(mark.kwargs.get("carries", ())) if mark is not None else set()
    params = getattr(getattr(item, "callspec", None), "params", {})
    for name, value in params.items():
        if name != "rdq_plugin":
            found |= _values_carried(value)
    found.discard(_requirement_id(item) or "")
    return frozenset(found)


def item_rank(item: pytest.Item) -> tuple[tuple[int, ...], int, int]:
    """Where the item runs among the examples (or the properties): at the latest of its
    requirement's place and the places of the requirements it carries; among items at
    one place, by the rest of those places, latest first (carrying less first: a value at
    two limits runs after the tests of one of them, and a place's own tests that carry
    nothing else run first), then the requirement of the earlier place first."""
    own, clauses = specificity(item)
    ranks = sorted({own, *(requirement_rank(r) for r in carried(item))}, reverse=True)
    return (tuple(ranks), own, clauses)


def _reorder_kit_items(items: list[pytest.Item], key: Callable[[pytest.Item], Any]) -> None:
    # A stable sort of the kit's own items only: the same collection always gives
    # the same order (xdist workers must agree), and the user's tests keep their places.
    slots = [i for i, item in enumerate(items) if is_kit_test(item)]
    ordered = sorted((items[i] for i in slots), key=key)
    for i, item in zip(slots, ordered, strict=True):
        items[i] = item


def examples_first(items: list[pytest.Item]) -> None:
    """Reorder the kit's tests in place: every example-based test (milliseconds each)
    before the generated properties (up to seconds each), so that ``-x`` stops at the
    first defect a fixed example shows without waiting for the searches; in each half,
    in the order of the diagnosis table (:func:`item_rank`)."""
    _reorder_kit_items(
        items, lambda item: (_is_generated(item), not is_narrow(item), *item_rank(item)))


def longest_first(items: list[pytest.Item]) -> None:
    """Reorder the kit's tests in place for ``-n N`` without ``-x``: the fixed examples,
    then the state machine (the longest test), the properties marked ``slow``, the
    other properties.

    xdist hands each worker one consecutive chunk of the collection first and the
    rest in small chunks on demand, so the examples go out in the first chunks and the
    long tests are dealt a few at a time at the end, longest first; with the state
    machine last, one worker ran it alone while the other sat idle."""
    _reorder_kit_items(
        items,
        lambda item: ((cost_rank(item) + 1) % 4, not is_narrow(item),
                      item_rank(item) if cost_rank(item) == _EXAMPLE else ((), 0, 0)),
    )


_DIAGNOSIS = pytest.StashKey[list[str]]()
_FAILED = pytest.StashKey[bool]()


def _label(item: pytest.Item) -> object:
    return getattr(getattr(item, "callspec", None), "params", {}).get("rdq_plugin")


class StopOnCause:
    """With ``-x``: before the run stops on a failure whose diagnosis names another
    requirement, that requirement's pending tests (same plugin) run until one fails."""

    def __init__(self) -> None:
        self.done = False

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.failed:
            item.stash[_FAILED] = True
        if call.when == "call" and call.excinfo is not None and report.failed:
            found = find_failure(call.excinfo.value, (CheckFailed, OperationHung))
            item.stash[_DIAGNOSIS] = diagnose(
                symptom_of_exception(found or call.excinfo.value))
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        result = yield
        session = item.session
        targets = item.stash.get(_DIAGNOSIS, [])
        if (self.done or not session.shouldfail or not targets
                or _requirement_id(item) in targets or not is_kit_test(item)):
            return result
        self.done = True
        reason = session.shouldfail  # "stopping after 1 failures": the user's -x
        items = session.items
        start = items.index(item) + 1 if item in items else len(items)
        # Several candidates (a refused envelope held several triggers): the first whose
        # tests fail is the one (the others' tests pass: their values were not the cause).
        for target in targets:
            pending = [i for i in items[start:]
                       if is_kit_test(i) and _requirement_id(i) == target
                       and _label(i) == _label(item)]
            if self._run_until_failure(pending):
                break
        session.shouldfail = reason
        return result

    @staticmethod
    def _run_until_failure(pending: list[pytest.Item]) -> bool:
        for other in pending:
            other.ihook.pytest_runtest_protocol(item=other, nextitem=None)
            if other.stash.get(_FAILED, False):
                return True
        return False
