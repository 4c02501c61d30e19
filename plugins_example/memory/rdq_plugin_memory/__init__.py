"""The in-memory rdq storage plugin: the smallest plugin that is correct.

Read this file top to bottom if you are writing your own plugin. It shows
everything the kit needs from a Python plugin:

1. a module registered under the ``rdq.storage`` entry-point group (see this
   distribution's ``pyproject.toml``), whose entry-point name is the plugin
   name used with ``pytest --rdq-plugin=memory``;
2. a ``rdq_storage_open`` hook returning a :class:`~rdq_compliance.Storage`;
3. the storage, which opens one adapter per namespace (C14) and drops them;
4. the adapter, which writes and reads :class:`~rdq_compliance.Envelope` values.

The plugin imports only from ``rdq_compliance`` (the public package).

How it stores an envelope
-------------------------
``write`` keeps the canonical JSON *text* of the envelope (``encode``), and
``read`` builds a fresh envelope from that text. Keeping the caller's
``Envelope`` object instead would look correct but is not: the envelope is
frozen, yet its ``extra`` residual holds plain dicts and lists that the caller
can still mutate after ``write`` returned, and such a change would silently
show up in later reads. A string is immutable, so nothing the caller does to
the object it wrote (or to an object it read) can reach the store. It is also
what a real store does: serialise on write, deserialise on read.

The plugin is not durable: every ``rdq_storage_open`` starts empty, so it
does not declare ``durable`` and the kit skips the durability check (C15) for it.

It declares ``concurrent`` (C18): an rdq server calls it from many threads. One
lock guards the dict of namespaces; each write replaces one string under it, so
a concurrent read sees the whole old text or the whole new one, never a mix, and
writes of different ids cannot lose one another. Encoding and decoding happen
outside the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from rdq_compliance import (
    NAMESPACE_PATTERN,
    Envelope,
    StorageInfo,
    encode,
    from_json,
    hookimpl,
    parse_json,
    require_envelope_version,
)

__all__ = ["MemoryAdapter", "MemoryStorage", "rdq_storage_open"]

__version__ = "1.0.0"

# The envelope versions this plugin stores. Anything else is refused with
# UNSUPPORTED_ENVELOPE_VERSION, one of the two answers C16 allows.
SUPPORTED_VERSIONS = frozenset({1})


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> MemoryStorage:
    """Create the storage under test. The plugin declares no options, so
    ``options`` is empty (no ``rdq_storage_options`` hook is needed)."""
    return MemoryStorage()


class MemoryStorage:
    """All namespaces of one storage: namespace -> (id -> canonical JSON text)."""

    def __init__(self) -> None:
        self._namespaces: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()  # C18: one lock around every look-up and change
        self._info = StorageInfo(
            name="memory",
            version=__version__,
            envelope_versions=SUPPORTED_VERSIONS,
            # not durable, but safe to call from many threads: see the module docstring
            capabilities=frozenset({"concurrent"}),
        )

    @property
    def info(self) -> StorageInfo:
        return self._info

    def open(self, namespace: str) -> MemoryAdapter:
        if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
            raise ValueError(
                f"namespace={namespace!r} is not a valid namespace: expected "
                f"{NAMESPACE_PATTERN.pattern} (C14)"
            )
        return MemoryAdapter(self, namespace)

    def drop(self, namespace: str) -> None:
        # Removes this namespace and nothing else (C14); unknown is not an error.
        with self._lock:
            self._namespaces.pop(namespace, None)

    def close(self) -> None:
        with self._lock:
            self._namespaces.clear()

    # The adapter looks its namespace up on every call instead of holding the
    # inner dict: after drop(), an adapter opened earlier must not keep
    # writing into (or reading from) the dropped data.
    # Callers hold self._lock.
    def _space(self, namespace: str) -> dict[str, str]:
        return self._namespaces.setdefault(namespace, {})


class MemoryAdapter:
    """The storage opened on one namespace."""

    def __init__(self, storage: MemoryStorage, namespace: str) -> None:
        self._storage = storage
        self._namespace = namespace

    def write(self, envelope: Envelope) -> None:
        require_envelope_version(envelope, SUPPORTED_VERSIONS)  # C16
        # Whole replacement (C13) comes for free: the new text replaces the old,
        # in one step under the lock (C18: atomic).
        text = encode(envelope)
        storage = self._storage
        with storage._lock:
            storage._space(self._namespace)[envelope.id] = text

    def read(self, id: str) -> Envelope | None:
        storage = self._storage
        with storage._lock:
            text = storage._space(self._namespace).get(id)
        if text is None:
            return None
        # parse_json keeps every number exact (C5); from_json rebuilds the model
        # without re-validating, so we return exactly what was written.
        obj = parse_json(text)
        assert isinstance(obj, dict)  # we stored encode() output: always an object
        return from_json(obj)

    def close(self) -> None:
        # Nothing to release: the data belongs to the storage, not the adapter.
        pass
