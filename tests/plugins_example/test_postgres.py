"""The postgres example plugin against the live PostgreSQL server (public API only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from rdq_compliance import StorageError, StorageInfo

from ._harness import (
    Live,
    ServerStorageContract,
    assert_same,
    awkward_envelope,
    minimal_envelope,
    resolve_options,
)
from .conftest import open_or_skip

psycopg = pytest.importorskip("psycopg")
rdq_plugin_postgres: ModuleType = pytest.importorskip("rdq_plugin_postgres")


@pytest.fixture(scope="module")
def plugin() -> ModuleType:
    return rdq_plugin_postgres


def _schemas(pattern: str) -> list[str]:
    with psycopg.connect(resolve_options(rdq_plugin_postgres)["dsn"], autocommit=True) as conn:
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s ORDER BY 1", [pattern]
        ).fetchall()
    return [r[0] for r in rows]


@pytest.fixture(scope="module")
def remaining() -> Callable[[str], list[str]]:
    """This run's server objects, by namespace prefix (conftest's ``live`` checks them)."""
    return lambda prefix: _schemas(f"rdq\\_{prefix}%")


@pytest.fixture(scope="module")
def sql(live: Live) -> Iterator[Any]:
    """An independent connection to look at the server behind the plugin's back."""
    with psycopg.connect(resolve_options(rdq_plugin_postgres)["dsn"], autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="module")
def leftovers(live: Live) -> Callable[[str], list[str]]:
    return lambda namespace: _schemas(f"rdq\\_{namespace}")


class TestPostgres(ServerStorageContract):
    expected_info = StorageInfo(
        "postgres", "1.0.0", frozenset({1}), frozenset({"durable", "concurrent"})
    )

    def test_native_column_types(self, live: Live, sql: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        storage.open(ns).write(awkward_envelope())
        types = dict(sql.execute(
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = %s", [f"rdq_{ns}"]).fetchall())
        assert types["envelope.payload"] == "bytea"
        assert types["envelope.created_at"] == "timestamp with time zone"
        assert types["envelope.attempt_count"] == "bigint"
        assert types["envelope.residual"] == "text"  # never jsonb
        assert types["attempt.error_detail"] == "text"
        assert types["header.key"] == "bytea"
        # ms precision is what the server holds, not a client-side artefact.
        (ms,) = sql.execute(
            f"SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
            f" FROM rdq_{ns}.envelope").fetchone()
        assert ms == "1970-01-01 00:00:00.001"

    def test_outside_data_untouched(self, live: Live, sql: Any) -> None:
        storage, spaces = live
        ns = spaces.new()
        # Sentinels: a public table, and schemas whose names resemble the namespace's.
        outside = [f"{spaces.prefix}_sentinel", f"rdq_{ns}x", f"rdq{ns}"]
        try:
            sql.execute(f"CREATE TABLE public.{outside[0]} (v text)")
            sql.execute(f"INSERT INTO public.{outside[0]} VALUES ('keep')")
            for schema in outside[1:]:
                sql.execute(f"CREATE SCHEMA {schema}")
                sql.execute(f"CREATE TABLE {schema}.envelope (v text)")
                sql.execute(f"INSERT INTO {schema}.envelope VALUES ('keep')")
            adapter = storage.open(ns)
            adapter.write(awkward_envelope())
            storage.drop(ns)
            assert sql.execute(f"SELECT v FROM public.{outside[0]}").fetchall() == [("keep",)]
            for schema in outside[1:]:
                assert sql.execute(f"SELECT v FROM {schema}.envelope").fetchall() == [("keep",)]
        finally:
            sql.execute(f"DROP TABLE IF EXISTS public.{outside[0]}")
            for schema in outside[1:]:
                sql.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def test_failed_write_rolls_back(self, live: Live) -> None:
        storage, spaces = live
        adapter = storage.open(spaces.new())
        env = awkward_envelope()
        adapter.write(env)
        # queue is text: U+0000 (invalid by C8a anyway) makes the server refuse the
        # insert after the DELETE already ran; the transaction must undo the DELETE.
        with pytest.raises(StorageError):
            adapter.write(minimal_envelope(env.id, queue="q\x00"))
        assert_same(env, adapter.read(env.id))


def test_session_time_zone_does_not_leak(live: Live) -> None:
    """A server/role configured with a far-east zone: without the plugin's SET TimeZone,
    9999-12-31T23:59:59.999Z would come back in year 10000 (unrepresentable)."""
    _, spaces = live
    dsn = resolve_options(rdq_plugin_postgres)["dsn"]
    sep = "&" if "?" in dsn else "?"
    storage = open_or_skip(rdq_plugin_postgres, dsn=f"{dsn}{sep}options=-c%20TimeZone%3DAsia/Tokyo")
    try:
        adapter = storage.open(spaces.new())
        env = awkward_envelope()
        adapter.write(env)
        assert_same(env, adapter.read(env.id))
    finally:
        storage.close()
