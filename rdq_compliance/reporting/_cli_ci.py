"""``rdq-compliance diff | merge``: commands for CI that compare or combine reports.

``merge REPORT... -o FILE`` exit codes (the merged report is written unless 2): 0 the
merged verdict is compliant; 1 it is non-compliant or incomplete (a shard missing); 2 a
report unreadable, invalid or not a shard of the same run, or the output not writable.

``diff OLD NEW`` exit codes: 0 no regression; 1 a regression (a requirement or cause newly
failing, or a MUST requirement newly not run); 2 usage error, or a report unreadable,
invalid or changed after the kit wrote it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ._cli import _err, _verified, _write
from ._diff import diff_markdown, diff_reports, diff_text
from ._merge import MergeError, merge_reports

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


def _cmd_merge(args: argparse.Namespace) -> int:
    reports = []
    for path in args.reports:
        report, _ = _verified(path)
        if report is None:
            return 2
        reports.append((path, report))
    try:
        merged = merge_reports(reports)
    except MergeError as e:
        _err(f"merge: {e}")
        return 2
    code = _write(args.output, json.dumps(merged, ensure_ascii=False, indent=2) + "\n")
    if code:
        return code
    print(f"{args.output}: verdict {merged['verdict']} ({merged['notes'][-1]})",
          file=sys.stderr if args.output == "-" else sys.stdout)
    return 0 if merged["verdict"] == "compliant" else 1  # the gate of a sharded run


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

    p = sub.add_parser(
        "merge", help="merge the reports of --rdq-shard runs",
        description="Verify the reports of the shards K/N of one run (same plugins, kit, "
        "corpus, profile, seed and N; each K once) and write the report of the whole run: "
        "its verdict is what one unsharded run would have given; a missing shard makes it "
        "incomplete. Exit 0 when the merged verdict is compliant, 1 when it is not, 2 when a "
        "report cannot be read, does not verify or is not a shard of the same run, or the "
        "output cannot be written.")
    p.add_argument("reports", metavar="REPORT", nargs="+")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write the merged report ('-': standard output)")
    p.set_defaults(func=_cmd_merge)

