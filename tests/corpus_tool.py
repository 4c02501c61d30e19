"""Development tool for the golden fixture corpus (see fixtures/README.md)::

    python -m tests.corpus_tool format [--check]    # pretty-print non-raw fixtures
    python -m tests.corpus_tool generate [--check]  # rebuild the generated fixtures
    python -m tests.corpus_tool orphans             # files the manifest does not list

Not part of the runtime package: the kit only loads the corpus
(``rdq_compliance._corpus``).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rdq_compliance import ViolationCode
from rdq_compliance._corpus import (
    _ENTRY_KEYS,
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    CorpusError,
    _no_duplicates,
    _reject_constant,
    corpus_dir,
)
from rdq_compliance.envelope._deep import dumps as _deep_dumps
from rdq_compliance.envelope._deep import loads as _deep_loads
from rdq_compliance.envelope._limits import (
    MAX_ENVELOPE_BYTES,
    MESSAGE_LIMIT,
    STACK_LIMIT,
    TRUNCATION_MARKER,
)
from rdq_compliance.envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from rdq_compliance.strategies import _shapes as shapes
from rdq_compliance.strategies._texts import random_text

__all__ = ["dump_fixture", "format_fixture_text", "main"]


def _ordered(obj: dict[str, Any], known: Sequence[str]) -> dict[str, Any]:
    head = {key: obj[key] for key in known if key in obj}
    tail = {key: obj[key] for key in sorted(k for k in obj if k not in head)}
    return head | tail


def _order_envelope(value: Any) -> Any:
    # Only the three envelope objects get the spec order; everything else
    # (headers, detail, unknown values) keeps the order it was written in.
    if not isinstance(value, dict):
        return value
    value = _ordered(value, ENVELOPE_FIELDS)
    attempts = value.get("attempts")
    if isinstance(attempts, list):
        value["attempts"] = [
            _order_attempt(a) if isinstance(a, dict) else a for a in attempts
        ]
    return value


def _order_attempt(attempt: dict[str, Any]) -> dict[str, Any]:
    attempt = _ordered(attempt, ATTEMPT_FIELDS)
    if isinstance(attempt.get("error"), dict):
        attempt["error"] = _ordered(attempt["error"], ERROR_FIELDS)
    return attempt


def dump_fixture(value: Any) -> str:
    """The formatted text of a fixture value (see fixtures/README.md, "Formatting")."""
    # json.dumps's exact text, at any depth (deep fixtures nest past its recursion limit).
    return _deep_dumps(_order_envelope(value), pretty=True) + "\n"


def format_fixture_text(text: str) -> str:
    """Reformat one non-raw fixture's text; raises ValueError if it cannot be kept losslessly."""
    value = _deep_loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    return dump_fixture(value)


def _manifest_text(entries: list[dict[str, Any]]) -> str:
    ordered = [{key: entry[key] for key in _ENTRY_KEYS} for entry in entries]
    ordered.sort(key=lambda entry: entry["id"])
    return json.dumps(
        {"format": MANIFEST_FORMAT, "fixtures": ordered}, indent=2, ensure_ascii=False
    ) + "\n"


def _read_entries(directory: Path) -> list[dict[str, Any]]:
    manifest = json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    entries: list[dict[str, Any]] = manifest["fixtures"]
    return entries


def _format(directory: Path, check: bool) -> int:
    problems: list[str] = []
    entries = _read_entries(directory)
    for entry in entries:
        if entry["raw"]:
            continue
        path = directory / entry["file"]
        text = path.read_text(encoding="utf-8")
        try:
            formatted = format_fixture_text(text)
        except ValueError as exc:
            problems.append(f"{entry['file']}: cannot be formatted losslessly: {exc}")
            continue
        if formatted != text:
            if check:
                problems.append(f"{entry['file']}: not formatted")
            else:
                path.write_text(formatted, encoding="utf-8")
    manifest = directory / MANIFEST_NAME
    wanted = _manifest_text(entries)
    if manifest.read_text(encoding="utf-8") != wanted:
        if check:
            problems.append(f"{MANIFEST_NAME}: not formatted (sorted by id, fixed key order)")
        else:
            manifest.write_text(wanted, encoding="utf-8")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems and check:
        print(
            f"{len(problems)} file(s) need formatting: run "
            "python -m tests.corpus_tool format",
            file=sys.stderr,
        )
    return 1 if problems else 0


# --------------------------------------------------------------------------
# Generated fixtures: the ones that are too big or too exact to write by hand.


