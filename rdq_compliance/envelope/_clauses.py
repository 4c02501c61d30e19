"""Which clause a difference breaks: the field -> clause knowledge of envelope v1.

A failing round trip names the clause of the field that changed, so a plugin author
reads the rule that was broken: a lost ``error.detail`` or unknown field is C10 (it
comes back unchanged), not C9, whatever the kind of difference.
"""

from __future__ import annotations

from ._diff import Difference

__all__ = ["clauses_for_pointer"]

_KNOWN_TOP = {
    "envelope_version": "C16", "id": "C6", "queue": "C8a", "handler_ref": "C8a",
    "handler_version": "C4", "payload": "C7", "payload_content_type": "C4", "headers": "C8",
    "status": "C9", "attempt_count": "C5", "redrive_count": "C5", "next_attempt_at": "C3",
    "lease_expires_at": "C3", "created_at": "C3", "attempts": "C12",
}  # fmt: skip
_KNOWN_ATTEMPT = {
    "attempt_no": "C12", "started_at": "C3", "finished_at": "C3", "outcome": "C9", "error": "C9",
}  # fmt: skip
_KNOWN_ERROR = {"type": "C4", "message": "C1 C4", "detail": "C10 C5", "stack": "C1 C4"}
# Optional known fields: null when empty (C9), so null against a value is C9 as well.
_NULLABLE = frozenset(
    {"handler_version", "next_attempt_at", "lease_expires_at", "finished_at", "stack"}
)
_UNKNOWN = "C10 C5"


def clauses_for_pointer(d: Difference) -> str:
    """The clauses (space-separated ids) a difference at ``d.pointer`` breaks.

    The field decides: unknown fields and ``detail`` at any depth are C10 C5; header
    keys and values C8 C4; null against "", {} or [] anywhere is C9 (four different
    values); a known optional field turned null (or back) adds C9; the
    attempts list and an attempt as a whole C12; the whole envelope C13."""
    parts = d.pointer.split("/")[1:]
    if not parts:
        return "C13"
    if d.kind == "type" and _null_against_empty(d.expected, d.actual):
        return "C9"  # "", {}, [] and null are four values: the distinction C9 keeps
    if parts[0] == "headers" and len(parts) > 1:
        return "C8 C4"
    if parts[0] == "attempts" and len(parts) > 1:
        if len(parts) == 2:
            return "C12"
        if len(parts) >= 4 and parts[2] == "error":
            return _field(_KNOWN_ERROR, parts[3], len(parts) == 4, d)
        return _field(_KNOWN_ATTEMPT, parts[2], len(parts) == 3, d)
    return _field(_KNOWN_TOP, parts[0], len(parts) == 1, d)


def _null_against_empty(a: object, b: object) -> bool:
    other = b if a is None else a if b is None else None
    return (a is None) != (b is None) and type(other) in (str, dict, list) and not other


def _field(known: dict[str, str], name: str, leaf: bool, d: Difference) -> str:
    clauses = known.get(name)
    if clauses is None or clauses == _UNKNOWN:
        return _UNKNOWN
    if leaf and name in _NULLABLE and (d.expected is None) != (d.actual is None):
        return f"{clauses} C9"
    return clauses
