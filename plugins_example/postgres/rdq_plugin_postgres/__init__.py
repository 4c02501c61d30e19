"""rdq storage plugin on PostgreSQL (psycopg 3).

Registered under the ``rdq.storage`` entry point as ``postgres``::

    pytest --rdq-plugin=postgres --rdq-option dsn=postgresql://postgres@127.0.0.1:5432/test

Each namespace is a schema ``rdq_<namespace>`` holding three tables (envelope,
header, attempt). See README.md for how the envelope is decomposed.
"""

from __future__ import annotations

from collections.abc import Mapping

from rdq_compliance import OptionSpec, hookimpl

from ._storage import DSN_ENV, PostgresStorage, connect

__all__ = ["PostgresStorage", "rdq_storage_open", "rdq_storage_options"]

__version__ = "1.0.0"

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [
        OptionSpec(
            "dsn",
            default=DEFAULT_DSN,
            env=DSN_ENV,
            help="libpq connection string or URI of the PostgreSQL database to use",
        )
    ]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> PostgresStorage:
    dsn = options.get("dsn") or DEFAULT_DSN
    return PostgresStorage(connect(dsn), version=__version__, dsn=dsn)
