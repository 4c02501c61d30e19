"""Strategies for the scalar values of an envelope: ids, names, timestamps,
free text, truncated text, headers, payloads and JSON values."""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..envelope._ids import id_from_int
from ..envelope._limits import (
    NAME_MAX_CHARS,
    TRUNCATION_MARKER,
)
from ..envelope._model import JSONValue
from ..envelope._truncate import truncate_utf8
from ._args import check_collection, check_int, check_range
from ._draws import (
    TRAP_KEYS,
    field_map,
    free_text,
    index,
    json_value,
    sizes,
    text_or,
)
from ._shapes import HEADERS

_NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789._-"
_MARKER_BYTES = len(TRUNCATION_MARKER.encode("utf-8"))

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LAST_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


# Instants that real stores get wrong: range ends, leap days, 32-bit second
# counters (2038, 2106), int64 nanoseconds (2262, Go's UnixNano), .000/.999.
_TIMESTAMP_EDGES = tuple(
    _ts(t)
    for t in (
        "1970-01-01T00:00:00.000Z",
        "1970-01-01T00:00:00.001Z",
        "1972-02-29T12:00:00.000Z",
        "1999-12-31T23:59:59.999Z",
        "2000-02-29T00:00:00.000Z",
        "2024-02-29T23:59:59.999Z",
        "2038-01-19T03:14:07.999Z",
        "2038-01-19T03:14:08.000Z",
        "2106-02-07T06:28:15.999Z",
        "2262-04-11T23:47:16.854Z",
        "9996-02-29T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
    )
)

_HEADER_KEYS = (
    "", "A", "a", "Content-Type", "content-type", "traceparent", "rdq.source",
    "rdq.submitted_by", "rdq.", "a.b", "a/b", "x~y", "__proto__", "$set", "\x00",
)  # fmt: skip

_MULTIBYTE = ("\u0080", "\u00e9", "\u0800", "\u20ac", "\uffff", "\U0001f600", "\U0010ffff")


@functools.cache
def integers_between(lo: int, hi: int) -> st.SearchStrategy[int]:
    """``st.integers(lo, hi)``, built once per range: composites that draw a bound
    they just computed would otherwise build a new strategy on every draw."""
    return st.integers(lo, hi)


def ids() -> st.SearchStrategy[str]:
    """Canonical ULID text (C6): 26 upper-case Crockford base32 characters, the
    first one ``0``–``7``. Biased to the smallest and largest ULID."""
    return _IDS


_ID_ENDS = st.sampled_from(("0" * 26, "7" + "Z" * 25))
_ID_NUMBERS = st.integers(0, 2**128 - 1)


def draw_id(draw: st.DrawFn) -> str:
    """:func:`ids`, inline: one of the two ends or any ULID, one half each."""
    if draw(index(2)) == 0:
        end: str = draw(_ID_ENDS)
        return end
    return id_from_int(draw(_ID_NUMBERS))


@st.composite
def _ids(draw: st.DrawFn) -> str:
    return draw_id(draw)


_IDS = _ids()


def names(*, min_size: int = 1, max_size: int = NAME_MAX_CHARS) -> st.SearchStrategy[str]:
    """Queue / handler_ref names (C8a): ``min_size``..``max_size`` characters of
    ``[a-z0-9._-]`` (1..240 by default), biased to the shortest and longest."""
    return _names(*check_range("min_size", min_size, "max_size", max_size,
                               least=1, most=NAME_MAX_CHARS))


@functools.cache
def name_texts(min_size: int, max_size: int) -> tuple[st.SearchStrategy[str], ...]:
    """Any length, the shortest, the longest: a third each (see :func:`draw_name`)."""
    return (
        st.text(_NAME_ALPHABET, min_size=min_size, max_size=max_size),
        st.text(_NAME_ALPHABET, min_size=min_size, max_size=min_size),
        st.text(_NAME_ALPHABET, min_size=max_size, max_size=max_size),
    )


def draw_name(draw: st.DrawFn, min_size: int = 1, max_size: int = NAME_MAX_CHARS) -> str:
    """:func:`names`, inline."""
    name: str = draw(name_texts(min_size, max_size)[draw(index(3))])
    return name


