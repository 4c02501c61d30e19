"""The upgrade zoo (C19): releases of a plugin whose migration loses data, and a correct one.

An upgrade needs two kit runs (``--rdq-upgrade-save`` with the previous release,
``--rdq-upgrade-check`` with the new one), so these entries live apart from
``zoo.ENTRIES``, whose harness makes one run per batch; ``tests/mutants/test_upgrade_zoo.py``
runs both and checks each verdict. Every entry comes in two forms:

- a Python plugin: the sqlite example (``plugins_example/sqlite``) with one step of its
  layout 1 -> 2 migration bent, loaded as ``--rdq-plugin=tests.mutants.upgrade_zoo:<id>``
  and switched between releases with ``--rdq-option layout=1|2``;
- a testee: ``tests/mutants/testee.py --layout 1|2 --migration <name>`` behind
  ``--rdq-plugin=stdio``, its state in ``DIR/state`` (``RDQ_STATE_DIR``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rdq_plugin_sqlite
from rdq_plugin_sqlite import SqliteAdapter, SqliteStorage
from rdq_plugin_sqlite._rows import _TASK_COLUMNS

from rdq_compliance import Envelope, OptionSpec, hookimpl

__all__ = ["UPGRADE_ENTRIES", "UpgradeEntry"]

_TIMESTAMP_COLUMNS = (11, 12, 13)
"""next_attempt_at, lease_expires_at, created_at in a task row (see _TASK_COLUMNS)."""
_RESIDUAL = 14


@dataclass(frozen=True)
class UpgradeEntry:
    id: str
    system: str
    defect: str
    """What the migration loses (for the correct entry: nothing)."""
    catches: tuple[str, ...]
    """Requirement ids that must all fail on the check; empty: must be compliant."""
    shows: str
    """Text a failure message of the check must contain (the lost field, the namespace)."""
    migration: str
    """The testee's --migration of the same defect."""


class ForgetsResidual(SqliteStorage):
    def _migrated_row(self, row: tuple[Any, ...], headers: dict[str, str]) -> tuple[Any, ...]:
        # The new table was filled from the known columns only: the residual of the
        # unknown top-level fields (C10) is reset to {}.
        out = list(super()._migrated_row(row, headers))
        out[_RESIDUAL] = "{}"
        return tuple(out)


class TruncatesMilliseconds(SqliteStorage):
    def _migrated_row(self, row: tuple[Any, ...], headers: dict[str, str]) -> tuple[Any, ...]:
        # Timestamps converted through whole seconds (a DATETIME / epoch-seconds step).
        out = list(super()._migrated_row(row, headers))
        for i in _TIMESTAMP_COLUMNS:
            if out[i] is not None:
                out[i] = out[i] // 1000 * 1000
        return tuple(out)


