"""The C14 name shapes of RDQ-ST-008 and RDQ-ST-006 (rdq_compliance/suites/_names.py):
every hazard the clause names is really present, on bases as long as Rdq.new_name makes."""

from __future__ import annotations

import re

import pytest

from rdq_compliance import NAMESPACE_PATTERN
from rdq_compliance.suites._names import _PAIRS, MAX_BASE, PAIRS, family


def _like(pattern: str, name: str) -> bool:
    """SQL LIKE without escapes: ``_`` is any one character, ``%`` any run."""
    regex = "".join("." if c == "_" else ".*" if c == "%" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, name) is not None


@pytest.mark.parametrize("base", ["t0123456789abc1", "t" + "f" * 19, "q", "t" * MAX_BASE])
def test_family_holds_every_hazard(base: str) -> None:
    names = family(base)
    values = list(names.values())
    assert len(set(values)) == len(values)
    assert all(NAMESPACE_PATTERN.fullmatch(n) for n in values)
    assert all(n.startswith(base) for n in values)  # all built on the unique base
    assert max(map(len, values)) == 40
    pairs = [(a, b) for a in values for b in values if a != b]
    # a prefix of another, as a name and as a 'name%' LIKE pattern
    assert (names["ab"], names["abc"]) in pairs and names["abc"].startswith(names["ab"])
    assert names["ab_c"].startswith(names["ab"])
    # LIKE look-alikes of equal length: '_' matches a letter of another name
    assert _like(names["a_c"], names["abc"]) and _like(names["__"], names["ab"])
    # equal in their first 32 characters, different after
    a, b = names["first32_a"], names["first32_b"]
    assert a[:32] == b[:32] == names["len32"] and a != b and len(a) == len(b) == 40
    assert names["len40"].startswith(names["len39"])


def test_pairs_are_distinct_and_alike() -> None:
    assert PAIRS[0] == "unrelated" and set(PAIRS[1:]) == set(_PAIRS)
    base = "t0123456789abc1"
    for shape, make in _PAIRS.items():
        first, second = make(base)
        assert first != second, shape
        assert NAMESPACE_PATTERN.fullmatch(first) and NAMESPACE_PATTERN.fullmatch(second)


@pytest.mark.parametrize("base", ["t" * (MAX_BASE + 1), "T1", "", "1abc"])
def test_family_refuses_a_base_it_cannot_build_on(base: str) -> None:
    with pytest.raises(ValueError, match="cannot carry the C14 name shapes"):
        family(base)
