"""Strategies for the identifiers of an envelope: ids (canonical ULID text, C6) and
queue / handler_ref names (C8a)."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from ..envelope._ids import id_from_int
from ..envelope._limits import NAME_MAX_CHARS
from ._args import check_range
from ._draws import index

_NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789._-"


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
