"""Column-length mutants on the real servers (issue 22 §6): the example PostgreSQL and
MariaDB plugins with one column or index sized for the usual value, not for the
envelope (C4: free text has no length limit of its own).

The limit is the server's own: a PostgreSQL b-tree entry holds at most 2,704 bytes
("index row size ... exceeds btree version 4 maximum 2704"), and MariaDB in strict mode
refuses a value longer than its VARCHAR ("Data too long for column", error 1406). Each
entry is the example plugin with a different DDL, nothing else; it runs in the kit like
any plugin (``--rdq-plugin=tests.mutants.server_zoo:<id>``), on namespaces unique to the
run that the kit drops. ``tests/mutants/test_server_zoo.py`` runs them (the servers of
CONTRIBUTING.md; a server that is down skips, or fails under RDQ_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rdq_plugin_mariadb import _storage as maria
from rdq_plugin_postgres import DEFAULT_DSN
from rdq_plugin_postgres import _storage as pg

from rdq_compliance import hookimpl

__all__ = ["SERVER_ENTRIES", "ServerEntry"]


@dataclass(frozen=True)
class ServerEntry:
    id: str
    server: str
    """``postgres`` or ``mariadb``: the example plugin it bends."""
    system: str
    defect: str
    column: tuple[str, str]
    """(the example plugin's DDL line, the mutant's): the one difference."""
    message: str
    """What a failure message of RDQ-RT-011 must say: the field and the length refused."""
    catches: tuple[str, ...] = ("RDQ-RT-011",)

    @property
    def label(self) -> str:
        return f"tests.mutants.server_zoo:{self.id}"


SERVER_ENTRIES: tuple[ServerEntry, ...] = (
    ServerEntry(
        "pg_header_key_btree", "postgres",
        "PostgreSQL: header rows keyed PRIMARY KEY (envelope_id, key), a b-tree entry of at "
        "most 2,704 bytes",
        "refuses a header key past ~2.7 kB: 'index row size exceeds btree version 4 maximum "
        "2704' (INTERNAL)",
        ("    PRIMARY KEY (envelope_id, position)\n);\nCREATE TABLE IF NOT EXISTS {s}.attempt",
         "    PRIMARY KEY (envelope_id, key)\n);\nCREATE TABLE IF NOT EXISTS {s}.attempt"),
        "a header key of 2,704 bytes (ASCII) was refused",
    ),
    ServerEntry(
        "mariadb_header_value_varchar255", "mariadb",
        "MariaDB strict mode, header values in VARCHAR(255)",
        "refuses a header value over 255 characters: 'Data too long for column' (1406)",
        ("    v           MEDIUMTEXT NOT NULL,", "    v           VARCHAR(255) NOT NULL,"),
        "a header value of 256 bytes (ASCII) was refused",
    ),
    ServerEntry(
        "mariadb_handler_version_varchar64", "mariadb",
        "MariaDB strict mode, handler_version in VARCHAR(64)",
        "refuses a handler_version over 64 characters (an image digest, semver with build "
        "metadata)",
        ("    handler_version      MEDIUMTEXT NULL,", "    handler_version      VARCHAR(64) NULL,"),
        "handler_version of 255 bytes (ASCII) was refused",
    ),
    ServerEntry(
        "mariadb_content_type_varchar100", "mariadb",
        "MariaDB strict mode, payload_content_type in VARCHAR(100)",
        "refuses a payload_content_type over 100 characters (a MIME type with parameters)",
        ("    payload_content_type MEDIUMTEXT NOT NULL,",
         "    payload_content_type VARCHAR(100) NOT NULL,"),
        "payload_content_type of 255 bytes (ASCII) was refused",
    ),
    ServerEntry(
        "mariadb_error_type_varchar255", "mariadb",
        "MariaDB strict mode, error.type in VARCHAR(255)",
        "refuses an error.type over 255 characters (JVM lambda and coroutine class names, "
        "Go's %T of generic types)",
        ("    error_type     MEDIUMTEXT NULL,", "    error_type     VARCHAR(255) NULL,"),
        "error.type of 256 bytes (ASCII) was refused",
    ),
    ServerEntry(
        "mariadb_queue_varchar191", "mariadb",
        "MariaDB strict mode, queue in VARCHAR(191): the longest a utf8mb4 index held "
        "(767 bytes) before innodb_large_prefix",
        "refuses a queue over 191 characters (C8a allows 240)",
        ("    queue                VARCHAR(255) NOT NULL,",
         "    queue                VARCHAR(191) NOT NULL,"),
        "queue and handler_ref of 240 characters was refused",
    ),
)


def _bent(ddl: str, column: tuple[str, str]) -> str:
    """``ddl`` with the entry's one line changed; an example plugin whose DDL no longer
    has that line fails here, loudly, instead of testing the unchanged plugin."""
    old, new = column
    if ddl.count(old) != 1:
        raise RuntimeError(f"the example plugin's DDL no longer holds {old!r} once")
    return ddl.replace(old, new)


class _PostgresStorage(pg.PostgresStorage):
    """The example's storage; the mutant changes only its ``ddl``."""


class _MariaDBAdapter(maria.MariaDBAdapter):
    ddl: tuple[str, ...] = maria._DDL

    def _create_tables(self) -> None:
        with self._storage.connection() as conn, conn.cursor() as cur:
            for ddl in self.ddl:
                cur.execute(ddl.format(id=maria._ID, options=maria._TABLE_OPTIONS,
                                       **self._tables))


class _MariaDBStorage(maria.MariaDBStorage):
    adapter: type[_MariaDBAdapter] = _MariaDBAdapter

    def open(self, namespace: str) -> maria.MariaDBAdapter:
        return self.adapter(self, maria.table_names(namespace))


class _Plugin:
    def __init__(self, entry: ServerEntry) -> None:
        self.entry = entry

    @hookimpl
    def rdq_storage_open(self, options: Mapping[str, str]) -> Any:
        entry = self.entry
        if entry.server == "postgres":
            storage = type(entry.id, (_PostgresStorage,),
                           {"ddl": _bent(pg._DDL, entry.column)})
            return storage(pg.connect(DEFAULT_DSN), version="1.0.0", dsn=DEFAULT_DSN)
        _bent("\n".join(maria._DDL), entry.column)  # the line is there, once
        bent = tuple(_bent(ddl, entry.column) if entry.column[0] in ddl else ddl
                     for ddl in maria._DDL)
        adapter = type(entry.id, (_MariaDBAdapter,), {"ddl": bent})
        storage = type(entry.id, (_MariaDBStorage,), {"adapter": adapter})
        return storage(maria.connect({}), version="1.0.0", options={})


for _entry in SERVER_ENTRIES:
    globals()[_entry.id] = _Plugin(_entry)  # --rdq-plugin=tests.mutants.server_zoo:<id>
