"""What a test's values carry: the requirements whose tests it runs after (issue 21 §2).

A fixed example whose parameters hold values that a defect of another requirement
damages (an instant with milliseconds, two attempts, an unknown field, "", {} or [], text
that stores commonly change, a trigger of ``_triggers``) runs after that requirement's
tests, so that ``-x`` stops on the defect's own requirement first. Which requirement a
loss of such a value belongs to is the diagnosis table's answer (``_diagnosis.find_rule``),
not a list of this module's own.
"""

from __future__ import annotations

import base64
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

from ._diagnosis import find_rule, pointer_pattern
from ._limits import TRUNCATION_MARKER
from ._triggers import triggers_of, walk_json
from ._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

__all__ = ["requirements_carried"]

_ENVELOPE = frozenset(ENVELOPE_FIELDS)
_ATTEMPT = frozenset(ATTEMPT_FIELDS)
_ERROR = frozenset(ERROR_FIELDS)

_TIMESTAMPS = ("created_at", "next_attempt_at", "lease_expires_at")


def _empties(value: Any, ptr: str) -> Iterator[str]:
    """The pointers of every "", {} and [] in ``value`` (itself included)."""
    if isinstance(value, str | dict | list) and not value:
        yield ptr
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _empties(v, f"{ptr}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _empties(v, f"{ptr}/{i}")


def _strings(value: Any) -> Iterator[str]:
    """Every key and string value of a JSON document."""
    for _, v, _ in walk_json(value):
        if isinstance(v, str):
            yield v


def _fragile(text: str) -> bool:
    """Text that stores commonly change (RDQ-RT-006): white space at either end (CHAR
    padding, trimming), a carriage return, a form that NFC normalization changes."""
    return (text != text.strip() or "\r" in text
            or unicodedata.normalize("NFC", text) != text)


def requirements_carried(
    value: object, *, envelope: bool, common: Iterable[str] = ()
) -> frozenset[str]:
    """The requirements whose values ``value`` holds: for each, the table's row for the
    loss or change of such a value (an instant with milliseconds, two attempts or more,
    an unknown field, a detail, "", {} or [], text that stores commonly change, a value
    ending with the truncation marker, a trigger of :data:`TRIGGERS`).

    ``envelope``: ``value`` is the canonical JSON object of an envelope (its fields are
    known); otherwise a bare value (text, bytes for a payload, JSON) a test puts
    somewhere. ``common``: triggers to leave out (those every test's envelope holds, which
    can order nothing). The kit runs a fixed example after the tests of the
    requirements its parameters carry, so that a defect about them fails their own
    tests first."""
    found: set[str] = set()

    def name(pattern: str, difference: str, triggers: Iterable[str] = ()) -> None:
        rule = find_rule(pattern, difference, triggers)
        if rule is not None:
            found.add(rule.requirement)

    if isinstance(value, bytes | bytearray):  # a payload
        doc: object = {"payload": base64.b64encode(bytes(value)).decode("ascii")}
    else:
        doc = value if envelope else {"x": value}
    for trigger in triggers_of(doc) - frozenset(common):
        name("", "refused", [trigger])
    for text in _strings(doc):
        if text.endswith(TRUNCATION_MARKER):
            name("/*", "marker")
        elif _fragile(text):
            name("/*", "text")
    for ptr in _empties(value, ""):
        name(pointer_pattern(ptr) if envelope else "/*", "empty-null")
        if envelope and ptr == "/headers":  # the empty map, dropped or null: headers'
            name("/headers/*", "missing")
    if not envelope or not isinstance(value, dict):
        return frozenset(found)
    for key in value:
        if key not in _ENVELOPE:
            name(pointer_pattern(f"/{key}"), "missing")
    for field in _TIMESTAMPS:
        _instant(value.get(field), f"/{field}", name)
    attempts = value.get("attempts")
    if isinstance(attempts, list):
        if len(attempts) >= 2:
            name("/attempts/*", "reordered")
        for attempt in attempts:
            if not isinstance(attempt, dict):
                continue
            for field in ("started_at", "finished_at"):
                _instant(attempt.get(field), f"/attempts/*/{field}", name)
            if any(k not in _ATTEMPT for k in attempt):
                name("/attempts/*/*", "missing")
            error = attempt.get("error")
            if isinstance(error, dict):
                if any(k not in _ERROR for k in error):
                    name("/attempts/*/error/*", "missing")
                if error.get("detail") is not None:
                    name("/attempts/*/error/detail", "missing")
    return frozenset(found)


def _instant(text: object, pattern: str, name: Any) -> None:
    """An instant with milliseconds (a store cutting them changes it)."""
    if isinstance(text, str) and not text.endswith(".000Z"):
        name(pattern, "instant")
