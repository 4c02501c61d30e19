"""The memory example plugin, through its public hooks, with hand-made envelopes."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points

import pytest
import rdq_plugin_memory

from rdq_compliance import Storage, StorageInfo

from ._contract import (
    AWKWARD_JSON,
    ID_A,
    INT64_MAX,
    StorageContract,
    awkward_envelope,
    strict_diff,
    with_,
)


class TestMemoryContract(StorageContract):
    @pytest.fixture
    def storage(self) -> Iterator[Storage]:
        storage = rdq_plugin_memory.rdq_storage_open({})
        yield storage
        storage.close()


def test_registered_under_rdq_storage() -> None:
    (ep,) = [ep for ep in entry_points(group="rdq.storage") if ep.name == "memory"]
    assert ep.load() is rdq_plugin_memory


def test_info_claims_nothing_it_does_not_do() -> None:
    storage = rdq_plugin_memory.rdq_storage_open({})
    assert isinstance(storage, Storage)
    assert storage.info == StorageInfo("memory", "1.0.0", frozenset({1}), frozenset({"concurrent"}))


def test_not_durable_each_open_starts_empty() -> None:
    first = rdq_plugin_memory.rdq_storage_open({})
    first.open("ns_one").write(awkward_envelope())
    second = rdq_plugin_memory.rdq_storage_open({})
    assert second.open("ns_one").read(ID_A) is None


def test_strict_diff_catches_defects() -> None:
    """The independent comparison fails on the defects the plugin tests rely on it for."""
    env = awkward_envelope()
    assert strict_diff(env, env) == []
    lossy = {**AWKWARD_JSON, "u_int64_max": float(INT64_MAX)}
    assert strict_diff(env, with_(env, extra=lossy))
    no_null = {k: v for k, v in AWKWARD_JSON.items() if k != "u_null"}
    assert strict_diff(env, with_(env, extra=no_null))
    assert strict_diff(env, with_(env, handler_version=None))
    assert strict_diff(env, with_(env, attempts=tuple(reversed(env.attempts))))
    assert strict_diff(env, with_(env, headers={**env.headers, "A": "lower"}))
    assert strict_diff(env, with_(env, extra={**AWKWARD_JSON, "u_one_float": True}))
    assert strict_diff(env, with_(env, extra={**AWKWARD_JSON, "u_neg_zero": 0.0}))
    assert strict_diff(env, None)
