"""What every example plugin shares: its entry point, and one clear StorageUnavailable
naming the setting to change when its server cannot be reached or its setting is
malformed (public API only)."""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import pytest

from rdq_compliance import StorageUnavailable

from ._harness import resolve_options

EXAMPLE_PLUGINS = {
    "memory": "rdq_plugin_memory",
    "sqlite": "rdq_plugin_sqlite",
    "postgres": "rdq_plugin_postgres",
    "redis": "rdq_plugin_redis",
    "mariadb": "rdq_plugin_mariadb",
}


def _plugin(module: str) -> Any:
    return pytest.importorskip(module)


@pytest.mark.parametrize(("name", "module"), EXAMPLE_PLUGINS.items())
def test_registered_entry_point(name: str, module: str) -> None:
    plugin = _plugin(module)
    (ep,) = [e for e in entry_points(group="rdq.storage") if e.name == name]
    assert ep.load() is plugin


def _mariadb_port_1(plugin: Any) -> dict[str, str]:
    return {**resolve_options(plugin), "port": "1"}


# module, options that point at a closed port, the setting named, message fragments
UNREACHABLE: list[tuple[str, Callable[[Any], dict[str, str]], str, tuple[str, ...]]] = [
    ("rdq_plugin_postgres", lambda _: {"dsn": "postgresql://postgres@127.0.0.1:1/test"}, "dsn",
     ("PostgreSQL at 127.0.0.1:1", "RDQ_POSTGRES_DSN")),
    ("rdq_plugin_redis", lambda _: {"url": "redis://127.0.0.1:1/0"}, "url",
     ("Redis at 127.0.0.1:1/0 refused the connection", "RDQ_REDIS_URL")),
    ("rdq_plugin_mariadb", _mariadb_port_1, "host",
     ("MariaDB at 127.0.0.1:1/", "RDQ_MARIADB_PORT")),
]


@pytest.mark.parametrize(("module", "options", "setting", "fragments"), UNREACHABLE,
                         ids=[m for m, *_ in UNREACHABLE])
def test_unreachable_server_is_reported_fast(
    module: str, options: Callable[[Any], dict[str, str]], setting: str,
    fragments: tuple[str, ...],
) -> None:
    plugin = _plugin(module)
    start = time.monotonic()
    with pytest.raises(StorageUnavailable) as info:
        plugin.rdq_storage_open(options(plugin))
    # A refused connection is immediate; a bound far above it, so that a plugin
    # retrying or waiting for a timeout (the kit's CI would hang) is caught.
    assert time.monotonic() - start < 5
    assert info.value.setting == setting
    for fragment in fragments:
        assert fragment in info.value.message


@pytest.mark.parametrize(("module", "options", "setting"), [
    ("rdq_plugin_postgres", {"dsn": "nonsense=1"}, "dsn"),
    ("rdq_plugin_redis", {"url": "http://127.0.0.1:6379"}, "url"),
])
def test_malformed_setting_is_reported(module: str, options: dict[str, str],
                                       setting: str) -> None:
    plugin = _plugin(module)
    with pytest.raises(StorageUnavailable) as info:
        plugin.rdq_storage_open(options)
    assert info.value.setting == setting
    assert setting in info.value.message

