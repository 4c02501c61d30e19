"""The mariadb example plugin against the live MariaDB server (public API only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from rdq_compliance import StorageError, StorageInfo, StorageUnavailable

from ._harness import (
    AdapterOutlivesDrop,
    Live,
    ServerStorageContract,
    assert_same,
    awkward_envelope,
    minimal_envelope,
    resolve_options,
)
from .conftest import open_or_skip

pymysql = pytest.importorskip("pymysql")
rdq_plugin_mariadb: ModuleType = pytest.importorskip("rdq_plugin_mariadb")


def _raw() -> Any:
    o = resolve_options(rdq_plugin_mariadb)
    return pymysql.connect(host=o["host"], port=int(o["port"]), user=o["user"],
                           password=o["password"], database=o["database"],
                           charset="utf8mb4", autocommit=True, connect_timeout=3)


def _tables(pattern: str) -> list[str]:
    conn = _raw()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT table_name FROM information_schema.tables WHERE "
                        "table_schema = DATABASE() AND table_name LIKE %s ORDER BY 1", [pattern])
            return [r[0] for r in cur.fetchall()]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def plugin() -> ModuleType:
    return rdq_plugin_mariadb


@pytest.fixture(scope="module")
def remaining() -> Callable[[str], list[str]]:
    """This run's server objects, by namespace prefix (conftest's ``live`` checks them)."""
    return lambda prefix: _tables(f"rdq\\_{prefix}%")


@pytest.fixture(scope="module")
def sql(live: Live) -> Iterator[Any]:
    """An independent connection to look at the server behind the plugin's back."""
    conn = _raw()
    with conn.cursor() as cur:
        yield cur
    conn.close()


@pytest.fixture(scope="module")
def leftovers(live: Live) -> Callable[[str], list[str]]:
    return lambda namespace: [
        t for t in _tables(f"rdq\\_{namespace}\\_%")
        if t in {f"rdq_{namespace}_{s}" for s in ("envelope", "header", "attempt")}
    ]