@functools.cache
def _names(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return _names_drawn(min_size, max_size)


@st.composite
def _names_drawn(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    return draw_name(draw, min_size, max_size)


def _check_instant(name: str, value: object) -> datetime:
    if (
        not isinstance(value, datetime)
        or value.utcoffset() is None
        or value.utcoffset().total_seconds() != 0  # type: ignore[union-attr]
        or value.microsecond % 1000
        or not EPOCH <= value <= LAST_INSTANT
    ):
        raise InvalidArgument(
            f"{name}={value!r} must be an aware UTC datetime with millisecond precision "
            f"between {EPOCH.isoformat()} and {LAST_INSTANT.isoformat()}"
        )
    return value.astimezone(UTC)


def timestamps(
    *, min_value: datetime = EPOCH, max_value: datetime = LAST_INSTANT
) -> st.SearchStrategy[datetime]:
    """Aware UTC datetimes at millisecond precision (C3), 1970-01-01T00:00:00.000Z
    to 9999-12-31T23:59:59.999Z by default, biased to the range ends, leap days,
    ``.000``/``.999`` fractions and the overflow points of 32-bit seconds and
    64-bit nanoseconds (2038, 2106, 2262)."""
    lo = _check_instant("min_value", min_value)
    hi = _check_instant("max_value", max_value)
    if lo > hi:
        raise InvalidArgument(f"min_value={min_value!r} is after max_value={max_value!r}")
    return _timestamps(lo, hi)


def _ms(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(milliseconds=1)


@functools.cache
def _timestamps(lo: datetime, hi: datetime) -> st.SearchStrategy[datetime]:
    # Milliseconds since the epoch: one draw per instant instead of one per
    # calendar field, which matters when the kit generates thousands.
    return _timestamps_from(TimestampDraw.of(lo, hi))


class TimestampDraw:
    """One instant in ``lo``..``hi``, drawn inline by a composite (see ``_draws``): an
    edge, any millisecond, or a whole second or ``.999`` (the fractions a store drops
    or rounds up), a third each (the branches of the one_of this replaced)."""

    __slots__ = ("edges", "hi_ms", "lo_ms", "millis", "seconds")

    def __init__(self, lo_ms: int, hi_ms: int, edges: st.SearchStrategy[datetime]) -> None:
        self.lo_ms, self.hi_ms, self.edges = lo_ms, hi_ms, edges
        self.millis = st.integers(lo_ms, hi_ms)
        # A whole second or its .999, both in one choice: twice the second, plus one.
        self.seconds = st.integers(lo_ms // 1000 * 2, hi_ms // 1000 * 2 + 1)

    @staticmethod
    @functools.cache
    def of(lo: datetime, hi: datetime) -> TimestampDraw:
        edges = [t for t in (lo, hi, *_TIMESTAMP_EDGES) if lo <= t <= hi]
        return TimestampDraw(_ms(lo), _ms(hi), st.sampled_from(edges))

    def __call__(self, draw: st.DrawFn) -> datetime:
        return self.at(draw, draw(index(3)))

    def at(self, draw: st.DrawFn, kind: int) -> datetime:
        """The instant of branch ``kind`` (0-2)."""
        if kind == 0:
            moment: datetime = draw(self.edges)
            return moment
        if kind == 1:
            return EPOCH + timedelta(milliseconds=draw(self.millis))
        second, fraction = divmod(draw(self.seconds), 2)
        ms = second * 1000 + 999 * fraction
        return EPOCH + timedelta(milliseconds=min(max(ms, self.lo_ms), self.hi_ms))


@st.composite
def _timestamps_from(draw: st.DrawFn, instant: TimestampDraw) -> datetime:
    return instant(draw)


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


def header_maps(*, max_size: int = 6) -> st.SearchStrategy[dict[str, str]]:
    """Header maps (C8): string to string, at most ``max_size`` entries, biased to
    ``{}``, the empty key, case-distinct keys ("A"/"a"), dotted and ``rdq.`` keys, and
    long values in real shapes (a bearer JWT, W3C ``tracestate``/``baggage``, a cookie:
    0.6 to 1.7 KB)."""
    check_int("max_size", max_size, min_value=0)
    return _header_maps(max_size)


@functools.cache
def _header_maps(max_size: int) -> st.SearchStrategy[dict[str, str]]:
    return _header_maps_drawn(max_size)


@st.composite
def _header_maps_drawn(draw: st.DrawFn, max_size: int) -> dict[str, str]:
    return draw_header_map(draw, max_size)


_HEADER_KEY_VALUES = st.sampled_from(_HEADER_KEYS)
_HEADER_PAIRS = st.sampled_from(HEADERS)


def draw_header_map(draw: st.DrawFn, max_size: int = 6) -> dict[str, str]:
    """:func:`header_maps`, inline: ``{}``, any map, a map with "A" and "a", or a map with
    one long header in a real shape, a quarter each (``{}`` or any map, a half each,
    below two entries)."""
    kind = draw(index(4 if max_size >= 2 else 2))
    if kind == 0:
        return {}
    headers: dict[str, str] = {}
    for _ in range(draw(sizes(max_size))):
        key: str = text_or(draw, _HEADER_KEY_VALUES, 1, 0, 12)
        if key not in headers:
            headers[key] = free_text(draw, 0, 24)
    if kind == 1:
        return headers
    if kind == 2:
        upper, lower = free_text(draw, 0, 8), free_text(draw, 0, 8)
        return {**dict(list(headers.items())[: max_size - 2]), "A": upper, "a": lower}
    # Long values as gateways copy them in (a bearer JWT, W3C trace context, cookies).
    name, value = draw(_HEADER_PAIRS)
    return {**dict(list(headers.items())[: max_size - 1]), name: value}


def payloads(*, max_size: int = 512) -> st.SearchStrategy[bytes]:
    """Payload bytes (C7): any byte sequence of at most ``max_size`` bytes, biased
    to the empty payload, 1–3 bytes (every base64 padding case) and all 256 byte
    values in order."""
    check_int("max_size", max_size, min_value=0)
    return _payloads(max_size)


@functools.cache
def _payloads(max_size: int) -> st.SearchStrategy[bytes]:
    return _payloads_drawn(max_size)


@functools.cache
def payload_choices(max_size: int) -> tuple[st.SearchStrategy[bytes], ...]:
    """The empty payload, any, 1-3 bytes, all 256 byte values: an equal share each."""
    choices: list[st.SearchStrategy[bytes]] = [st.just(b""), st.binary(max_size=max_size)]
    if max_size >= 1:
        choices.append(st.binary(min_size=1, max_size=min(3, max_size)))
    if max_size >= 256:
        choices.append(st.just(bytes(range(256))))
    return tuple(choices)


def draw_payload(draw: st.DrawFn, max_size: int) -> bytes:
    """:func:`payloads`, inline (the constant payloads without a draw of their own)."""
    choices = payload_choices(max_size)
    i = draw(index(len(choices)))
    if i == 0:
        return b""
    if i == 3:
        return bytes(range(256))
    payload: bytes = draw(choices[i])
    return payload


@st.composite
def _payloads_drawn(draw: st.DrawFn, max_size: int) -> bytes:
    return draw_payload(draw, max_size)


def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[JSONValue]:
    """JSON values as unknown fields and ``detail`` hold them (C5, C10): null,
    booleans, integers across int64 (biased to its bounds and 2**53±1), finite
    doubles (biased to -0.0, 5e-324, 1e308, 0.1 and integral doubles like 1.0),
    free text, and arrays/objects nested up to ``max_leaves`` scalars."""
    check_int("max_leaves", max_leaves, min_value=1)
    return _json_values(max_leaves)


@functools.cache
def _json_values(max_leaves: int) -> st.SearchStrategy[JSONValue]:
    return _json_values_drawn(max_leaves)


@st.composite
def _json_values_drawn(draw: st.DrawFn, max_leaves: int) -> JSONValue:
    return json_value(draw, max_leaves)


def unknown_field_maps(
    *, forbidden_keys: Collection[str], max_size: int = 3, max_leaves: int = 6
) -> st.SearchStrategy[dict[str, JSONValue]]:
    """Maps of unknown fields (C10) for an object whose known keys are
    ``forbidden_keys``: at most ``max_size`` entries of :func:`json_values`.
    Keys are biased to traps: "", "__proto__", "$set", "a.b", "payload_ref" and
    the known field names of the other envelope objects."""
    forbidden = check_collection("forbidden_keys", forbidden_keys, allow_empty=True)
    if not all(isinstance(key, str) for key in forbidden):
        raise InvalidArgument(f"forbidden_keys={forbidden_keys!r} must hold only strings")
    check_int("max_size", max_size, min_value=0)
    check_int("max_leaves", max_leaves, min_value=1)
    return _unknown_field_maps(frozenset(forbidden), max_size, max_leaves)


@functools.cache
def _unknown_field_maps(
    banned: frozenset[str], max_size: int, max_leaves: int
) -> st.SearchStrategy[dict[str, JSONValue]]:
    return _field_maps(traps_without(banned), banned, max_size, max_leaves)


@functools.cache
def traps_without(banned: frozenset[str]) -> st.SearchStrategy[str] | None:
    traps = [key for key in TRAP_KEYS if key not in banned]
    return st.sampled_from(traps) if traps else None


@st.composite
def _field_maps(
    draw: st.DrawFn, traps: st.SearchStrategy[str] | None, banned: frozenset[str],
    max_size: int, max_leaves: int,
) -> dict[str, JSONValue]:  # fmt: skip
    return field_map(draw, traps, banned, max_size, max_leaves)
