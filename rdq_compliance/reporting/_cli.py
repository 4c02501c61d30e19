"""``rdq-compliance badge | verify | known-failures``: commands that read reports.

Exit codes: 0 success; 1 a report is invalid or was changed after the kit wrote
it (digest mismatch); 2 usage error, unreadable report or unwritable output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._badge import render_badge, render_endpoint
from ._known import format_known_failures
from ._report import ReportError, load_report, verify_report

__all__ = ["register"]


def _err(message: str) -> None:
    print(f"rdq-compliance: {message}", file=sys.stderr)


def _verified(path: str) -> tuple[dict[str, Any] | None, int]:
    """The report at ``path`` once its digest checks out, else (None, exit code)."""
    try:
        report = load_report(path)
        verify_report(report)
    except ReportError as e:
        _err(f"{path}: {e}")
        return None, 2 if e.unreadable else 1
    return report, 0


def _write(out: str, text: str) -> int:
    if out == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as e:
        _err(f"cannot write output path={out!r}: {e}")
        return 2
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    # Every report is checked and gets its line; the worst outcome is the exit code
    # (2 unreadable > 1 invalid > 0).
    worst = 0
    for path in args.reports:
        report, code = _verified(path)
        if report is None:
            worst = max(worst, code)
            continue
        print(f"{path}: ok, {report['digest']} (verdict {report['verdict']}, "
              f"kit {report['kit_version']}, fixtures {report['fixture_hash']})")
    return worst


def _cmd_badge(args: argparse.Namespace) -> int:
    report, code = _verified(args.report)
    if report is None:
        return code
    if args.endpoint:
        text = json.dumps(render_endpoint(report), ensure_ascii=False) + "\n"
    else:
        text = render_badge(report)
    return _write(args.output, text)


def _cmd_known_failures(args: argparse.Namespace) -> int:
    report, code = _verified(args.report)
    if report is None:
        return code
    return _write(args.output,
                  format_known_failures(report, report_name=Path(args.report).name))


def register(sub: Any) -> None:
    """Add the report commands to the ``rdq-compliance`` sub-command parser."""
    p = sub.add_parser("verify", help="check the integrity digest of reports",
                       description="Recompute the digest of each --rdq-report file. Exit 0 when "
                       "every one matches, 1 when a report was changed or is invalid, 2 when "
                       "one cannot be read.")
    p.add_argument("reports", metavar="REPORT", nargs="+")
    p.set_defaults(func=_cmd_verify)

    p = _writer(sub, "badge", _cmd_badge, help="re-render the badge of a report",
                description="Verify a --rdq-report file, then write its SVG badge (or with "
                "--endpoint its shields.io endpoint JSON).")
    p.add_argument("--endpoint", action="store_true",
                   help="write the shields.io endpoint JSON instead of the SVG")
    _writer(sub, "known-failures", _cmd_known_failures,
            help="write a known-failures file from a report",
            description="Verify a --rdq-report file, then write the file for "
            "--rdq-known-failures listing every failed requirement.")


def _writer(sub: Any, name: str, func: Callable[[argparse.Namespace], int], *, help: str,
            description: str) -> argparse.ArgumentParser:
    """A command that verifies one REPORT and writes what it derives to -o FILE."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    p.add_argument("report", metavar="REPORT")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write ('-': standard output)")
    p.set_defaults(func=func)
    return p
