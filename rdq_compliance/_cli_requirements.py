"""``rdq-compliance requirements``: the requirement registry, as a table or JSON.

Every id listed selects its tests in a kit run: ``pytest --rdq-plugin=NAME -k RDQ-UF-001``
(or ``-m RDQ-UF-001``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._requirements import REQUIREMENTS, Requirement
from .reporting._causes import SPEC_URL, clause_link

__all__ = ["register", "requirement_rows"]


def requirement_rows() -> list[dict[str, Any]]:
    """Every current requirement as plain JSON values (retired ones left out)."""
    return [
        {
            "id": r.id,
            "level": r.level.value,
            "title": r.title,
            "clauses": list(r.clauses),
            "clause_links": [clause_link(c) for c in r.clauses],
            "capability": r.capability,
            "suite": r.suite,
        }
        for r in REQUIREMENTS
        if not r.retired
    ]


def _table(reqs: list[Requirement]) -> str:
    head = ("id", "level", "clauses", "capability", "title")
    rows = [(r.id, r.level.value, " ".join(r.clauses), r.capability or "-", r.title)
            for r in reqs]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(4)]
    lines = []
    for row in [head, *rows]:
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        lines.append("  ".join([*cells, row[4]]).rstrip())
    lines.append("")
    lines.append(f"clauses: {SPEC_URL}; select a requirement's tests with "
                 "pytest --rdq-plugin=NAME -k ID")
    return "\n".join(lines) + "\n"


def _cmd_requirements(args: argparse.Namespace) -> int:
    reqs = [r for r in REQUIREMENTS if not r.retired]
    if args.json:
        print(json.dumps(requirement_rows(), indent=2, ensure_ascii=False))
    else:
        print(_table(reqs), end="")
    return 0


def register(sub: Any) -> None:
    """Add ``requirements`` to the ``rdq-compliance`` sub-command parser."""
    p = sub.add_parser("requirements", help="list the requirements the kit checks",
                       description="List the requirement registry: id, level, clauses, the "
                       "capability that gates it, title. Each id selects its tests in a kit "
                       "run with -k ID or -m ID.")
    p.add_argument("--json", action="store_true", help="JSON instead of a table")
    p.set_defaults(func=_cmd_requirements)
