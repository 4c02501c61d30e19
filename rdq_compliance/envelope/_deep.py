"""JSON values of any depth: parse, encode, copy, compare and show without recursion.

C10 allows any JSON value in unknown fields and ``detail``, so nesting is bounded only
by C2's 1 MiB (about 500,000 levels of ``[``). Python's ``json`` module and ``repr``
recurse and stop near 1,000 levels (``RecursionError``), so every walk over such a
value is a loop over an explicit stack here. The C-speed ``json`` calls stay the fast
path; the loops take over only when they raise ``RecursionError``. The kit keeps no
depth limit of its own.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner, no stub
from json.encoder import encode_basestring
from typing import Any

__all__ = [
    "SURROGATE",
    "copy_json",
    "depth",
    "dumps",
    "loads",
    "short_repr",
]

SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate (U+D800-U+DFFF): no Unicode scalar value, no UTF-8 (C4)."""

_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = frozenset(" \t\n\r")
_CONSTANTS = ("NaN", "Infinity", "-Infinity")  # handed to parse_constant, as json does
_LITERALS: tuple[tuple[str, Any], ...] = (("null", None), ("true", True), ("false", False))


# -- parsing -----------------------------------------------------------------------


def loads(
    text: str,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] = dict,
    parse_constant: Callable[[str], Any] = float,
) -> Any:
    """``json.loads(text, object_pairs_hook=..., parse_constant=...)`` at any depth:
    the stdlib first, this module's loop when it recurses too deeply."""
    try:
        return _decoder(object_pairs_hook, parse_constant).decode(text)
    except RecursionError:
        return _parse(text, object_pairs_hook, parse_constant)


@functools.lru_cache(maxsize=16)  # bounded: a caller might pass a new hook each time
def _decoder(
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any],
    parse_constant: Callable[[str], Any],
) -> json.JSONDecoder:
    # What json.loads builds on every call with these hooks (a third of parsing the seed
    # example). Its scanner keeps only a key-interning memo between calls, which threads
    # may share: losing an entry costs an interned key, never a value.
    return json.JSONDecoder(object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)


def _parse(
    s: str,
    pairs_hook: Callable[[list[tuple[str, Any]]], Any],
    parse_constant: Callable[[str], Any],
) -> Any:
    """The grammar of ``json.loads`` (strict: no control characters in strings),
    iteratively. A frame is ``[list, None]`` for an array or ``[pairs, key]`` for an
    object."""
    err = json.JSONDecodeError
    stack: list[list[Any]] = []
    pos = _skip(s, 0)
    while True:
        # -- one value starts at pos --
        c = s[pos : pos + 1]
        if c == "[":
            pos = _skip(s, pos + 1)
            if s[pos : pos + 1] == "]":
                value: Any = []
                pos += 1
            else:
                stack.append([[], None])
                continue
        elif c == "{":
            pos = _skip(s, pos + 1)
            if s[pos : pos + 1] == "}":
                value = pairs_hook([])
                pos += 1
            else:
                frame: list[Any] = [[], None]
                pos = _key(s, pos, frame)
                stack.append(frame)
                continue
        elif c == '"':
            value, pos = scanstring(s, pos + 1, True)
        else:
            m = _NUMBER.match(s, pos)
            if m is not None:
                integer, frac, exp = m.groups()
                value = float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)
                pos = m.end()
            else:
                for word, literal in _LITERALS:
                    if s.startswith(word, pos):
                        value, pos = literal, pos + len(word)
                        break
                else:
                    for word in _CONSTANTS:
                        if s.startswith(word, pos):
                            value, pos = parse_constant(word), pos + len(word)
                            break
                    else:
                        raise err("Expecting value", s, pos)
        # -- the value is complete: hand it to the open containers --
        while True:
            pos = _skip(s, pos)
            if not stack:
                if pos != len(s):
                    raise err("Extra data", s, pos)
                return value
            frame = stack[-1]
            if frame[1] is None:
                frame[0].append(value)
            else:
                frame[0].append((frame[1], value))
            c = s[pos : pos + 1]
            if c == ",":
                pos = _skip(s, pos + 1)
                if frame[1] is not None:
                    pos = _key(s, pos, frame)
                break  # the next item
            closing = "]" if frame[1] is None else "}"
            if c != closing:
                raise err("Expecting ',' delimiter", s, pos)
            stack.pop()
            value = frame[0] if frame[1] is None else pairs_hook(frame[0])
            pos += 1


