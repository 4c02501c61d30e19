"""The example plugins' kit runs and their checks (``test_kit_runs.py``), and the quick
run of each that ``test_kit_runs.py``'s quick twins and ``tests/browser``'s site share.

A checked run is a kit run in an empty folder (``pytest --rdq-plugin=P``, a subprocess)
whose report says compliant, with the capabilities verified, the one-character
namespace dropped and, for the server plugins, nothing of the run left on the server
and a sentinel outside the kit's namespaces intact; the sqlite plugin's file, the run's
alone, holds nothing at the end.

``quick_run(plugin)`` makes that checked run once per session (per xdist worker: the
tests sharing it are in the ``browser`` group): ``test_kit_runs.py`` asserts its checks,
the browser's site shows its report (issue 25 §5: the same five runs were made twice).
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .conftest import local_redis, unavailable

__all__ = ["SERVERS", "ExampleRun", "assert_compliant", "assert_one_character_name_dropped",
           "check_run", "example_args", "quick_run", "run_kit", "sqlite_namespaces"]

REPO = Path(__file__).resolve().parents[2]
NODE_TESTEE = REPO / "plugins_example" / "node" / "testee.js"


@dataclass
class KitRun:
    report: dict[str, Any]
    output: str
    """stdout and stderr of the run."""
    work: Path
    """The folder it ran in."""
    returncode: int = 0
    """Its exit status (-1: unknown, a run whose exit status failed the check)."""


def run_kit(tmp_path: Path, *args: str, name: str = "run") -> KitRun:
    """One kit run in an empty folder (the run's exit status and its report are checked)."""
    work = tmp_path / name
    work.mkdir()
    report = work / "report.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
           "--rdq-report", str(report), *args]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    tail = output[-4000:]
    assert proc.returncode == 0, f"kit run {cmd} exited {proc.returncode}:\n{tail}"
    assert report.exists(), f"no report written by {cmd}:\n{tail}"
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return KitRun(data, output, work)


def assert_compliant(report: dict[str, Any]) -> None:
    failing = [
        (r["id"], r["status"])
        for p in report["plugins"]
        for r in p["requirements"]
        if r["level"] == "MUST" and r["status"] not in ("passed", "not-applicable")
    ]
    assert report["verdict"] == "compliant", f"verdict {report['verdict']!r}: {failing}"
    assert not failing


def sqlite_namespaces(path: Path) -> set[str]:
    """The namespaces holding anything in the example sqlite plugin's file."""
    with closing(sqlite3.connect(path)) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rdq_%'")]
        assert "rdq_tasks" in tables, tables
        return {r[0] for t in tables for r in conn.execute(f"SELECT namespace FROM {t}")}


# The kit names every namespace of one run "t" + the run's token (in the report) + the
# xdist worker number + "w" + a counter in hex (Rdq.new_name). Only the objects of the
# run under test count: other kit runs on the same servers (another clone's CI, the other
# xdist worker's tests of tests/plugins_example/test_<server>.py) create and drop theirs meanwhile.


def _kit_objects(names: Iterable[str], token: str) -> set[str]:
    # Anywhere in the name: the names RDQ-ST-008 builds on a unique name go on after its
    # counter ("...w1f" + "xxxx" padding, "ab_c", digits), and a token is 8 random hex digits.
    return {n for n in names if f"t{token}" in n}


ONE_CHARACTER_NOTE = "namespace 'a' may remain in the store"
"""The note of a run that could not drop 'a' (RDQ-ST-008 opens it; no run can own it)."""


def assert_one_character_name_dropped(report: dict[str, Any]) -> None:
    notes = report["notes"]
    assert not any(ONE_CHARACTER_NOTE in n for n in notes), notes


@contextmanager
def postgres_server() -> Iterator[Callable[[str], set[str]]]:
    psycopg = pytest.importorskip("psycopg")
    try:
        conn = psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3,
                               autocommit=True)
    except psycopg.OperationalError as exc:
        unavailable(f"PostgreSQL at 127.0.0.1:5432 is unavailable: {exc}")
    schema = f"rdq_zsentinel{secrets.token_hex(4)}"
    with conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.envelope (id text primary key, body text)")
        conn.execute(f"INSERT INTO {schema}.envelope VALUES ('keep', 'me')")

        def objects(token: str) -> set[str]:
            rows = conn.execute(
                r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rdq\_%'"
            ).fetchall()
            return _kit_objects((r[0] for r in rows), token)

        try:
            yield objects
            rows = conn.execute(f"SELECT id, body FROM {schema}.envelope").fetchall()
            assert rows == [("keep", "me")], f"sentinel schema {schema} was changed: {rows}"
        finally:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@contextmanager
def redis_server() -> Iterator[Callable[[str], set[str]]]:
    client = local_redis()
    tag = secrets.token_hex(4)
    sentinels = {f"rdq:zsentinel{tag}:01J2ZK7Q8XW5H3N9G4T6B8RDQ0": b"keep",
                 f"outside:{tag}": b"me"}
    client.mset(sentinels)

    def objects(token: str) -> set[str]:
        return _kit_objects((k.decode() for k in client.scan_iter(match="rdq:*", count=1000)),
                            token)

    try:
        yield objects
        assert client.mget(list(sentinels)) == list(sentinels.values()), "sentinel keys changed"
    finally:
        client.delete(*sentinels)
        client.close()


