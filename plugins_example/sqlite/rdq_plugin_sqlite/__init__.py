"""The embedded rdq storage plugin, on the standard library's ``sqlite3``.

The envelope is decomposed into native columns, the way a production plugin
would store it so that an engine can query and schedule on it:

``rdq_tasks``     one row per envelope: every known top-level field in its own
                  column, plus ``residual``, a JSON object of the unknown
                  top-level fields (C10).
``rdq_headers``   one row per header (C8): ``""`` keys, case-distinct keys and
                  U+0000 are ordinary TEXT values under the BINARY collation.
``rdq_attempts``  one row per attempt, keyed by its *position* in the list,
                  never by ``attempt_no``, which repeats across redrives (C12);
                  the error object is flattened into ``error_*`` columns. Each
                  attempt and each error keeps its own residual (C10).

Every table starts with a ``namespace`` column and every statement filters on
it, so an adapter cannot see or touch another namespace (C14).

Two layouts, chosen by the option ``layout`` and kept in ``PRAGMA user_version``:
layout 1 (release 1.0.0) is the one above; layout 2 (release 2.0.0, the default)
folds the headers into a ``headers`` JSON column of ``rdq_tasks`` (one SELECT
fewer per read). Opening a layout-1 file with layout 2 migrates it, in one
transaction, before anything else runs (see ``SqliteStorage._migrate_1_to_2``).

The code: ``_storage.py`` (the schema, the migration, one transaction per call) and
``_rows.py`` (an envelope <-> its rows); this module holds the plugin's hooks.
See README.md for the choices (timestamps, residual JSON, U+0000, two
processes on one file) and the pitfalls they avoid.
"""

from __future__ import annotations

from collections.abc import Mapping

from rdq_compliance import OptionSpec, StorageUnavailable, hookimpl

# DEFAULT_LAYOUT and RELEASES `as` themselves: re-exported (tests/mutants/upgrade_zoo.py).
from ._storage import DEFAULT_LAYOUT as DEFAULT_LAYOUT
from ._storage import RELEASES as RELEASES
from ._storage import SqliteAdapter, SqliteStorage

__all__ = ["SqliteAdapter", "SqliteStorage", "rdq_storage_open", "rdq_storage_options"]

__version__ = RELEASES[DEFAULT_LAYOUT]  # the release this code is: its default layout's

DEFAULT_PATH = ".rdq/sqlite-example.db"


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [
        OptionSpec(
            "path",
            default=DEFAULT_PATH,
            help="SQLite database file, relative to the working directory; "
            "parent directories are created.",
            env="RDQ_SQLITE_PATH",
        ),
        OptionSpec(
            "layout",
            default=str(DEFAULT_LAYOUT),
            help="table layout: 2 (release 2.0.0, headers in a JSON column; migrates a "
            "layout-1 file on open) or 1 (release 1.0.0, headers in a child table)",
            env="RDQ_SQLITE_LAYOUT",
        ),
    ]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> SqliteStorage:
    return SqliteStorage(options.get("path", DEFAULT_PATH), layout=_layout(options))


def _layout(options: Mapping[str, str]) -> int:
    raw = options.get("layout") or str(DEFAULT_LAYOUT)
    if raw.strip() not in ("1", "2"):
        raise StorageUnavailable(f"layout={raw!r} is not a layout; expected 1 or 2",
                                 setting="layout")
    return int(raw)
