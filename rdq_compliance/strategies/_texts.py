"""Strategies for free text (C4): any free text, text as a C1 producer truncates it
to a byte limit, and long text of an exact UTF-8 length (the column and index limits
of real stores)."""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Collection

from hypothesis import strategies as st

from ..envelope._limits import TRUNCATION_MARKER
from ..envelope._truncate import truncate_utf8
from ._args import check_collection, check_int, check_range
from ._draws import free_text, integers_between

_MARKER_BYTES = len(TRUNCATION_MARKER.encode("utf-8"))

_MULTIBYTE = ("\u0080", "\u00e9", "\u0800", "\u20ac", "\uffff", "\U0001f600", "\U0010ffff")


def free_texts(*, min_size: int = 0, max_size: int = 32) -> st.SearchStrategy[str]:
    """Free text (C4): any Unicode scalar value, ``min_size``..``max_size`` code
    points. Biased to U+0000, astral characters, combining sequences, RTL and
    bidi controls, whitespace at the ends, the truncation marker, and strings
    that look like JSON, SQL or ``null``."""
    return _free_texts(*check_range("min_size", min_size, "max_size", max_size, least=0))


@functools.cache
def _free_texts(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return _free_texts_drawn(min_size, max_size)


@st.composite
def _free_texts_drawn(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    return free_text(draw, min_size, max_size)


def _fill(unit: str, nbytes: int) -> str:
    """Exactly ``nbytes`` UTF-8 bytes made of repeats of ``unit`` (padded with 'x')."""
    if nbytes <= 0:
        return ""
    unit_bytes = unit.encode("utf-8") or b"x"
    data = (unit_bytes * (nbytes // len(unit_bytes) + 1))[:nbytes]
    text = data.decode("utf-8", "ignore")  # drops a code point split at the end
    return text + "x" * (nbytes - len(text.encode("utf-8")))


_UNITS = _free_texts(1, 6)
_CHARS = st.sampled_from(_MULTIBYTE)
_KINDS = st.sampled_from(("cut", "exact", "exact-marker", "short-marker"))


@functools.cache
@st.composite
def _truncated(draw: st.DrawFn, limit: int) -> str:
    unit = draw(_UNITS)
    char = draw(_CHARS)
    width = len(char.encode("utf-8"))
    kind = draw(_KINDS)
    if kind == "cut":
        # ``char`` starts at most ``width`` bytes before the cut: it fits exactly
        # (delta 0), straddles the cut, or starts right at it.
        cut = limit - _MARKER_BYTES
        start = max(0, cut - width + draw(integers_between(0, width)))
        source = _fill(unit, start) + char + _fill(unit, _MARKER_BYTES + width + 8)
    elif kind == "exact":
        source = _fill(unit, limit - width) + char if width <= limit else _fill(unit, limit)
    elif kind == "exact-marker":
        source = _fill(unit, limit - _MARKER_BYTES) + TRUNCATION_MARKER
    else:
        room = (limit - _MARKER_BYTES) // 4
        source = free_text(draw, 0, min(room, 16)) + TRUNCATION_MARKER
    return truncate_utf8(source, limit)


def truncated_texts(*, limit: int) -> st.SearchStrategy[str]:
    """Text as a C1 producer leaves it for a field limited to ``limit`` UTF-8 bytes:
    over-long values cut by ``truncate_utf8`` with a multi-byte character at
    (straddling, ending at or starting at) the cut, values of exactly ``limit``
    bytes, with and without the marker, and short values that merely end with
    the marker. Every value is valid UTF-8 of at most ``limit`` bytes."""
    check_int("limit", limit, min_value=_MARKER_BYTES)
    return _truncated(limit)


# Column and index limits real stores have, in UTF-8 bytes (C4 sets none): VARCHAR(255)
# and one past it, a 1 KiB column, PostgreSQL's b-tree entry (2,704 bytes), a 4 KiB
# key, 8,191 (8 KiB - 1: a page-sized VARCHAR/NVARCHAR) and 16 KiB.
COLUMN_LIMITS = (255, 256, 1_024, 2_704, 4_096, 8_191, 16_384)
# Hypothesis caps the text one example draws at about 8 KB of UTF-8 (measured: 8,177
# ASCII or 2,039 four-byte characters alone), and an envelope draws more than the text:
# up to this many bytes a long text is st.text; past it, a drawn seed expands it.
_NATIVE_BYTES = 4_096
_LONG_MAX_BYTES = 16_384
# One range per UTF-8 width. Printable ASCII and wide code points at random are
# incompressible: a store that compresses (PostgreSQL TOAST, InnoDB) cannot hide a
# limit the way it would for "aaaa...".
_WIDTH_RANGES = {1: (0x20, 0x7E), 2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}
_WIDTH_ALPHABETS = {
    w: st.characters(min_codepoint=lo, max_codepoint=hi, exclude_categories=["Cs"])
    for w, (lo, hi) in _WIDTH_RANGES.items()
}
WIDTHS = (1, 2, 3, 4)
_WIDTHS = st.sampled_from(WIDTHS)
_SEEDS = st.integers(0, 2**32 - 1)


@functools.cache
def _texts_of_width(width: int, size: int) -> st.SearchStrategy[str]:
    return st.text(_WIDTH_ALPHABETS[width], min_size=size, max_size=size)


def random_text(seed: int, width: int, nbytes: int) -> str:
    """Exactly ``nbytes`` UTF-8 bytes of ``width``-byte characters picked by a seeded
    PRNG (no surrogates), then ``nbytes % width`` ASCII ones: incompressible text."""
    rng = random.Random(seed)
    lo, hi = _WIDTH_RANGES[width]
    points = rng.choices(range(lo, hi + 1), k=nbytes // width)
    # A surrogate drawn in the 3-byte range moves 2,048 down, to a 3-byte scalar value.
    chars = [chr(c - 0x800 if 0xD800 <= c <= 0xDFFF else c) for c in points]
    chars += [chr(c) for c in rng.choices(range(0x20, 0x7F), k=nbytes % width)]
    return "".join(chars)


@functools.cache
def exact_byte_texts(nbytes: int, width: int) -> st.SearchStrategy[str]:
    """Text of exactly ``nbytes`` UTF-8 bytes: ``width``-byte characters, then an ASCII
    tail (see :func:`long_texts`)."""
    if nbytes > _NATIVE_BYTES:
        return _SEEDS.map(functools.partial(_random_text_of, width, nbytes))
    return st.builds(
        operator.add, _texts_of_width(width, nbytes // width), _texts_of_width(1, nbytes % width)
    )


def _random_text_of(width: int, nbytes: int, seed: int) -> str:
    return random_text(seed, width, nbytes)


@functools.cache
def _exact_byte_texts(nbytes: int) -> st.SearchStrategy[str]:
    return _WIDTHS.flatmap(functools.partial(exact_byte_texts, nbytes))


def long_texts(*, sizes: Collection[int] = COLUMN_LIMITS) -> st.SearchStrategy[str]:
    """Free text (C4) of exactly one of ``sizes`` UTF-8 bytes, by default the column and
    index limits real stores have: 255, 256, 1,024, 2,704 (PostgreSQL's b-tree entry),
    4,096, 8,191 and 16,384 bytes. Printable ASCII, or characters of one UTF-8 width
    (2, 3 or 4 bytes, astral included) with an ASCII tail to the exact byte count,
    random so that compression cannot hide a limit. Sizes are 1 to 16,384; up to
    4,096 bytes the text is drawn character by character, above that (more than one
    Hypothesis example can draw) it is expanded from a drawn seed."""
    chosen = [
        check_int("a sizes item", size, min_value=1, max_value=_LONG_MAX_BYTES)
        for size in check_collection("sizes", sizes, allow_empty=False)
    ]
    return _long_texts(tuple(sorted(set(chosen))))


@functools.cache
def _long_texts(sizes: tuple[int, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(sizes).flatmap(_exact_byte_texts)
