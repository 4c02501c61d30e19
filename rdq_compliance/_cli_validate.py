"""``rdq-compliance validate FILE...``: check envelopes against v1 (C1-C17).

A ``.json`` file holds one envelope; a ``.jsonl`` file one envelope per non-blank
line; ``-`` (stdin) or any other name is read as JSON Lines when it has more than
one non-blank line and its first line is a JSON text on its own, else as one
envelope. One line per violation on stdout, a summary on stderr.
Exit 0: all valid; 1: some invalid; 2: usage error or unreadable input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from .envelope._deep import loads
from .envelope._validate import validate

__all__ = ["register", "run"]

_PROG = "rdq-compliance validate"


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``validate`` subcommand to an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help="check envelope files (.json, .jsonl, - for stdin) against envelope v1",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help=".json, .jsonl or - (stdin)")
    parser.add_argument(
        "--version-support",
        dest="versions",
        action="append",
        type=_version,
        metavar="N",
        help="an accepted envelope_version (repeatable; default: 1)",
    )
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print no violation lines (the summary and exit code remain)",
    )
    parser.set_defaults(func=run)
    return parser


def _version(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"N={text!r}: expected a non-negative integer")
    return value


class _UsageError(Exception):
    pass


def run(args: argparse.Namespace) -> int:
    """Entry point set as ``func``; returns the exit code."""
    files: list[str] = list(args.files)
    versions = tuple(args.versions) if args.versions else (1,)
    try:
        if not files:
            raise _UsageError("no FILE given; pass .json/.jsonl files or - for stdin")
        if files.count("-") > 1:
            raise _UsageError("'-' (stdin) given more than once")
        inputs = [(name, _read(name)) for name in files]  # all readable before any output
    except _UsageError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 2
    checked = invalid = 0
    for name, data in inputs:
        label = "<stdin>" if name == "-" else name
        for where, text in _envelopes(name, data):
            checked += 1
            violations = validate(text, versions=versions)
            if violations:
                invalid += 1
                if not args.quiet:
                    for v in violations:
                        _emit(
                            sys.stdout, f"{label}{where}: {v.pointer or '/'}: {v.code}: {v.message}"
                        )
    print(f"{checked} envelopes checked, {invalid} invalid", file=sys.stderr)
    return 1 if invalid else 0


def _read(name: str) -> bytes:
    if name == "-":
        return (
            sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        )
    if os.path.isdir(name):
        raise _UsageError(f"FILE={name!r} is a directory; pass the envelope files in it")
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise _UsageError(f"FILE={name!r} does not exist") from None
    except OSError as exc:
        raise _UsageError(f"FILE={name!r} cannot be read: {exc.strerror or exc}") from None


def _envelopes(name: str, data: bytes) -> Iterator[tuple[str, bytes]]:
    """(":LINE" or "", envelope bytes) for each envelope of one input."""
    if name.endswith(".jsonl") or (not name.endswith(".json") and _looks_like_lines(data)):
        for number, line in enumerate(data.split(b"\n"), start=1):
            if line.strip():
                yield f":{number}", line.removesuffix(b"\r")
    else:
        yield "", data


def _looks_like_lines(data: bytes) -> bool:
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) <= 1:
        return False
    try:
        loads(lines[0].decode("utf-8"))  # any depth
    except ValueError:
        return False
    return True


def _emit(stream: TextIO, line: str) -> None:
    try:
        print(line, file=stream)
    except UnicodeEncodeError:  # a terminal that cannot show some character
        print(line.encode("ascii", "backslashreplace").decode("ascii"), file=stream)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``validate`` alone (handy in tests and scripts)."""
    parser = argparse.ArgumentParser(prog="rdq-compliance")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["validate", *(argv or [])])
    return run(args)
