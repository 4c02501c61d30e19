"""``@requirement``: the tag that makes a test a kit test of one registered requirement.

The pytest plugin reads the marker it sets (:data:`MARKER`): the ``rdq`` fixture needs
it, the report counts the test towards the requirement, ``-k``/``-m`` select by the id,
and the kit orders its tests from ``kind``, ``slow`` and ``narrow``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

from .._requirements import get_requirement

__all__ = ["KINDS", "MARKER", "requirement"]

MARKER = "rdq_requirement"
"""The pytest marker ``@requirement`` sets: ``rdq_requirement(id, kind=..., slow=...,
carries=..., narrow=...)``."""

F = TypeVar("F", bound=Callable[..., Any])

KINDS = ("example", "property", "machine")


def requirement(
    id: str, *, kind: str = "example", slow: bool = False, carries: Sequence[str] = (),
    narrow: bool = False,
) -> Callable[[F], F]:
    """Tag a kit test with the requirement it checks.

    Checked at import time: the id must be in the registry, not retired, and
    the test's docstring must cite the id and at least one of its clauses.
    ``kind``: ``example`` (fixed examples, milliseconds), ``property`` (calls
    ``rdq.for_all``) or ``machine`` (calls ``rdq.run_machine``): the kit runs the
    examples first (``-x`` stops at the first defect a fixed example shows).
    ``slow``: one of the longest properties (measured: ``--durations``): it runs, and
    under ``-n N`` is dealt out, before the other properties. The kit's own properties
    take it from their measured cost (``_pytest/_costs.COSTS``); this is for a test
    that table does not know.
    ``carries``: ids of other requirements whose values the test writes on purpose
    (beyond what its parameters show): it runs after their tests, so that ``-x`` stops
    on a defect's own requirement first (``_pytest/_ordering``).
    ``narrow``: a fixed example whose reads are judged only by the differences the
    diagnosis table gives this requirement (and by any refusal, exception, hang or
    missing envelope); it runs before every other test. For defects that every envelope
    carries (instants shifted, the version stamped on read, dotted header keys refused),
    which would otherwise fail whichever test runs first: each fails its own narrow
    example first. Its envelopes must be judged whole by another test too (the kit's:
    ``RDQ-RT-001``'s ``test_first_looks_roundtrip_whole``).
    """
    req = get_requirement(id)  # KeyError naming the known ids
    if req.retired:
        raise ValueError(f"requirement {id!r} is retired; no test may check it")
    if kind not in KINDS:
        raise ValueError(f"@requirement({id!r}, kind={kind!r}): expected one of {KINDS}")
    if narrow and kind != "example":
        raise ValueError(f"@requirement({id!r}, kind={kind!r}, narrow=True): only a fixed "
                         "example can be narrow (kind='example')")
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
        if narrow:
            extra["narrow"] = True
        marked: F = mark(id, **extra)(fn)
        return marked

    return mark
