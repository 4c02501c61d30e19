"""``--rdq-example-db``: a Hypothesis example database shared by runs, shards and CI jobs.

Without it the kit uses no example database: the seed alone decides the examples
(``_properties``). With it, every property and the state machine first replay the
failing examples saved there (Hypothesis' *reuse* phase) — by an earlier run, another
shard, another CI job — and save the failing examples they find (except the read-only
GitHub artifact database). Three stores, chosen by the value's form:

- ``DIR``: a directory (Hypothesis' ``DirectoryBasedExampleDatabase``), created if needed;
- ``redis://HOST:PORT/DB`` (or ``rediss://``, ``unix://``), optionally ``?prefix=KEYPREFIX``
  (default ``hypothesis-example:``): ``hypothesis.extra.redis.RedisExampleDatabase`` (needs
  the ``redis`` package); the server is pinged at the start of the run;
- ``github:OWNER/REPO`` or ``github:OWNER/REPO/ARTIFACT`` (default artifact
  ``hypothesis-example-db``): ``GitHubArtifactDatabase``, read through ``ReadOnlyDatabase``
  (``GITHUB_TOKEN`` from the environment for a private repository).

Examples are keyed by plugin label, test, parameters and check: a shard, another run or
another seed of the same plugin replays them; another plugin does not.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

__all__ = ["ExampleDb", "ExampleDbError", "check_example_db", "example_database",
           "parse_example_db"]

FLAG = "--rdq-example-db"
_FORMS = ("expected a directory, redis://HOST:PORT/DB[?prefix=KEYPREFIX] or "
          "github:OWNER/REPO[/ARTIFACT]")
_REDIS_SCHEMES = ("redis", "rediss", "unix")
_GITHUB = re.compile(r"github:([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)(?:/([A-Za-z0-9_.-]+))?")
DEFAULT_PREFIX = "hypothesis-example:"
DEFAULT_ARTIFACT = "hypothesis-example-db"


class ExampleDbError(ValueError):
    """A bad ``--rdq-example-db`` value; its message is the one-line usage error."""


@dataclass(frozen=True)
class ExampleDb:
    kind: str
    """``directory``, ``redis`` or ``github``."""
    target: str
    """The directory (absolute), the Redis URL without ``prefix``, or ``OWNER/REPO``."""
    detail: str = ""
    """The Redis key prefix, or the GitHub artifact's name."""

    def describe(self) -> str:
        if self.kind == "directory":
            return f"directory {self.target}"
        if self.kind == "redis":
            return f"Redis {self.target} (key prefix {self.detail!r})"
        return f"GitHub artifact {self.detail!r} of {self.target} (read only)"


def parse_example_db(value: str, base: Path) -> ExampleDb | None:
    """The store ``value`` names (relative directories against ``base``); None for ''.
    Checks the form only: :func:`check_example_db` checks that it can be used."""
    text = value.strip()
    if not text:
        return None
    if text.startswith("github:"):
        m = _GITHUB.fullmatch(text)
        if m is None:
            raise ExampleDbError(f"{FLAG}={value!r} is not a GitHub artifact database; "
                                 "expected github:OWNER/REPO or github:OWNER/REPO/ARTIFACT")
        return ExampleDb("github", f"{m.group(1)}/{m.group(2)}", m.group(3) or DEFAULT_ARTIFACT)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in _REDIS_SCHEMES:
        parts = urlsplit(text)
        query = parse_qsl(parts.query, keep_blank_values=True)
        prefixes = [v for k, v in query if k == "prefix"]
        prefix = prefixes[-1] if prefixes else DEFAULT_PREFIX
        if not prefix:
            raise ExampleDbError(f"{FLAG}={value!r} has an empty prefix; expected e.g. "
                                 "?prefix=myplugin-examples: or no prefix (default "
                                 f"{DEFAULT_PREFIX!r})")
        url = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query
                                                          if k != "prefix"])))
        return ExampleDb("redis", url, prefix)
    if scheme:
        raise ExampleDbError(f"{FLAG}={value!r}: unknown scheme {scheme + '://'!r}; {_FORMS}")
    return ExampleDb("directory", str((base / text).resolve()))


def check_example_db(db: ExampleDb) -> None:
    """Raise :class:`ExampleDbError` when ``db`` cannot be used (at the start of the run)."""
    if db.kind == "directory":
        path = Path(db.target)
        if path.exists() and not path.is_dir():
            raise ExampleDbError(f"{FLAG}={db.target!r} is a file, not a directory; {_FORMS}")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ExampleDbError(f"{FLAG}={db.target!r}: cannot create the directory: "
                                 f"{exc.strerror or exc}") from None
    elif db.kind == "redis":
        client = _redis_client(db)
        try:
            client.ping()
        except Exception as exc:
            raise ExampleDbError(f"{FLAG}={db.target!r}: cannot reach Redis: "
                                 f"{type(exc).__name__}: {str(exc).rstrip('.')}; "
                                 "start it or fix the URL") from None
        finally:
            client.close()


def _redis_client(db: ExampleDb) -> Any:
    try:
        import redis
    except ImportError:
        raise ExampleDbError(f"{FLAG}={db.target!r} needs the redis package: "
                             "pip install redis") from None
    try:
        return redis.Redis.from_url(db.target, socket_connect_timeout=5, socket_timeout=30)
    except ValueError as exc:
        raise ExampleDbError(f"{FLAG}={db.target!r} is not a Redis URL: {exc}") from None


@functools.cache
def example_database(db: ExampleDb) -> ExampleDatabase:
    """The Hypothesis database of ``db`` (one per process)."""
    from hypothesis.database import (
        DirectoryBasedExampleDatabase,
        GitHubArtifactDatabase,
        ReadOnlyDatabase,
    )

    if db.kind == "directory":
        return DirectoryBasedExampleDatabase(db.target)
    if db.kind == "redis":
        from hypothesis.extra.redis import RedisExampleDatabase

        return RedisExampleDatabase(_redis_client(db), key_prefix=db.detail.encode())
    owner, repo = db.target.split("/", 1)
    return ReadOnlyDatabase(GitHubArtifactDatabase(owner, repo, artifact_name=db.detail))
