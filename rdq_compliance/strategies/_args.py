"""Argument checks shared by the strategies: raise InvalidArgument when the
strategy function is called, as Hypothesis' own strategies do."""

from __future__ import annotations

from collections.abc import Collection

from hypothesis.errors import InvalidArgument


def check_int(name: str, value: object, *, min_value: int, max_value: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be an integer")
    if value < min_value or (max_value is not None and value > max_value):
        upper = "" if max_value is None else f" and at most {max_value}"
        raise InvalidArgument(f"{name}={value!r} must be at least {min_value}{upper}")
    return value


def check_range(
    min_name: str, min_value: object, max_name: str, max_value: object, *,
    least: int, most: int | None = None,
) -> tuple[int, int]:
    """A ``min_*``/``max_*`` pair: each an integer in ``least``..``most``, min <= max."""
    lo = check_int(min_name, min_value, min_value=least, max_value=most)
    hi = check_int(max_name, max_value, min_value=least, max_value=most)
    if lo > hi:
        raise InvalidArgument(
            f"{min_name}={lo!r} is greater than {max_name}={hi!r}; "
            f"expected {min_name} <= {max_name}"
        )
    return lo, hi


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True or False")
    return value


def check_collection(name: str, value: object, *, allow_empty: bool) -> tuple[object, ...]:
    # A str is a Collection of str; reject it so forbidden_keys="id" is not read as {"i", "d"}.
    if isinstance(value, str | bytes) or not isinstance(value, Collection):
        raise InvalidArgument(
            f"{name}={value!r} must be a collection (tuple, list, set or frozenset), "
            f"not {type(value).__name__}"
        )
    items = tuple(value)
    if not items and not allow_empty:
        raise InvalidArgument(f"{name}={value!r} must not be empty")
    return items
