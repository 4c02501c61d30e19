"""The diff of plain JSON values: unknown fields and ``error.detail`` (C10).

These values come back unchanged or not at all, at any depth (C10 sets no depth
limit) and with JSON's own types (``1``, ``1.0`` and ``true`` differ, C5), so they get
a walk of their own, apart from the typed walk over the models (:mod:`._diff`):
:func:`same_json` answers the common case, equal values, without building a pointer,
and :func:`diff_json` says where and how two values differ. The two must agree
(``tests/envelope/test_fast_paths.py``); the benchmark and those tests switch the fast
path off by patching ``same_json`` on this module.
"""

from __future__ import annotations

import math
from typing import Any

from ._deep import short_repr
from ._diff_text import show_text, string_note
from ._difference import Difference, length_change, surplus
from ._json import json_equal
from ._violations import pointer_token

__all__ = ["diff_json", "same_json"]


def _json_type(v: object) -> str:
    t = type(v)
    if v is None:
        return "null"
    if t is bool:
        return "boolean"
    if t is int or t is float:
        return "number"
    if t is str:
        return "string"
    if t is list:
        return "array"
    if t is dict:
        return "object"
    return f"non-JSON {t.__name__}"


def same_json(e: Any, a: Any) -> bool:
    """True only when :func:`diff_json` would find no difference: the same plain JSON
    value with the same exact type everywhere (so ``1`` and ``True``, ``1`` and ``1.0``, a
    str subclass and a str are not the same here) and no NaN (it differs from itself).
    False means "not shown the same" (a difference or an awkward value): the general
    walk decides and says where. The fast path for the common case, equal values: no
    pointers, no messages (tests compare the two over generated envelopes). Any depth:
    an explicit stack, which measured faster than recursion on shallow values too."""
    stack: list[tuple[Any, Any]] = [(e, a)]
    while stack:
        e, a = stack.pop()
        t = type(e)
        if t is not type(a):
            return False
        if t is str or t is int or t is float or t is bool:
            if e != a:  # float: NaN != NaN; -0.0 == 0.0 as for json_equal
                return False
        elif t is list:
            if len(e) != len(a):
                return False
            stack.extend(zip(e, a, strict=True))
        elif t is dict:
            if len(e) != len(a):
                return False
            for key, x in e.items():
                if key not in a:
                    return False
                stack.append((x, a[key]))
        elif e is not None:
            return False  # any other type: the walk's non-JSON rules decide
    return True


def diff_json(e: object, a: object, ptr: str, out: list[Difference]) -> None:
    """Append to ``out`` every difference between the JSON values ``e`` and ``a`` at
    ``ptr``, in document order."""
    if same_json(e, a):
        return
    # Depth first in document order over an explicit stack (C10 sets no depth limit):
    # a task is a pair of values to compare, or a Difference ready to report.
    stack: list[tuple[Any, Any, str] | Difference] = [(e, a, ptr)]
    while stack:
        task = stack.pop()
        if isinstance(task, Difference):
            out.append(task)
            continue
        e, a, ptr = task
        et, at = _json_type(e), _json_type(a)
        if et != at:
            out.append(Difference(ptr, "type", e, a, f"type changed: expected {et}, got {at}"))
        elif et == "object":
            assert isinstance(e, dict) and isinstance(a, dict)
            todo: list[tuple[Any, Any, str] | Difference] = []
            for key, evalue in e.items():
                sub = f"{ptr}/{pointer_token(str(key))}"
                if key not in a:
                    todo.append(
                        Difference(sub, "missing", evalue, None, f"key {show_text(key)} missing")
                    )
                else:
                    todo.append((evalue, a[key], sub))
            for key, avalue in a.items():
                if key not in e:
                    sub = f"{ptr}/{pointer_token(str(key))}"
                    todo.append(
                        Difference(
                            sub, "unexpected", None, avalue, f"unexpected key {show_text(key)}"
                        )
                    )
            stack.extend(reversed(todo))
        elif et == "array":
            assert isinstance(e, list) and isinstance(a, list)
            if len(e) != len(a):
                out.append(length_change(ptr, e, a, "array", "item"))
            todo = [(x, y, f"{ptr}/{i}") for i, (x, y) in enumerate(zip(e, a, strict=False))]
            todo.extend(surplus(ptr, e, a, "array item"))
            stack.extend(reversed(todo))
        elif et == "string":
            if e != a:
                out.append(Difference(ptr, "changed", e, a, string_note(e, a)))  # type: ignore[arg-type]
        elif not json_equal(e, a):
            if et == "number":
                note = f"number changed: expected {e!r}, got {a!r}"
                if isinstance(e, int) and isinstance(a, float) and math.isfinite(a):
                    note += " (a double cannot hold every 64-bit integer; C5 requires it exactly)"
            else:
                note = f"value changed: expected {short_repr(e, 60)}, got {short_repr(a, 60)}"
            out.append(Difference(ptr, "changed", e, a, note))
