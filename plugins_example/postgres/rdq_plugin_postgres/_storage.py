"""PostgreSQL storage: a small pool of connections per Storage, one schema per namespace.

Concurrent (C18): each call borrows a connection of its own from the pool, so calls
on several threads never share a transaction. A write is one transaction that first
takes an advisory lock on (schema, id), so two writers of one id queue up instead of
racing on the primary key; a read is one REPEATABLE READ, READ ONLY transaction, so
its three SELECTs see one snapshot: the whole envelope before a concurrent write or
the whole envelope after it, never the new row with the old attempts.

Outages (C20): a call that cannot reach the server, or loses its connection, raises
``StorageError(UNAVAILABLE)``. A pooled connection that the server dropped since its last
use (a restarted server leaves every one of them dead) is replaced and the call tried
once more on a fresh one; every call reconnects, so the plugin recovers by itself once the
server is back. Write, read, open and drop are idempotent, so trying one again is safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus

from rdq_compliance import (
    NAMESPACE_PATTERN,
    Envelope,
    ErrorCode,
    StorageError,
    StorageInfo,
    StorageUnavailable,
    require_envelope_version,
)

from ._rows import ATTEMPT_COLUMNS, ENVELOPE_COLUMNS, envelope_from_rows, rows_from_envelope

__all__ = ["DSN_ENV", "PostgresAdapter", "PostgresStorage", "connect", "schema_name"]

DSN_ENV = "RDQ_POSTGRES_DSN"
SUPPORTED_VERSIONS = frozenset({1})
CONNECT_TIMEOUT_S = 3
_UNAVAILABLE_STATES = frozenset({
    "57P01",  # admin_shutdown: the server is shutting down (or the backend was terminated)
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now: starting up, shutting down, in recovery
    "53300",  # too_many_connections: no connection slot free
})
"""SQLSTATEs that say the service is not there (C20); class 08 (connection exception) too."""
_T = TypeVar("_T")

# {s} is the namespace schema. Child rows go with their envelope (ON DELETE
# CASCADE), so replacing an envelope is one DELETE plus inserts.
_DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.envelope (
    id                   text PRIMARY KEY,
    envelope_version     bigint NOT NULL,
    queue                text NOT NULL,
    handler_ref          text NOT NULL,
    handler_version      bytea,
    payload              bytea NOT NULL,
    payload_content_type bytea NOT NULL,
    status               text NOT NULL,
    attempt_count        bigint NOT NULL,
    redrive_count        bigint NOT NULL,
    next_attempt_at      timestamptz,
    lease_expires_at     timestamptz,
    created_at           timestamptz NOT NULL,
    residual             text NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.header (
    envelope_id text NOT NULL REFERENCES {s}.envelope (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    key         bytea NOT NULL,
    value       bytea NOT NULL,
    PRIMARY KEY (envelope_id, position)
);
CREATE TABLE IF NOT EXISTS {s}.attempt (
    envelope_id    text NOT NULL REFERENCES {s}.envelope (id) ON DELETE CASCADE,
    position       integer NOT NULL,
    attempt_no     bigint NOT NULL,
    started_at     timestamptz NOT NULL,
    finished_at    timestamptz,
    outcome        text NOT NULL,
    residual       text NOT NULL,
    error_type     bytea,
    error_message  bytea,
    error_detail   text,
    error_stack    bytea,
    error_residual text,
    PRIMARY KEY (envelope_id, position),
    CHECK (num_nulls(error_type, error_message, error_detail, error_residual) IN (0, 4)),
    CHECK (error_type IS NOT NULL OR error_stack IS NULL)
)
"""


