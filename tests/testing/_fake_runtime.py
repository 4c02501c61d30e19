"""A started :class:`PluginRuntime` over one in-process fake plugin, for the tests of
the runtime, its guard and the concurrency lanes."""

from __future__ import annotations

from rdq_compliance.storage._discovery import LoadedPlugin, _new_manager
from rdq_compliance.testing._runtime import PluginRuntime


def started_runtime(plugin: object, timeout: float) -> PluginRuntime:
    """``plugin`` (an object with ``@hookimpl`` methods) registered alone, its storage
    opened by the runtime's worker thread, every call bounded by ``timeout`` seconds."""
    pm = _new_manager()
    pm.register(plugin)
    rt = PluginRuntime(LoadedPlugin("fake", pm, ()), timeout)
    rt.start()
    assert rt.storage is not None
    return rt
