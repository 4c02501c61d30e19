"""A correct JSON-document storage adapter, built to be bent one defect at a time.

``DocStorage`` keeps, per namespace, each envelope's canonical JSON text and
decodes it on read, using only the public ``rdq_compliance`` API. Every step a
real plugin takes is a method (``on_write`` on the JSON document, ``store``,
``on_read``, ``on_model`` on the model read back, ``drop``...), so a mutant in
``zoo.py`` overrides exactly the one step its real-world defect lives in and
inherits correct behaviour everywhere else.

The "disk" (namespace -> id -> text) of a durable storage is a ``_disk.FileDisk``:
files under ``<cwd>/.rdq/zoo-disk/<entry id>/``, one mirror of them per entry and
process. It outlives the ``DocStorage`` instance and the process, so the kit's C15
check sees real durability whether it reopens the storage in the same process or
reads it from a new one. A storage with ``durable_disk = False`` keeps a plain dict
of its own instead (lost on reopen).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, cast

from rdq_compliance import (
    Envelope,
    StorageInfo,
    from_json,
    parse_json,
    to_json,
)

from ._disk import FileDisk

__all__ = [
    "ATTEMPT_FIELDS",
    "ENVELOPE_FIELDS",
    "ERROR_FIELDS",
    "DocAdapter",
    "DocStorage",
    "Obj",
    "cut_utf8",
    "dumps",
    "format_ts",
    "map_json_numbers",
    "map_model_timestamps",
    "map_strings",
    "map_timestamps",
    "map_unknown_values",
    "parse_ts",
    "unknown_containers",
    "walk_docs",
]

Obj = dict[str, Any]

ENVELOPE_FIELDS = frozenset((
    "envelope_version", "id", "queue", "handler_ref", "handler_version", "payload",
    "payload_content_type", "headers", "status", "attempt_count", "redrive_count",
    "next_attempt_at", "lease_expires_at", "created_at", "attempts",
))
ATTEMPT_FIELDS = frozenset(["attempt_no", "started_at", "finished_at", "outcome", "error"])
ERROR_FIELDS = frozenset(["type", "message", "detail", "stack"])
_TOP_TIMESTAMPS = ("next_attempt_at", "lease_expires_at", "created_at")
_ATTEMPT_TIMESTAMPS = ("started_at", "finished_at")

_DISKS: dict[str, FileDisk] = {}
"""Zoo entry id -> its durable 'disk' (namespace -> envelope id -> stored text)."""
_DISKS_LOCK = threading.Lock()  # storages may be opened from several threads at once


def _disk(entry_id: str) -> FileDisk:
    """The entry's one disk in this process (two would be two diverging mirrors)."""
    with _DISKS_LOCK:
        if entry_id not in _DISKS:
            _DISKS[entry_id] = FileDisk(entry_id)
        return _DISKS[entry_id]


def dumps(obj: Any) -> str:
    """Compact JSON text as the kit's canonical encoder writes it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class DocStorage:
    """A correct storage: canonical JSON text per namespace and id."""

    versions: frozenset[int] = frozenset({1})
    capabilities: frozenset[str] = frozenset({"durable"})
    durable_disk = True
    """False: the data lives in this instance only (lost on reopen)."""

    def __init__(self, entry_id: str) -> None:
        self.entry_id = entry_id
        # Typed as the dicts the mutants annotate their tables with: a FileDisk and
        # its FileTables do everything they do with them (see _disk.FileDisk).
        self.disk: dict[str, dict[str, str]] = (
            cast(dict[str, dict[str, str]], _disk(entry_id)) if self.durable_disk else {}
        )

    # -- the Storage protocol -----------------------------------------------------------
    @property
    def info(self) -> StorageInfo:
        return StorageInfo(
            name=f"zoo-{self.entry_id}",
            version="1.0.0",
            envelope_versions=self.versions,
            capabilities=self.capabilities,
        )

    def open(self, namespace: str) -> DocAdapter:
        return DocAdapter(self, namespace)

    def drop(self, namespace: str) -> None:
        self.disk.pop(namespace, None)

    def close(self) -> None:
        pass

    # -- the steps a mutant overrides ---------------------------------------------------
    def table(self, namespace: str) -> dict[str, str]:
        return self.disk.setdefault(namespace, {})

    def key(self, id: str) -> str:
        return id

    def admit(self, env: Envelope) -> None:
        """Refuse what the storage cannot hold (nothing: every version is stored as is)."""

    def on_write(self, doc: Obj) -> Obj:
        return doc

    def store(self, table: dict[str, str], key: str, doc: Obj) -> None:
        table[key] = dumps(doc)

    def load(self, table: dict[str, str], key: str, id: str) -> Obj | None:
        text = table.get(key)
        if text is None:
            return None
        doc = parse_json(text)
        assert isinstance(doc, dict)
        return doc

    def on_read(self, doc: Obj) -> Obj:
        return doc

    def build(self, doc: Obj) -> Envelope:
        return from_json(doc)

    def on_model(self, env: Envelope) -> Any:
        return env

    # -- driven by the adapter -----------------------------------------------------------
    def write(self, namespace: str, env: Envelope) -> None:
        self.admit(env)
        doc = self.on_write(to_json(env))
        self.store(self.table(namespace), self.key(env.id), doc)

    def read(self, namespace: str, id: str) -> Any:
        doc = self.load(self.table(namespace), self.key(id), id)
        if doc is None:
            return None
        return self.on_model(self.build(self.on_read(doc)))

    def from_text(self, text: str, id: str) -> Any:
        """What ``read`` returns for ``text`` as stored (an adapter that keeps the stored
        text of what it saw answers through this)."""
        doc = parse_json(text)
        assert isinstance(doc, dict)
        return self.on_model(self.build(self.on_read(doc)))


class DocAdapter:
    """The adapter of one namespace: a thin handle on its storage."""

    def __init__(self, storage: DocStorage, namespace: str) -> None:
        self.storage = storage
        self.namespace = namespace

    def write(self, envelope: Envelope) -> Any:
        return self.storage.write(self.namespace, envelope)

    def read(self, id: str) -> Any:
        return self.storage.read(self.namespace, id)

    def close(self) -> None:
        pass


# -- helpers the mutants share ----------------------------------------------------------


def walk_docs(doc: Obj) -> Iterator[tuple[Obj, frozenset[str]]]:
    """The envelope object, each attempt object and each error object, with its known keys."""
    yield doc, ENVELOPE_FIELDS
    for attempt in doc.get("attempts") or []:
        yield attempt, ATTEMPT_FIELDS
        error = attempt.get("error")
        if isinstance(error, dict):
            yield error, ERROR_FIELDS


def unknown_containers(doc: Obj) -> Iterator[tuple[Obj, str]]:
    """(object, key) of every unknown field and of every error ``detail``."""
    for obj, known in walk_docs(doc):
        for key in list(obj):
            if key not in known:
                yield obj, key
        if known is ERROR_FIELDS and "detail" in obj:
            yield obj, "detail"


def map_json_values(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` bottom-up to every value of a JSON tree."""
    if isinstance(value, dict):
        value = {k: map_json_values(v, fn) for k, v in value.items()}
    elif isinstance(value, list):
        value = [map_json_values(v, fn) for v in value]
    return fn(value)