def _base(n: int) -> dict[str, Any]:
    """A failed-once PENDING envelope; ``n`` makes the id unique in the corpus."""
    return {
        "envelope_version": 1,
        "id": "01J2ZK7Q8XW5H3N9G4T6B8G" + f"{n:03d}",
        "queue": "payments.charge",
        "handler_ref": "charge-payment",
        "handler_version": "v3",
        "payload": "eyJvcmRlcl9pZCI6IDQyfQ==",
        "payload_content_type": "application/json",
        "headers": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
        "status": "PENDING",
        "attempt_count": 1,
        "redrive_count": 0,
        "next_attempt_at": "2026-07-20T14:05:22.117Z",
        "lease_expires_at": None,
        "created_at": "2026-07-20T14:03:22.117Z",
        "attempts": [
            {
                "attempt_no": 1,
                "started_at": "2026-07-20T14:03:22.200Z",
                "finished_at": "2026-07-20T14:03:22.950Z",
                "outcome": "RETRYABLE_FAILURE",
                "error": {
                    "type": "java.net.SocketTimeoutException",
                    "message": "connect timed out after 500ms",
                    "detail": None,
                    "stack": "java.net.SocketTimeoutException: connect timed out\n\tat ...",
                },
            }
        ],
    }


_MESSAGE_UNIT = "connect timed out after 500ms; retrying with backoff. "
_STACK_UNIT = "\tat com.example.payments.ChargeHandler.charge(ChargeHandler.java:42)\n"


