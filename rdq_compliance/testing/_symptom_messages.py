"""Symptoms of failures that found no difference: a refusal or an exception of the
plugin, read from the kit's own failure messages, or any other failure. Part of
:mod:`._symptoms`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from ..envelope._triggers import triggers_of
from ..reporting._symptom import Symptom, fallback_symptom, mask

__all__ = [
    "DIFF_LINES", "short", "symptom_of_call", "symptom_of_exception", "symptom_of_failure",
]

DIFF_LINES = 6
"""Diff lines a symptom keeps."""


# The kit's own failure messages (testing/_handle.py, _namespace_handle.py): the second line is
# "plugin 'label': <operation>(…) … refused … with StorageError(code='X', message='…')"
# or "plugin 'label': <operation>(…) … raised Type: message".
_PLUGIN_LINE = re.compile(r"^plugin '(?:[^'\\]|\\.)*': (?P<body>.*)$", re.M)
_OPERATION = re.compile(r"^(?P<op>[\w.]+)[( ]")
_CALL = re.compile(r"(?<![\w.])(?P<op>[a-z_]\w*(?:\.[a-z_]\w*)?)\(")
"""The first call the message names (``write(``, ``storage.open(``): a check may say what
it wrote first ("a header key of 255 bytes was refused: write(…) raised …"), and a
refusal of one operation is one cause whichever words come before it."""
_STORAGE_ERROR = re.compile(r"StorageError\(code=(?:<[\w.]+: )?'(?P<code>[^']*)'>?, "
                            r"message=(?P<msg>.*?)\)"
                            r"(?: \(C17|;|, whose|$)")
_REFUSED_CODE = re.compile(r"\brefused with code (?:<[\w.]+: )?'(?P<code>[^']*)'>?")
_RAISED = re.compile(r"\braised (?P<type>[\w.]+): (?P<msg>.*)$")
_RAISED_CODE = re.compile(r"(?P<code>[A-Z][A-Z_]+): (?P<msg>.*)$")
"""What ``str(StorageError)`` says: its C17 code, then its message."""


def short(text: str) -> str:
    return text if len(text) <= 160 else text[:159] + "\u2026"


def _unquote(text: str) -> str:
    """The message of ``StorageError(..., message='…')`` without its repr quotes."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _triggers(envelopes: Iterable[object]) -> str:
    found: set[str] = set()
    for doc in envelopes:
        found |= triggers_of(doc)
    return " ".join(sorted(found))


def symptom_of_failure(message: str, envelopes: Iterable[object] = ()) -> Symptom:
    """The symptom of a failed check that found no difference: a refusal of a valid
    envelope (by operation, C17 code and masked message), an exception of the plugin
    (by operation, type and masked message) with the value classes of ``envelopes``
    (canonical JSON) that may trigger it, or any other failure by its masked line."""
    m = _PLUGIN_LINE.search(message)
    if m is None:
        return fallback_symptom(message)
    lines = [ln for ln in message.splitlines() if ln.strip()][1:DIFF_LINES + 1]
    return symptom_of_call(m.group("body"), lines, envelopes)


def symptom_of_call(body: str, lines: list[str], envelopes: Iterable[object] = ()) -> Symptom:
    """:func:`symptom_of_failure` of the summary ``body`` alone (what follows
    "plugin 'label': "); ``lines``: what the symptom shows of the failure."""
    op_match = _CALL.search(body) or _OPERATION.match(body)
    op = op_match.group("op") if op_match else "call"

    def refusal(code: str, summary: str) -> Symptom:
        # Refusals group by operation and C17 code (issue 21 §1): one store refusing
        # for one reason answers several checks with different words around it.
        return Symptom(pointer="/", pattern="/", clause="C17", diff="\n".join(lines),
                       summary=short(summary), kind=f"{op} refused: StorageError {code}",
                       difference="refused", triggers=_triggers(envelopes))

    err = _STORAGE_ERROR.search(body)
    if err is not None and ("refused" in body or "raised" in body):
        text = _unquote(err.group("msg"))
        return refusal(err.group("code"), f"{op} refused with {err.group('code')}: {text}")
    code = _REFUSED_CODE.search(body)
    if code is not None:
        return refusal(code.group("code"), body)
    raised = _RAISED.search(body)
    carried = None if raised is None else _RAISED_CODE.match(raised.group("msg"))
    if raised is not None and carried is not None and (
            raised.group("type").rpartition(".")[2] == "StorageError"):
        # A StorageError that surfaced as an exception (a check that allows none, a new
        # process's read) is the refusal it carries: one cause with the same refusals.
        return refusal(carried.group("code"),
                       f"{op} refused with {carried.group('code')}: {carried.group('msg')}")
    if raised is not None and raised.group("type").rpartition(".")[2] == "TesteeFault":
        # A fault of the stdio protocol is the testee's, whichever request met it (a wrong
        # seq faults every request in flight, reads and writes alike): one cause.
        op = "a request"
    if raised is not None:
        return Symptom(
            pointer="/", pattern="/", clause="", diff="\n".join(lines),
            summary=short(f"{op} raised {raised.group('type')}: {raised.group('msg')}"),
            kind=f"{op} raised {raised.group('type')}: {mask(raised.group('msg'))}"[:200],
            difference="raised", triggers=_triggers(envelopes),
        )
    return Symptom(pointer="/", pattern="/", kind=mask(body)[:200], clause="",
                   summary=short(body), diff="\n".join(lines))


def symptom_of_exception(exc: BaseException) -> Symptom:
    """The symptom of any failure: a check's own (its difference), else one built from
    its message (:func:`symptom_of_failure`)."""
    symptom = getattr(exc, "symptom", None)
    if isinstance(symptom, Symptom):
        return symptom
    envelopes = getattr(exc, "envelopes", ())
    text = str(exc)
    if _PLUGIN_LINE.search(text) is None:  # not the kit's message: the type tells apart
        text = f"{type(exc).__name__}: {text}"
    return symptom_of_failure(text, envelopes if isinstance(envelopes, tuple) else ())
