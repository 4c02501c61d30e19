"""C1 truncation, by example and by property."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rdq_compliance import (
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
    truncate_message,
    truncate_stack,
    truncate_utf8,
)

MARKER = TRUNCATION_MARKER


def _size(s: str) -> int:
    return len(s.encode("utf-8"))


def test_marker_is_14_bytes() -> None:
    assert MARKER == "\u2026[truncated]"
    assert _size(MARKER) == 14


def test_examples() -> None:
    assert truncate_utf8("abc", 14) == "abc"
    assert truncate_utf8("a" * 15, 14) == MARKER
    assert truncate_utf8("a" * 16, 15) == "a" + MARKER
    # "é" is 2 bytes: with 1 byte of room nothing fits, with 2 it does
    assert truncate_utf8("é" * 9, 15) == MARKER
    assert truncate_utf8("é" * 9, 16) == "é" + MARKER
    assert truncate_utf8("😀😀😀😀😀", 17) == MARKER
    assert truncate_utf8("😀😀😀😀😀", 18) == "😀" + MARKER


def test_message_limits() -> None:
    assert truncate_message("m" * 4096) == "m" * 4096
    out = truncate_message("m" * 4097)
    assert out == "m" * (4096 - 14) + MARKER and _size(out) == 4096
    emoji = "😀" * 1100  # 4,400 bytes
    out = truncate_message(emoji)
    assert out == "😀" * 1020 + MARKER  # 4,080 + 14 bytes: the next one would not fit
    assert _size(out) == 4094
    assert truncate_stack("s" * STACK_LIMIT) == "s" * STACK_LIMIT
    assert _size(truncate_stack("é" * STACK_LIMIT)) == STACK_LIMIT


def test_value_at_limit_ending_with_marker_is_unchanged() -> None:
    s = "x" * (MESSAGE_LIMIT - 14) + MARKER
    assert truncate_message(s) is s
    longer = "x" + s
    assert truncate_message(longer) == "x" * (MESSAGE_LIMIT - 14) + MARKER


@pytest.mark.parametrize("limit", [13, 0, -1])
def test_limit_below_marker(limit: int) -> None:
    with pytest.raises(ValueError, match=f"limit={limit}"):
        truncate_utf8("", limit)


def test_lone_surrogate_is_an_error() -> None:
    with pytest.raises(ValueError):
        truncate_utf8("\ud800" * 10, 14)


text = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=200, deadline=None)
@given(s=text, limit=st.integers(min_value=14, max_value=80))
@example(s="x" * 66 + MARKER, limit=80)
@example(s="é" * 40, limit=15)
def test_properties(s: str, limit: int) -> None:
    out = truncate_utf8(s, limit)
    assert _size(out) <= limit  # within the limit
    assert truncate_utf8(out, limit) == out  # idempotent
    if _size(s) <= limit:
        assert out == s  # unchanged at or below the limit, even when ending with the marker
    else:
        assert out.endswith(MARKER)
        kept = out[: -len(MARKER)]
        assert s.startswith(kept)  # prefix-preserving, cut between code points
        # longest such prefix: one more code point would not fit
        assert _size(s[: len(kept) + 1]) + 14 > limit
    out.encode("utf-8")  # valid UTF-8: no half code point
