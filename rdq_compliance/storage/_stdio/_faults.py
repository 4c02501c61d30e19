"""What a testee did wrong, and the text that shows it: faults, stderr tails, previews."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Sequence
from typing import Any

from ...envelope._deep import dumps, loads

__all__ = [
    "STDERR_TAIL_LINES",
    "InvalidTesteeEnvelope",
    "TesteeFault",
    "exit_text",
    "lenient_json",
    "lenient_seq",
    "pointer_text",
    "preview",
    "short",
    "start_excerpt",
]

STDERR_TAIL_LINES = 20
"""Lines of the testee's stderr shown with a failure."""
_PREVIEW_CHARS = 200


class TesteeFault(Exception):
    """The testee broke the protocol: it crashed, hung, printed a line that is
    not a protocol response, answered out of turn, or sent invalid JSON.

    ``kind`` names the fault for programs (``"crash"``, ``"timeout"``,
    ``"not_protocol"``, ``"invalid_json"``, ``"out_of_turn"``, ``"wrong_seq"``,
    ``"bad_response"``, ``"error_code"``, ``"bad_hello"``, ``"start"``,
    ``"exit_status"``, ``"invalid_envelope"``); ``message`` names it for people;
    ``stderr_tail`` holds the last lines the testee wrote to its stderr; ``pid`` the
    process the fault is about (None when none was running).
    """

    __test__ = False  # "Testee*" matches pytest's class pattern wherever it is imported

    def __init__(self, kind: str, message: str, *, stderr_tail: Sequence[str] = (),
                 pid: int | None = None) -> None:
        self.kind = kind
        self.message = message
        self.stderr_tail = tuple(stderr_tail)
        self.pid = pid
        super().__init__(message + _format_tail(self.stderr_tail))


class InvalidTesteeEnvelope(TesteeFault):
    """A read answered with an envelope that is not valid v1 wire JSON (RDQ-RT-004).

    The testee process keeps running: the protocol was followed, the data was wrong.
    """

    def __init__(
        self, message: str, violations: Sequence[Any], *, stderr_tail: Sequence[str] = (),
        document: object = None,
    ) -> None:
        self.violations = list(violations)
        self.document = document
        """The wire JSON the testee returned, when it parsed (what differs tells the
        requirement: a number pushed out of range is not a format error)."""
        super().__init__("invalid_envelope", message, stderr_tail=stderr_tail)


def _format_tail(tail: Sequence[str]) -> str:
    if not tail:
        return "\n(the testee wrote nothing to stderr)"
    lines = tail[-STDERR_TAIL_LINES:]
    return f"\n--- last {len(lines)} line(s) of the testee's stderr ---\n" + "\n".join(lines)


_ERROR_LINE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception|Exit)\b|error\b|fatal\b|panic\b)", re.IGNORECASE)


def start_excerpt(tail: Sequence[str], first: int = 4, limit: int = 800) -> str:
    """The first lines a testee that did not start wrote to stderr, plus its error
    lines further down: the real error line is at the top of a Node.js stack and at
    the bottom of a Python traceback."""
    lines = [line.strip() for line in tail if line.strip()]
    if not lines:
        return "; it wrote nothing to stderr"
    shown = lines[:first]
    errors = [line for line in lines[first:] if _ERROR_LINE.match(line)]
    for line in dict.fromkeys(errors[:1] + errors[-1:]):
        if line not in shown:
            shown += ["…", line]
    if len(lines) > first and not errors and lines[-1] not in shown:
        shown += ["…", lines[-1]]
    text = " | ".join(shown)
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"; its stderr: {text}"


def preview(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").rstrip("\n")
    if len(text) > _PREVIEW_CHARS:
        text = text[:_PREVIEW_CHARS] + f"… ({len(raw)} bytes)"
    return repr(text)


def exit_text(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


def pointer_text(pointer: str) -> str:
    return pointer or "(top level)"


def lenient_seq(raw: bytes) -> int | None:
    """The integer seq of a line that is a JSON object, else None (routing only: the
    line is judged strictly by the request that receives it)."""
    obj = lenient_json(raw)
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if type(seq) is int else None


def lenient_json(raw: bytes) -> object:
    try:
        return loads(raw.decode("utf-8", "replace"))  # any depth
    except ValueError:
        return None


def short(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except RecursionError:  # nested deeper than json recurses: values from parse_json
        text = dumps(value, allow_nan=True)
    return text if len(text) <= 80 else text[:80] + "…"