def _ascii(unit: str, nbytes: int) -> str:
    return (unit * (nbytes // len(unit) + 1))[:nbytes]


def _with_error(n: int, *, message: str | None = None, stack: str | None = None) -> Any:
    env = _base(n)
    error = env["attempts"][0]["error"]
    if message is not None:
        error["message"] = message
    if stack is not None:
        error["stack"] = stack
    return env


def _sized(n: int, target: int) -> Any:
    """An envelope whose compact canonical encoding is exactly ``target`` bytes."""
    env = _base(n)
    env["payload_content_type"] = "application/octet-stream"
    env["x_padding"] = ""

    def size() -> int:
        return len(json.dumps(env, separators=(",", ":"), ensure_ascii=False).encode())

    # Payload bytes that cycle through every value, so the base64 is not trivial.
    room = target - size()
    raw_len = (room - 64) // 4 * 3
    env["payload"] = base64.b64encode(bytes(i % 251 for i in range(raw_len))).decode()
    env["x_padding"] = "p" * (target - size())
    if size() != target:  # the arithmetic above is exact for ASCII; guard it anyway
        raise CorpusError(f"sized fixture: got {size()} bytes, expected target={target!r}")
    return env


def _long_history(n: int) -> Any:
    env = _base(n)
    attempts = []
    for i in range(200):
        # Twenty redrives of ten attempts: attempt_no restarts at 1 each time (C12).
        start_ms = i * 60_000
        minute, second = divmod(start_ms // 1000, 60)
        hour, minute = divmod(minute, 60)
        stamp = f"2026-07-20T{hour:02d}:{minute:02d}:{second:02d}"
        lease = i % 10 == 9
        attempts.append(
            {
                "attempt_no": i % 10 + 1,
                "started_at": stamp + ".000Z",
                "finished_at": None if lease else stamp + ".999Z",
                "outcome": "LEASE_EXPIRED" if lease else "RETRYABLE_FAILURE",
                "error": {
                    "type": "rdq.LeaseExpired",
                    "message": f"lease expired at {stamp}.000Z",
                    "detail": None,
                    "stack": None,
                }
                if lease
                else {
                    "type": "java.io.IOException",
                    "message": f"attempt {i}: connection reset",
                    "detail": {"i": i},
                    "stack": None,
                },
            }
        )
    env["attempts"] = attempts
    env["status"] = "DEAD"
    env["next_attempt_at"] = None
    env["attempt_count"] = 10
    env["redrive_count"] = 19
    return env


def _nested(levels: int, leaf: Any, shape: str) -> Any:
    """``leaf`` inside ``levels`` containers: arrays, objects, or both in turn."""
    value = leaf
    for i in range(levels):
        array = shape == "arrays" or (shape == "mixed" and i % 2 == 0)
        value = [value] if array else {"k": value}
    return value


_EVERY_TYPE_LEAF = {"null": None, "t": True, "f": False, "i": -(2**63), "d": 0.1, "s": "é\u0000"}


def _deep(n: int, where: str, levels: int, shape: str, leaf: Any = None) -> Any:
    """The base envelope with one value nested ``levels`` deep (the value itself is
    level 1) at ``where``: "top", "attempt", "error" (unknown fields) or "detail"."""
    env = _base(n)
    value = _nested(levels - 1, _EVERY_TYPE_LEAF if leaf is None else leaf, shape)
    error = env["attempts"][0]["error"]
    target = {"top": env, "attempt": env["attempts"][0], "error": error}.get(where)
    if target is None:
        error["detail"] = value
    else:
        target[f"x_deep_{levels}"] = value
    return env


def _deep_pointer(where: str, levels: int, shape: str) -> str:
    base = {"top": "", "attempt": "/attempts/0", "error": "/attempts/0/error"}[where]
    tokens = [
        "0" if shape == "arrays" or (shape == "mixed" and i % 2 == 0) else "k"
        for i in range(levels - 1)
    ]
    return f"{base}/x_deep_{levels}/" + "/".join(reversed(tokens)) + "/0"


def _long(n: int, field: str, text: str) -> Any:
    """The base envelope with ``text`` in one free-text ``field`` (C4: no length limit)."""
    env = _base(n)
    if field == "header-key":
        env["headers"][text] = "v"
    elif field == "header-value":
        env["headers"]["x-long"] = text
    elif field == "error-type":
        env["attempts"][0]["error"]["type"] = text
    elif field == "unknown":
        env["x_long"] = text
    else:
        env[field] = text
    return env


def _many_headers(n: int, count: int) -> Any:
    env = _base(n)
    env["headers"] = {f"x-h{i:05d}": random_text(i, 1, 12) for i in range(count)}
    return env


def _real_shapes(n: int) -> Any:
    """Long values as production systems give them (strategies/_shapes.py)."""
    env = _base(n)
    env["handler_version"] = shapes.HANDLER_VERSIONS[2]
    env["payload_content_type"] = shapes.CONTENT_TYPES[-1]
    env["headers"] = dict(shapes.HEADERS)
    env["attempts"][0]["error"]["type"] = shapes.ERROR_TYPES[1]
    return env


@dataclass(frozen=True)
class _Generated:
    slug: str
    valid: bool
    description: str
    clauses: tuple[str, ...]
    build: Callable[[], Any]
    expected_code: ViolationCode | None = None
    expected_pointer: str | None = None

    def entry(self) -> dict[str, Any]:
        kind = "valid" if self.valid else "invalid"
        return {
            "id": f"v1.{kind}.{self.slug}",
            "file": f"v1/{kind}/{self.slug}.json",
            "envelope_version": 1,
            "valid": self.valid,
            "description": self.description,
            "clauses": list(self.clauses),
            "expected_code": None if self.expected_code is None else str(self.expected_code),
            "expected_pointer": self.expected_pointer,
            "raw": False,
            "canonical": True,
            "generated": True,
        }


_MSG = "/attempts/0/error/message"
_STACK = "/attempts/0/error/stack"
_M = TRUNCATION_MARKER
_M_BYTES = len(_M.encode())

GENERATED: tuple[_Generated, ...] = (
    _Generated(
        "message-4096-ascii-truncated", True,
        "error.message of exactly 4,096 bytes: ASCII cut at 4,082 bytes plus the 14-byte marker",
        ("C1", "WE:The attempt record"),
        lambda: _with_error(1, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT - _M_BYTES) + _M),
    ),
    _Generated(
        "message-4096-multibyte-before-marker", True,
        "error.message of exactly 4,096 bytes whose last character before the marker is a "
        "4-byte emoji ending exactly at the cut",
        ("C1", "C4"),
        lambda: _with_error(
            2, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT - _M_BYTES - 4) + "\U0001f600" + _M
        ),
    ),
    _Generated(
        "message-multibyte-dropped-at-cut", True,
        "error.message truncated where a 4-byte emoji straddled the cut: the emoji is dropped, "
        "so the value is 4,093 bytes (cut on a code point boundary)",
        ("C1", "C4"),
        lambda: _with_error(3, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT - _M_BYTES - 3) + _M),
    ),
    _Generated(
        "message-4096-untruncated-multibyte", True,
        "error.message of exactly 4,096 bytes without the marker, ending in a 2-byte 'é': at "
        "the limit, so never changed",
        ("C1", "C4"),
        lambda: _with_error(4, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT - 2) + "é"),
    ),
    _Generated(
        "stack-65536-ascii-truncated", True,
        "error.stack of exactly 65,536 bytes: ASCII stack trace cut plus the marker",
        ("C1", "WE:The attempt record"),
        lambda: _with_error(5, stack=_ascii(_STACK_UNIT, STACK_LIMIT - _M_BYTES) + _M),
    ),
    _Generated(
        "stack-65536-multibyte-before-marker", True,
        "error.stack of exactly 65,536 bytes whose last character before the marker is a "
        "3-byte '€' ending exactly at the cut",
        ("C1", "C4"),
        lambda: _with_error(
            6, stack=_ascii(_STACK_UNIT, STACK_LIMIT - _M_BYTES - 3) + "€" + _M
        ),
    ),
    _Generated(
        "long-history-200-attempts", True,
        "a DEAD task with 200 attempts over 20 redrives (attempt_no restarting at 1, every "
        "tenth attempt LEASE_EXPIRED); order must be kept",
        ("C12", "WE:Field notes", "WE:The attempt record"),
        lambda: _long_history(7),
    ),
    _Generated(
        "size-at-limit", True,
        "an envelope whose compact canonical encoding is exactly 1,048,576 bytes: the largest "
        "a plugin must accept",
        ("C2", "C17"),
        lambda: _sized(8, MAX_ENVELOPE_BYTES),
    ),
    _Generated(
        "message-4097-bytes", False,
        "error.message of 4,097 ASCII bytes: one over the limit",
        ("C1",),
        lambda: _with_error(9, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT + 1)),
        ViolationCode.MESSAGE_TOO_LONG, _MSG,
    ),
    _Generated(
        "message-4097-bytes-multibyte", False,
        "error.message of 4,095 ASCII bytes plus a 2-byte 'é': 4,096 characters but 4,097 bytes",
        ("C1", "C4"),
        lambda: _with_error(10, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT - 1) + "é"),
        ViolationCode.MESSAGE_TOO_LONG, _MSG,
    ),
    _Generated(
        "message-4097-bytes-with-marker", False,
        "error.message ending with the marker but 4,097 bytes long: the marker does not make "
        "an over-long value valid",
        ("C1",),
        lambda: _with_error(11, message=_ascii(_MESSAGE_UNIT, MESSAGE_LIMIT + 1 - _M_BYTES) + _M),
        ViolationCode.MESSAGE_TOO_LONG, _MSG,
    ),
    _Generated(
        "stack-65537-bytes", False,
        "error.stack of 65,537 bytes: one over the limit",
        ("C1",),
        lambda: _with_error(12, stack=_ascii(_STACK_UNIT, STACK_LIMIT + 1)),
        ViolationCode.STACK_TOO_LONG, _STACK,
    ),
    _Generated(
        "size-over-limit", False,
        "an envelope whose compact canonical encoding is 1,048,577 bytes: one over the C2 limit",
        ("C2", "C17"),
        lambda: _sized(13, MAX_ENVELOPE_BYTES + 1),
        ViolationCode.PAYLOAD_TOO_LARGE, "",
    ),
    # C10 sets no depth limit; these nest one level past the JSON limits of common stores
    # and libraries: .NET System.Text.Json (64), MySQL JSON and MongoDB BSON (100),
    # serde_json (128), and a few hundred.
    _Generated(
        "detail-nested-65", True,
        "error.detail nested 65 arrays deep, past .NET System.Text.Json's default maximum "
        "depth of 64",
        ("C10",),
        lambda: _deep(14, "detail", 65, "arrays"),
    ),
    _Generated(
        "unknown-nested-101", True,
        "a top-level unknown field nested 101 objects deep, past MySQL's JSON and MongoDB's "
        "BSON limit of 100 levels",
        ("C10",),
        lambda: _deep(15, "top", 101, "objects"),
    ),
    _Generated(
        "unknown-nested-129", True,
        "an attempt's unknown field nested 129 levels deep (arrays and objects in turn), past "
        "serde_json's recursion limit of 128",
        ("C10",),
        lambda: _deep(16, "attempt", 129, "mixed"),
    ),
    _Generated(
        "unknown-nested-300", True,
        "an error object's unknown field nested 300 levels deep (arrays and objects in turn) "
        "around a value of every JSON type",
        ("C10", "C5"),
        lambda: _deep(17, "error", 300, "mixed"),
    ),
    _Generated(
        "unknown-nested-129-number-range", False,
        "the integer 2^63 at the bottom of a top-level unknown field nested 129 levels deep: "
        "out of the signed 64-bit range at any depth",
        ("C5", "C10"),
        lambda: _deep(18, "top", 129, "mixed", leaf=[2**63]),
        ViolationCode.NUMBER_RANGE, _deep_pointer("top", 129, "mixed"),
    ),
    # C4 sets no length limit on free text: random (incompressible) text at the column and
    # index limits of real stores, ASCII and multi-byte (random_text: seed, width, bytes).
    _Generated(
        "long-header-key-4096", True,
        "a header key of 4,096 random ASCII bytes: past PostgreSQL's 2,704-byte b-tree entry "
        "(a key in an index) and any VARCHAR(255)",
        ("C4", "C8"),
        lambda: _long(19, "header-key", random_text(19, 1, 4_096)),
    ),
    _Generated(
        "long-header-value-16384-multibyte", True,
        "a header value of 16,384 bytes of random 4-byte characters (4,096 code points)",
        ("C4", "C8"),
        lambda: _long(20, "header-value", random_text(20, 4, 16_384)),
    ),
    _Generated(
        "long-handler-version-1024", True,
        "handler_version of 1,024 random ASCII bytes: past VARCHAR(64) and VARCHAR(255)",
        ("C4",),
        lambda: _long(21, "handler_version", random_text(21, 1, 1_024)),
    ),
    _Generated(
        "long-content-type-1024-multibyte", True,
        "payload_content_type of 1,024 bytes of random 3-byte characters (341 code points and "
        "an ASCII byte): past VARCHAR(100) and VARCHAR(255) counted in bytes",
        ("C4",),
        lambda: _long(22, "payload_content_type", random_text(22, 3, 1_024)),
    ),
    _Generated(
        "long-error-type-2048", True,
        "error.type of 2,048 random ASCII bytes: past VARCHAR(255)",
        ("C4",),
        lambda: _long(23, "error-type", random_text(23, 1, 2_048)),
    ),
    _Generated(
        "long-unknown-string-8191", True,
        "an unknown top-level string field of 8,191 bytes of random 2-byte characters and one "
        "ASCII byte",
        ("C4", "C10"),
        lambda: _long(24, "unknown", random_text(24, 2, 8_191)),
    ),
    _Generated(
        "headers-1000", True,
        "1,000 headers of 12 random ASCII bytes each: C8 sets no count limit",
        ("C8", "C2"),
        lambda: _many_headers(25, 1_000),
    ),
    _Generated(
        "long-values-real-shapes", True,
        "long values in their real shapes: a bearer JWT, W3C traceparent, tracestate (32 "
        "members) and baggage, a cookie, an image digest as handler_version, a CloudEvents "
        "MIME type with parameters (216 bytes), a JVM coroutine lambda class name as "
        "error.type (265 bytes)",
        ("C4", "C8"),
        lambda: _real_shapes(26),
    ),
)  # fmt: skip


