"""A fake plugin that records every call with the number of the storage it reached and
whose drops can hang until the test ends, with the ``world`` and ``runtime`` fixtures
(used by tests/testing/conftest.py): the orphan and shared-namespace tests, in process.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rdq_compliance import ErrorCode, StorageError, StorageInfo, hookimpl
from rdq_compliance._requirements import get_requirement
from rdq_compliance.testing._context import KitSettings
from rdq_compliance.testing._handle import Rdq
from rdq_compliance.testing._runtime import PluginRuntime

TIMEOUT = 0.2


class World:
    def __init__(self) -> None:
        self.log: list[tuple[str, int, str]] = []
        self.storages = 0
        self.hang_drops_on: set[int] = set()  # storage numbers whose drop hangs
        self.open_fails_after = 99
        self.refuse_drops: set[str] = set()  # namespaces whose drop raises StorageError
        self.gate = threading.Event()  # set at the end: lets every hung call return


class Adapter:
    def write(self, envelope: object) -> None: ...
    def read(self, id: str) -> None: ...
    def close(self) -> None: ...


class Storage:
    info = StorageInfo("fake", "0", frozenset({1}), frozenset())

    def __init__(self, world: World) -> None:
        world.storages += 1
        self.world, self.n = world, world.storages

    def open(self, namespace: str) -> Adapter:
        self.world.log.append(("open", self.n, namespace))
        return Adapter()

    def drop(self, namespace: str) -> None:
        self.world.log.append(("drop", self.n, namespace))
        if namespace in self.world.refuse_drops:
            raise StorageError(ErrorCode.INTERNAL, f"cannot drop {namespace}")
        if self.n in self.world.hang_drops_on:
            self.world.gate.wait(30)

    def close(self) -> None: ...


class Plugin:
    def __init__(self, world: World) -> None:
        self.world = world

    @hookimpl
    def rdq_storage_open(self, options: dict[str, str]) -> Storage:
        if self.world.storages >= self.world.open_fails_after:
            raise RuntimeError("cannot reopen")
        return Storage(self.world)


def rdq_for(runtime: PluginRuntime) -> Rdq:
    item: Any = SimpleNamespace(name="test_x", originalname="test_x")
    settings = KitSettings(("fake",), "quick", 0, TIMEOUT, Path("unused"), None)
    return Rdq(item, get_requirement("RDQ-ST-003"), runtime, settings)
