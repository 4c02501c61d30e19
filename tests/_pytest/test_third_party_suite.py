"""A suite written only on the public API (``_third_party_suite.py``) runs under the kit
like its own: the ``rdq`` fixture, ``@requirement``, properties, failures that name the
requirement and the plugin."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests._pytest._standin import run

SUITE = Path(__file__).with_name("_third_party_suite.py")
PUBLIC = ("rdq_compliance", "rdq_compliance.testing", "rdq_compliance.strategies")


def _kit_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.module or "" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rdq")}


def test_the_example_uses_only_the_public_api() -> None:
    assert _kit_imports(SUITE) == set(PUBLIC)


def test_a_third_party_suite_runs_under_the_kit(kit: pytest.Pytester) -> None:
    kit.makepyfile(test_my_store=SUITE.read_text(encoding="utf-8"))
    ok = run(kit, "--rdq-plugin=fake", "-k", "my_store", "-rA")
    ok.assert_outcomes(passed=2)
    ok.stdout.fnmatch_lines(["*test_my_store.py::test_ten_rewrites_keep_the_last[[]fake[]]*",
                             "*test_my_store.py::test_round_trip_in_two_namespaces[[]fake[]]*"])


def test_a_third_party_suite_catches_a_defect(kit: pytest.Pytester) -> None:
    kit.makepyfile(test_my_store=SUITE.read_text(encoding="utf-8"))
    bad = run(kit, "--rdq-plugin=fake", "--rdq-option=fault=forgetful", "-k", "my_store")
    bad.assert_outcomes(failed=2)
    bad.stdout.fnmatch_lines(["*RDQ-ST-001 [[]MUST; C13[]]*", "*plugin 'fake': read(*"])
