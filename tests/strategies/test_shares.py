"""Branches that share one choice (strategies._draws style): each still comes up at its
share. Derandomized, so a share is the same on every run; the floors are far below the
shares measured and far above what a dead branch leaves."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdq_compliance import strategies as rs

T = TypeVar("T")
_SETTINGS = settings(max_examples=300, derandomize=True, database=None, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def _share(strategy: st.SearchStrategy[T], hit: Callable[[T], bool]) -> float:
    seen: list[bool] = []

    @_SETTINGS
    @given(strategy)
    def collect(value: T) -> None:
        seen.append(hit(value))

    collect()
    return sum(seen) / len(seen)


def test_timestamps_hit_the_999_fraction_of_a_second() -> None:
    """An hour without edges at .999: only the "whole second or .999" branch (a sixth of
    the draws) lands there often; any millisecond does one time in a thousand."""
    lo = datetime(2001, 1, 1, tzinfo=UTC)
    hi = datetime(2001, 1, 1, 1, tzinfo=UTC)
    share = _share(rs.timestamps(min_value=lo, max_value=hi),
                   lambda t: t.microsecond == 999_000)
    assert share >= 0.05, share


def test_attempts_and_errors_carry_unknown_fields_about_half_the_time() -> None:
    assert _share(rs.attempts(), lambda a: bool(a.extra)) >= 0.15
    errors = rs.errors()
    assert _share(errors, lambda e: bool(e.extra)) >= 0.15
    assert _share(errors, lambda e: not e.extra) >= 0.3


def test_json_values_are_scalars_arrays_and_objects_a_third_each_at_the_top() -> None:
    values = rs.json_values()
    for kind in (list, dict):
        assert _share(values, lambda v, k=kind: isinstance(v, k)) >= 0.15, kind
    assert _share(values, lambda v: not isinstance(v, list | dict)) >= 0.05
    # Below the top: containers and every scalar kind still come up.
    nested = st.lists(values, min_size=1, max_size=1).map(lambda v: v[0])
    assert _share(nested, lambda v: isinstance(v, list) and any(
        isinstance(x, list | dict) for x in v)) >= 0.02


def test_counters_are_small_at_an_end_or_any_a_third_each() -> None:
    numbers = rs.attempts().map(lambda a: a.attempt_no)
    assert _share(numbers, lambda n: n <= 10) >= 0.2
    assert _share(numbers, lambda n: n == 2**31 - 1) >= 0.03
    assert _share(numbers, lambda n: 10 < n < 2**31 - 1) >= 0.1