def map_unknown_values(doc: Obj, fn: Callable[[Any], Any]) -> Obj:
    """Apply ``fn`` bottom-up to every value inside unknown fields and ``detail``."""
    for obj, key in list(unknown_containers(doc)):
        obj[key] = map_json_values(obj[key], fn)
    return doc


def map_json_numbers(doc: Obj, fn: Callable[[int | float], Any]) -> Obj:
    """Apply ``fn`` to every number inside unknown fields and ``detail`` (not bools)."""

    def number(v: Any) -> Any:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return fn(v)
        return v

    return map_unknown_values(doc, number)


def map_strings(doc: Obj, fn: Callable[[str], str], *, keys: bool = False) -> Obj:
    """Apply ``fn`` to every free-text string (C4): handler_version, payload_content_type,
    header keys and values, error type/message/stack, strings inside unknown fields and
    detail (their object keys too when ``keys``)."""

    def text(v: Any) -> Any:
        return fn(v) if isinstance(v, str) else v

    def tree(v: Any) -> Any:
        if isinstance(v, dict):
            return {(fn(k) if keys else k): tree(x) for k, x in v.items()}
        if isinstance(v, list):
            return [tree(x) for x in v]
        return text(v)

    doc["handler_version"] = text(doc.get("handler_version"))
    doc["payload_content_type"] = text(doc["payload_content_type"])
    doc["headers"] = {fn(k): fn(v) for k, v in doc["headers"].items()}
    for obj, known in walk_docs(doc):
        if known is ERROR_FIELDS:
            for name in ("type", "message", "stack"):
                obj[name] = text(obj.get(name))
    for obj, key in list(unknown_containers(doc)):
        obj[key] = tree(obj[key])
    return doc


def parse_ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def format_ts(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{dt.microsecond // 1000:03d}Z"


def map_timestamps(doc: Obj, fn: Callable[[str], Any]) -> Obj:
    """Apply ``fn`` to the text of every non-null known timestamp."""
    for name in _TOP_TIMESTAMPS:
        if doc.get(name) is not None:
            doc[name] = fn(doc[name])
    for attempt in doc["attempts"]:
        for name in _ATTEMPT_TIMESTAMPS:
            if attempt.get(name) is not None:
                attempt[name] = fn(attempt[name])
    return doc


def map_model_timestamps(env: Envelope, fn: Callable[[datetime], Any]) -> Envelope:
    """The model with ``fn`` applied to every non-null timestamp (no validation)."""

    def opt(v: datetime | None) -> Any:
        return None if v is None else fn(v)

    attempts = tuple(
        replace(a, started_at=fn(a.started_at), finished_at=opt(a.finished_at))
        for a in env.attempts
    )
    return replace(
        env,
        created_at=fn(env.created_at),
        next_attempt_at=opt(env.next_attempt_at),
        lease_expires_at=opt(env.lease_expires_at),
        attempts=attempts,
    )


def cut_utf8(text: str, limit: int, marker: str = "") -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a code point boundary, plus
    ``marker`` inside the limit, when it is longer; else unchanged."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(marker.encode("utf-8"))
    return data[:room].decode("utf-8", "ignore") + marker

