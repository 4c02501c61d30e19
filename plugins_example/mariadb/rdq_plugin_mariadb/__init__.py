"""rdq storage plugin on MariaDB / MySQL (PyMySQL).

Registered under the ``rdq.storage`` entry point as ``mariadb``::

    pytest --rdq-plugin=mariadb --rdq-option dsn=mysql://root:@127.0.0.1:3306/test

Each namespace is three tables ``rdq_<namespace>_{envelope,header,attempt}`` in
the configured database. See README.md for how the envelope is decomposed.
"""

from __future__ import annotations

from collections.abc import Mapping

from rdq_compliance import OptionSpec, hookimpl

from ._storage import ENV_PREFIX, MariaDBStorage, connect

__all__ = ["MariaDBStorage", "rdq_storage_open", "rdq_storage_options"]

__version__ = "1.0.0"


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    def opt(name: str, default: str, help: str) -> OptionSpec:
        return OptionSpec(name, default=default, env=f"{ENV_PREFIX}{name.upper()}", help=help)

    return [
        opt("dsn", "", "mysql://user:password@host:port/database; when set, it wins "
                       "over host/port/user/password/database"),
        opt("host", "127.0.0.1", "MariaDB server host"),
        opt("port", "3306", "MariaDB server port"),
        opt("user", "root", "MariaDB user"),
        opt("password", "", "MariaDB password"),
        opt("database", "test", "database that holds the rdq_<namespace>_* tables"),
    ]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> MariaDBStorage:
    return MariaDBStorage(connect(options), version=__version__, options=options)
