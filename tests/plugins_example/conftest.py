"""Fixtures and the skip logic of the example-plugin tests; the envelopes, the strict
comparison and the contract live in ``_harness.py``.

Nothing here is autouse. A server that is down skips its tests, unless
``RDQ_REQUIRE_SERVICES=1`` (CI, and the lead's runs) turns the skip into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, NoReturn

import pytest

from rdq_compliance import Storage, StorageUnavailable

from ._harness import Live, Namespaces, resolve_options

REQUIRE_ENV = "RDQ_REQUIRE_SERVICES"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers it too; declared here so that a run without xdist is clean.
    config.addinivalue_line("markers", "xdist_group(name): run in one xdist worker")


def unavailable(reason: str) -> NoReturn:
    """Skip: a service this test needs is missing; fail instead when it is required."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 and {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {REQUIRE_ENV}=1 to fail instead)")


LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def local_redis() -> Any:
    """A client of the local Redis, pinged; skip (or fail if required) when it is down."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(LOCAL_REDIS, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        unavailable(f"Redis at 127.0.0.1:6379 is unavailable: {exc}")
    return client


def open_or_skip(module: ModuleType, **overrides: str) -> Storage:
    """Open the plugin on its live server; skip (or fail if required) when it is down."""
    try:
        return module.rdq_storage_open({**resolve_options(module), **overrides})  # type: ignore[no-any-return]
    except StorageUnavailable as exc:
        unavailable(f"the server is unavailable: {exc}")


@pytest.fixture(scope="module")
def live(plugin: ModuleType, remaining: Callable[[str], list[Any]]) -> Iterator[Live]:
    """A server-backed module's live storage (the module provides ``plugin`` and
    ``remaining``). At the end, drop every namespace the tests used and check with
    ``remaining(prefix)`` (the server's own view) that nothing of this run is left.
    Only this run's prefix is checked: other runs share the servers."""
    storage = open_or_skip(plugin)
    spaces = Namespaces(storage.info.name[:2])
    try:
        yield storage, spaces
    finally:
        for ns in spaces.used:
            storage.drop(ns)
        storage.close()
    left = remaining(spaces.prefix)
    assert left == [], f"objects of this run left on the server after drop: {left}"


@pytest.fixture(scope="module")
def reopen(plugin: ModuleType) -> Callable[[], Storage]:
    """Another Storage on the same server (StorageContract's durability test)."""
    return lambda: open_or_skip(plugin)
