"""SQLite storage: one connection per database file, shared by the adapters it opens.

Concurrent (C18): every statement group runs as one short transaction under the storage's
lock on its one connection (``SqliteStorage._transaction``); writes take the write lock up
front (``BEGIN IMMEDIATE``), reads see one snapshot. The file is in WAL mode, so two
processes (pytest-xdist workers) can share it. Opening prepares the schema of the chosen
layout, and migrates a layout-1 file to layout 2 in the same transaction.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: SQLite's busy handler alone
    fcntl = None  # type: ignore[assignment]

from rdq_compliance import (
    NAMESPACE_PATTERN,
    Capability,
    Envelope,
    ErrorCode,
    StorageError,
    StorageInfo,
    StorageUnavailable,
    require_envelope_version,
)

from ._rows import (
    _ATTEMPT_COLUMNS,
    _TASK_COLUMNS,
    _attempt_from_row,
    _attempt_row,
    _dump,
    _from_ms,
    _headers_json,
    _load,
    _task_row,
)

__all__ = ["DEFAULT_LAYOUT", "RELEASES", "SqliteAdapter", "SqliteStorage"]

RELEASES = {1: "1.0.0", 2: "2.0.0"}
"""The release that writes each layout (``layout=1`` plays the previous release)."""
DEFAULT_LAYOUT = 2

SUPPORTED_VERSIONS = frozenset({1})
BUSY_TIMEOUT_S = 30.0  # another process (pytest-xdist worker) may hold the write lock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rdq_tasks (
    namespace            TEXT    NOT NULL,
    id                   TEXT    NOT NULL,
    envelope_version     INTEGER NOT NULL,
    queue                TEXT    NOT NULL,
    handler_ref          TEXT    NOT NULL,
    handler_version      TEXT,             -- NULL = null, '' stays ''
    payload              BLOB    NOT NULL,
    payload_content_type TEXT    NOT NULL,
    status               TEXT    NOT NULL,
    attempt_count        INTEGER NOT NULL,
    redrive_count        INTEGER NOT NULL,
    next_attempt_at      INTEGER,          -- epoch milliseconds, UTC
    lease_expires_at     INTEGER,
    created_at           INTEGER NOT NULL,
    residual             TEXT    NOT NULL, -- JSON object: unknown top-level fields
    PRIMARY KEY (namespace, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS rdq_tasks_due
    ON rdq_tasks (namespace, queue, status, next_attempt_at);

CREATE TABLE IF NOT EXISTS rdq_headers (
    namespace TEXT NOT NULL,
    task_id   TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (namespace, task_id, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS rdq_attempts (
    namespace      TEXT    NOT NULL,
    task_id        TEXT    NOT NULL,
    position       INTEGER NOT NULL,  -- index in `attempts`: the order of execution
    attempt_no     INTEGER NOT NULL,  -- not a key: repeats across redrives (C12)
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    outcome        TEXT    NOT NULL,
    residual       TEXT    NOT NULL,  -- JSON object: unknown fields of the attempt
    has_error      INTEGER NOT NULL,  -- 0: "error": null
    error_type     TEXT,
    error_message  TEXT,
    error_detail   TEXT,              -- JSON text, NULL = null
    error_stack    TEXT,
    error_residual TEXT,              -- JSON object: unknown fields of the error
    PRIMARY KEY (namespace, task_id, position)
) STRICT, WITHOUT ROWID;
"""

# Layout 2: the same task row with the headers as one JSON object (C8: any key,
# "" and U+0000 included; ensure_ascii escapes NUL, so the text stays plain ASCII).
_TASKS_V2 = """
CREATE TABLE IF NOT EXISTS rdq_tasks (
    namespace            TEXT    NOT NULL,
    id                   TEXT    NOT NULL,
    envelope_version     INTEGER NOT NULL,
    queue                TEXT    NOT NULL,
    handler_ref          TEXT    NOT NULL,
    handler_version      TEXT,
    payload              BLOB    NOT NULL,
    payload_content_type TEXT    NOT NULL,
    status               TEXT    NOT NULL,
    attempt_count        INTEGER NOT NULL,
    redrive_count        INTEGER NOT NULL,
    next_attempt_at      INTEGER,
    lease_expires_at     INTEGER,
    created_at           INTEGER NOT NULL,
    residual             TEXT    NOT NULL,
    headers              TEXT    NOT NULL, -- JSON object of the headers
    PRIMARY KEY (namespace, id)
) STRICT, WITHOUT ROWID
"""
_DUE_INDEX = """
CREATE INDEX IF NOT EXISTS rdq_tasks_due
    ON rdq_tasks (namespace, queue, status, next_attempt_at)
"""


