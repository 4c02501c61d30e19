"""Typed failure data: what a failed check, a hung call and a plugin's own exception are.

A kit test fails by raising :class:`CheckFailed` (an ``AssertionError``, so Hypothesis
shrinks on it) or :class:`OperationHung`; the data the reporting plugin and the saved
case need (the symptom, the envelopes) are typed attributes of these exceptions, never
ad-hoc ones. This module also holds the C17 error codes (derived from
:class:`~rdq_compliance.ErrorCode`, the one list) and the helpers that describe what a
plugin did in a failure message.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pluggy

from ..envelope._codec import encode, to_json
from ..envelope._codes import CODE_CLAUSES, ViolationCode
from ..envelope._model import Envelope
from ..envelope._violations import Violation
from ..reporting._symptom import Symptom
from ..storage._protocol import ErrorCode, StorageError
from ._symptoms import symptom_of_violation

__all__ = [
    "C17_CODES",
    "C17_TEXT",
    "CheckFailed",
    "OperationHung",
    "PluginFault",
    "canonical",
    "clauses_of",
    "describe_storage_error",
    "find_failure",
    "format_plugin_traceback",
    "is_c17",
    "pretty",
    "violation_lines",
]

C17_CODES: frozenset[str] = frozenset(code.value for code in ErrorCode)
"""The error codes a plugin may refuse with (C17): the values of ``ErrorCode``."""
C17_TEXT = f"one of the C17 codes ({', '.join(code.value for code in ErrorCode)})"
"""The codes in the order the spec lists them, for failure messages."""


class CheckFailed(AssertionError):
    """A compliance check failed. Raised inside tests; Hypothesis shrinks on it."""

    symptom: Symptom | None = None
    """What a round trip read back differently (its first difference), for the report's
    root causes; set by :meth:`Rdq.fail`, read by the reporting plugin."""
    envelopes: tuple[object, ...] = ()
    """The envelopes the failure is about, as canonical JSON, for the saved case."""


class OperationHung(BaseException):
    """A plugin operation outlived the timeout.

    A ``BaseException`` on purpose: Hypothesis does not catch it, so a hung
    plugin is not re-run dozens of times while shrinking (each run would cost
    the whole timeout). pytest still reports it as an ordinary test failure.
    """

    envelopes: tuple[object, ...] = ()
    """The envelopes the hung operation was about, as canonical JSON, for the saved case."""


class PluginFault(Exception):
    """What the worker thread caught from the plugin (kept to be reported)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


_Failure = TypeVar("_Failure", bound=BaseException)


def find_failure(
    exc: BaseException | None, kind: type[_Failure] | tuple[type[_Failure], ...]
) -> _Failure | None:
    """The first ``kind`` in ``exc``: ``exc`` itself, or depth first in its exception
    groups (a failure in a lane of the concurrency suite arrives inside one)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = find_failure(sub, kind)
            if found is not None:
                return found
    return None


def is_c17(code: object) -> bool:
    return isinstance(code, str) and code in C17_CODES


def describe_storage_error(exc: StorageError) -> str:
    return f"StorageError(code={exc.code!r}, message={exc.message!r})"


def clauses_of(code: ViolationCode) -> str:
    """The clauses a violation code breaks, space-separated ("" for a code the core
    does not map)."""
    return " ".join(CODE_CLAUSES.get(code, ((), ""))[0])


def violation_lines(violations: Sequence[Violation]) -> list[str]:
    """One line per violation, at most 20, each tagged with the clauses it breaks: how
    an invalid envelope read is shown (an adapter's model or a testee's wire JSON)."""
    return [f"  {v.pointer or '/'}: {v.code} [{clauses_of(v.code)}]: {v.message}"
            for v in violations[:20]]


def testee_violations(
    violations: object, document: object, written: Envelope | None,
) -> tuple[str, Symptom] | None:
    """When the stdio bridge judged a testee's wire JSON invalid (``violations``, the list
    of ``InvalidTesteeEnvelope``, and the ``document`` the testee returned), the failure's
    detail and symptom (RDQ-RT-004): an invalid envelope read, diagnosed as such, not as an
    exception of the plugin (whose trigger would name the payload's requirement). None for
    any other exception (``InvalidEnvelope`` a Python plugin's own decoder raised holds a
    tuple: an exception of the plugin)."""
    if not (isinstance(violations, list) and violations
            and all(isinstance(v, Violation) for v in violations)):
        return None
    found = list(violations)
    clauses = sorted({c for v in found for c in clauses_of(v.code).split()})
    detail = ("RDQ-RT-004: what a plugin returns is a valid envelope in exact form "
              f"(canonical wire JSON for testees); clauses broken: {' '.join(clauses)}")
    symptom = symptom_of_violation(
        found[0], clauses_of(found[0].code) or "C11", violation_lines(found),
        expected=to_json(written) if written is not None else None, actual=document)
    return detail, symptom


_KIT_DIR = str(Path(__file__).resolve().parent.parent)
_PLUGGY_DIR = str(Path(pluggy.__file__).resolve().parent)
# The guard's worker thread (_runner._run) is where a plugin's traceback starts.
_GUARD_FILE = str(Path(__file__).with_name("_runner.py"))


def format_plugin_traceback(exc: BaseException, limit_lines: int = 60) -> str:
    """The traceback of ``exc`` without the kit's guard frames, indented; "" when
    every frame is the kit's own (the built-in stdio bridge: its message says it all)."""
    te = traceback.TracebackException.from_exception(exc)
    frames = [f for f in te.stack if f.filename != _GUARD_FILE]
    if all(f.filename.startswith(_KIT_DIR) for f in frames):
        return ""
    # The calls that lead into the plugin (the kit's hook call, pluggy) say nothing.
    while frames and frames[0].filename.startswith((_KIT_DIR, _PLUGGY_DIR)):
        del frames[0]
    te.stack = traceback.StackSummary.from_list(frames)
    lines = "".join(te.format()).rstrip("\n").splitlines()
    if len(lines) > limit_lines:
        lines = ["  ...", *lines[-limit_lines:]]
    return "\n".join("    " + ln for ln in lines)


_PRETTY_LIMIT = 6_000
_LINE_LIMIT = 300
"""A longer line of the display (a 16 KiB string, a payload near 1 MiB) is cut to this:
the message is printed unprefixed in places (pytest's short summary on CI prints it
whole), where a line of kilobytes buries everything else."""


def _cut_line(line: str) -> str:
    if len(line) <= _LINE_LIMIT:
        return line
    return f"{line[:_LINE_LIMIT]}… ({len(line) - _LINE_LIMIT:,} more characters)"


def pretty(env: Envelope) -> str:
    """Pretty canonical JSON of ``env``, each line and the whole cut when huge."""
    try:
        text = encode(env, pretty=True)
    except Exception as exc:  # a model the codec refuses; show its repr instead
        text = f"<cannot encode ({type(exc).__name__}: {exc})> {env!r}"
    text = "\n".join(_cut_line(line) for line in text.split("\n"))
    if len(text) > _PRETTY_LIMIT:
        text = text[:_PRETTY_LIMIT] + f"\n… ({len(text) - _PRETTY_LIMIT:,} more characters)"
    return text


def canonical(env: object) -> Any:
    """``env`` as canonical JSON for a saved case (its repr when it is no valid model)."""
    if isinstance(env, Envelope):
        try:
            return to_json(env)
        except Exception:
            return repr(env)
    return repr(env)
