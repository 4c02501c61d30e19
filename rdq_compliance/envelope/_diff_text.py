"""How values read inside a difference: cut reprs, code points, pointers, string notes.

A difference is read by a person comparing two values that may be long or look alike
(U+00C5, U+212B and A+U+030A print the same), so every value, key and pointer a
difference shows goes through these few functions: long values are cut around where
they differ, and anything but printable ASCII is followed by its code points. They
know nothing of :class:`~._difference.Difference` itself, which both walks (models and
plain JSON) and the line format build on.
"""

from __future__ import annotations

from datetime import datetime

from ._deep import short_repr

__all__ = ["short_value", "show_pointer", "show_text", "string_note"]

_VALUE_CHARS = 80


def short_value(value: object, center: int | None = None) -> str:
    """repr cut to ~80 characters; for strings, a window around ``center``, followed
    by the code points of what is not plain ASCII (look-alikes print alike)."""
    if isinstance(value, str):
        start = center - 20 if center is not None and center > 30 and len(value) > 60 else 0
        window = value[start:]
        text = ("…" if start else "") + repr(window)
        if len(text) > _VALUE_CHARS:
            text = text[: _VALUE_CHARS - 1] + "…"
        return text + _code_points(window[:_VALUE_CHARS], start)
    text = value.isoformat() if isinstance(value, datetime) else short_repr(value, _VALUE_CHARS)
    if len(text) > _VALUE_CHARS:
        text = text[: _VALUE_CHARS - 1] + "…"
    return text


_SHOWN_CODE_POINTS = 8


def _plain(c: str) -> bool:
    return " " <= c <= "~"


def _code_points(s: str, offset: int = 0) -> str:
    """`` (U+0041 U+030A)``: every code point of ``s`` when any is not printable ASCII
    (so U+00C5, U+212B and A+U+030A never print alike); for a long one, the first few
    that are not, with their index (``s`` starting at index ``offset``); ``""`` for
    plain ASCII."""
    if all(_plain(c) for c in s):
        return ""
    if len(s) <= _SHOWN_CODE_POINTS and not offset:
        return " (" + " ".join(f"U+{ord(c):04X}" for c in s) + ")"
    odd = [(i + offset, c) for i, c in enumerate(s) if not _plain(c)]
    shown = ", ".join(f"U+{ord(c):04X} at {i}" for i, c in odd[:_SHOWN_CODE_POINTS])
    more = f", … {len(odd) - _SHOWN_CODE_POINTS} more" if len(odd) > _SHOWN_CODE_POINTS else ""
    return f" ({shown}{more})"


_KEY_CHARS = 60


def _cut(s: str) -> str:
    """``s``, or for a key longer than a line its start and its UTF-8 length: a key may
    be 16 KiB long (C4), and a message line shows it whole nowhere."""
    if len(s) <= _KEY_CHARS:
        return s
    return f"{s[:_KEY_CHARS - 1]}…[{len(s.encode('utf-8', 'surrogatepass')):,} bytes]"


def show_text(s: object) -> str:
    """A key or string for a message: ``repr`` (a long one cut), then the code points
    when it holds anything but printable ASCII: ``'Å' (U+212B)``, ``'Å' (U+0041 U+030A)``."""
    if not isinstance(s, str):
        return short_repr(s, _VALUE_CHARS)
    if len(s) <= _KEY_CHARS:
        return repr(s) + _code_points(s)
    return repr(s[:_KEY_CHARS - 1]) + _cut(s)[_KEY_CHARS - 1:] + _code_points(s[:_KEY_CHARS])


def show_pointer(ptr: str) -> str:
    """A pointer for a message, ``/`` for the root; a long token cut (:func:`_cut`)."""
    tokens = ptr.split("/")[1:]
    if any(len(t) > _KEY_CHARS for t in tokens):
        ptr = "".join(f"/{_cut(t)}" for t in tokens)
        tokens = [t[:_KEY_CHARS] for t in tokens]
    # Pointer tokens are raw keys: annotate each that is not plain ASCII as show_text
    # does keys, e.g. "/headers/Å (U+212B)".
    if ptr.isascii() and ptr.isprintable():
        return ptr or "/"
    notes = [_code_points(token)[2:-1] for token in tokens if _code_points(token)]
    return f"{ptr} ({'; '.join(notes)})" if notes else ptr


def string_note(e: str, a: str) -> str:
    """Byte lengths and the first differing code point of two different strings."""
    eb = len(e.encode("utf-8", "surrogatepass"))
    ab = len(a.encode("utf-8", "surrogatepass"))
    i = next((k for k, (x, y) in enumerate(zip(e, a, strict=False)) if x != y), min(len(e), len(a)))
    return (
        f"string changed: expected {eb} bytes, got {ab} bytes; first difference at "
        f"code point {i}: expected {_code_point(e, i)}, got {_code_point(a, i)}"
    )


def _code_point(s: str, i: int) -> str:
    if i >= len(s):
        return "end of string"
    c = s[i]
    shown = repr(c) if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ""
    return f"U+{ord(c):04X}" + (f" {shown}" if shown else "")