def _skip(s: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    if s[pos : pos + 1] not in _WS_CHARS:  # the common case: no whitespace, no regex
        return pos
    return _WS.match(s, pos).end()  # type: ignore[union-attr]  # [ ]* always matches


def _key(s: str, pos: int, frame: list[Any]) -> int:
    """Read ``"key" :`` at ``pos`` into ``frame``; the position of the value."""
    if s[pos : pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", s, pos)
    frame[1], pos = scanstring(s, pos + 1, True)
    pos = _skip(s, pos)
    if s[pos : pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", s, pos)
    return _skip(s, pos + 1)


# -- encoding ------------------------------------------------------------------------


def dumps(
    value: Any,
    *,
    pretty: bool = False,
    allow_nan: bool = False,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
) -> str:
    """``json.dumps(value, ensure_ascii=False, ...)`` at any depth, character for
    character: compact by default, ``indent=2`` when ``pretty``; ``separators``
    default to ``(",", ":")``, or ``(",", ": ")`` when ``pretty``."""
    if separators is None:
        separators = (",", ": ") if pretty else (",", ":")
    try:
        return _encoder(pretty, allow_nan, sort_keys, separators).encode(value)
    except RecursionError:
        return "".join(_encode(value, pretty, allow_nan, sort_keys, separators))


@functools.cache
def _encoder(
    pretty: bool, allow_nan: bool, sort_keys: bool, separators: tuple[str, str]
) -> json.JSONEncoder:
    # What json.dumps builds on every call with these arguments; the encoder keeps no
    # state between calls, so one per argument set serves them all (a hot path).
    return json.JSONEncoder(
        ensure_ascii=False,
        indent=2 if pretty else None,
        separators=separators,
        allow_nan=allow_nan,
        sort_keys=sort_keys,
    )


def _scalar(value: Any, allow_nan: bool) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            if not allow_nan:
                raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key_text(key: Any, allow_nan: bool) -> str:
    # json.dumps turns these key types into strings; anything else is a TypeError.
    if isinstance(key, str):
        return encode_basestring(key)
    if key is None or isinstance(key, bool | int | float):
        return encode_basestring(_scalar(key, allow_nan))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _encode(
    value: Any,
    pretty: bool,
    allow_nan: bool,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
) -> Iterator[str]:
    item_sep, key_sep = separators or ((",", ": ") if pretty else (",", ":"))
    # Each frame: an iterator over the container's items, whether it is an object,
    # and how many items were written.
    stack: list[tuple[Iterator[Any], bool, list[int]]] = []
    pending: Any = value
    has_pending = True
    while True:
        if has_pending:
            has_pending = False
            if isinstance(pending, list | tuple) and pending:
                yield "["
                stack.append((iter(pending), False, [0]))
            elif isinstance(pending, dict) and pending:
                yield "{"
                pairs = sorted(pending.items()) if sort_keys else pending.items()
                stack.append((iter(pairs), True, [0]))
            elif isinstance(pending, list | tuple):
                yield "[]"
            elif isinstance(pending, dict):
                yield "{}"
            else:
                yield _scalar(pending, allow_nan)
        if not stack:
            return
        items, is_object, count = stack[-1]
        item = next(items, _END)
        if item is _END:
            stack.pop()
            if pretty:
                yield "\n" + "  " * len(stack)
            yield "}" if is_object else "]"
            continue
        if count[0]:
            yield item_sep
        count[0] += 1
        if pretty:
            yield "\n" + "  " * len(stack)
        if is_object:
            yield _key_text(item[0], allow_nan) + key_sep
            pending = item[1]
        else:
            pending = item
        has_pending = True


_END: Any = object()


# -- walking -------------------------------------------------------------------------


def copy_json(value: Any, other: Callable[[Any], Any] | None = None) -> Any:
    """A copy of a JSON value sharing no list or dict with it; str, int, float, bool
    and None are shared, any other value is passed to ``other`` (shared without it)."""
    t = type(value)
    if t is not dict and t is not list:
        return value if other is None or _leaf(value) else other(value)
    root: Any = {} if t is dict else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    sub: Any
    while stack:
        src, dst = stack.pop()
        if type(src) is dict:
            for k, v in src.items():
                tv = type(v)
                if tv is dict or tv is list:
                    dst[k] = sub = {} if tv is dict else []
                    stack.append((v, sub))
                else:
                    dst[k] = v if other is None or _leaf(v) else other(v)
        else:
            for v in src:
                tv = type(v)
                if tv is dict or tv is list:
                    sub = {} if tv is dict else []
                    dst.append(sub)
                    stack.append((v, sub))
                else:
                    dst.append(v if other is None or _leaf(v) else other(v))
    return root


def _leaf(value: Any) -> bool:
    t = type(value)
    return t is str or t is int or t is float or t is bool or value is None


def depth(value: Any) -> int:
    """Nesting depth of a JSON value: 0 for a scalar, 1 for ``[]`` or ``[1]``."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if type(v) is list or type(v) is dict:
            d += 1
            best = max(best, d)
            stack.extend((item, d) for item in (v.values() if type(v) is dict else v))
    return best


def short_repr(value: object, limit: int) -> str:
    """``repr(value)``, or its first ``limit + 1`` characters or more when longer (so
    a caller that cuts at ``limit`` shows the same text), at any depth and without
    building the repr of a 1 MiB value."""
    if type(value) is not list and type(value) is not dict:
        try:
            return repr(value)
        except RecursionError:
            return f"<{type(value).__name__} nested too deeply to show>"
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    seen: set[int] = set()  # a container met twice (a cycle) shows as repr does: [...]
    while stack and size <= limit:
        item = stack.pop()
        if type(item) is _Text:
            text = str(item)
        elif (type(item) is list or type(item) is dict) and id(item) in seen:
            text = "[...]" if type(item) is list else "{...}"
        elif type(item) is list:
            seen.add(id(item))
            text = "["
            tail: list[Any] = [_Text("]")]
            for i in range(len(item) - 1, -1, -1):
                tail.append(item[i])
                if i:
                    tail.append(_Text(", "))
            stack.extend(tail)
        elif type(item) is dict:
            seen.add(id(item))
            text = "{"
            entries = list(item.items())
            tail = [_Text("}")]
            for i in range(len(entries) - 1, -1, -1):
                k, v = entries[i]
                tail.append(v)
                tail.append(_Text(short_repr(k, limit) + ": "))
                if i:
                    tail.append(_Text(", "))
            stack.extend(tail)
        else:
            text = short_repr(item, limit)
        parts.append(text)
        size += len(text)
    return "".join(parts)


class _Text(str):
    """Literal text inside ``short_repr``'s stack (not a value to repr)."""

    __slots__ = ()
