"""rdq storage plugin on Redis (redis-py).

Registered under the ``rdq.storage`` entry point as ``redis``::

    pytest --rdq-plugin=redis --rdq-option url=redis://127.0.0.1:6379/0

Each task is one hash at ``rdq:<namespace>:<id>``. See README.md for the field layout.
"""

from __future__ import annotations

from collections.abc import Mapping

from rdq_compliance import OptionSpec, hookimpl

from ._storage import URL_ENV, RedisStorage, connect

__all__ = ["RedisStorage", "rdq_storage_open", "rdq_storage_options"]

__version__ = "1.0.0"

DEFAULT_URL = "redis://127.0.0.1:6379/0"


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [
        OptionSpec("url", default=DEFAULT_URL, env=URL_ENV,
                   help="redis:// (or rediss://, unix://) URL of the Redis database to use")
    ]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> RedisStorage:
    return RedisStorage(connect(options.get("url") or DEFAULT_URL), version=__version__)
