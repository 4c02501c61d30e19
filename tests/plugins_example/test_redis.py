"""The redis example plugin against the live Redis server (public API only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from rdq_compliance import StorageInfo

from ._harness import (
    AdapterOutlivesDrop,
    Live,
    ServerStorageContract,
    assert_same,
    awkward_envelope,
    minimal_envelope,
    resolve_options,
)

redis = pytest.importorskip("redis")
rdq_plugin_redis: ModuleType = pytest.importorskip("rdq_plugin_redis")


def _raw() -> Any:
    return redis.Redis.from_url(resolve_options(rdq_plugin_redis)["url"],
                                socket_connect_timeout=3)


def _keys(pattern: bytes) -> list[bytes]:
    client = _raw()
    try:
        return sorted(client.scan_iter(match=pattern, count=1000))
    finally:
        client.close()


@pytest.fixture(scope="module")
def plugin() -> ModuleType:
    return rdq_plugin_redis


@pytest.fixture(scope="module")
def remaining() -> Callable[[str], list[bytes]]:
    """This run's server objects, by namespace prefix (conftest's ``live`` checks them)."""
    return lambda prefix: _keys(f"rdq:{prefix}*".encode())


@pytest.fixture(scope="module")
def raw(live: Live) -> Iterator[Any]:
    """An independent client to look at the server behind the plugin's back."""
    client = _raw()
    yield client
    client.close()


@pytest.fixture(scope="module")
def leftovers(live: Live) -> Callable[[str], list[bytes]]:
    return lambda namespace: _keys(f"rdq:{namespace}:*".encode())


class TestRedis(ServerStorageContract, AdapterOutlivesDrop):
    expected_info = StorageInfo(
        "redis", "1.0.0", frozenset({1}), frozenset({"durable", "concurrent"})
    )

    def test_native_layout(self, live: Live, raw: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        env = awkward_envelope()
        bare = minimal_envelope(handler_version=None)
        adapter = storage.open(ns)
        adapter.write(env)
        adapter.write(bare)
        key = f"rdq:{ns}:{env.id}".encode()
        assert raw.type(key) == b"hash"
        assert raw.hget(key, b"h:A") == b"upper"
        assert raw.hget(key, b"h:a") == b"lower"
        assert raw.hget(key, b"h:k\x00") == b"v\x00"
        assert raw.hget(key, b"payload") == bytes(range(256))
        assert raw.hget(key, b"created_at") == b"1"  # epoch milliseconds
        assert not raw.hexists(f"rdq:{ns}:{bare.id}".encode(), b"handler_version")

    def test_outside_data_untouched(self, live: Live, raw: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        # Keys that look like the namespace's but are not in it, plus unrelated ones.
        outside = {
            f"rdq:{ns}".encode(): b"no trailing colon",
            f"rdq:{ns}x:01ABC".encode(): b"another namespace",
            f"xrdq:{ns}:01ABC".encode(): b"prefix elsewhere",
            f"{spaces.prefix}_sentinel".encode(): b"unrelated",
        }
        try:
            for k, v in outside.items():
                raw.set(k, v)
            adapter = storage.open(ns)
            for _ in range(3):
                adapter.write(awkward_envelope())
            storage.drop(ns)
            assert {k: raw.get(k) for k in outside} == outside
        finally:
            raw.delete(*outside)

    def test_drop_many_keys_in_batches(
        self, live: Live, leftovers: Callable[[str], list[bytes]]
    ) -> None:
        storage, spaces = live
        ns = spaces.new()
        adapter = storage.open(ns)
        envs = [minimal_envelope() for _ in range(1203)]  # > 2 drop batches
        for env in envs:
            adapter.write(env)
        assert len(leftovers(ns)) == len(envs)
        assert_same(envs[-1], adapter.read(envs[-1].id))
        storage.drop(ns)
        assert leftovers(ns) == []


def test_an_unreachable_server_is_unavailable(live: Live) -> None:
    """C20: a Redis that cannot be reached answers UNAVAILABLE, not INTERNAL (a port
    nobody listens on stands for a server that went away)."""
    import socket

    from rdq_compliance import ErrorCode, StorageError

    from ._harness import minimal_envelope

    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    storage = rdq_plugin_redis.RedisStorage(client, version="0")
    adapter = storage.open("gone")
    env = minimal_envelope()
    for call in (lambda: adapter.write(env), lambda: adapter.read(env.id),
                 lambda: storage.drop("gone")):
        with pytest.raises(StorageError) as info:
            call()
        assert info.value.code == ErrorCode.UNAVAILABLE, info.value
    storage.close()
