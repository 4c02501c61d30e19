"""Strategies for payload bytes (C7): any byte sequence, biased to the empty
payload, every base64 padding case and all 256 byte values."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from ._args import check_int
from ._draws import index


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