@contextmanager
def mariadb_server() -> Iterator[Callable[[str], set[str]]]:
    pymysql = pytest.importorskip("pymysql")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                               database="test", connect_timeout=3, autocommit=True)
    except pymysql.MySQLError as exc:
        unavailable(f"MariaDB at 127.0.0.1:3306 is unavailable: {exc}")
    table = f"rdq_zsentinel{secrets.token_hex(4)}_envelope"
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {table} (id VARCHAR(26) PRIMARY KEY, body TEXT)")
        cur.execute(f"INSERT INTO {table} VALUES ('keep', 'me')")

        def objects(token: str) -> set[str]:
            cur.execute(r"SHOW TABLES LIKE 'rdq\_%'")
            return _kit_objects((r[0] for r in cur.fetchall()), token)

        try:
            yield objects
            cur.execute(f"SELECT id, body FROM {table}")
            rows = cur.fetchall()
            assert rows == (("keep", "me"),), f"sentinel table {table} was changed: {rows}"
        finally:
            cur.execute(f"DROP TABLE IF EXISTS {table}")
    conn.close()


SERVERS: dict[str, Callable[[], AbstractContextManager[Callable[[str], set[str]]]]] = {
    "postgres": postgres_server,
    "redis": redis_server,
    "mariadb": mariadb_server,
}




def example_args(plugin: str, tmp: Path) -> list[str]:
    """The kit arguments of an example plugin (the server ones use their default options)."""
    if plugin == "sqlite":
        return ["--rdq-plugin=sqlite", "--rdq-option", f"path={tmp / 'kit.db'}"]
    if plugin == "node":
        node = shutil.which("node")
        if node is None:
            unavailable("Node.js is not installed")
        return ["--rdq-plugin=stdio", "--rdq-testee", f"{node} {NODE_TESTEE}"]
    return [f"--rdq-plugin={plugin}"]


def check_run(plugin: str, run: KitRun, tmp: Path,
              objects: Callable[[str], set[str]] | None = None, name: str = "run") -> None:
    """What every checked run must show (``objects``: the server's kit objects of a token)."""
    report = run.report
    assert_compliant(report)
    verified = report["plugins"][0]["capabilities_verified"]
    if plugin in SERVERS or plugin == "node":
        assert verified == ["concurrent", "durable"], verified
    else:
        assert ("durable" in verified) == (plugin == "sqlite"), verified
    assert_one_character_name_dropped(report)
    if objects is not None:
        left = objects(report["run_token"])
        assert not left, f"the {name} run of {plugin} left data behind: {sorted(left)[:10]}"
    if plugin == "sqlite":  # the file is the run's alone: every namespace was dropped
        left = sqlite_namespaces(tmp / "kit.db")
        assert not left, f"the {name} run of sqlite left namespaces in its file: {sorted(left)}"


def checked_run(plugin: str, tmp: Path, *extra: str, name: str = "run",
                made: Callable[[KitRun], None] = lambda run: None) -> KitRun:
    """A kit run of ``plugin`` with every check of ``check_run`` (``made`` sees the run
    before them); a server plugin's run has a sentinel planted before it and checked after."""
    with ExitStack() as stack:
        objects = stack.enter_context(SERVERS[plugin]()) if plugin in SERVERS else None
        run = run_kit(tmp, *example_args(plugin, tmp), *extra, name=name)
        made(run)
        check_run(plugin, run, tmp, objects, name)
    return run


@dataclass
class ExampleRun:
    """The session's quick run of one example plugin, and what its checks found."""

    plugin: str
    run: KitRun | None = None
    error: BaseException | None = field(default=None, repr=False)
    """The failed check, or the skip/failure of a missing server or Node.js."""

    def checked(self) -> KitRun:
        """The run, for a test that asserts its checks: raises what they found."""
        if self.error is not None:
            raise self.error
        assert self.run is not None
        return self.run


_QUICK: dict[str, ExampleRun] = {}
_OUTCOMES = (Exception, pytest.skip.Exception, pytest.fail.Exception)


def quick_run(plugin: str) -> ExampleRun:
    """The checked quick run of ``plugin``, made on first use in this process. A run whose
    checks fail is still there (the browser shows it); one that could not be made (no
    server, no Node.js) is made unchecked when a kit run is possible at all, as the site
    shows such a plugin as not opened."""
    if plugin not in _QUICK:
        tmp = Path(tempfile.mkdtemp(prefix=f"rdq-example-{plugin}-"))
        if os.environ.get("RDQ_ZOO_KEEP") != "1":  # as the zoo's runs: =1 keeps the folder
            atexit.register(shutil.rmtree, tmp, True)
        shared = _QUICK[plugin] = ExampleRun(plugin)
        try:
            # the HTML page too: the browser's report-page tests open memory's
            checked_run(plugin, tmp, "--rdq-profile=quick", "--rdq-html=report.html",
                        name="quick", made=lambda run: setattr(shared, "run", run))
        except _OUTCOMES as exc:
            shared.error = exc
            if shared.run is None:
                shared.run = _unchecked(plugin, tmp / "quick")
    return _QUICK[plugin]


def _unchecked(plugin: str, work: Path) -> KitRun | None:
    """The run's report when its exit status failed the check, else the run made without
    the server's sentinel or the checks (a plugin the site shows as not opened)."""
    report = work / "report.json"
    output, code = "", -1
    if not report.exists():
        args = ([f"--rdq-plugin={plugin}"] if plugin in SERVERS else
                ["--rdq-plugin=stdio", "--rdq-testee", f"node {NODE_TESTEE}"] if plugin == "node"
                else example_args(plugin, work))
        work.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             "--rdq-profile=quick", "--rdq-html=report.html", "--rdq-report", str(report),
             *args],
            cwd=work, capture_output=True, text=True, timeout=900)
        output, code = proc.stdout + proc.stderr, proc.returncode
    if not report.exists():
        return None
    return KitRun(json.loads(report.read_text(encoding="utf-8")), output, work, code)
