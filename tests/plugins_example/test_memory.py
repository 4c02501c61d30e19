"""The memory example plugin, through its public hooks, with hand-made envelopes."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import rdq_plugin_memory

from rdq_compliance import Storage, StorageInfo

from ._harness import AdapterOutlivesDrop, Live, Namespaces, StorageContract


class TestMemoryContract(StorageContract, AdapterOutlivesDrop):
    expected_info = StorageInfo("memory", "1.0.0", frozenset({1}), frozenset({"concurrent"}))

    @pytest.fixture
    def live(self) -> Iterator[Live]:
        storage = rdq_plugin_memory.rdq_storage_open({})
        yield storage, Namespaces("me")
        storage.close()

    @pytest.fixture
    def reopen(self) -> Callable[[], Storage]:
        return lambda: rdq_plugin_memory.rdq_storage_open({})
