"""From a difference the core found to the :class:`~rdq_compliance.reporting.Symptom`
that travels with the failure to the report (root causes, issue 14 §1)."""

from __future__ import annotations

import re
from datetime import datetime

from ..envelope._diff import Difference
from ..envelope._validate import Violation
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from ..reporting._causes import Symptom

__all__ = ["pointer_pattern", "symptom_of", "symptom_of_violation"]

_ENVELOPE = frozenset(ENVELOPE_FIELDS)
_ATTEMPT = frozenset(ATTEMPT_FIELDS)
_ERROR = frozenset(ERROR_FIELDS)
# A Python repr of a key or value inside a note: 'a', "it's", 'a\'b'.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
# The code points the diff shows after a non-ASCII key or value: (U+00C5), (U+0041 U+030A).
_CODE_POINTS = re.compile(r"\((?:U\+[0-9A-F]{4,6} ?)+\)")
_DIFF_LINES = 6


def pointer_pattern(pointer: str) -> str:
    """``pointer`` with array indexes and names the kit generates (header keys, unknown
    field names, keys inside ``detail`` and unknown values) replaced by ``*``:
    ``/attempts/3/error/x_7`` -> ``/attempts/*/error/*``."""
    out: list[str] = []
    level = "envelope"
    for token in pointer.split("/")[1:]:
        if level == "envelope" and token in _ENVELOPE:
            out.append(token)
            level = {"headers": "json", "attempts": "attempts"}.get(token, "json")
        elif level == "attempts" and token.isdigit():
            out.append("*")
            level = "attempt"
        elif level == "attempt" and token in _ATTEMPT:
            out.append(token)
            level = "error" if token == "error" else "json"
        elif level == "error" and token in _ERROR:
            out.append(token)
            level = "json"
        else:  # an unknown field, a header key, anything inside an opaque JSON value
            out.append("*")
            level = "json"
    return "/" + "/".join(out) if out else ""


def _kind(d: Difference) -> str:
    if d.kind == "changed" and isinstance(d.expected, datetime) and isinstance(
        d.actual, datetime
    ):
        return "instant changed"
    head = _CODE_POINTS.sub("", _QUOTED.sub("", d.note)).split(":", 1)[0]
    return " ".join(head.split())


def _summary(d: Difference) -> str:
    if isinstance(d.expected, datetime) and isinstance(d.actual, datetime) and d.kind == "changed":
        try:
            ms = (d.actual - d.expected).total_seconds() * 1000
        except TypeError:  # naive against aware: no delta to show
            return d.note
        shown = f"{ms:+,.0f}" if ms == int(ms) else f"{ms:+,.3f}"
        return f"instant changed by {shown} ms"
    return d.note if len(d.note) <= 160 else d.note[:159] + "\u2026"


def symptom_of(first: Difference, clause: str, diff_lines: list[str]) -> Symptom:
    """The symptom of a failed round trip whose first difference is ``first``."""
    lines = diff_lines[:_DIFF_LINES]
    if len(diff_lines) > _DIFF_LINES:
        lines.append(f"  \u2026 and {len(diff_lines) - _DIFF_LINES} more lines")
    return Symptom(
        pointer=first.pointer or "/",
        pattern=pointer_pattern(first.pointer) or "/",
        kind=_kind(first),
        clause=clause,
        summary=_summary(first),
        diff="\n".join(lines),
    )


def symptom_of_violation(first: Violation, clause: str, lines: list[str]) -> Symptom:
    """The symptom of a read that returned an invalid envelope (RDQ-RT-004): its first
    violation, e.g. ``/created_at`` ``invalid: TIMESTAMP_NOT_UTC`` (a naive datetime)."""
    shown = lines[:_DIFF_LINES]
    if len(lines) > _DIFF_LINES:
        shown.append(f"  \u2026 and {len(lines) - _DIFF_LINES} more lines")
    message = first.message if len(first.message) <= 160 else first.message[:159] + "\u2026"
    return Symptom(
        pointer=first.pointer or "/",
        pattern=pointer_pattern(first.pointer) or "/",
        kind=f"invalid: {first.code}",
        clause=clause,
        summary=f"returned invalid ({first.code}): {message}",
        diff="\n".join(shown),
    )
