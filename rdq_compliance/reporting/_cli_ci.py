"""``rdq-compliance diff | merge``: commands for CI that compare or combine reports.

``diff OLD NEW`` exit codes: 0 no regression; 1 a regression (a requirement or cause newly
failing, or a MUST requirement newly not run); 2 usage error, or a report unreadable,
invalid or changed after the kit wrote it.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ._cli import _verified
from ._diff import diff_markdown, diff_reports, diff_text

__all__ = ["register"]


def _cmd_diff(args: argparse.Namespace) -> int:
    old, _ = _verified(args.old)
    new, _ = _verified(args.new) if old is not None else (None, 2)
    if old is None or new is None:
        return 2  # said on stderr by _verified
    d = diff_reports(old, new)
    if args.format == "json":
        print(json.dumps({"old": args.old, "new": args.new, "old_verdict": d.old_verdict,
                          "new_verdict": d.new_verdict, "regressed": d.regressed,
                          "caveats": d.caveats, "changes": [asdict(c) for c in d.changes]},
                         ensure_ascii=False, indent=2))
    elif args.format == "markdown":
        print(diff_markdown(d, baseline=Path(args.old).name), end="")
    else:
        print("\n".join(diff_text(d)))
    return 1 if d.regressed else 0


def register(sub: Any) -> None:
    """Add the CI commands to the ``rdq-compliance`` sub-command parser."""
    p = sub.add_parser(
        "diff", help="what changed between two reports",
        description="Verify two --rdq-report files and list, per plugin, each requirement "
        "and root cause that changed: new regression, fixed, still failing, newly not run, "
        "newly not applicable, newly passing. Exit 0 without regression, 1 with one (newly "
        "failing, or a MUST requirement newly not run), 2 when a report cannot be read or "
        "does not verify.")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(func=_cmd_diff)