def _generate(directory: Path, check: bool) -> int:
    problems: list[str] = []
    entries = {entry["id"]: entry for entry in _read_entries(directory)}
    for spec in GENERATED:
        entry = spec.entry()
        path = directory / entry["file"]
        text = dump_fixture(spec.build())
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            problems.append(f"{entry['file']}: differs from its generator")
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        if entries.get(entry["id"]) != entry:
            problems.append(f"{MANIFEST_NAME}: entry {entry['id']!r} differs from its generator")
            entries[entry["id"]] = entry
    if check:
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(
                f"{len(problems)} generated item(s) out of date: run "
                "python -m tests.corpus_tool generate",
                file=sys.stderr,
            )
        return 1 if problems else 0
    (directory / MANIFEST_NAME).write_text(_manifest_text(list(entries.values())), encoding="utf-8")
    return 0


def _iter_orphans(directory: Path) -> Iterator[str]:
    listed = {entry["file"] for entry in _read_entries(directory)}
    for path in sorted(directory.glob("v*/*/*")):
        rel = path.relative_to(directory).as_posix()
        if rel not in listed:
            yield rel


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.corpus_tool",
        description="Maintain the golden fixture corpus (see fixtures/README.md).",
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="corpus directory (default: the kit's own)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    fmt = sub.add_parser("format", help="pretty-print non-raw fixtures and sort the manifest")
    fmt.add_argument("--check", action="store_true", help="change nothing; exit 1 if unformatted")
    gen = sub.add_parser("generate", help="rebuild the generated fixtures and their entries")
    gen.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    sub.add_parser("orphans", help="list files on disk that the manifest does not reference")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status (0 ok, 1 check failed, 2 error)."""
    args = _build_parser().parse_args(argv)
    try:
        directory: Path = args.dir or corpus_dir()
        if not (directory / MANIFEST_NAME).is_file():
            raise CorpusError(f"--dir={str(directory)!r} holds no {MANIFEST_NAME}")
        if args.command == "format":
            return _format(directory, args.check)
        if args.command == "generate":
            return _generate(directory, args.check)
        orphans = list(_iter_orphans(directory))
        for orphan in orphans:
            print(orphan)
        return 1 if orphans else 0
    except (CorpusError, OSError, ValueError, KeyError) as exc:
        print(f"tests.corpus_tool: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
