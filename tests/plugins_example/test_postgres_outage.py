"""A PostgreSQL server that goes away mid-run is an outage, not a defect (C20, issue 21 §5).

Done when: the server stopped for 15 s in the middle of a kit run against the example
postgres plugin gives the verdict ``incomplete``, exit status 1 and one line saying when
the service went away and how many tests it cost. The server is a scratch cluster of
this test's own (``_scratch_postgres.ScratchPostgres``: initdb + pg_ctl on a free port): the
shared server on 5432 is never stopped. Without initdb the test skips, unless
``RDQ_REQUIRE_SERVICES=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rdq_compliance import ErrorCode, StorageError, new_id

from ._scratch_postgres import ScratchPostgres

pytestmark = pytest.mark.xdist_group("scratch-postgres")

OUTAGE_S = 15.0
STOP_AFTER_TESTS = 60
"""The server is stopped once this many tests of the kit run have reported."""


@pytest.fixture(scope="module")
def scratch() -> Iterator[ScratchPostgres]:
    pg = ScratchPostgres("max_connections=40")
    try:
        pg.init()
        pg.start()
        yield pg
    finally:
        pg.remove()


def test_the_plugin_answers_unavailable_and_recovers(scratch: ScratchPostgres) -> None:
    import rdq_plugin_postgres

    from ._harness import assert_same, minimal_envelope

    storage = rdq_plugin_postgres.rdq_storage_open({"dsn": scratch.dsn})
    try:
        adapter = storage.open("outage_probe")
        env = minimal_envelope()
        adapter.write(env)
        scratch.stop()
        try:
            for call in (lambda: adapter.read(env.id), lambda: adapter.write(env),
                         lambda: storage.drop("outage_probe")):
                with pytest.raises(StorageError) as info:
                    call()
                assert info.value.code == ErrorCode.UNAVAILABLE, info.value
                assert f"127.0.0.1:{scratch.port}" in info.value.message
        finally:
            scratch.start()
        # The same storage, no reopen: its pool connects again.
        assert_same(env, adapter.read(env.id))
        assert adapter.read(new_id()) is None
        storage.drop("outage_probe")
    finally:
        storage.close()


def test_an_error_raised_while_the_server_closes_the_connection_is_a_lost_connection() -> None:
    """psycopg leaving pipeline mode on a connection the server is closing raises "cannot
    exit pipeline mode while busy" (no SQLSTATE; the connection not yet closed), with the
    server's AdminShutdown as its context: C20's UNAVAILABLE, not INTERNAL. An error raised
    while handling a refused statement stays the plugin's."""
    import psycopg
    from rdq_plugin_postgres._storage import connection_lost

    def raised_while(first: psycopg.Error) -> psycopg.Error:
        try:
            try:
                raise first
            except psycopg.Error:
                raise psycopg.OperationalError("cannot exit pipeline mode while busy")  # noqa: B904
        except psycopg.Error as exc:
            return exc

    assert connection_lost(raised_while(psycopg.errors.AdminShutdown("terminating")), None)
    assert not connection_lost(raised_while(psycopg.errors.UniqueViolation("dup")), None)
    assert not connection_lost(psycopg.OperationalError("cannot exit pipeline mode"), None)


def test_calls_while_the_server_stops_fail_only_as_unavailable(
    scratch: ScratchPostgres,
) -> None:
    """Writes and reads on three threads while the server is stopped and started eight
    times: each call succeeds or raises UNAVAILABLE. Whether a call is caught inside its
    pipeline is chance: with six stops, the plugin that did not read the context (INTERNAL)
    failed this in 2 runs of 3; the test above is the deterministic one."""
    import rdq_plugin_postgres

    from ._harness import minimal_envelope

    storage = rdq_plugin_postgres.rdq_storage_open({"dsn": scratch.dsn})
    wrong: list[str] = []
    done = threading.Event()
    calls = [0]
    try:
        adapter = storage.open("outage_threads")
        envs = [minimal_envelope() for _ in range(12)]

        def worker(k: int) -> None:
            i = k
            while not done.is_set():
                env = envs[i % len(envs)]
                try:
                    adapter.write(env) if i % 2 else adapter.read(env.id)
                except StorageError as exc:
                    if exc.code != ErrorCode.UNAVAILABLE:
                        wrong.append(f"{exc.code.name}: {exc.message}")
                    time.sleep(0.01)
                calls[0] += 1
                i += 1

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        try:
            for _ in range(8):
                time.sleep(0.4)
                scratch.stop()
                time.sleep(0.2)
                scratch.start()
        finally:
            done.set()
            for t in threads:
                t.join()
        storage.drop("outage_threads")
    finally:
        storage.close()
    assert calls[0] > 100, calls
    assert wrong == [], wrong[:5]


def test_a_server_stopped_mid_run_gives_incomplete_and_one_line(
    scratch: ScratchPostgres, tmp_path: Path,
) -> None:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v",
           "--rdq-plugin=postgres", "--rdq-option", f"dsn={scratch.dsn}",
           "--rdq-profile=quick", "--rdq-report", "report.json"]
    start = time.monotonic()
    lines: list[str] = []
    stopped = threading.Event()
    outage: list[float] = []

    def outage_window() -> None:
        outage.append(time.monotonic() - start)
        scratch.stop()
        time.sleep(OUTAGE_S)
        scratch.start()
        outage.append(time.monotonic() - start)

    stopper = threading.Thread(target=outage_window)
    reported = 0
    with subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if re.search(r" (PASSED|FAILED|SKIPPED|ERROR)\b", line):
                reported += 1
            if reported >= STOP_AFTER_TESTS and not stopped.is_set():
                stopped.set()
                stopper.start()
        status = proc.wait(timeout=600)
    elapsed = time.monotonic() - start
    if stopper.is_alive():
        stopper.join()
    out = "".join(lines)
    tail = out[-6000:]
    assert stopped.is_set(), f"the run ended before {STOP_AFTER_TESTS} tests: {tail}"
    assert status == 1, tail
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "incomplete", tail
    failed = [r["id"] for p in report["plugins"] for r in p["requirements"]
              if r["status"] in ("failed", "error")]
    assert failed == [], tail
    shown = [ln for ln in out.splitlines() if "its storage was unavailable (C20)" in ln]
    assert len(shown) == 1, tail
    assert re.search(r"\d+ tests? could not run", shown[0]), shown
    print(f"outage from {outage[0]:.1f} s to {outage[-1]:.1f} s of a {elapsed:.1f} s run; "
          f"exit status {status}; {shown[0]}")
