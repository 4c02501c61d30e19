"""``rdq-compliance html | site``: pages to read a report in a browser.

Exit codes as for the other report commands: 0 written; 1 the report is invalid or was
changed after the kit wrote it; 2 usage error, unreadable report or unwritable output.
``site`` lists a report that fails verification as rejected and still exits 0 when it
wrote the site, unless every report was rejected (1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._clauses_text import is_absolute_url
from ._report import ReportError, load_report, verify_report

__all__ = ["register"]


def _err(message: str) -> None:
    print(f"rdq-compliance: {message}", file=sys.stderr)


def _bad_urls(args: argparse.Namespace) -> bool:
    """Whether --spec-url or --base-url is given and not an http(s) address (said so)."""
    bad = False
    for flag, what in (("spec_url", "where the spec's clarifications.md is published, e.g. "
                        "https://example.org/spec/clarifications.md"),
                       ("base_url", "where the site will be published")):
        url = getattr(args, flag, None)
        if url is not None and not is_absolute_url(url):
            _err(f"--{flag.replace('_', '-')}={url!r} is not an http(s) address; "
                 f"expected {what}")
            bad = True
    return bad


def _cmd_html(args: argparse.Namespace) -> int:
    from ._html import render_html

    if _bad_urls(args):
        return 2
    try:
        report = load_report(args.report)
        verify_report(report)
    except ReportError as e:
        _err(f"{args.report}: {e}")
        return 2 if e.unreadable else 1
    text = render_html(report, spec_url=args.spec_url)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as e:
        _err(f"cannot write output path={args.output!r}: {e}")
        return 2
    return 0


def _cmd_site(args: argparse.Namespace) -> int:
    from ._site import build_site

    if _bad_urls(args):
        return 2
    try:
        site = build_site(args.reports, args.output, spec_url=args.spec_url,
                          base_url=args.base_url)
    except OSError as e:
        _err(f"cannot write the site to path={args.output!r}: {e}")
        return 2
    for path, reason in site.rejected:
        _err(f"rejected {path}: {reason}")
    print(f"site written to {args.output}: {len(site.accepted)} report(s), "
          f"{len(site.plugins)} plugin(s), {len(site.rejected)} rejected")
    return 1 if site.rejected and not site.accepted else 0


def register(sub: Any) -> None:
    """Add ``html`` and ``site`` to the ``rdq-compliance`` sub-command parser."""
    p = sub.add_parser("html", help="render a report as one self-contained HTML page",
                       description="Verify a --rdq-report file, then write it as the page "
                       "--rdq-html writes.")
    p.add_argument("report", metavar="REPORT")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write ('-': standard output)")
    p.add_argument("--spec-url", metavar="URL",
                   help="where clarifications.md is published (clause links point there)")
    p.set_defaults(func=_cmd_html)

    p = sub.add_parser("site", help="build a static conformance registry from reports",
                       description="Verify each --rdq-report file and build a static site: "
                       "a matrix of plugins x requirements (newest version of each), a page "
                       "per plugin with its versions, badges, each run's HTML report, and "
                       "the data as JSON. A report that fails verification is listed as "
                       "rejected, never shown as a result.")
    p.add_argument("reports", metavar="REPORT", nargs="+")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder to write the site to (created)")
    p.add_argument("--spec-url", metavar="URL",
                   help="where clarifications.md is published (clause links point there)")
    p.add_argument("--base-url", metavar="URL",
                   help="where the site will be published: makes the copyable badge "
                   "snippets absolute")
    p.set_defaults(func=_cmd_site)
