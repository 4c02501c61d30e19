"""The suites' bookkeeping: every requirement is checked, tags are validated at import."""

from __future__ import annotations

import importlib

import pytest

from rdq_compliance._pytest.kit import MARKER, SUITE_FILES
from rdq_compliance._requirements import REQUIREMENTS
from rdq_compliance.testing import requirement


def _tagged() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in SUITE_FILES:
        module = importlib.import_module(f"rdq_compliance.suites.{path.stem}")
        for name, obj in vars(module).items():
            for mark in getattr(obj, "pytestmark", []):
                if mark.name == MARKER:
                    found.setdefault(mark.args[0], []).append(f"{path.stem}.{name}")
    return found


def test_every_requirement_has_a_test_in_its_suite() -> None:
    tagged = _tagged()
    for req in REQUIREMENTS:
        if req.retired:
            assert req.id not in tagged
            continue
        tests = tagged.get(req.id)
        assert tests, f"{req.id} has no test"
        assert all(t.startswith(f"test_{req.suite}.") for t in tests), (req.id, tests)


def test_unknown_requirement_id_fails_at_import() -> None:
    with pytest.raises(KeyError, match="unknown requirement id='RDQ-XX-001'"):
        requirement("RDQ-XX-001")


def test_docstring_must_cite_id_and_clause() -> None:
    def test_x() -> None:
        """Checks something."""

    with pytest.raises(ValueError, match="must cite RDQ-RT-007 and one of its clauses"):
        requirement("RDQ-RT-007")(test_x)

    def test_y() -> None:
        """RDQ-RT-007 (C3): ok."""

    assert requirement("RDQ-RT-007")(test_y).pytestmark[0].args == ("RDQ-RT-007",)  # type: ignore[attr-defined]
