"""A correct in-memory plugin that counts the storages and adapters open in its process
and fails an ``open`` past a budget: the connection budget's witness (issue 22 §3).

Load it with ``--rdq-plugin=tests.testing._budget_plugin:`` (the repository root on
``PYTHONPATH``). Options: ``adapters`` and ``storages``, the most that may be open at
once in one process (an ``open`` beyond them raises, so the test that did it fails);
``concurrent=1`` to declare ``concurrent``; ``log=PATH`` to append, at process exit, one
line ``<pid> <most adapters open> <most storages open>`` (the figures a run reached).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping

from rdq_plugin_memory import MemoryAdapter, MemoryStorage

from rdq_compliance import Envelope, OptionSpec, StorageInfo, hookimpl

_lock = threading.Lock()
_now = {"adapters": 0, "storages": 0}
_most = {"adapters": 0, "storages": 0}
_logs: set[str] = set()


def _count(kind: str, step: int, limit: int) -> None:
    with _lock:
        if step > 0 and _now[kind] + 1 > limit:
            raise RuntimeError(
                f"budget exceeded: {_now[kind] + 1} {kind} would be open at once in process "
                f"{os.getpid()}, at most {limit} allowed")
        _now[kind] += step
        _most[kind] = max(_most[kind], _now[kind])


def _write_logs() -> None:
    for path in _logs:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {_most['adapters']} {_most['storages']}\n")


atexit.register(_write_logs)


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [OptionSpec("adapters", default="4"), OptionSpec("storages", default="1"),
            OptionSpec("concurrent", default="0"), OptionSpec("log", default="")]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> CountingStorage:
    if options["log"]:
        _logs.add(options["log"])
    return CountingStorage(int(options["adapters"]), int(options["storages"]),
                           concurrent=options["concurrent"] == "1")


class CountingStorage:
    def __init__(self, adapters: int, storages: int, *, concurrent: bool) -> None:
        _count("storages", 1, storages)
        self._inner = MemoryStorage()
        self._limit = adapters
        self._storages = storages
        self._closed = False
        self.info = StorageInfo(name="budget", version="1.0.0", envelope_versions=frozenset({1}),
                                capabilities=frozenset({"concurrent"} if concurrent else ()))

    def open(self, namespace: str) -> CountingAdapter:
        inner = self._inner.open(namespace)  # refuses an invalid name before counting
        _count("adapters", 1, self._limit)
        return CountingAdapter(inner)

    def drop(self, namespace: str) -> None:
        self._inner.drop(namespace)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _count("storages", -1, self._storages)
        self._inner.close()


class CountingAdapter:
    def __init__(self, inner: MemoryAdapter) -> None:
        self._inner = inner
        self._closed = False

    def write(self, envelope: Envelope) -> None:
        self._inner.write(envelope)

    def read(self, id: str) -> Envelope | None:
        return self._inner.read(id)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _count("adapters", -1, 0)
