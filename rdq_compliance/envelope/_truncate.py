"""C1 truncation: cut at a code point boundary so that text + marker fits the byte limit."""

from __future__ import annotations

from ._limits import MESSAGE_LIMIT, STACK_LIMIT, TRUNCATION_MARKER

__all__ = ["truncate_message", "truncate_stack", "truncate_utf8"]

_MARKER_BYTES = len(TRUNCATION_MARKER.encode("utf-8"))


def truncate_utf8(s: str, limit: int) -> str:
    """Return ``s`` unchanged if its UTF-8 encoding fits ``limit`` bytes; otherwise the
    longest code-point prefix that leaves room for the marker, followed by the marker.

    A value at or under the limit is never changed, even if it ends with the marker.
    Raises ValueError when ``limit`` cannot even hold the marker, or when ``s`` holds a
    lone surrogate (it has no UTF-8 encoding, C4).
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < _MARKER_BYTES:
        raise ValueError(
            f"limit={limit!r}: expected an integer of at least {_MARKER_BYTES} bytes "
            f"(the length of the marker {TRUNCATION_MARKER!r})"
        )
    if len(s) * 4 <= limit:  # no code point takes more than 4 bytes
        return s
    data = s.encode("utf-8")
    if len(data) <= limit:
        return s
    cut = limit - _MARKER_BYTES
    # Step back over continuation bytes (10xxxxxx) to the start of a code point.
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8") + TRUNCATION_MARKER


def truncate_message(s: str) -> str:
    """Truncate an ``error.message`` to 4,096 UTF-8 bytes (C1)."""
    return truncate_utf8(s, MESSAGE_LIMIT)


def truncate_stack(s: str) -> str:
    """Truncate an ``error.stack`` to 65,536 UTF-8 bytes (C1)."""
    return truncate_utf8(s, STACK_LIMIT)
