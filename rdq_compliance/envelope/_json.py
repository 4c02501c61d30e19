"""Strict JSON parsing and C5 JSON equality.

The stdlib decoder is lenient where the envelope is not (duplicate keys, NaN,
lone surrogates from ``\\ud800`` escapes), so those are caught here and reported
as violations with the JSON pointer of the offending place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ._codes import ViolationCode
from ._deep import SURROGATE as _SURROGATE
from ._deep import loads
from ._model import JSONValue
from ._violations import InvalidEnvelope, Violation, pointer_token

__all__ = ["JSON_TYPE_NAMES", "json_equal", "json_type_name", "parse_json"]

# A \uD800-\uDFFF escape in the text (or a literal surrogate in a str input): only
# then is the walk over every string needed. Two simple patterns scan much faster
# than one alternation.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _DupDict(dict[str, Any]):
    """An object that held a key more than once; remembers which keys."""

    __slots__ = ("dups",)
    dups: list[str]


class _BadConstant(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


class _Duplicate(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Duplicate  # rare: parse again with _pairs_noting_duplicates
    return obj


def _pairs_noting_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    dup = _DupDict(obj)
    seen: set[str] = set()
    dup.dups = []
    for key, _ in pairs:
        if key in seen and key not in dup.dups:
            dup.dups.append(key)
        seen.add(key)
    return dup


def _syntax(message: str) -> InvalidEnvelope:
    return InvalidEnvelope([Violation(ViolationCode.JSON_SYNTAX, "", message)])


def parse_json(data: str | bytes | bytearray) -> dict[str, JSONValue]:
    """Parse one envelope JSON text strictly; raise InvalidEnvelope on any defect.

    ``bytes`` must be UTF-8 without BOM. The top level must be an object.
    """
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidEnvelope(
                [
                    Violation(
                        ViolationCode.UTF8_INVALID,
                        "",
                        f"invalid UTF-8 at byte offset {exc.start}: {exc.reason} "
                        f"(byte {bytes(data)[exc.start : exc.start + 1]!r}); "
                        "the envelope must be encoded as UTF-8",
                    )
                ]
            ) from None
    elif isinstance(data, str):
        text = data
    else:
        raise TypeError(f"data={type(data).__name__}: expected str or bytes holding JSON text")
    if text.startswith("\ufeff"):
        raise _syntax("the text starts with a byte order mark (U+FEFF); remove it")

    # Hooks that keep no state between calls (the decoder is shared, maybe by threads):
    # one that stops at the first duplicate key, then, only for such a text, one that
    # marks every object holding one, for _find_dups to report where.
    try:
        value, dups = _load(text, _unique_pairs), False
    except _Duplicate:
        value, dups = _load(text, _pairs_noting_duplicates), True

    violations: list[Violation] = []
    if dups:
        _find_dups(value, "", violations)
    if (
        "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
    ) or (  # bytes were decoded strictly: they cannot hold a literal surrogate
        not isinstance(data, bytes | bytearray)
        and not text.isascii()
        and _SURROGATE.search(text) is not None
    ):
        _find_surrogates(value, "", violations)
    if violations:
        raise InvalidEnvelope(violations)
    if not isinstance(value, dict):
        raise InvalidEnvelope(
            [
                Violation(
                    ViolationCode.FIELD_TYPE,
                    "",
                    f"the top level is {json_type_name(value)}; an envelope is a JSON object",
                )
            ]
        )
    return value


def _load(text: str, pairs_hook: Callable[[list[tuple[str, Any]]], dict[str, Any]]) -> Any:
    try:
        return loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _syntax(f"line {exc.lineno} column {exc.colno} (char {exc.pos}): {exc.msg}") from None
    except _BadConstant as exc:
        raise _syntax(
            f"{exc.args[0]} is not JSON (NaN and Infinity are not allowed); write a finite number"
        ) from None
    except ValueError as exc:  # int(str) digit limit of huge integer literals
        raise InvalidEnvelope(
            [Violation(ViolationCode.NUMBER_RANGE, "", f"a number is out of range: {exc}")]
        ) from None


def _find_dups(value: Any, ptr: str, out: list[Violation]) -> None:
    # Depth-first in document order, with an explicit stack (C10 sets no depth limit).
    stack: list[tuple[Any, str]] = [(value, ptr)]
    while stack:
        value, ptr = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _DupDict):
                for key in value.dups:
                    out.append(
                        Violation(
                            ViolationCode.DUPLICATE_KEY,
                            ptr,
                            f"key {key!r} appears more than once in this object; keep one",
                        )
                    )
            stack.extend(
                (item, f"{ptr}/{pointer_token(key)}")
                for key, item in reversed(value.items())
                if isinstance(item, dict | list)
            )
        elif isinstance(value, list):
            stack.extend(
                (value[i], f"{ptr}/{i}")
                for i in range(len(value) - 1, -1, -1)
                if isinstance(value[i], dict | list)
            )


def _find_surrogates(value: Any, ptr: str, out: list[Violation]) -> None:
    stack: list[tuple[Any, str]] = [(value, ptr)]
    while stack:
        value, ptr = stack.pop()
        if isinstance(value, str):
            m = _SURROGATE.search(value)
            if m:
                out.append(
                    Violation(
                        ViolationCode.LONE_SURROGATE,
                        ptr,
                        f"string holds a lone surrogate U+{ord(m.group()):04X} at code point "
                        f"{m.start()}; strings must be Unicode scalar values",
                    )
                )
        elif isinstance(value, dict):
            todo: list[tuple[Any, str]] = []
            for key, item in value.items():
                sub = f"{ptr}/{pointer_token(key)}"
                m = _SURROGATE.search(key)
                if m:
                    # A bad key is reported before its value, as the recursive walk did.
                    todo.append((_KeyViolation(m), sub))
                todo.append((item, sub))
            stack.extend(reversed(todo))
        elif isinstance(value, list):
            stack.extend((value[i], f"{ptr}/{i}") for i in range(len(value) - 1, -1, -1))
        elif isinstance(value, _KeyViolation):
            m = value.match
            out.append(
                Violation(
                    ViolationCode.LONE_SURROGATE,
                    ptr,
                    f"key holds a lone surrogate U+{ord(m.group()):04X} at code point "
                    f"{m.start()}; keys must be Unicode scalar values",
                )
            )


class _KeyViolation:
    """A lone surrogate found in a key, reported when the walk reaches it."""

    __slots__ = ("match",)

    def __init__(self, match: re.Match[str]) -> None:
        self.match = match


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),  # before int: bool is an int
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)
JSON_TYPE_NAMES: tuple[str, ...] = (*(name for _, name in _TYPE_NAMES), "null")
"""What :func:`json_type_name` says of a JSON value (the kit's messages: ``got an array``)."""


def json_type_name(value: object) -> str:
    """The JSON type of a Python value, for messages (``an integer``, ``a string``...)."""
    if value is None:
        return "null"
    return next(
        (name for cls, name in _TYPE_NAMES if isinstance(value, cls)),
        f"a non-JSON {type(value).__name__}",
    )


def json_equal(a: object, b: object) -> bool:
    """JSON value equality per C5/C11.

    A bool never equals a number; an int equals a float only when the float is
    integral and exactly equal (Python compares int and float exactly); object
    key order is irrelevant; arrays are ordered. Non-JSON types (tuple, bytes...)
    equal only an identical-typed equal value. Any depth (an explicit stack).
    """
    stack: list[tuple[object, object]] = [(a, b)]
    while stack:
        a, b = stack.pop()
        if a is b and not isinstance(a, float):
            continue
        if isinstance(a, bool) or isinstance(b, bool):
            if not (isinstance(a, bool) and isinstance(b, bool) and a == b):
                return False
        elif (isinstance(a, int | float) and isinstance(b, int | float)) or (
            isinstance(a, str) and isinstance(b, str)
        ):
            if a != b:
                return False
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif isinstance(a, dict) and isinstance(b, dict):
            if len(a) != len(b):
                return False
            for key, item in a.items():
                if key not in b:
                    return False
                stack.append((item, b[key]))
        elif a is None or b is None or not (type(a) is type(b) and a == b):
            return False
    return True
