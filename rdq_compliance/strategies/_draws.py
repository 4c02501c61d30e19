"""One-pass drawing of the values every envelope is made of (issue 25).

Hypothesis charges every nested strategy a ``data.draw`` (a span, a label, a check of
the strategy) and every ``one_of`` three of them (itself, its branch index, the
branch). An envelope drawn through nested ``one_of``/``lists``/``recursive``
strategies cost about 250 draws and 250 choices; most of the time of a kit run went
there. The helpers below take a composite's ``draw`` and draw the same values from
primitive strategies only (integers, booleans, sampled_from, text), inline, without
a span per level: a branch is one integer choice among the same branches with the
same weights, a free text with its spliced pieces is two text choices instead of a
list of ``one_of``s, a JSON value is built by one recursive function with a leaf
budget instead of ``st.recursive``, a map of unknown fields draws its size once. No
value is rejected: a key already in the map (or a known field's name) is skipped.

Every helper keeps the values and the biases of the strategy it replaces (see the
strategies' docstrings and tests/strategies): the same trap fragments and keys, the
same number edges, the same branch shares.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from ..envelope._limits import INT64_MAX, INT64_MIN, MAX_KNOWN_INT, TRUNCATION_MARKER
from ..envelope._model import JSONValue
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

# Pieces of text that break stores: U+0000, astral and the last scalar value,
# combining sequences (NFD next to NFC), bidi controls, odd whitespace, the
# truncation marker, the code points around the surrogate block, and strings
# that look like JSON, SQL, null or template syntax.
TEXT_FRAGMENTS = (
    "\x00", "\U0001f600", "\U0010ffff", "\U0001d11e", "\U0001f468\u200d\U0001f469",
    "e\u0301", "\u00e9", "\u212b", "\u1100\u1161", "\u0627\u0644\u062e\u0637\u0623",
    "\u05e9\u05dc\u05d5\u05dd", "\u202e", "\u200f", " ", "  ", "\t", "\n", "\r\n", "\u00a0",
    "\u2028", "\u2029", "\u3000", "\ufeff", "\ufffe", "\uffff", "\ud7ff", "\ue000",
    TRUNCATION_MARKER, "\u2026", "null", "NULL", "undefined", "true", "0", "{}", "[]",
    '{"a": 1}', "'; DROP TABLE tasks; --", '"', "\\", "%s%n", "${jndi:x}", "$set",
    "__proto__", "A", "a", ".", "/", "~",
)  # fmt: skip

# Keys that collide with something somewhere: the empty key, JS prototype
# names, Mongo operators, dotted paths, pointer escapes, the reserved
# payload_ref and the known field names of every envelope object.
TRAP_KEYS = tuple(
    dict.fromkeys(
        (
            "", "__proto__", "constructor", "prototype", "toString", "hasOwnProperty",
            "$set", "$where", "a.b", "a/b", "x~y", "payload_ref", " ", "\x00", "ID", "Status",
            *ENVELOPE_FIELDS, *ATTEMPT_FIELDS, *ERROR_FIELDS,
        )
    )
)  # fmt: skip

INT_EDGES = (
    INT64_MIN, INT64_MAX, 2**53 + 1, -(2**53 + 1), 2**53, 2**53 - 1, -(2**53),
    MAX_KNOWN_INT, MAX_KNOWN_INT + 1, 2**32, -1, 0, 1,
)  # fmt: skip
FLOAT_EDGES = (
    -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e308, 1.7976931348623157e308,
    -1.7976931348623157e308, 0.1, 0.30000000000000004, 1.0, -1.0, 1e21, 1e-7,
    9007199254740992.0, 1.5,
)  # fmt: skip

# Every Unicode scalar value: all code points but the surrogates (C4). The same
# set as st.text()'s default alphabet, characters(codec="utf-8"), which however
# builds (and caches in ./.hypothesis/) a table of the whole code space on its
# first draw: about 1 s and 200 MB in every fresh checkout and xdist worker.
SCALARS: st.SearchStrategy[str] = st.characters(exclude_categories=["Cs"])

BOOLEANS = st.booleans()


@functools.cache
def index(n: int) -> st.SearchStrategy[int]:
    """The branch index of a ``one_of`` of ``n`` branches: the same choice
    (an integer in 0..n-1, as sampled_from draws it) without the one_of's spans."""
    return st.integers(0, n - 1)


@functools.cache
def integers_between(lo: int, hi: int) -> st.SearchStrategy[int]:
    """``st.integers(lo, hi)``, built once per range: composites that draw a bound
    they just computed would otherwise build a new strategy on every draw."""
    return st.integers(lo, hi)


