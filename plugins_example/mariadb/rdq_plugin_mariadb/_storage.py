"""MariaDB storage: a small pool of connections per Storage, one table prefix per namespace.

Concurrent (C18): PyMySQL connections are not thread-safe, so each call borrows a
connection of its own from the pool. A write is one READ COMMITTED InnoDB transaction
(no gap locks, so writers of different ids do not deadlock; retried should InnoDB
still pick it as a deadlock victim); a read is one ``START TRANSACTION WITH CONSISTENT
SNAPSHOT, READ ONLY``, so its three SELECTs see the whole envelope before a concurrent
write or the whole one after.

Outages (C20): a call that cannot reach the server or loses its connection (PyMySQL
errors 2003, 2006, 2013, a server shutting down, no connection slot free) raises
``StorageError(UNAVAILABLE)`` and forgets the pooled connections (a restarted server
dropped them all); the next call connects again, so the plugin recovers by itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import unquote, urlsplit

import pymysql  # type: ignore[import-untyped]  # no stubs installed

from rdq_compliance import (
    MAX_ENVELOPE_BYTES,
    NAMESPACE_PATTERN,
    Envelope,
    ErrorCode,
    StorageError,
    StorageInfo,
    StorageUnavailable,
    require_envelope_version,
)

from ._rows import ATTEMPT_COLUMNS, ENVELOPE_COLUMNS, envelope_from_rows, rows_from_envelope

__all__ = [
    "ENV_PREFIX",
    "MariaDBAdapter",
    "MariaDBStorage",
    "Settings",
    "connect",
    "table_names",
]

ENV_PREFIX = "RDQ_MARIADB_"
SUPPORTED_VERSIONS = frozenset({1})
CONNECT_TIMEOUT_S = 3
# PyMySQL sends bytes as X'..' hex and escapes text, so one statement carries at
# most twice the envelope's content: 2 MiB for a 1 MiB envelope (C2), plus SQL.
# Ask for 4 MiB (MySQL's long-time default; MariaDB's is 16 MiB).
REQUIRED_PACKET = 4 * MAX_ENVELOPE_BYTES
_NO_SUCH_TABLE = 1146  # ER_NO_SUCH_TABLE
_UNAVAILABLE_ERRORS = frozenset({
    1040,  # ER_CON_COUNT_ERROR: too many connections
    1053,  # ER_SERVER_SHUTDOWN
    1927,  # ER_CONNECTION_KILLED (MariaDB)
    2003,  # CR_CONN_HOST_ERROR: cannot connect
    2006,  # CR_SERVER_GONE_ERROR
    2013,  # CR_SERVER_LOST: lost connection during query
    2055,  # CR_SERVER_LOST_EXTENDED
})
"""Error numbers that say the service is not there (C20), not that it refused a statement."""


def connection_lost(exc: BaseException) -> bool:
    """True when ``exc`` says the server could not be reached or went away (C20)."""
    if isinstance(exc, pymysql.err.InterfaceError):
        return True  # a connection PyMySQL already knows is closed
    code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
    return isinstance(exc, pymysql.err.OperationalError) and code in _UNAVAILABLE_ERRORS


def error_code(exc: BaseException) -> ErrorCode:
    return ErrorCode.UNAVAILABLE if connection_lost(exc) else ErrorCode.INTERNAL

# A utf8mb4 MEDIUMTEXT holds 16 MiB: any string of a 1 MiB envelope. TEXT (65,535
# bytes) would be one byte short of a full 64 KiB stack (C1). The id uses
# utf8mb4_nopad_bin so that "X" and "X " are different keys (PAD SPACE
# collations, utf8mb4_bin included, compare them equal).
_ID = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL"
_TABLE_OPTIONS = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
_DDL = (
    """CREATE TABLE IF NOT EXISTS `{envelope}` (
    id                   {id} PRIMARY KEY,
    envelope_version     BIGINT NOT NULL,
    queue                VARCHAR(255) NOT NULL,
    handler_ref          VARCHAR(255) NOT NULL,
    handler_version      MEDIUMTEXT NULL,
    payload              LONGBLOB NOT NULL,
    payload_content_type MEDIUMTEXT NOT NULL,
    status               VARCHAR(32) NOT NULL,
    attempt_count        BIGINT NOT NULL,
    redrive_count        BIGINT NOT NULL,
    next_attempt_at      DATETIME(3) NULL,
    lease_expires_at     DATETIME(3) NULL,
    created_at           DATETIME(3) NOT NULL,
    residual             LONGTEXT NOT NULL
) {options}""",
    """CREATE TABLE IF NOT EXISTS `{header}` (
    envelope_id {id},
    position    INT NOT NULL,
    k           MEDIUMTEXT NOT NULL,
    v           MEDIUMTEXT NOT NULL,
    PRIMARY KEY (envelope_id, position),
    FOREIGN KEY (envelope_id) REFERENCES `{envelope}` (id) ON DELETE CASCADE
) {options}""",
    """CREATE TABLE IF NOT EXISTS `{attempt}` (
    envelope_id    {id},
    position       INT NOT NULL,
    attempt_no     BIGINT NOT NULL,
    started_at     DATETIME(3) NOT NULL,
    finished_at    DATETIME(3) NULL,
    outcome        VARCHAR(32) NOT NULL,
    residual       LONGTEXT NOT NULL,
    error_type     MEDIUMTEXT NULL,
    error_message  MEDIUMTEXT NULL,
    error_detail   LONGTEXT NULL,
    error_stack    MEDIUMTEXT NULL,
    error_residual LONGTEXT NULL,
    PRIMARY KEY (envelope_id, position),
    FOREIGN KEY (envelope_id) REFERENCES `{envelope}` (id) ON DELETE CASCADE
) {options}""",
)


def table_names(namespace: str) -> dict[str, str]:
    """``rdq_<namespace>_{envelope,header,attempt}``: at most 53 characters (limit 64).
    The suffixes differ, so no two namespaces ever share a table name."""
    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
        raise ValueError(
            f"namespace={namespace!r} is not a valid namespace: expected "
            f"{NAMESPACE_PATTERN.pattern} (C14)"
        )
    return {t: f"rdq_{namespace}_{t}" for t in ("envelope", "header", "attempt")}


@dataclass(frozen=True)
class Settings:
    host: str
    port: int
    user: str
    password: str
    database: str
    from_dsn: bool

    @property
    def where(self) -> str:
        return f"MariaDB at {self.host}:{self.port}/{self.database}"

    def hint(self, *names: str) -> str:
        if self.from_dsn:
            return f"(option dsn / env {ENV_PREFIX}DSN)"
        opts = "/".join(names)
        envs = ", ".join(f"{ENV_PREFIX}{n.upper()}" for n in names)
        return f"(option {opts} / env {envs})"


def settings_from_options(options: Mapping[str, str]) -> Settings:
    """``dsn`` (mysql://user:password@host:port/database) wins over the single options."""
    dsn = (options.get("dsn") or "").strip()
    if dsn:
        parts = urlsplit(dsn)
        try:
            port = parts.port or 3306
        except ValueError as exc:
            raise StorageUnavailable(
                f"dsn has an invalid port (option dsn / env {ENV_PREFIX}DSN): {exc}",
                setting="dsn") from exc
        if parts.scheme not in ("mysql", "mariadb") or not parts.path.strip("/"):
            raise StorageUnavailable(
                f"dsn is not a mysql://user:password@host:port/database URL "
                f"(option dsn / env {ENV_PREFIX}DSN); got scheme={parts.scheme!r}, "
                f"database={parts.path.strip('/')!r}",
                setting="dsn",
            )
        return Settings(
            host=parts.hostname or "127.0.0.1",
            port=port,
            user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""),
            database=unquote(parts.path.strip("/")),
            from_dsn=True,
        )
    raw_port = options.get("port") or "3306"
    try:
        port = int(raw_port)
    except ValueError:
        raise StorageUnavailable(
            f"port={raw_port!r} is not an integer (option port / env {ENV_PREFIX}PORT)",
            setting="port",
        ) from None
    return Settings(
        host=options.get("host") or "127.0.0.1",
        port=port,
        user=options.get("user") or "root",
        password=options.get("password") or "",
        database=options.get("database") or "test",
        from_dsn=False,
    )