def schema_name(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
        raise ValueError(
            f"namespace={namespace!r} is not a valid namespace: expected "
            f"{NAMESPACE_PATTERN.pattern} (C14)"
        )
    return f"rdq_{namespace}"


def _where(dsn: str) -> str:
    """'PostgreSQL at host:port/db' for messages, never showing a password."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "PostgreSQL"
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port") or "5432"
    db = params.get("dbname")
    return f"PostgreSQL at {host}:{port}" + (f"/{db}" if db else "")


def connect(dsn: str) -> psycopg.Connection[tuple[object, ...]]:
    """Connect in autocommit mode with the session clock on UTC; fail fast and clearly."""
    hint = f"(option dsn / env {DSN_ENV})"
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise StorageUnavailable(
            f"the PostgreSQL dsn is not a valid connection string {hint}: {exc}".strip(),
            setting="dsn",
        ) from exc
    where = _where(dsn)
    try:
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        reason = str(exc).strip()
        verb = "refused the connection" if "refused" in reason else "could not be reached"
        raise StorageUnavailable(f"{where} {verb} {hint}: {reason}", setting="dsn") from exc
    try:
        # timestamptz values come back in the session zone; UTC keeps 9999-12-31
        # representable in Python and makes the tzinfo the one the model wants.
        conn.execute("SET TimeZone TO 'UTC'")
        conn.execute("SET client_encoding TO 'UTF8'")
    except psycopg.Error as exc:
        conn.close()
        raise StorageUnavailable(f"{where} rejected the session setup {hint}: {exc}",
                                 setting="dsn") from exc
    return conn


Conn = psycopg.Connection[tuple[object, ...]]


def connection_lost(exc: psycopg.Error, conn: Conn | None) -> bool:
    """True when ``exc`` says the server went away or cannot be reached (C20), not that it
    refused the statement: the connection is broken, or the SQLSTATE says so. The SQLSTATE
    may be on an error ``exc`` was raised while handling: leaving pipeline mode on a
    connection the server is closing raises "cannot exit pipeline mode while busy", with
    the server's AdminShutdown (57P01) as its context and the connection not yet closed."""
    if conn is not None and conn.closed:
        return True
    seen: BaseException | None = exc
    for _ in range(8):  # a chain, not a cycle
        if seen is None:
            return False
        if isinstance(seen, psycopg.Error):
            state = seen.sqlstate or ""
            if state.startswith("08") or state in _UNAVAILABLE_STATES:
                return True
        seen = seen.__cause__ or seen.__context__
    return False


class PostgresStorage:
    """A Storage over a pool of autocommit connections (explicit transactions); each call
    borrows one, so adapters on several threads never share a transaction (C18)."""

    ddl: str = _DDL
    """The tables of one namespace's schema ({s}: the schema)."""

    def __init__(self, conn: Conn, *, version: str, dsn: str | None = None) -> None:
        self._dsn = dsn
        self._where = _where(dsn) if dsn else "PostgreSQL"
        self._idle: list[Conn] = [conn]
        self._open: list[Conn] = [conn]
        self._lock = threading.Lock()
        self._info = StorageInfo(
            name="postgres",
            version=version,
            envelope_versions=SUPPORTED_VERSIONS,
            # concurrent only with a dsn to open more connections by
            capabilities=frozenset({"durable", "concurrent"} if dsn else {"durable"}),
        )

    @property
    def info(self) -> StorageInfo:
        return self._info

    def run(self, what: str, fn: Callable[[Conn], _T]) -> _T:
        """``fn`` on a connection of the pool. A lost connection raises
        ``StorageError(UNAVAILABLE)`` (C20), after one more try on a fresh connection when
        the lost one came from the pool (the server dropped it since its last use)."""
        for attempt in (1, 2):
            with self.connection() as (conn, pooled):
                try:
                    return fn(conn)
                except psycopg.Error as exc:
                    if not connection_lost(exc, conn):
                        raise
                    self._forget_idle()  # the others are as dead as this one
                    if pooled and attempt == 1:
                        continue
                    raise StorageError(
                        ErrorCode.UNAVAILABLE,
                        f"{self._where} went away during {what}: {str(exc).strip()}",
                    ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _forget_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            for conn in idle:
                self._open.remove(conn)
        for conn in idle:
            conn.close()

    @contextmanager
    def connection(self) -> Iterator[tuple[Conn, bool]]:
        """A connection of the pool for one call (opened when none is idle), and whether
        it came from the pool."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        pooled = conn is not None
        if conn is None:
            if self._dsn is None:
                raise StorageError(ErrorCode.INTERNAL, "the connection is in use by another "
                                   "call (this storage was built without a dsn: one at a time)")
            try:
                conn = connect(self._dsn)
            except StorageUnavailable as exc:  # the server is down or refuses us (C20)
                raise StorageError(ErrorCode.UNAVAILABLE, exc.message) from exc
            with self._lock:
                self._open.append(conn)
        try:
            yield conn, pooled
        finally:
            # A connection left inside a transaction (a failure) is not reused.
            if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
                conn.close()
                with self._lock:
                    self._open.remove(conn)
            else:
                with self._lock:
                    self._idle.append(conn)

    def open(self, namespace: str) -> PostgresAdapter:
        schema = schema_name(namespace)

        def body(conn: Conn) -> PostgresAdapter:
            row = conn.execute("SELECT to_regclass(%s)", [f"{schema}.attempt"]).fetchone()
            if row is None or row[0] is None:
                ddl = sql.SQL(self.ddl).format(s=sql.Identifier(schema))
                # Serialise concurrent creators (threads, parallel kit workers) of one
                # schema. The lock is taken before the transaction begins: a transaction
                # that began before it waited would not see the schema the holder created
                # (an advisory lock does not refresh the catalog cache), and CREATE SCHEMA
                # IF NOT EXISTS would fail on the unique name.
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", [schema])
                try:
                    with conn.transaction():
                        conn.execute(ddl)
                finally:
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [schema])
            return PostgresAdapter(self, conn, schema)

        return self.run(f"open({namespace!r})", body)

    def drop(self, namespace: str) -> None:
        schema = schema_name(namespace)

        def body(conn: Conn) -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [schema])
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )

        self.run(f"drop({namespace!r})", body)

    def close(self) -> None:
        with self._lock:
            conns, self._open, self._idle = self._open, [], []
        for conn in conns:
            conn.close()


class PostgresAdapter:
    def __init__(self, storage: PostgresStorage, conn: Conn, schema: str) -> None:
        """``conn`` only quotes the statements; each call borrows its own connection."""
        self._storage = storage
        self._schema = schema
        s = sql.Identifier(schema)

        def q(template: str) -> str:
            return sql.SQL(template).format(s=s).as_string(conn)

        def insert(table: str, columns: tuple[str, ...]) -> str:
            cols = ", ".join(columns)
            marks = ", ".join(["%s"] * len(columns))
            return q(f"INSERT INTO {{s}}.{table} ({cols}) VALUES ({marks})")

        self._delete = q("DELETE FROM {s}.envelope WHERE id = %s")
        self._insert_envelope = insert("envelope", ENVELOPE_COLUMNS)
        self._insert_header = insert("header", ("envelope_id", "position", "key", "value"))
        self._insert_attempt = insert("attempt", ATTEMPT_COLUMNS)
        self._select_envelope = q(
            f"SELECT {', '.join(ENVELOPE_COLUMNS)} FROM {{s}}.envelope WHERE id = %s"
        )
        self._select_headers = q(
            "SELECT key, value FROM {s}.header WHERE envelope_id = %s ORDER BY position"
        )
        self._select_attempts = q(
            f"SELECT {', '.join(ATTEMPT_COLUMNS[2:])} FROM {{s}}.attempt "
            "WHERE envelope_id = %s ORDER BY position"
        )

    def write(self, envelope: Envelope) -> None:
        require_envelope_version(envelope, SUPPORTED_VERSIONS)  # C16
        try:
            env_row, header_rows, attempt_rows = rows_from_envelope(envelope)
        except (UnicodeEncodeError, ValueError, TypeError) as exc:
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE,
                f"envelope id={envelope.id!r} cannot be stored: {exc}",
            ) from exc

        def body(conn: Conn) -> None:
            # One transaction, one network round trip: DELETE (cascades to the
            # child rows, C13) and the inserts are pipelined. The advisory lock
            # queues concurrent writers of this id (C18): without it, two DELETEs
            # would both find the old row and both INSERTs would race on the key.
            with conn.pipeline(), conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
                            [self._schema, envelope.id])
                cur.execute(self._delete, [envelope.id])
                cur.execute(self._insert_envelope, env_row)
                if header_rows:
                    cur.executemany(self._insert_header, header_rows)
                if attempt_rows:
                    cur.executemany(self._insert_attempt, attempt_rows)

        try:
            self._storage.run(f"the write of envelope id={envelope.id!r}", body)
        except psycopg.DataError as exc:
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE,
                f"PostgreSQL refused a value of envelope id={envelope.id!r}: {exc}",
            ) from exc
        except psycopg.Error as exc:
            raise StorageError(
                ErrorCode.INTERNAL, f"writing envelope id={envelope.id!r} failed: {exc}"
            ) from exc

    def read(self, id: str) -> Envelope | None:
        if "\x00" in id:
            return None  # text cannot hold U+0000, so no stored id has it
        Rows = list[tuple[object, ...]]

        def body(conn: Conn) -> tuple[tuple[object, ...] | None, Rows, Rows]:
            # One snapshot for the three SELECTs (C18): a concurrent write commits
            # wholly before or wholly after it.
            with conn.pipeline(), conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                c_env = conn.execute(self._select_envelope, [id])
                c_hdr = conn.execute(self._select_headers, [id])
                c_att = conn.execute(self._select_attempts, [id])
            # Fetched before the connection goes back to the pool.
            return c_env.fetchone(), c_hdr.fetchall(), c_att.fetchall()

        try:
            env_row, headers, attempts = self._storage.run(
                f"the read of envelope id={id!r}", body)
            if env_row is None:
                return None
            return envelope_from_rows(env_row, headers, attempts)
        except psycopg.Error as exc:
            raise StorageError(
                ErrorCode.INTERNAL, f"reading envelope id={id!r} failed: {exc}"
            ) from exc

    def close(self) -> None:
        """Nothing to release: the connection belongs to the Storage."""
