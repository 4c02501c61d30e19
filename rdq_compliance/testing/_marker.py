"""``@requirement``: the tag that makes a test a kit test of one registered requirement.

The pytest plugin reads the marker it sets (:data:`MARKER`): the ``rdq`` fixture needs
it, the report counts the test towards the requirement, ``-k``/``-m`` select by the id,
and the kit orders its tests from ``kind`` and ``slow``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

from .._requirements import get_requirement

__all__ = ["KINDS", "MARKER", "requirement"]

MARKER = "rdq_requirement"
"""The pytest marker ``@requirement`` sets: ``rdq_requirement(id, kind=..., slow=...,
carries=...)``."""

F = TypeVar("F", bound=Callable[..., Any])

KINDS = ("example", "property", "machine")


def requirement(
    id: str, *, kind: str = "example", slow: bool = False, carries: Sequence[str] = ()
) -> Callable[[F], F]:
    """Tag a kit test with the requirement it checks.

    Checked at import time: the id must be in the registry, not retired, and
    the test's docstring must cite the id and at least one of its clauses.
    ``kind``: ``example`` (fixed examples, milliseconds), ``property`` (calls
    ``rdq.for_all``) or ``machine`` (calls ``rdq.run_machine``): the kit runs the
    examples first (``-x`` stops at the first defect a fixed example shows).
    ``slow``: one of the longest properties (measured: ``--durations``): it runs, and
    under ``-n N`` is dealt out, before the other properties. The kit's own properties
    take it from their measured cost (``_pytest/_schedule.COSTS``); this is for a test
    that table does not know.
    ``carries``: ids of other requirements whose values the test writes on purpose
    (beyond what its parameters show): it runs after their tests, so that ``-x`` stops
    on a defect's own requirement first (``_pytest/_ordering``).
    """
    req = get_requirement(id)  # KeyError naming the known ids
    if req.retired:
        raise ValueError(f"requirement {id!r} is retired; no test may check it")
    if kind not in KINDS:
        raise ValueError(f"@requirement({id!r}, kind={kind!r}): expected one of {KINDS}")
    if isinstance(carries, str):
        raise ValueError(f"@requirement({id!r}, carries={carries!r}): expected a tuple of "
                         f"requirement ids, e.g. carries=({carries!r},)")
    for other in carries:
        get_requirement(other)  # KeyError naming the known ids
        if other == id:
            raise ValueError(f"@requirement({id!r}, carries={tuple(carries)!r}): a test "
                             "carries other requirements' values, never its own id")

    def mark(fn: F) -> F:
        doc = fn.__doc__ or ""
        if id not in doc or not any(c in doc for c in req.clauses):
            raise ValueError(
                f"{fn.__qualname__}: its docstring must cite {id} and one of its clauses "
                f"({', '.join(req.clauses)})"
            )
        mark = getattr(pytest.mark, MARKER)
        extra: dict[str, object] = {} if kind == "example" else {"kind": kind}
        if slow:
            extra["slow"] = True
        if carries:
            extra["carries"] = tuple(carries)
        marked: F = mark(id, **extra)(fn)
        return marked

    return mark
