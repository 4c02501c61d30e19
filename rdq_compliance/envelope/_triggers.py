"""The classes of value an envelope holds that make stores refuse it (issue 21 §1): U+0000,
astral characters, a payload that is not UTF-8, dotted keys, values past common column
limits, deep nesting, integers past 2^53, large envelopes. A refusal or an exception of
a valid envelope is diagnosed by the class all such envelopes held (the ``trigger`` of a
row of the diagnosis table, ``_diagnosis``); a test's parameters carry the requirements
of the classes they hold (``_carried``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from ._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS

__all__ = ["TRIGGERS", "alike_field", "has_alike_name", "triggers_of", "walk_json"]

TRIGGERS: Mapping[str, str] = {
    "nul": "U+0000 in a string",
    "astral": "a character beyond U+FFFF in a string",
    "non-utf8-payload": "a payload that is not valid UTF-8",
    "empty-payload": "the empty payload",
    "dotted-key": "a key holding '.' or starting with '$'",
    "empty-key": "the empty header key",
    "long-header": "a header value of 256+ bytes",
    "long-key": "a header key of 256+ bytes",
    "long-field": "a handler_version, payload_content_type or error.type of 256+ bytes",
    "long-name": "a queue or handler_ref of 128+ characters (C8a allows 240)",
    "many-headers": "1,000 or more headers",
    "long-text": "a string of 4,096+ bytes",
    "deep": "JSON nested 64+ levels deep",
    "alike-name": "an unknown field named like a known field of its object but for case "
                  "('ID' beside 'id')",
    "big-int": "an integer beyond 2^53",
    "large": "an envelope of 64 KiB or more",
    "many-attempts": "more than 10 attempts",
    "version": "an envelope_version other than 1",
    "null-error": "an attempt whose error is null (a reader that takes every attempt's "
                  "error for an object)",
}
"""The classes of value in a refused envelope that a rule can name: what makes a store
refuse (``find_rule`` picks the first row whose trigger the refused envelopes share)."""


_MAX_SAFE = 2**53


def alike_field(key: str, known: Collection[str]) -> str | None:
    """The known field ``key`` names but for case (``'ID'`` -> ``'id'``), if ``key`` is
    not one itself: what a decoder or a collation that ignores case takes it for (Go's
    encoding/json, Jackson's ACCEPT_CASE_INSENSITIVE_PROPERTIES, a *_ci collation)."""
    if key in known:
        return None
    folded = key.casefold()
    return next((f for f in known if f.casefold() == folded), None)


def has_alike_name(doc: Mapping[str, Any]) -> bool:
    """Whether the canonical JSON ``doc`` of an envelope holds, in the envelope, an
    attempt or an error, an unknown field named like a known field of that object."""
    objects: list[tuple[object, Collection[str]]] = [(doc, ENVELOPE_FIELDS)]
    for attempt in doc.get("attempts") or ():
        if isinstance(attempt, dict):
            objects.append((attempt, ATTEMPT_FIELDS))
            objects.append((attempt.get("error"), ERROR_FIELDS))
    return any(isinstance(obj, dict) and any(alike_field(k, known) for k in obj)
               for obj, known in objects)


def walk_json(value: Any, depth: int = 1) -> Iterator[tuple[str, Any, int]]:
    """(kind, value, depth) of every key and value of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield "key", k, depth
            yield from walk_json(v, depth + 1)
        yield "container", value, depth
    elif isinstance(value, list):
        for v in value:
            yield from walk_json(v, depth + 1)
        yield "container", value, depth
    else:
        yield "value", value, depth


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def triggers_of(doc: object) -> frozenset[str]:
    """The value classes (:data:`TRIGGERS`) present in the canonical JSON ``doc`` of an
    envelope; nothing for what is not a JSON object (a repr the kit could not encode)."""
    if not isinstance(doc, dict):
        return frozenset()
    found: set[str] = set()
    deepest = 0
    for kind, v, depth in walk_json(doc):
        deepest = max(deepest, depth)
        if isinstance(v, str):
            if "\x00" in v:
                found.add("nul")
            if _ASTRAL.search(v):
                found.add("astral")
            if kind == "key" and ("." in v or v.startswith("$")):
                found.add("dotted-key")
            if len(v.encode("utf-8", "surrogatepass")) >= 4096:
                found.add("long-text")
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > _MAX_SAFE:
            found.add("big-int")
    if deepest >= 64:
        found.add("deep")
    if has_alike_name(doc):
        found.add("alike-name")
    headers = doc.get("headers")
    if isinstance(headers, dict):
        if "" in headers:
            found.add("empty-key")
        if any(isinstance(v, str) and _size(v) >= 256 for v in headers.values()):
            found.add("long-header")
        if any(_size(k) >= 256 for k in headers):
            found.add("long-key")
        if len(headers) >= 1000:
            found.add("many-headers")
    fields = [doc.get("handler_version"), doc.get("payload_content_type")]
    for attempt in doc.get("attempts") or ():
        error = attempt.get("error") if isinstance(attempt, dict) else None
        if isinstance(error, dict):
            fields.append(error.get("type"))
    if any(isinstance(v, str) and _size(v) >= 256 for v in fields):
        found.add("long-field")
    if any(isinstance(doc.get(k), str) and len(doc[k]) >= 128 for k in ("queue", "handler_ref")):
        found.add("long-name")
    payload = doc.get("payload")
    if isinstance(payload, str):
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw == b"":
            found.add("empty-payload")
        elif raw is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                found.add("non-utf8-payload")
    attempts = doc.get("attempts")
    if isinstance(attempts, list) and len(attempts) > 10:
        found.add("many-attempts")
    if isinstance(attempts, list) and any(
            isinstance(a, dict) and a.get("error") is None for a in attempts):
        found.add("null-error")
    if doc.get("envelope_version") not in (1, None):
        found.add("version")
    try:
        size = len(json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        size = 0
    if size >= 64 * 1024:
        found.add("large")
    return frozenset(found)
