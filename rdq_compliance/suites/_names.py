"""Namespace names of every shape C14 allows, built on a test's own unique name.

C14: every name matching ``[a-z][a-z0-9_]{0,39}`` is a namespace of its own, including
names that are prefixes of one another, that differ only after the 32nd character, or
that match one another as SQL ``LIKE`` patterns (``_`` is the single-character
wildcard there, an ordinary character in a name).

Servers are shared with other kit runs, so every name written to or dropped here
starts with a name from ``Rdq.new_name()`` (unique per test and run) and is claimed
for teardown (``Rdq.claim_name``): a plugin that drops by prefix or by ``LIKE`` then
destroys only this test's own data. Names shorter than that unique part (a single
character) are never written or dropped; see ``test_namespaces.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from rdq_compliance import NAMESPACE_PATTERN
from rdq_compliance.testing import Rdq

__all__ = ["MAX_BASE", "PAIRS", "claimed_family", "family", "pair"]

MAX_LEN = 40
MAX_BASE = 24
"""The longest unique base the shapes can be built on (room for the 8 characters
that follow the first 32)."""


def _pad(base: str, length: int, fill: str) -> str:
    return (base + fill * MAX_LEN)[:length]


def _check_base(base: str) -> None:
    if len(base) > MAX_BASE or not NAMESPACE_PATTERN.fullmatch(base):
        raise ValueError(
            f"base name={base!r} cannot carry the C14 name shapes: expected a valid name "
            f"of at most {MAX_BASE} characters (Rdq.new_name)"
        )


def family(base: str) -> dict[str, str]:
    """Shape label -> name: one set in which every hazard of C14 occurs at least once.

    - prefixes: ``base`` < ``base ab`` < ``base abc``; ``base ab`` < ``base ab_c``;
      ``base _`` < ``base __``; the 39-character name < the 40-character name;
      the 32-character name < both names that extend it;
    - ``LIKE`` patterns: ``base a_c`` matches ``base abc``, ``base __`` matches
      ``base ab``, ``base _`` as a prefix pattern (``base _%``) matches all longer names;
    - equal in the first 32 characters: ``first32_a`` and ``first32_b`` (40 characters);
    - digits, ``_`` at the end, the maximum length.
    """
    _check_base(base)
    at32 = _pad(base, 32, "q")
    at40 = _pad(base, MAX_LEN, "x")
    names = {
        "base": base,
        "ab": base + "ab",
        "abc": base + "abc",
        "ab_c": base + "ab_c",
        "a_c": base + "a_c",
        "_": base + "_",
        "__": base + "__",
        "digits": _pad(base + "0123456789", MAX_LEN, "9"),
        "len40": at40,
        "len39": at40[:39],
        "len32": at32,
        "first32_a": at32 + "a" * 8,
        "first32_b": at32 + "b" * 8,
    }
    assert len(set(names.values())) == len(names), names
    for name in names.values():
        assert NAMESPACE_PATTERN.fullmatch(name), name
    return names


_PAIRS: dict[str, Callable[[str], tuple[str, str]]] = {
    "prefix": lambda base: (base + "ab", base + "ab_c"),
    "like": lambda base: (base + "abc", base + "a_c"),
    "first32": lambda base: (_pad(base, 32, "q") + "a" * 8, _pad(base, 32, "q") + "b" * 8),
    "len40_len39": lambda base: (_pad(base, MAX_LEN, "x"), _pad(base, 39, "x")),
}
# Hypothesis shrinks a sampled_from towards the first element: a failure that also
# happens with two unrelated names is shown with them.
PAIRS: tuple[str, ...] = ("unrelated", *_PAIRS)
"""Two-namespace shapes for the state machine (RDQ-ST-006)."""


def pair(rdq: Rdq, shape: str) -> list[str]:
    """Two namespace names of ``shape`` (one of :data:`PAIRS`), claimed for teardown."""
    if shape == "unrelated":
        return [rdq.new_name(), rdq.new_name()]
    base = rdq.new_name()
    _check_base(base)
    names = [rdq.claim_name(n) for n in _PAIRS[shape](base)]
    rdq.forget_name(base)  # never opened: only the two names built on it are used
    return names


def claimed_family(rdq: Rdq) -> dict[str, str]:
    """:func:`family` on a fresh unique base, every name claimed for teardown."""
    return {label: rdq.claim_name(n) for label, n in family(rdq.new_name()).items()}
