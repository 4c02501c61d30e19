"""A timing proxy storage plugin: ``--rdq-plugin=benchmarks._timing:proxy``.

It loads the plugin named by ``--rdq-option wrapped=NAME`` (an ``rdq.storage``
entry point, default ``memory``), forwards every call to it unchanged and adds
up the wall time spent *inside* the wrapped plugin's calls, per operation. The
kit is not modified: the kit sees an ordinary plugin.

The totals are written as JSON to the file named by the environment variable
``RDQ_BENCH_TIMING`` when the process exits (or by :func:`dump`), so the
benchmark driver can split a run into plugin time and everything else.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from rdq_compliance import OptionSpec, hookimpl

# The proxy needs to load another plugin by name exactly as the kit does; the
# benchmark may use a private helper (it is not an example plugin).
from rdq_compliance.storage._discovery import load_plugin, resolve_options

__all__ = ["TOTALS", "dump", "proxy"]

ENV_OUT = "RDQ_BENCH_TIMING"

# operation -> [calls, seconds]; guarded because xdist-less runs still call
# the plugin from the kit's worker thread while the main thread may dump.
TOTALS: dict[str, list[float]] = {}
_lock = threading.Lock()


def _timed(op: str, fn: Callable[..., Any], *args: Any) -> Any:
    start = time.perf_counter()
    try:
        return fn(*args)
    finally:
        elapsed = time.perf_counter() - start
        with _lock:
            slot = TOTALS.setdefault(op, [0, 0.0])
            slot[0] += 1
            slot[1] += elapsed


class TimedAdapter:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, envelope: Any) -> None:
        return _timed("adapter.write", self._inner.write, envelope)  # type: ignore[no-any-return]

    def read(self, id: str) -> Any:
        return _timed("adapter.read", self._inner.read, id)

    def close(self) -> None:
        _timed("adapter.close", self._inner.close)


class TimedStorage:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def info(self) -> Any:
        return _timed("storage.info", lambda: self._inner.info)

    def open(self, namespace: str) -> TimedAdapter:
        return TimedAdapter(_timed("storage.open", self._inner.open, namespace))

    def drop(self, namespace: str) -> None:
        _timed("storage.drop", self._inner.drop, namespace)

    def close(self) -> None:
        _timed("storage.close", self._inner.close)


class _Proxy:
    """The pluggy plugin object (hookimpls are methods of one instance)."""

    @hookimpl
    def rdq_storage_options(self) -> list[OptionSpec]:
        return [
            OptionSpec("wrapped", default="memory",
                       help="rdq.storage entry-point name of the plugin to time"),
            OptionSpec("wrapped_options", default="",
                       help="options of the wrapped plugin, KEY=VALUE separated by ';'"),
        ]

    @hookimpl
    def rdq_storage_open(self, options: Mapping[str, str]) -> TimedStorage:
        name = options.get("wrapped", "memory")
        inner_settings = [s for s in options.get("wrapped_options", "").split(";") if s]
        loaded = load_plugin(name)
        resolve_options([loaded], inner_settings)
        storage = _timed("rdq_storage_open", lambda: loaded.pm.hook.rdq_storage_open(
            options=dict(loaded.resolved)))
        return TimedStorage(storage)


proxy = _Proxy()


def dump(path: str | None = None) -> None:
    """Write the totals as JSON: {op: {"calls": n, "seconds": s}, "total": s}."""
    path = path or os.environ.get(ENV_OUT)
    if not path:
        return
    with _lock:
        ops = {op: {"calls": int(n), "seconds": s} for op, (n, s) in sorted(TOTALS.items())}
    total = sum(v["seconds"] for v in ops.values())
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"ops": ops, "total": total}, fh, indent=1)


atexit.register(dump)