# --- storage and adapter ------------------------------------------------------


class SqliteStorage:
    """One connection to one database file, shared by the adapters it opens."""

    def __init__(self, path: str, *, layout: int = DEFAULT_LAYOUT) -> None:
        self._path = path
        self._layout = layout
        self._lock = threading.Lock()
        in_memory = path == ":memory:" or path.startswith("file::memory:")
        self._info = StorageInfo(
            name="sqlite",
            version=RELEASES[layout],
            envelope_versions=SUPPORTED_VERSIONS,
            # An in-memory database dies with its connection: not durable then.
            # Concurrent (C18) either way: every statement group runs as one
            # transaction under self._lock on the one connection (_transaction).
            capabilities=frozenset({Capability.CONCURRENT}) if in_memory
            else frozenset({Capability.DURABLE, Capability.CONCURRENT}),
        )
        try:
            if not in_memory:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves.
            # timeout: the busy timeout, waiting for another process's write lock.
            self._conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StorageUnavailable(
                f"cannot open the SQLite database path={path!r}: {exc}", setting="path"
            ) from None
        self._writers = self._open_writers_lock(path, in_memory)
        try:
            # Under the writers' lock: two processes opening a new file at once would
            # both switch it to WAL, and SQLite answers the second "database is locked"
            # at once, without waiting (pytest-xdist workers starting together).
            with self._writing(True):
                self._prepare()
        except BaseException as exc:
            self._close_writers_lock()
            self._conn.close()
            if isinstance(exc, sqlite3.Error):
                raise StorageUnavailable(
                    f"cannot use the SQLite database path={path!r}: {exc}", setting="path"
                ) from None
            raise

    def _open_writers_lock(self, path: str, in_memory: bool) -> int | None:
        """The file a writer locks before ``BEGIN IMMEDIATE`` (``<path>-writers``), and
        a process while it prepares the database (switching a new file to WAL).

        SQLite's busy handler polls a taken write lock, sleeping 1, 2, 5… ms between
        tries, so two processes sharing the file (pytest-xdist workers) lose most of a
        short transaction's time to sleeping. A waiter on ``flock`` wakes the moment
        the holder lets go. The busy timeout stays: a process that does not take this
        lock (an older release, the ``sqlite3`` shell) is still waited for.
        """
        if in_memory or fcntl is None:
            return None
        try:
            return os.open(f"{path}-writers", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None  # a read-only folder: the busy handler alone

    def _close_writers_lock(self) -> None:
        if self._writers is not None:
            os.close(self._writers)
            self._writers = None

    def _prepare(self) -> None:
        conn = self._conn
        # WAL: readers never block the writer and vice versa, so two processes
        # can share the file. The mode is stored in the file; setting it again
        # is a no-op. synchronous=NORMAL is safe in WAL (a crash of the process
        # loses nothing committed; only a power cut can lose the last commits).
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            target = self._layout
            if version not in (0, 1, 2) or version > target:
                raise StorageUnavailable(
                    f"the SQLite database path={self._path!r} has layout {version}, this "
                    f"plugin opened it with layout={target} (release {RELEASES[target]}) and "
                    "cannot downgrade it: open it with a newer layout, delete the file or "
                    "choose another --rdq-option path=...",
                    setting="path",
                )
            if version == 1 and target == 2:
                self._migrate_1_to_2(conn)
            for statement in _SCHEMA.split(";"):  # no ";" inside the statements
                if statement.strip() and (target == 1 or "rdq_attempts" in statement):
                    conn.execute(statement)
            if target == 2:
                conn.execute(_TASKS_V2)
                conn.execute(_DUE_INDEX)
            conn.execute(f"PRAGMA user_version={target}")
            conn.execute("COMMIT")
        except BaseException:
            self._abandon()
            conn.close()
            raise

    def _migrate_1_to_2(self, conn: sqlite3.Connection) -> None:
        """Layout 1 -> 2 inside the opening transaction: every task row is copied with
        its headers folded into JSON; ``rdq_headers`` goes. A failure rolls it all back."""
        conn.execute(_TASKS_V2.replace("rdq_tasks", "rdq_tasks_v2", 1))
        for row in self._rows_to_migrate(conn):
            headers = conn.execute(
                "SELECT key, value FROM rdq_headers WHERE namespace = ? AND task_id = ?",
                (row[0], row[1]),
            ).fetchall()
            conn.execute(
                f"INSERT INTO rdq_tasks_v2 ({_TASK_COLUMNS}, headers) "
                f"VALUES ({', '.join('?' * 16)})",
                self._migrated_row(row, dict(headers)),
            )
        conn.execute("DROP TABLE rdq_tasks")
        conn.execute("DROP TABLE rdq_headers")
        conn.execute("ALTER TABLE rdq_tasks_v2 RENAME TO rdq_tasks")

    def _rows_to_migrate(self, conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
        return conn.execute(f"SELECT {_TASK_COLUMNS} FROM rdq_tasks").fetchall()

    def _migrated_row(self, row: tuple[Any, ...], headers: dict[str, str]) -> tuple[Any, ...]:
        return (*row, _dump(headers))

    @property
    def info(self) -> StorageInfo:
        return self._info

    def open(self, namespace: str) -> SqliteAdapter:
        if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
            raise ValueError(
                f"namespace={namespace!r} is not a valid namespace: expected "
                f"{NAMESPACE_PATTERN.pattern} (C14)"
            )
        return SqliteAdapter(self, namespace)

    def drop(self, namespace: str) -> None:
        tables = ["rdq_attempts", "rdq_tasks"] + (["rdq_headers"] if self._layout == 1 else [])
        with self._transaction(write=True) as conn:
            for table in tables:
                conn.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._close_writers_lock()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One short transaction; sqlite3 errors become StorageError(INTERNAL).

        Writes start with BEGIN IMMEDIATE, taking the write lock up front: a
        deferred transaction that reads first and then writes can fail with
        SQLITE_BUSY at once (without waiting) when another process committed
        in between. Reads take a snapshot, so the three SELECTs of a read see
        one version of the envelope even while another process writes it.
        """
        with self._lock, self._writing(write):
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                except BaseException:
                    self._abandon()
                    raise
                conn.execute("COMMIT")
            except (sqlite3.IntegrityError, OverflowError) as exc:
                # STRICT tables refuse a value of the wrong type (say a non-str
                # header value); sqlite3 refuses ints beyond 64 bits.
                self._abandon()
                raise StorageError(
                    ErrorCode.INVALID_ENVELOPE, f"a value does not fit its column: {exc}"
                ) from None
            except sqlite3.Error as exc:
                self._abandon()
                raise StorageError(
                    ErrorCode.INTERNAL, f"SQLite error on path={self._path!r}: {exc}"
                ) from None

    @contextmanager
    def _writing(self, write: bool) -> Iterator[None]:
        """Holds the writers' lock file (if any) around a write transaction."""
        if not write or self._writers is None:
            yield
            return
        fcntl.flock(self._writers, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._writers, fcntl.LOCK_UN)

    def _abandon(self) -> None:
        # Never leave a transaction open after a failure (a failed COMMIT
        # would otherwise keep the write lock and block the other process).
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


class SqliteAdapter:
    """The storage opened on one namespace."""

    def __init__(self, storage: SqliteStorage, namespace: str) -> None:
        self._storage = storage
        self._ns = namespace

    def write(self, envelope: Envelope) -> None:
        require_envelope_version(envelope, SUPPORTED_VERSIONS)  # C16
        ns, task_id = self._ns, envelope.id
        # Build every row before the transaction starts: conversion errors are
        # raised without holding the lock, and the transaction stays short.
        layout = self._storage._layout
        task = _task_row(ns, envelope)
        headers = [(ns, task_id, k, v) for k, v in envelope.headers.items()]
        if layout == 2:
            task = (*task, _headers_json(envelope.headers))
            headers = []
        attempts = [_attempt_row(ns, task_id, i, a) for i, a in enumerate(envelope.attempts)]
        try:
            with self._storage._transaction(write=True) as conn:
                # Write replaces wholly (C13): the children of the old version go.
                if layout == 1:
                    conn.execute(
                        "DELETE FROM rdq_headers WHERE namespace = ? AND task_id = ?",
                        (ns, task_id),
                    )
                conn.execute(
                    "DELETE FROM rdq_attempts WHERE namespace = ? AND task_id = ?", (ns, task_id)
                )
                columns = _TASK_COLUMNS + (", headers" if layout == 2 else "")
                conn.execute(
                    f"INSERT OR REPLACE INTO rdq_tasks ({columns}) "
                    f"VALUES ({', '.join('?' * len(task))})",
                    task,
                )
                if headers:
                    conn.executemany(
                        "INSERT INTO rdq_headers (namespace, task_id, key, value) "
                        "VALUES (?, ?, ?, ?)",
                        headers,
                    )
                if attempts:
                    conn.executemany(
                        f"INSERT INTO rdq_attempts ({_ATTEMPT_COLUMNS}) "
                        f"VALUES ({', '.join('?' * 14)})",
                        attempts,
                    )
        except UnicodeEncodeError as exc:
            # A lone surrogate cannot be stored as UTF-8 (and is not valid per C4).
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE,
                f"envelope id={task_id!r} has a string that is not valid Unicode: {exc}",
            ) from None

    def read(self, id: str) -> Envelope | None:
        ns, layout = self._ns, self._storage._layout
        with self._storage._transaction(write=False) as conn:
            row = conn.execute(
                "SELECT id, envelope_version, queue, handler_ref, handler_version, payload, "
                "payload_content_type, status, attempt_count, redrive_count, next_attempt_at, "
                "lease_expires_at, created_at, residual, "
                + ("headers " if layout == 2 else "NULL ")
                + "FROM rdq_tasks WHERE namespace = ? AND id = ?",
                (ns, id),
            ).fetchone()
            if row is None:
                return None
            if layout == 2:
                headers = list(_load(row[-1]).items())
            else:
                headers = conn.execute(
                    "SELECT key, value FROM rdq_headers WHERE namespace = ? AND task_id = ?",
                    (ns, id),
                ).fetchall()
            attempts = conn.execute(
                "SELECT attempt_no, started_at, finished_at, outcome, residual, has_error, "
                "error_type, error_message, error_detail, error_stack, error_residual "
                "FROM rdq_attempts WHERE namespace = ? AND task_id = ? ORDER BY position",
                (ns, id),
            ).fetchall()
        (task_id, version, queue, handler_ref, handler_version, payload, content_type,
         status, attempt_count, redrive_count, next_attempt_at, lease_expires_at,
         created_at, residual, _) = row  # fmt: skip
        return Envelope(
            id=task_id,
            envelope_version=version,
            queue=queue,
            handler_ref=handler_ref,
            handler_version=handler_version,
            payload=payload,
            payload_content_type=content_type,
            status=status,
            attempt_count=attempt_count,
            redrive_count=redrive_count,
            next_attempt_at=_from_ms(next_attempt_at),
            lease_expires_at=_from_ms(lease_expires_at),
            created_at=_from_ms(created_at),  # type: ignore[arg-type]  # NOT NULL column
            headers=dict(headers),
            attempts=tuple(_attempt_from_row(a) for a in attempts),
            extra=_load(residual),
        )

    def close(self) -> None:
        # The connection belongs to the storage; nothing to release here.
        pass