@functools.cache
def plain_texts(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return st.text(SCALARS, min_size=min_size, max_size=max_size)


# A spliced text's pieces: up to six fragments (one character of this alphabet each:
# U+0000 + i is TEXT_FRAGMENTS[i]) and the random characters between them, two text
# choices where a list of one_of(fragment, text) took three or four per piece.
_FRAGMENT_CODES = st.text(
    st.characters(min_codepoint=0, max_codepoint=len(TEXT_FRAGMENTS) - 1), max_size=6
)
_GLUE = st.text(SCALARS, max_size=6)
_GLUE_PER_PIECE = 2


def spliced_text(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    """Fragments of TEXT_FRAGMENTS with random scalar values before, between and after
    them (a piece of glue of up to two characters before each fragment, the rest of
    the glue after the last), cut to ``max_size`` and padded to ``min_size``."""
    codes = draw(_FRAGMENT_CODES)
    glue = draw(_GLUE)
    parts = []
    at = 0
    for code in codes:
        parts.append(glue[at:at + _GLUE_PER_PIECE])
        parts.append(TEXT_FRAGMENTS[ord(code)])
        at += _GLUE_PER_PIECE
    parts.append(glue[at:])
    text = "".join(parts)[:max_size]
    if len(text) < min_size:
        text += draw(plain_texts(min_size - len(text), min_size - len(text)))
    return text


def free_text(draw: st.DrawFn, min_size: int, max_size: int) -> str:
    """:func:`free_texts`, inline: plain text or spliced, one half each."""
    if draw(BOOLEANS):
        return spliced_text(draw, min_size, max_size)
    return draw(plain_texts(min_size, max_size))


def text_or(draw: st.DrawFn, others: st.SearchStrategy[Any] | None, n_others: int,
            min_size: int, max_size: int) -> Any:
    """``one_of(others..., free_texts(...))`` with ``n_others`` flattened branches in
    ``others`` drawn first (as Hypothesis flattens nested one_ofs: plain text and spliced
    text are a branch each): returns a value of ``others`` (drawn from it, or from
    ``others`` as a sampled_from when it is one) or a free text."""
    i = draw(index(n_others + 2))
    if i < n_others:
        assert others is not None
        return draw(others)
    if i == n_others:
        return draw(plain_texts(min_size, max_size))
    return spliced_text(draw, min_size, max_size)


# -- JSON values -------------------------------------------------------------------------

_INT_EDGE_VALUES = st.sampled_from(INT_EDGES)
_INT64 = st.integers(INT64_MIN, INT64_MAX)
_FLOAT_EDGE_VALUES = st.sampled_from(FLOAT_EDGES)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)
_TRAPS = st.sampled_from(TRAP_KEYS)
_SCALAR_BRANCHES = 8  # null, bool, int edge, int64, float edge, float, text, spliced text


def json_scalar(draw: st.DrawFn, kind: int | None = None) -> JSONValue:
    """A scalar as json_values draws it: null, a boolean, an int64 edge or any int64, a
    float edge or any finite double, or a free text of up to 12 characters (``kind``,
    0-7 in that order, when the caller drew it)."""
    if kind is None:
        kind = draw(index(_SCALAR_BRANCHES))
    if kind == 0:
        return None
    if kind == 1:
        return draw(BOOLEANS)
    if kind == 2:
        return draw(_INT_EDGE_VALUES)
    if kind == 3:
        return draw(_INT64)
    if kind == 4:
        return draw(_FLOAT_EDGE_VALUES)
    if kind == 5:
        return draw(_FLOATS)
    if kind == 6:
        return draw(plain_texts(0, 12))
    return spliced_text(draw, 0, 12)


def json_key(draw: st.DrawFn) -> str:
    """A key of a generated object: a trap key, or a free text of up to 8 characters."""
    key: str = text_or(draw, _TRAPS, 1, 0, 8)
    return key


def json_value(draw: st.DrawFn, max_leaves: int) -> JSONValue:
    """A JSON value of at most ``max_leaves`` scalars: at the top a scalar, an array or
    an object, a third each (the three branches of the recursive one_of this replaces),
    below it a container one time in three; arrays and objects of up to four items.
    Keys drawn twice in one object keep the last value."""
    budget = [max_leaves]
    return _json(draw, budget, _TOP)


# What comes next is one choice: the branch (at the top a scalar, an array or an object,
# a third each; below it an array, an object or four scalar branches) and, in the same
# number, the scalar's kind or the container's size: 40 numbers a branch, each kind 5 of
# them and each size 8, the weights of a branch, then a kind or a size drawn apart.
_PER_BRANCH = _SCALAR_BRANCHES * 5
_TOP = 3  # scalar, array, object
_NESTED = 6  # scalar, array, object, then three more scalars


def _json(draw: st.DrawFn, budget: list[int], branches: int) -> JSONValue:
    if budget[0] <= 1:
        budget[0] -= 1
        return json_scalar(draw)
    branch, rest = divmod(draw(index(branches * _PER_BRANCH)), _PER_BRANCH)
    if branch not in (1, 2):
        budget[0] -= 1
        return json_scalar(draw, rest % _SCALAR_BRANCHES)
    kind, size = branch, rest % 5
    if kind == 2:
        obj: dict[str, JSONValue] = {}
        for _ in range(size):
            if budget[0] <= 0:
                break
            key = json_key(draw)
            obj[key] = _json(draw, budget, _NESTED)
        return obj
    items: list[JSONValue] = []
    for _ in range(size):
        if budget[0] <= 0:
            break
        items.append(_json(draw, budget, _NESTED))
    return items


@functools.cache
def sizes(max_size: int) -> st.SearchStrategy[int]:
    return st.integers(0, max_size)


def field_map(draw: st.DrawFn, traps: st.SearchStrategy[str] | None, banned: frozenset[str],
              max_size: int, max_leaves: int, size: int | None = None) -> dict[str, JSONValue]:
    """Unknown fields: up to ``max_size`` entries (``size`` when the caller drew it),
    keys a trap (``traps``, a sampled_from without the banned keys) or a free text of
    up to 12 characters, values JSON values of at most ``max_leaves`` leaves. A banned
    or repeated key is skipped, never drawn again."""
    out: dict[str, JSONValue] = {}
    n_traps = 0 if traps is None else 1
    for _ in range(draw(sizes(max_size)) if size is None else size):
        key: str = text_or(draw, traps, n_traps, 0, 12)
        if key not in banned and key not in out:
            out[key] = json_value(draw, max_leaves)
    return out
