"""A PostgreSQL plugin with one connection per adapter (issue 22 §3): the example plugin's
schema and statements, but every adapter opens a psycopg connection of its own in
``Storage.open`` and closes it in ``adapter.close()``, as many simple plugins do. It does
not declare ``concurrent``: the storage keeps one connection for ``open`` and ``drop``.

So a run holds (open adapters + open storages) connections per kit process: on a server
with a modest ``max_connections`` it passes only if the kit keeps within its budget.
Load it with ``--rdq-plugin=tests.plugins_example._pg_conn_per_adapter:`` and
``--rdq-option dsn=...`` (the repository root on ``PYTHONPATH``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from rdq_plugin_postgres import DEFAULT_DSN
from rdq_plugin_postgres._storage import (
    Conn,
    PostgresAdapter,
    PostgresStorage,
    connect,
    schema_name,
)

from rdq_compliance import ErrorCode, OptionSpec, StorageError, hookimpl

_T = TypeVar("_T")


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [OptionSpec("dsn", default=DEFAULT_DSN, help="the PostgreSQL server to use")]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> OneConnectionPerAdapterStorage:
    return OneConnectionPerAdapterStorage(options["dsn"])


class OneConnectionPerAdapterStorage(PostgresStorage):
    def __init__(self, dsn: str) -> None:
        super().__init__(connect(dsn), version="1.0.0")  # no dsn: no pool, not concurrent
        self._adapter_dsn = dsn

    def open(self, namespace: str) -> OneConnectionAdapter:  # type: ignore[override]
        super().open(namespace)  # creates the schema through the storage's connection
        try:
            conn = connect(self._adapter_dsn)
        except Exception as exc:  # "sorry, too many clients already": the point of this test
            raise StorageError(ErrorCode.INTERNAL, f"no connection for namespace {namespace!r}: "
                               f"{exc}") from exc
        return OneConnectionAdapter(conn, namespace)


class _Own:
    """What PostgresAdapter runs its statements through (``PostgresStorage.run``): here,
    always the adapter's own connection."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def run(self, what: str, fn: Callable[[Conn], _T]) -> _T:
        return fn(self.conn)


class OneConnectionAdapter(PostgresAdapter):
    def __init__(self, conn: Conn, namespace: str) -> None:
        self._conn = conn
        super().__init__(_Own(conn), conn, schema_name(namespace))  # type: ignore[arg-type]

    def close(self) -> None:
        self._conn.close()
