"""Truncation limits (C1): values at the limits, multi-byte cuts, look-alike markers.

The kit builds the values with the core's truncate functions and asserts their
byte sizes first, so a test can only fail because of the plugin.
"""

from __future__ import annotations

import pytest

from rdq_compliance import (
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
    Envelope,
    truncate_message,
    truncate_stack,
)
from rdq_compliance.strategies import free_texts, truncated_texts
from rdq_compliance.testing import Rdq, base_envelope, requirement, with_error

_LIMITS = {"message": MESSAGE_LIMIT, "stack": STACK_LIMIT}


def _exactly(nbytes: int, unit: str) -> str:
    """``unit`` repeated, padded with 'a' at the front, exactly ``nbytes`` UTF-8 bytes."""
    width = len(unit.encode("utf-8"))
    text = "a" * (nbytes % width) + unit * (nbytes // width)
    assert len(text.encode("utf-8")) == nbytes
    return text


def _envelope(n: int, field: str, value: str) -> Envelope:
    assert len(value.encode("utf-8")) <= _LIMITS[field]  # the kit's own precondition
    return with_error(base_envelope(n), **{field: value})


_UNITS = {"ascii": "m", "2-byte": "\u00e9", "3-byte": "\u20ac", "4-byte": "\U0001f600"}


# ``unit-field`` -> (field, the value of exactly its limit). Values as parameters: a
# stack at its limit makes an envelope past 64 KiB, which runs after RDQ-ST-005's tests
# (``_ordering.carried``), so that a store capped at 64 KiB fails those first.
_AT_LIMIT = {f"{name}-{field}": (field, _exactly(limit, unit))
             for name, unit in _UNITS.items() for field, limit in _LIMITS.items()}


@requirement("RDQ-TR-001")
@pytest.mark.parametrize(("field", "value"), list(_AT_LIMIT.values()), ids=list(_AT_LIMIT))
def test_value_at_exact_limit_is_kept(rdq: Rdq, field: str, value: str) -> None:
    """RDQ-TR-001 (C1): error.message of exactly 4,096 bytes and error.stack of exactly
    65,536 bytes round-trip unchanged (a value at its limit is never truncated)."""
    rdq.namespace().roundtrip(_envelope(11, field, value))


_CUTS = {
    # what the producer had -> what it stores: the marker-suffixed value at the limit
    "ascii": "x" * 100_000,
    "2-byte-at-cut": "a" + "\u00e9" * 40_000,
    "3-byte-at-cut": "\u20ac" * 30_000,
    "4-byte-at-cut": "ab" + "\U0001f600" * 20_000,
    "combining-at-cut": "e\u0301" * 30_000,
}


@requirement("RDQ-TR-002")
@pytest.mark.parametrize("field", list(_LIMITS))
@pytest.mark.parametrize("source", list(_CUTS.values()), ids=list(_CUTS))
def test_truncated_value_is_kept(rdq: Rdq, field: str, source: str) -> None:
    """RDQ-TR-002 (C1, C4): a value truncated on a code point boundary (multi-byte
    characters at the cut, ending with the marker) round-trips unchanged."""
    value = truncate_message(source) if field == "message" else truncate_stack(source)
    assert value.endswith(TRUNCATION_MARKER)
    assert _LIMITS[field] - 4 < len(value.encode("utf-8")) <= _LIMITS[field]
    rdq.namespace().roundtrip(_envelope(12, field, value))


@requirement("RDQ-TR-002", kind="property")
def test_generated_truncated_values_are_kept(rdq: Rdq) -> None:
    """RDQ-TR-002 (C1, C4): generated truncated values for message and stack."""
    ns = rdq.namespace()

    def roundtrip(message: str, stack: str) -> None:
        ns.roundtrip(with_error(base_envelope(13), message=message, stack=stack))

    rdq.for_all(
        roundtrip, budget="heavy",
        message=truncated_texts(limit=MESSAGE_LIMIT), stack=truncated_texts(limit=STACK_LIMIT),
    )


_LOOKALIKES = {
    "short": "boom" + TRUNCATION_MARKER,
    "marker-only": TRUNCATION_MARKER,
    "twice": TRUNCATION_MARKER * 2,
    "marker-then-text": TRUNCATION_MARKER + " (not truncated)",
    "at-limit": None,  # built per field below: exactly the limit, ending with the marker
}


def _lookalike_cases() -> dict[str, tuple[str, str]]:
    """``kind-field`` -> (field, value). The values are parameters, so that the at-limit
    ones (4,096 and 65,536 bytes) run after the tests of the limits they reach
    (RDQ-TR-001; past 64 KiB, RDQ-ST-005): ``_ordering.carried``."""
    cases: dict[str, tuple[str, str]] = {}
    marker_bytes = len(TRUNCATION_MARKER.encode("utf-8"))
    for kind, value in _LOOKALIKES.items():
        for field, limit in _LIMITS.items():
            cases[f"{kind}-{field}"] = (
                field, value if value is not None
                else _exactly(limit - marker_bytes, "z") + TRUNCATION_MARKER)
    return cases


_LOOKALIKE_CASES = _lookalike_cases()


@requirement("RDQ-TR-003")
@pytest.mark.parametrize(("field", "value"), list(_LOOKALIKE_CASES.values()),
                         ids=list(_LOOKALIKE_CASES))
def test_value_ending_with_marker_is_kept(rdq: Rdq, field: str, value: str) -> None:
    """RDQ-TR-003 (C1): values at or under the limit that merely end with (or hold) the
    marker are stored unchanged: no second marker, no stripping."""
    rdq.namespace().roundtrip(_envelope(14, field, value))


@requirement("RDQ-TR-003", kind="property")
def test_generated_marker_lookalikes_are_kept(rdq: Rdq) -> None:
    """RDQ-TR-003 (C1): generated short values ending with the marker (free text of any
    Unicode scalar values, leaning to U+0000, astral characters and the marker itself)."""
    ns = rdq.namespace()

    def roundtrip(text: str) -> None:
        value = text + TRUNCATION_MARKER
        ns.roundtrip(with_error(base_envelope(15), message=value, stack=value))

    rdq.for_all(roundtrip, budget="targeted", text=free_texts(max_size=40))
