"""One difference between what was written and what came back, and how it reads.

The record both walks report (:mod:`._diff` over the models, :mod:`._diff_json` over
plain JSON), the differences they report alike (a changed type, a changed length, the
items past the shorter sequence), and the one line a person reads for each: pointer,
note, and the two values unless the note already names them. Kept apart from the
walks so that the diagnosis and the failure messages read a difference without
pulling in how it was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ._diff_text import short_value, show_pointer

__all__ = [
    "Difference",
    "DifferenceKind",
    "format_diff",
    "length_change",
    "surplus",
    "type_diff",
]

DifferenceKind = Literal["changed", "missing", "unexpected", "type", "length"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference at ``pointer``; ``expected``/``actual`` are the values there
    (None for the absent side of missing/unexpected)."""

    pointer: str
    kind: DifferenceKind
    expected: Any
    actual: Any
    note: str

    def __str__(self) -> str:
        return _format_line(self)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def type_diff(ptr: str, e: object, a: object, expected_type: str) -> Difference:
    return Difference(
        ptr, "type", e, a, f"type changed: expected {expected_type}, got {type(a).__name__}"
    )


def length_change(
    ptr: str, e: Sequence[Any], a: Sequence[Any], what: str, noun: str
) -> Difference:
    return Difference(
        ptr,
        "length",
        len(e),
        len(a),
        f"{what} length changed: expected {_n(len(e), noun)}, got {len(a)}",
    )


def surplus(ptr: str, e: Sequence[Any], a: Sequence[Any], item: str) -> list[Difference]:
    """The items past the shorter sequence: missing from ``a`` or unexpected in it."""
    missing = [
        Difference(f"{ptr}/{i}", "missing", e[i], None, f"{item} missing")
        for i in range(len(a), len(e))
    ]
    return missing + [
        Difference(f"{ptr}/{i}", "unexpected", None, a[i], f"unexpected {item}")
        for i in range(len(e), len(a))
    ]


# -- formatting --------------------------------------------------------------------


def _format_line(d: Difference) -> str:
    ptr = show_pointer(d.pointer)
    if d.kind == "missing":
        return f"{ptr}: {d.note}: expected {short_value(d.expected)}"
    if d.kind == "unexpected":
        return f"{ptr}: {d.note}: got {short_value(d.actual)}"
    if d.kind == "length":
        return f"{ptr}: {d.note}"
    center = None
    if isinstance(d.expected, str) and isinstance(d.actual, str):
        center = next(
            (k for k, (x, y) in enumerate(zip(d.expected, d.actual, strict=False)) if x != y),
            min(len(d.expected), len(d.actual)),
        )
    if isinstance(d.expected, bytes | datetime) and d.kind == "changed":
        return f"{ptr}: {d.note}"
    if _names_both(d.note, d.expected, d.actual):
        return f"{ptr}: {d.note}"  # not "expected 1, got 2 (expected 1, got 2)"
    return (
        f"{ptr}: {d.note} (expected {short_value(d.expected, center)}, "
        f"got {short_value(d.actual, center)})"
    )


def _names_both(note: str, expected: object, actual: object) -> bool:
    """Whether ``note`` already says "expected X, got Y" with both values."""
    def forms(v: object) -> set[str]:
        return {repr(v), str(v), repr(str(v))}

    return any(f"expected {e}, got {a}" in note
               for e in forms(expected) for a in forms(actual))


def format_diff(diffs: Sequence[Difference], *, limit: int = 20) -> str:
    """One readable line per difference, at most ``limit`` of them, then "… and N more"."""
    lines = [_format_line(d) for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"… and {len(diffs) - limit} more")
    return "\n".join(lines)
