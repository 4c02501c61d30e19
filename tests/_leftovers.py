"""At the end of the kit's own test suite: the local servers hold nothing of its kit runs.

Issue 22 §4: after ``bash .ci/test``, PostgreSQL, MariaDB (database ``test``) and Redis
hold no schema, table or key of that run. Every kit run names its namespaces after its
run token (``t<token>…``, ``Rdq.new_name``); this plugin sets ``RDQ_TOKEN_LOG`` for the
session (inherited by the xdist workers, pytester runs and the subprocesses the tests
start, unless a test gives a subprocess an environment of its own), the kit appends each
run's token to that file, and at the end of the session — once, on the xdist controller
or the only process, after every worker is done — the servers' schemas, tables and keys
are searched for those tokens. Any found fails the session (exit status 1) and is listed
in the terminal summary. Nothing is deleted: the servers are shared with other jobs, and
what a test left behind is a defect to see, not to hide.

Objects of the suite that are not kit runs (the example plugins' contract tests, prefix
``h3b``; the sentinels of ``tests/plugins_example/test_kit_runs.py``) are checked by those
tests themselves. A server that is down is skipped here (its tests skip or fail on their
own). The one-character namespace ``a`` is shared by every run on a server (see
``rdq_compliance/testing/_shared.py``) and is not searched for here.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from rdq_compliance._pytest._settings import TOKEN_LOG_ENV

_TOKEN_IN_NAME = re.compile(r"t([0-9a-f]{8})")
_LOG_KEY = pytest.StashKey[Path]()
_FOUND_KEY = pytest.StashKey[list[str]]()


def tokens_in(name: str, tokens: set[str]) -> bool:
    return any(m.group(1) in tokens for m in _TOKEN_IN_NAME.finditer(name))


def _postgres() -> Iterable[str]:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3,
                         autocommit=True) as conn:
        for (name,) in conn.execute("SELECT nspname FROM pg_namespace"):
            yield f"PostgreSQL schema {name}"
        for schema, table in conn.execute(
                "SELECT schemaname, tablename FROM pg_tables "
                "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"):
            yield f"PostgreSQL table {schema}.{table}"


def _mariadb() -> Iterable[str]:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                           database="test", connect_timeout=3)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES")
            for (name,) in cur.fetchall():
                yield f"MariaDB table test.{name}"
    finally:
        conn.close()


def _redis() -> Iterable[str]:
    import redis

    client = redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_connect_timeout=3)
    try:
        for key in client.scan_iter(count=1000):
            yield f"Redis key {key.decode(errors='replace')}"
    finally:
        client.close()


SERVERS: dict[str, Callable[[], Iterable[str]]] = {
    "PostgreSQL": _postgres, "MariaDB": _mariadb, "Redis": _redis}


def leftovers(tokens: set[str]) -> tuple[list[str], list[str]]:
    """(objects carrying one of ``tokens``, servers that could not be searched)."""
    found: list[str] = []
    down: list[str] = []
    for server, listing in SERVERS.items():
        try:
            found += [o for o in listing() if tokens_in(o.rsplit(" ", 1)[-1], tokens)]
        except Exception as exc:  # a server down or a client missing: its tests say so
            down.append(f"{server}: {type(exc).__name__}: {exc}")
    return found, down


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not _controller(config) or os.environ.get(TOKEN_LOG_ENV):
        return  # a worker inherits the controller's; an outer session's log is kept
    fd, name = tempfile.mkstemp(prefix="rdq-tokens-", suffix=".txt")
    os.close(fd)
    os.environ[TOKEN_LOG_ENV] = name
    config.stash[_LOG_KEY] = Path(name)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    log = session.config.stash.get(_LOG_KEY, None)
    if log is None:
        return
    os.environ.pop(TOKEN_LOG_ENV, None)
    try:
        tokens = set(log.read_text(encoding="ascii").split())
    finally:
        log.unlink(missing_ok=True)
    if not tokens:
        return
    found, _down = leftovers(tokens)
    session.config.stash[_FOUND_KEY] = found
    if found and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    found = terminalreporter.config.stash.get(_FOUND_KEY, None)
    if not found:
        return
    terminalreporter.section("objects left on the servers by this session's kit runs",
                             sep="=", red=True, bold=True)
    for line in sorted(found)[:50]:
        terminalreporter.write_line(line)
    if len(found) > 50:
        terminalreporter.write_line(f"... and {len(found) - 50} more")
    terminalreporter.write_line(
        f"{len(found)} object(s) carry the run token of a kit run this session started "
        f"({TOKEN_LOG_ENV}); a test opened them and nothing dropped them (issue 22 §4). "
        "The session fails: find the test by the token (the kit runs' reports name their "
        "run_token) and make it drop what it opens.")
