"""One in-process fake plugin for the runtime's tests (the adapter budget, outages):
an in-memory store that logs every call, counts the adapters open at once, and can be
told to answer ``UNAVAILABLE`` for some kinds of call or to forget what a closed
adapter held. Register :class:`Plugin` with ``_fake_runtime.started_runtime``."""

from __future__ import annotations

import threading
from collections.abc import Callable

from rdq_compliance import Envelope, ErrorCode, StorageError, StorageInfo, hookimpl

__all__ = ["Adapter", "Plugin", "Storage"]


class Adapter:
    def __init__(self, storage: Storage, namespace: str) -> None:
        self.storage, self.namespace = storage, namespace

    def write(self, envelope: Envelope) -> None:
        self.storage.answer("write", self.namespace)
        self.storage.data.setdefault(self.namespace, {})[envelope.id] = envelope

    def read(self, id: str) -> Envelope | None:
        self.storage.answer("read", self.namespace)
        if self.storage.forget_on_close:
            return None
        return self.storage.data.get(self.namespace, {}).get(id)

    def close(self) -> None:
        with self.storage.lock:
            self.storage.open_now.remove(self)
            self.storage.log.append(("close", self.namespace))


class Storage:
    def __init__(self, features: frozenset[str] = frozenset()) -> None:
        self.info = StorageInfo("fake", "0", frozenset({1}), features)
        self.data: dict[str, dict[str, Envelope]] = {}
        self.open_now: list[Adapter] = []
        self.most = 0
        """The most adapters that were open at once."""
        self.log: list[tuple[str, str]] = []
        """(kind of call, namespace) of every call, in order; ``close`` of adapters too."""
        self.lock = threading.Lock()
        self.down: set[str] = set()
        """Kinds of call (``open``, ``write``, ``read``, ``drop``) answered UNAVAILABLE."""
        self.lost: Callable[[], BaseException] | None = None
        """Makes what a call of a kind in ``down`` raises instead (a lost connection let
        through as the driver raised it); None: StorageError(UNAVAILABLE)."""
        self.forget_on_close = False
        """Reads find nothing: what a store that loses unsaved data on close would say
        after the kit closed and reopened an adapter."""

    @property
    def calls(self) -> list[str]:
        """The kinds of the calls made, ``close`` of adapters left out."""
        return [kind for kind, _ in self.log if kind != "close"]

    def answer(self, kind: str, namespace: str) -> None:
        with self.lock:
            self.log.append((kind, namespace))
            if kind in self.down:
                if self.lost is not None:
                    raise self.lost()
                raise StorageError(ErrorCode.UNAVAILABLE, f"connection refused ({kind})")

    def open(self, namespace: str) -> Adapter:
        self.answer("open", namespace)
        adapter = Adapter(self, namespace)
        with self.lock:
            self.open_now.append(adapter)
            self.most = max(self.most, len(self.open_now))
        return adapter

    def drop(self, namespace: str) -> None:
        self.answer("drop", namespace)
        self.data.pop(namespace, None)

    def close(self) -> None: ...


class Plugin:
    def __init__(self, features: frozenset[str] = frozenset()) -> None:
        self.storage = Storage(features)

    @hookimpl
    def rdq_storage_open(self, options: dict[str, str]) -> Storage:
        return self.storage
