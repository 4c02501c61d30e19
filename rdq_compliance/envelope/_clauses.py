"""Which clause a difference breaks, read from the one table (:mod:`._diagnosis`).

A failing round trip names the clause of the defect, so a plugin author reads the
rule that was broken: a lost ``error.detail`` or unknown field is C10 (it comes back
unchanged), not C9; a number changed inside one is C5.
"""

from __future__ import annotations

from ._diagnosis import difference_class, find_rule, pointer_pattern
from ._difference import Difference

__all__ = ["clauses_for_pointer"]

# Optional known fields: null when empty (C9), so null against a value is C9 as well.
_NULLABLE = frozenset(
    {"handler_version", "next_attempt_at", "lease_expires_at", "finished_at", "stack"}
)


def clauses_for_pointer(d: Difference) -> str:
    """The clauses (space-separated ids) a difference at ``d.pointer`` breaks: those of
    the first row of :data:`~._diagnosis.DEFECT_RULES` that matches it; a known optional
    field turned null (or back) adds C9; the whole envelope is C13."""
    pattern = pointer_pattern(d.pointer)
    if not pattern:
        return "C13"
    rule = find_rule(pattern, difference_class(d))
    clauses = list(rule.clauses if rule is not None else ("C13",))
    leaf = pattern.rsplit("/", 1)[1]
    if leaf in _NULLABLE and (d.expected is None) != (d.actual is None) and "C9" not in clauses:
        clauses.append("C9")
    return " ".join(clauses)
