"""``rdq-compliance``: the kit's command line.

Exit codes: 0 success, 1 a check failed (invalid envelope, bad digest), 2 usage
error or unreadable input. Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    from ._cli_requirements import register as register_requirements
    from ._cli_validate import register as register_validate
    from .reporting._cli import register as register_reporting
    from .reporting._cli_ci import register as register_ci
    from .reporting._cli_pages import register as register_pages

    parser = argparse.ArgumentParser(
        prog="rdq-compliance",
        description="Compliance kit for rdq storage plugins (task envelope v1).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_validate(sub)
    register_reporting(sub)
    register_pages(sub)
    register_ci(sub)  # diff, merge
    register_requirements(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("rdq-compliance: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