def connect(options: Mapping[str, str]) -> pymysql.connections.Connection[Any]:
    s = settings_from_options(options)
    try:
        conn = pymysql.connect(
            host=s.host, port=s.port, user=s.user, password=s.password, database=s.database,
            charset="utf8mb4", collation="utf8mb4_bin", autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            # UTC for anything the server computes; strict mode so that a value the
            # column cannot hold is an error, never a silent truncation.
            init_command=(
                "SET time_zone = '+00:00', "
                "sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'"
            ),
        )
    except pymysql.err.OperationalError as exc:
        code = exc.args[0] if exc.args else None
        if code in (1044, 1045, 1698):  # access denied (to the database)
            setting, hint = "user", s.hint("user", "password")
            verb = "rejected the credentials"
        elif code == 1049:
            setting, hint, verb = "database", s.hint("database"), "has no such database"
        else:
            setting, hint = "host", s.hint("host", "port")
            verb = "refused the connection" if "refused" in str(exc) else "could not be reached"
        raise StorageUnavailable(f"{s.where} {verb} {hint}: {exc}",
                                 setting="dsn" if s.from_dsn else setting) from exc
    except pymysql.err.MySQLError as exc:
        raise StorageUnavailable(f"{s.where} could not be reached {s.hint('host', 'port')}: "
                                 f"{exc}", setting="dsn" if s.from_dsn else "host") from exc
    with conn.cursor() as cur:
        cur.execute("SELECT @@max_allowed_packet")
        (packet,) = cur.fetchone()
    if int(packet) < REQUIRED_PACKET:
        conn.close()
        raise StorageUnavailable(
            f"{s.where} has max_allowed_packet={int(packet)}, below the "
            f"{REQUIRED_PACKET} bytes needed to store 1 MiB envelopes (C2): set "
            f"max_allowed_packet=16M under [mysqld] (or SET GLOBAL max_allowed_packet="
            f"16777216) and reconnect",
        )
    return conn


