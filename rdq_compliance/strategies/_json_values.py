"""Strategies for JSON values (C5) and the maps of unknown fields that hold them
(C10), keys biased to traps."""

from __future__ import annotations

import functools
from collections.abc import Collection

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..envelope._model import JSONValue
from ._args import check_collection, check_int
from ._draws import TRAP_KEYS, field_map, json_value


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
