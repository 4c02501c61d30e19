"""envelopes_of_other_versions draws an allowed version without a filter: a number among
as many as are allowed, moved past the banned ones (strategies._envelopes._skip_past)."""

from __future__ import annotations

import itertools

from hypothesis import find, settings

from rdq_compliance import strategies as rs
from rdq_compliance.strategies._envelopes import _skip_past


def test_skip_past_maps_onto_exactly_the_allowed_numbers() -> None:
    for k in range(5):
        for banned in itertools.combinations(range(8), k):
            mapped = [_skip_past(banned, v) for v in range(12 - k)]
            assert mapped == [v for v in range(12) if v not in banned], banned


def test_a_banned_small_version_is_never_drawn() -> None:
    """Hypothesis draws the small numbers first: 0, 1, 2 come up at once if mapped wrong."""
    versions = rs.envelopes_of_other_versions(exclude=(0, 1, 2)).map(
        lambda e: e.envelope_version)
    small = find(versions, lambda v: v < 10, settings=settings(database=None))
    assert small == 3
