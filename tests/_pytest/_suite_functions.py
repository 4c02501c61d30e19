"""The kit's suite test functions, read from their source, each with the ``kind`` its
``@requirement(...)`` declares: what the marker and cost-table checks compare the suites
with (``test_ordering.py``, ``test_costs.py``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from rdq_compliance._pytest.kit import SUITE_FILES


def suite_test_functions() -> Iterator[tuple[Path, ast.FunctionDef, str]]:
    """Every ``test_*`` function of the kit's suites: its file, its node and its declared
    kind (``example`` when the decorator names none)."""
    for path in SUITE_FILES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                yield path, node, _declared_kind(node)


def _declared_kind(node: ast.FunctionDef) -> str:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "requirement":
            for kw in dec.keywords:
                if kw.arg == "kind":
                    return str(ast.literal_eval(kw.value))
    return "example"
