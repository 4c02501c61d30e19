"""``@requirement``: its arguments are checked when the suite module is imported."""

from __future__ import annotations

import pytest

from rdq_compliance.testing import requirement
from rdq_compliance.testing._marker import MARKER


def _check() -> None:
    """RDQ-UF-001 (C10): a stand-in test body."""


def test_carries_is_recorded_on_the_marker() -> None:
    marked = requirement("RDQ-UF-001", carries=("RDQ-RT-006", "RDQ-RT-010"))(_check)
    (mark,) = [m for m in marked.pytestmark if m.name == MARKER]  # type: ignore[attr-defined]
    assert mark.kwargs["carries"] == ("RDQ-RT-006", "RDQ-RT-010")


@pytest.mark.parametrize(
    ("carries", "error", "words"),
    [
        ("RDQ-RT-006", ValueError, "expected a tuple of requirement ids"),
        (("RDQ-RT-9999",), KeyError, "RDQ-RT-9999"),
        (("RDQ-UF-001",), ValueError, "never its own id"),
    ],
    ids=["bare-string", "unknown-id", "own-id"],
)
def test_a_bad_carries_fails_at_definition_time(
    carries: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        requirement("RDQ-UF-001", carries=carries)  # type: ignore[arg-type]


def test_narrow_is_recorded_and_only_for_examples() -> None:
    def narrow() -> None:
        """RDQ-UF-001 (C10): a stand-in test body."""

    def whole() -> None:
        """RDQ-UF-001 (C10): a stand-in test body."""

    marks = requirement("RDQ-UF-001", narrow=True)(narrow).pytestmark  # type: ignore[attr-defined]
    assert [m.kwargs.get("narrow") for m in marks if m.name == MARKER] == [True]
    marks = requirement("RDQ-UF-001")(whole).pytestmark  # type: ignore[attr-defined]
    assert [m.kwargs.get("narrow") for m in marks if m.name == MARKER] == [None]
    with pytest.raises(ValueError, match="only a fixed example can be narrow"):
        requirement("RDQ-UF-001", kind="property", narrow=True)