if TYPE_CHECKING:
    Conn: TypeAlias = pymysql.connections.Connection[Any]
_DEADLOCK = 1213
_WRITE_TRIES = 5


class MariaDBStorage:
    def __init__(self, conn: Conn, *, version: str,
                 options: Mapping[str, str] | None = None) -> None:
        self._options = None if options is None else dict(options)
        self._idle: list[Conn] = [conn]
        self._open: list[Conn] = [conn]
        self._lock = threading.Lock()
        self._info = StorageInfo(
            name="mariadb",
            version=version,
            envelope_versions=SUPPORTED_VERSIONS,
            # concurrent only with the options to open more connections by
            capabilities=frozenset({"durable", "concurrent"} if options is not None
                                   else {"durable"}),
        )

    @property
    def info(self) -> StorageInfo:
        return self._info

    @contextmanager
    def connection(self) -> Iterator[Conn]:
        """A connection of the pool for one call, opened when none is idle."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            if self._options is None:
                raise StorageError(ErrorCode.INTERNAL, "the connection is in use by another "
                                   "call (this storage was built without options: one at a "
                                   "time)")
            try:
                conn = connect(self._options)
            except StorageUnavailable as exc:  # the server is down or refuses us (C20)
                raise StorageError(ErrorCode.UNAVAILABLE, exc.message) from exc
            with self._lock:
                self._open.append(conn)
        healthy = False
        try:
            yield conn
            healthy = True
        except BaseException as exc:
            if connection_lost(exc):
                self._forget_idle()  # the others are as dead as this one
            raise
        finally:
            if healthy or (conn.open and _rolled_back(conn)):
                with self._lock:
                    self._idle.append(conn)
            else:  # broken, or a transaction may be left open: not reused
                with suppress(pymysql.err.MySQLError):
                    conn.close()
                with self._lock:
                    self._open.remove(conn)

    def _forget_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            for conn in idle:
                self._open.remove(conn)
        for conn in idle:
            with suppress(pymysql.err.MySQLError):
                conn.close()

    def open(self, namespace: str) -> MariaDBAdapter:
        # No DDL here: InnoDB spends 20-40 ms per CREATE/DROP TABLE, and many
        # namespaces are opened only to be read. The first write creates the tables.
        return MariaDBAdapter(self, table_names(namespace))

    def drop(self, namespace: str) -> None:
        t = table_names(namespace)
        # Exactly this namespace's three tables (children first), never a LIKE
        # pattern: rdq_<ns>_anything belongs to someone else (C14).
        try:
            with self.connection() as conn, conn.cursor() as cur:
                cur.execute(
                    f"DROP TABLE IF EXISTS `{t['attempt']}`, `{t['header']}`, `{t['envelope']}`"
                )
        except pymysql.err.MySQLError as exc:
            if not connection_lost(exc):
                raise
            raise StorageError(ErrorCode.UNAVAILABLE,
                               f"dropping namespace={namespace!r} failed: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            conns, self._open, self._idle = self._open, [], []
        for conn in conns:
            with suppress(pymysql.err.MySQLError):
                conn.close()


class MariaDBAdapter:
    def __init__(self, storage: MariaDBStorage, tables: dict[str, str]) -> None:
        self._storage = storage
        self._tables = tables
        env, hdr, att = tables["envelope"], tables["header"], tables["attempt"]

        def insert(table: str, columns: tuple[str, ...]) -> str:
            # "VALUES (...)" lets PyMySQL's executemany send one multi-row INSERT.
            return (f"INSERT INTO `{table}` ({', '.join(columns)}) "
                    f"VALUES ({', '.join(['%s'] * len(columns))})")

        self._delete = f"DELETE FROM `{env}` WHERE id = %s"
        self._insert_envelope = insert(env, ENVELOPE_COLUMNS)
        self._insert_header = insert(hdr, ("envelope_id", "position", "k", "v"))
        self._insert_attempt = insert(att, ATTEMPT_COLUMNS)
        self._select_envelope = f"SELECT {', '.join(ENVELOPE_COLUMNS)} FROM `{env}` WHERE id = %s"
        self._select_headers = (
            f"SELECT k, v FROM `{hdr}` WHERE envelope_id = %s ORDER BY position"
        )
        self._select_attempts = (
            f"SELECT {', '.join(ATTEMPT_COLUMNS[2:])} FROM `{att}` "
            "WHERE envelope_id = %s ORDER BY position"
        )

    def write(self, envelope: Envelope) -> None:
        require_envelope_version(envelope, SUPPORTED_VERSIONS)  # C16
        try:
            env_row, header_rows, attempt_rows = rows_from_envelope(envelope)
        except (ValueError, TypeError) as exc:
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE,
                f"envelope id={envelope.id!r} cannot be stored: {exc}",
            ) from exc
        try:
            for tries in range(1, _WRITE_TRIES + 1):
                try:
                    self._write_rows(env_row, header_rows, attempt_rows)
                    break
                except pymysql.err.ProgrammingError as exc:
                    if not exc.args or exc.args[0] != _NO_SUCH_TABLE:
                        raise
                    # First write in this namespace (or it was dropped meanwhile).
                    self._create_tables()
                except pymysql.err.OperationalError as exc:
                    # Concurrent writers of one id: InnoDB picked this one as the
                    # deadlock victim and rolled it back wholly; run it again.
                    if not exc.args or exc.args[0] != _DEADLOCK or tries == _WRITE_TRIES:
                        raise
                    time.sleep(0.005 * tries)
        except (pymysql.err.MySQLError, UnicodeEncodeError) as exc:
            code = (ErrorCode.INVALID_ENVELOPE
                    if isinstance(exc, pymysql.err.DataError | UnicodeEncodeError)
                    else error_code(exc))
            raise StorageError(
                code, f"writing envelope id={envelope.id!r} failed: {exc}"
            ) from exc

    def _write_rows(
        self,
        env_row: tuple[Any, ...],
        header_rows: list[tuple[Any, ...]],
        attempt_rows: list[tuple[Any, ...]],
    ) -> None:
        """One transaction: DELETE (cascades to the child rows, C13), then inserts."""
        with self._storage.connection() as conn:
            try:
                with conn.cursor() as cur:
                    # READ COMMITTED: DELETE then INSERT take no gap locks, on which
                    # concurrent writers of different ids would deadlock (C18).
                    cur.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
                conn.begin()
                with conn.cursor() as cur:
                    cur.execute(self._delete, [env_row[0]])
                    cur.execute(self._insert_envelope, env_row)
                    if header_rows:
                        cur.executemany(self._insert_header, header_rows)
                    if attempt_rows:
                        cur.executemany(self._insert_attempt, attempt_rows)
                conn.commit()
            except BaseException:
                _rollback(conn)
                raise

    def _create_tables(self) -> None:
        with self._storage.connection() as conn, conn.cursor() as cur:
            for ddl in _DDL:
                cur.execute(ddl.format(id=_ID, options=_TABLE_OPTIONS, **self._tables))

    def read(self, id: str) -> Envelope | None:
        try:
            # One snapshot for the three SELECTs (C18): a concurrent write commits
            # wholly before or wholly after it.
            with self._storage.connection() as conn, conn.cursor() as cur:
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
                try:
                    cur.execute(self._select_envelope, [id])
                    env_row = cur.fetchone()
                    headers = attempts = ()
                    if env_row is not None:
                        cur.execute(self._select_headers, [id])
                        headers = cur.fetchall()
                        cur.execute(self._select_attempts, [id])
                        attempts = cur.fetchall()
                finally:
                    _rollback(conn)  # read only: ending it is all that is left
            if env_row is None:
                return None
        except UnicodeEncodeError:
            return None  # no stored id holds a lone surrogate
        except pymysql.err.ProgrammingError as exc:
            if exc.args and exc.args[0] == _NO_SUCH_TABLE:
                return None  # nothing was ever written in this namespace
            raise StorageError(
                ErrorCode.INTERNAL, f"reading envelope id={id!r} failed: {exc}"
            ) from exc
        except pymysql.err.MySQLError as exc:
            raise StorageError(
                error_code(exc), f"reading envelope id={id!r} failed: {exc}"
            ) from exc
        return envelope_from_rows(env_row, headers, attempts)

    def close(self) -> None:
        """Nothing to release: the connection belongs to the Storage."""


def _rollback(conn: pymysql.connections.Connection[Any]) -> None:
    # If the connection is gone, the server rolled the transaction back with it.
    with suppress(pymysql.err.MySQLError):
        conn.rollback()


def _rolled_back(conn: Conn) -> bool:
    """After a failed call: end any transaction it left; False when that fails too."""
    try:
        conn.rollback()
    except pymysql.err.MySQLError:
        return False
    return True
