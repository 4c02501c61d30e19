"""Strategies for header maps (C8): string to string, biased to the keys that
collide somewhere and to long values in the shapes gateways copy in."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from ._args import check_int
from ._draws import free_text, index, sizes, text_or
from ._shapes import HEADERS

_HEADER_KEYS = (
    "", "A", "a", "Content-Type", "content-type", "traceparent", "rdq.source",
    "rdq.submitted_by", "rdq.", "a.b", "a/b", "x~y", "__proto__", "$set", "\x00",
)  # fmt: skip


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
