"""Symptoms of keys a store took for one another: a known field read from an unknown
field named like it (a decoder or collation that ignores case), a key renamed by the
change the store makes to every string, keys merged into one (a collation that ignores
case or trailing spaces). Part of :mod:`._symptoms`."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from ..envelope._codec import to_json
from ..envelope._deep import dumps, loads
from ..envelope._diagnosis import pointer_pattern
from ..envelope._difference import Difference
from ..envelope._json import json_equal
from ..envelope._model import Envelope
from ..envelope._text_change import KEY_STYLES, text_change
from ..envelope._triggers import alike_field, has_alike_name
from ..envelope._violations import pointer_key, pointer_token
from ..envelope._wire import ATTEMPT_FIELDS, ENVELOPE_FIELDS, ERROR_FIELDS
from ..reporting._symptom import Symptom
from ._symptom_messages import short

__all__ = [
    "MISSING", "alike_read", "alike_symptom", "merged_keys", "renamed_key", "restyled_key",
    "value_at",
]


def alike_symptom(at: str, key: str, lines: list[str]) -> Symptom:
    return Symptom(
        pointer=at, pattern=pointer_pattern(at),
        kind="known field read from an unknown field named like it", clause="C10",
        summary=short(f"came back holding the value of the unknown field {key!r} beside it "
                       "(named like it but for case)"),
        diff="\n".join(lines), difference="alike-name")


def alike_read(pointer: str, expected: object, actual: object) -> tuple[str, str] | None:
    """(pointer of a known field, name of an unknown field) when the known field that
    ``pointer`` is at (or inside) came back holding the value written to an unknown field
    of its object named like it but for case: a decoder or a collation that ignores case
    took one for the other (``_triggers.alike_field``), not a change of that field.
    ``expected`` and ``actual``: envelopes (models, valid or not) or their JSON."""
    if not _has_alike_name(expected):
        return None  # the common case: no name to take for another, nothing to encode
    tokens = pointer.split("/")[1:]
    levels: list[tuple[str, Collection[str]]] = [("", ENVELOPE_FIELDS)]
    if len(tokens) >= 2 and tokens[0] == "attempts" and tokens[1].isdigit():
        levels.append((f"/attempts/{tokens[1]}", ATTEMPT_FIELDS))
        if len(tokens) >= 3 and tokens[2] == "error":
            levels.append((f"/attempts/{tokens[1]}/error", ERROR_FIELDS))
    written, read = _as_json(expected), _as_json(actual)
    for prefix, known in reversed(levels):  # the innermost object first
        depth = prefix.count("/")
        obj = value_at(written, prefix)
        if len(tokens) <= depth or not isinstance(obj, Mapping):
            continue
        field = tokens[depth]
        got = value_at(read, f"{prefix}/{field}")
        if got is MISSING or json_equal(obj.get(field, MISSING), got):
            continue
        for key, value in obj.items():
            if alike_field(key, known) == field and json_equal(value, got):
                return f"{prefix}/{field}", key
    return None


def _has_alike_name(envelope: object) -> bool:
    """``_triggers.has_alike_name``, of a model too (without encoding it)."""
    if isinstance(envelope, Envelope):
        named = [(envelope.extra, ENVELOPE_FIELDS)]
        for attempt in envelope.attempts:
            named.append((attempt.extra, ATTEMPT_FIELDS))
            if attempt.error is not None:
                named.append((attempt.error.extra, ERROR_FIELDS))
        return any(alike_field(k, known) for extra, known in named for k in extra)
    return isinstance(envelope, Mapping) and has_alike_name(envelope)


def _as_json(envelope: object) -> object:
    """An envelope's JSON (a model the codec cannot encode, an invalid read: the model
    itself, whose fields ``value_at`` reads)."""
    if isinstance(envelope, Envelope):
        try:
            return to_json(envelope)
        except Exception:
            return envelope
    return envelope


def _keys(container: object) -> list[str]:
    """The keys of a mapping, or the unknown fields of a model object."""
    if isinstance(container, Mapping):
        return [str(k) for k in container]
    extra = getattr(container, "extra", None)
    return [str(k) for k in extra] if isinstance(extra, Mapping) else []


@dataclass(frozen=True)
class _Around:
    """The objects (written, read) holding the key a difference is about, their keys,
    and that key as written."""

    written: object
    read: object
    written_keys: list[str]
    read_keys: list[str]
    key: str


def _around(first: Difference, expected: object, actual: object) -> _Around | None:
    if expected is None or actual is None:
        return None
    parent, _, token = first.pointer.rpartition("/")
    written, read = value_at(expected, parent), value_at(actual, parent)
    w_keys, r_keys = _keys(written), _keys(read)
    key = next((k for k in w_keys if pointer_token(k) == token), None)
    return None if key is None else _Around(written, read, w_keys, r_keys, key)


def renamed_key(first: Difference, expected: object, actual: object) -> str:
    """For a key missing from what was read: the nature of the change
    (``envelope._text_change``) that turns it into a key read that was not written, if
    one does; else ""."""
    around = _around(first, expected, actual) if first.kind == "missing" else None
    if around is None or around.key in around.read_keys:
        return ""
    lost, written, read = around.key, around.written_keys, around.read_keys
    for new in (k for k in read if k not in written):
        nature = text_change(lost, new)
        if nature not in _NOT_RENAMED:
            return nature
    return ""


def restyled_key(first: Difference, expected: object, actual: object
                 ) -> tuple[str, str, str] | None:
    """For a key missing from what was read: the key read in its place, its value the one
    written, and the change of case style (:data:`KEY_STYLES`) that made it, as a deep key
    transform of a whole document does (Rails' underscore, Node's camelcase-keys): (key
    written, key read, nature); else None."""
    around = _around(first, expected, actual) if first.kind == "missing" else None
    if around is None or around.key in around.read_keys:
        return None
    lost, written, read = around.key, around.written_keys, around.read_keys
    value = value_at(around.written, f"/{pointer_token(lost)}")
    for new in (k for k in read if k not in written):
        nature = text_change(lost, new)
        got = value_at(around.read, f"/{pointer_token(new)}")
        if nature in KEY_STYLES and (json_equal(got, value) or json_equal(
                got, _restyled(value, KEY_STYLES[nature]))):
            return lost, new, nature
    return None


def _restyled(value: object, style: Callable[[str], str]) -> object:
    """``value`` with every object key in it restyled (what the same transform made of
    the keys inside it), at any depth (``_deep``'s loops past ``json``'s recursion)."""
    return loads(dumps(value, allow_nan=True), object_pairs_hook=_restyling(style))


@functools.cache  # one hook per style: _deep caches a decoder per hook
def _restyling(style: Callable[[str], str]) -> Callable[[list[tuple[str, Any]]], object]:
    return lambda pairs: {style(k): v for k, v in pairs}


def merged_keys(
    first: Difference, expected: object, actual: object
) -> tuple[str, str, str] | None:
    """When the key ``first`` is about (missing, or holding another value) and keys
    written beside it equal to it but for case, trailing spaces or normalisation came
    back as one: which key holds whose value (one row of a side table keyed in a
    collation that ignores them, upserted: MySQL's utf8mb4_bin is PAD SPACE): (the key
    that came back, the key whose value it holds, "" or the nature of the change when the
    store changes every string: the keys normalised to NFC, or the value trimmed too:
    ``envelope._text_change``); else None."""
    around = _around(first, expected, actual) if first.kind in (
        "missing", "changed", "type") else None
    if around is None:
        return None
    written, read, key = around.written, around.read, around.key
    w_keys, r_keys = around.written_keys, around.read_keys

    def fold(k: str) -> str:
        return unicodedata.normalize("NFC", k).casefold().rstrip(" ")

    def at(obj: object, k: str) -> object:
        return value_at(obj, f"/{pointer_token(k)}")

    group = [k for k in w_keys if fold(k) == fold(key)]
    if len(group) < 2 or all(k in r_keys for k in group):
        return None
    for kept in (k for k in group if k in r_keys):
        # Keys made one by the change the store makes to every string (NFC): that
        # string defect (RDQ-RT-006), as a key renamed so, whichever value survived.
        for lost in (k for k in group if k not in r_keys):
            nature = text_change(lost, kept)
            if nature not in _NOT_RENAMED and nature not in _PADDED:
                return kept, lost, nature
    for kept in (k for k in group if k in r_keys):
        got = at(read, kept)
        source = next((k for k in group if k != kept and got is not MISSING
                       and json_equal(at(written, k), got)), None)
        if source is not None:
            return kept, source, ""
    for kept in (k for k in group if k in r_keys):
        # The keys became one because the store changes every string (trailing spaces
        # trimmed, keys and values alike): the string defect (RDQ-RT-006), as elsewhere.
        got = at(read, kept)
        for source in group:
            value = at(written, source)
            if isinstance(value, str) and isinstance(got, str):
                nature = text_change(value, got)
                if nature not in ("", "changed"):
                    return kept, source, nature
    return None


_PADDED = frozenset({"trailing spaces trimmed", "trailing white space trimmed"})
"""Keys equal but for trailing spaces: a PAD SPACE collation merges them (the map's
defect) unless the values show the store trims every string."""
_NOT_RENAMED = frozenset(KEY_STYLES) | {"", "changed", "cut short", "extended"}
"""Changes of a key that are the map's defect, not the string's: a map that folds the
case of its keys (HTTP-style headers, RDQ-RT-009) or cuts them to a length loses keys;
a key merely unlike the one lost is another key."""


MISSING = object()


def value_at(obj: object, pointer: str) -> object:
    """The value at a JSON pointer of a model (fields, then unknown fields in
    ``extra``), a mapping or a sequence; ``MISSING`` where there is none. The pointer's
    tokens are escaped as RFC 6901 says (a header key ``a/b~`` is ``a~1b~0``)."""
    for escaped in pointer.split("/")[1:]:
        token = pointer_key(escaped)
        if isinstance(obj, Mapping):
            obj = obj.get(token, MISSING)
        elif isinstance(obj, list | tuple):
            obj = obj[int(token)] if token.isdigit() and int(token) < len(obj) else MISSING
        elif is_dataclass(obj) and token in {f.name for f in fields(obj)}:
            obj = getattr(obj, token)
        elif isinstance(extra := getattr(obj, "extra", None), Mapping):
            obj = extra.get(token, MISSING)
        else:
            return MISSING
        if obj is MISSING:
            return obj
    return obj