class SkipsRows(SqliteStorage):
    def _rows_to_migrate(self, conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
        # Tasks joined with their headers: an INNER JOIN loses the tasks without any.
        columns = ", ".join(f"t.{c.strip()}" for c in _TASK_COLUMNS.split(","))
        return conn.execute(
            f"SELECT DISTINCT {columns} FROM rdq_tasks t JOIN rdq_headers h "
            "ON h.namespace = t.namespace AND h.task_id = t.id"
        ).fetchall()


class MigratesOneBatch(SqliteStorage):
    def _rows_to_migrate(self, conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
        # A batched copy (LIMIT 1000 OFFSET n, so as not to lock the table) whose loop
        # never runs a second batch: the rows past the first 1,000 are not migrated.
        return conn.execute(f"SELECT {_TASK_COLUMNS} FROM rdq_tasks LIMIT 1000").fetchall()


class LosesPrimaryKey(SqliteStorage):
    def _migrate_1_to_2(self, conn: sqlite3.Connection) -> None:
        super()._migrate_1_to_2(conn)
        # A last "compacting" step rebuilds the table with CREATE TABLE ... AS SELECT,
        # which copies no constraint: without the primary key, INSERT OR REPLACE adds a
        # second row for a rewritten id and reads find the migrated one first.
        conn.execute("CREATE TABLE rdq_tasks_copy AS SELECT * FROM rdq_tasks")
        conn.execute("DROP TABLE rdq_tasks")
        conn.execute("ALTER TABLE rdq_tasks_copy RENAME TO rdq_tasks")


class _TombstonedAdapter(SqliteAdapter):
    """Release 1 of the resurrecting plugin: a dropped namespace is hidden by a tombstone
    until its next write purges the old rows."""

    def _dropped(self) -> bool:
        with self._storage._transaction(write=False) as conn:
            row = conn.execute("SELECT 1 FROM rdq_dropped WHERE namespace = ?",
                               (self._ns,)).fetchone()
        return row is not None

    def write(self, envelope: Envelope) -> None:
        if self._dropped():
            SqliteStorage.drop(self._storage, self._ns)
            with self._storage._transaction(write=True) as conn:
                conn.execute("DELETE FROM rdq_dropped WHERE namespace = ?", (self._ns,))
        super().write(envelope)

    def read(self, id: str) -> Envelope | None:
        return None if self._dropped() else super().read(id)


class ResurrectsDropped(SqliteStorage):
    def _prepare(self) -> None:
        super()._prepare()
        self._conn.execute("CREATE TABLE IF NOT EXISTS rdq_dropped (namespace TEXT PRIMARY KEY)")

    def open(self, namespace: str) -> SqliteAdapter:
        if self._layout == 1:
            super().open(namespace)  # validates the name
            return _TombstonedAdapter(self, namespace)
        return super().open(namespace)

    def drop(self, namespace: str) -> None:
        if self._layout != 1:
            super().drop(namespace)
            return
        # Release 1 drops lazily (a tombstone); release 2's migration copies every task
        # row and knows nothing of the tombstones.
        with self._transaction(write=True) as conn:
            conn.execute("INSERT OR IGNORE INTO rdq_dropped VALUES (?)", (namespace,))


class _Plugin:
    """The pluggy plugin object of one Python entry: the sqlite example's options."""

    def __init__(self, cls: type[SqliteStorage]) -> None:
        self.cls = cls

    @hookimpl
    def rdq_storage_options(self) -> list[OptionSpec]:
        return rdq_plugin_sqlite.rdq_storage_options()

    @hookimpl
    def rdq_storage_open(self, options: Mapping[str, str]) -> SqliteStorage:
        layout = int(options.get("layout") or rdq_plugin_sqlite.DEFAULT_LAYOUT)
        return self.cls(options["path"], layout=layout)


UPGRADE_ENTRIES = (
    UpgradeEntry("up_correct", "the sqlite example, release 1.0.0 -> 2.0.0",
                 "nothing: headers folded into a JSON column, every row and field kept",
                 (), "", "correct"),
    UpgradeEntry("up_forgets_residual", "a migration that rebuilds the table from the known "
                 "columns (ORM model without the residual column)",
                 "the unknown top-level fields are gone after the upgrade", ("RDQ-UP-001",),
                 "unknown field", "forget_residual"),
    UpgradeEntry("up_truncates_ms", "timestamps moved through a DATETIME / epoch-seconds "
                 "column", "timestamps lose their milliseconds", ("RDQ-UP-001",),
                 "instant changed", "truncate_ms"),
    UpgradeEntry("up_skips_rows", "the copy joins tasks with their headers (INNER JOIN); "
                 "the testee copies one page too few", "some envelopes are not migrated",
                 ("RDQ-UP-001",), "returned None", "skip_rows"),
    UpgradeEntry("up_migrates_one_batch", "a batched copy (LIMIT 1000 OFFSET n) whose loop "
                 "stops after the first batch", "the rows past the first 1,000 are not "
                 "migrated", ("RDQ-UP-001",), "returned None", "one_batch"),
    UpgradeEntry("up_resurrects_dropped", "release 1 drops lazily (tombstones); the "
                 "migration copies every row and forgets the tombstones",
                 "the dropped namespace comes back", ("RDQ-UP-002",),
                 "_dropped", "resurrect"),
    UpgradeEntry("up_loses_primary_key", "the migrated table rebuilt with CREATE TABLE AS "
                 "SELECT (no constraints); the testee's migrated files shadow rewrites",
                 "a rewrite of a migrated id does not replace it", ("RDQ-UP-003",),
                 "the rewrite replaces the migrated version", "shadow"),
)

up_correct = _Plugin(SqliteStorage)
up_forgets_residual = _Plugin(ForgetsResidual)
up_truncates_ms = _Plugin(TruncatesMilliseconds)
up_skips_rows = _Plugin(SkipsRows)
up_resurrects_dropped = _Plugin(ResurrectsDropped)
up_loses_primary_key = _Plugin(LosesPrimaryKey)
up_migrates_one_batch = _Plugin(MigratesOneBatch)