class TestMariaDB(ServerStorageContract, AdapterOutlivesDrop):
    expected_info = StorageInfo(
        "mariadb", "1.0.0", frozenset({1}), frozenset({"durable", "concurrent"})
    )

    def test_native_column_types(self, live: Live, sql: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        storage.open(ns).write(awkward_envelope())
        sql.execute("SELECT CONCAT(table_name, '.', column_name), column_type, collation_name "
                    "FROM information_schema.columns WHERE table_schema = DATABASE() "
                    "AND table_name LIKE %s", [f"rdq\\_{ns}\\_%"])
        cols = {name.removeprefix(f"rdq_{ns}_"): (t, c) for name, t, c in sql.fetchall()}
        assert cols["envelope.payload"][0] == "longblob"
        assert cols["envelope.created_at"][0] == "datetime(3)"
        assert cols["envelope.residual"] == ("longtext", "utf8mb4_bin")  # not JSON
        assert cols["header.k"] == ("mediumtext", "utf8mb4_bin")
        assert cols["attempt.error_stack"] == ("mediumtext", "utf8mb4_bin")
        sql.execute(f"SELECT CAST(created_at AS CHAR) FROM `rdq_{ns}_envelope`")
        assert sql.fetchall() == (("1970-01-01 00:00:00.001",),)  # UTC, ms kept

    def test_outside_data_untouched(self, live: Live, sql: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        # Tables that share the namespace's prefix or look like another namespace's.
        outside = [f"rdq_{ns}_sentinel", f"rdq_{ns}x_envelope", f"{spaces.prefix}_sentinel"]
        try:
            for t in outside:
                sql.execute(f"CREATE TABLE `{t}` (v VARCHAR(10))")
                sql.execute(f"INSERT INTO `{t}` VALUES ('keep')")
            adapter = storage.open(ns)
            adapter.write(awkward_envelope())
            storage.drop(ns)
            for t in outside:
                sql.execute(f"SELECT v FROM `{t}`")
                assert sql.fetchall() == (("keep",),)
        finally:
            for t in outside:
                sql.execute(f"DROP TABLE IF EXISTS `{t}`")

    def test_tables_are_created_by_the_first_write(
        self, live: Live, leftovers: Callable[[str], list[str]]
    ) -> None:
        storage, spaces = live
        ns = spaces.new()
        adapter = storage.open(ns)
        assert leftovers(ns) == []  # open() alone runs no DDL
        assert adapter.read("01ARZ3NDEKTSV4RRFFQ69G5FAV") is None
        env = awkward_envelope()
        adapter.write(env)
        assert len(leftovers(ns)) == 3
        # An adapter whose namespace was dropped under it starts the namespace afresh.
        storage.drop(ns)
        assert adapter.read(env.id) is None
        adapter.write(env)
        assert_same(env, adapter.read(env.id))

    def test_trailing_space_ids_are_distinct(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = minimal_envelope("01ARZ3NDEKTSV4RRFFQ69G5FAV")
        adapter.write(env)
        assert adapter.read(env.id + " ") is None
        assert adapter.read(env.id.lower()) is None

    def test_failed_write_rolls_back(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = awkward_envelope()
        adapter.write(env)
        # A 300-character queue (invalid by C8a anyway) does not fit VARCHAR(255): in
        # strict mode the server refuses the insert after the DELETE ran; the
        # transaction must undo the DELETE.
        with pytest.raises(StorageError):
            adapter.write(minimal_envelope(env.id, queue="q" * 300))
        assert_same(env, adapter.read(env.id))


@pytest.mark.parametrize(("options", "setting", "text"), [
    ({"port": "abc"}, "port", "port='abc' is not an integer"),
    ({"database": "h3b_no_such_db"}, "database", "has no such database"),
    ({"user": "h3b_nobody", "password": "x"}, "user", "rejected the credentials"),
    ({"dsn": "postgres://x/y"}, "dsn", "dsn is not a mysql://"),
    ({"dsn": "mysql://root@127.0.0.1:1/test"}, "dsn", "RDQ_MARIADB_DSN"),
])
def test_bad_settings_are_reported(
    options: dict[str, str], setting: str, text: str, live: Live
) -> None:
    with pytest.raises(StorageUnavailable) as info:
        rdq_plugin_mariadb.rdq_storage_open({**resolve_options(rdq_plugin_mariadb), **options})
    assert info.value.setting == setting
    assert text in info.value.message


def test_dsn_option_connects(live: Live) -> None:
    o = resolve_options(rdq_plugin_mariadb)
    dsn = f"mysql://{o['user']}:{o['password']}@{o['host']}:{o['port']}/{o['database']}"
    storage = open_or_skip(rdq_plugin_mariadb, dsn=dsn, host="h3b-unused.invalid")
    storage.close()


def test_a_lost_connection_is_unavailable_and_the_next_call_reconnects(live: Live) -> None:
    """C20: the server closing the pooled connection (as a restart does) makes the call
    UNAVAILABLE, not INTERNAL; the next call opens a fresh connection and works."""
    from rdq_compliance import ErrorCode

    from ._harness import Namespaces, assert_same, minimal_envelope

    storage = open_or_skip(rdq_plugin_mariadb)
    try:
        spaces = Namespaces("ml")
        ns = spaces.new()
        adapter = storage.open(ns)
        env = minimal_envelope()
        adapter.write(env)
        with storage.connection() as conn, conn.cursor() as cur:  # the pool's only one
            cur.execute("SELECT CONNECTION_ID()")
            (own,) = cur.fetchone()
        killer = _raw()
        with killer.cursor() as cur:
            cur.execute(f"KILL {int(own)}")  # what a restarting server does to it
        killer.close()
        with pytest.raises(StorageError) as info:
            adapter.read(env.id)
        assert info.value.code == ErrorCode.UNAVAILABLE, info.value
        assert_same(env, adapter.read(env.id))
        storage.drop(ns)
    finally:
        storage.close()
