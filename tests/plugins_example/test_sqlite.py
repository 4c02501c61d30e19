"""The sqlite example plugin: the shared contract plus durability, the real
decomposition into tables, and two connections / two processes on one file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import rdq_plugin_sqlite

from rdq_compliance import Capability, Storage, StorageInfo, StorageUnavailable

from ._harness import (
    ID_A,
    ID_B,
    ID_C,
    AdapterOutlivesDrop,
    Live,
    Namespaces,
    StorageContract,
    assert_same,
    awkward_empty_envelope,
    awkward_envelope,
    minimal_envelope,
    replacement_for,
)

_opened: list[Storage] = []


def open_storage(path: Path | str, layout: int = 2) -> Storage:
    storage = rdq_plugin_sqlite.rdq_storage_open({"path": str(path), "layout": str(layout)})
    _opened.append(storage)
    return storage


@pytest.fixture(autouse=True)
def _close_storages() -> Iterator[None]:
    # A failing assertion must not leave connections open (ResourceWarning is
    # an error here). Closing twice is harmless.
    yield
    while _opened:
        _opened.pop().close()


class TestSqliteContract(StorageContract, AdapterOutlivesDrop):
    expected_info = StorageInfo(
        "sqlite", "2.0.0", frozenset({1}), frozenset({"durable", "concurrent"})
    )

    @pytest.fixture
    def live(self, tmp_path: Path) -> Iterator[Live]:
        storage = open_storage(tmp_path / "rdq.db")
        yield storage, Namespaces("sq")
        storage.close()

    @pytest.fixture
    def reopen(self, tmp_path: Path) -> Callable[[], Storage]:
        return lambda: open_storage(tmp_path / "rdq.db")


def test_path_and_layout_options() -> None:
    spec, layout = rdq_plugin_sqlite.rdq_storage_options()
    assert (spec.name, spec.default, spec.env) == (
        "path",
        ".rdq/sqlite-example.db",
        "RDQ_SQLITE_PATH",
    )
    assert (layout.name, layout.default, layout.env) == ("layout", "2", "RDQ_SQLITE_LAYOUT")


def test_default_path_is_relative_to_cwd_and_parents_are_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec, _ = rdq_plugin_sqlite.rdq_storage_options()
    assert spec.default is not None
    open_storage(spec.default).close()
    assert (tmp_path / ".rdq" / "sqlite-example.db").is_file()
    nested = tmp_path / "a" / "b" / "c.db"
    open_storage(nested).close()
    assert nested.is_file()


def test_durable_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "rdq.db"
    first = open_storage(path)
    assert Capability.DURABLE in first.info.capabilities
    first.open("ns_one").write(awkward_empty_envelope(ID_A))
    first.open("ns_two").write(minimal_envelope(ID_B))
    first.close()
    second = open_storage(path)
    assert_same(awkward_empty_envelope(ID_A), second.open("ns_one").read(ID_A))
    assert_same(minimal_envelope(ID_B), second.open("ns_two").read(ID_B))
    second.close()


def test_in_memory_database_claims_no_durability() -> None:
    storage = open_storage(":memory:")
    assert storage.info.capabilities == frozenset({"concurrent"})
    storage.close()


@pytest.mark.parametrize("layout", [1, 2])
def test_decomposed_into_native_columns(tmp_path: Path, layout: int) -> None:
    path = tmp_path / "rdq.db"
    storage = open_storage(path, layout)
    env = awkward_empty_envelope(ID_A)
    storage.open("ns_one").write(env)
    storage.close()
    conn = sqlite3.connect(path)
    try:
        task = conn.execute(
            "SELECT queue, handler_version, payload, status, created_at, next_attempt_at,"
            " lease_expires_at, typeof(payload) FROM rdq_tasks WHERE namespace = 'ns_one'"
        ).fetchone()
        assert task == (env.queue, "", b"", "DEAD", 0, 253402300799999, None, "blob")
        if layout == 1:
            headers = dict(
                conn.execute("SELECT key, value FROM rdq_headers WHERE task_id = ?", (ID_A,))
            )
        else:  # layout 2: one JSON object in the task row, plain ASCII
            (text,) = conn.execute("SELECT headers FROM rdq_tasks").fetchone()
            assert text.isascii()
            headers = json.loads(text)
        assert headers == dict(env.headers)
        assert conn.execute("PRAGMA user_version").fetchone() == (layout,)
        attempts = conn.execute(
            "SELECT position, attempt_no, outcome, has_error, error_type FROM rdq_attempts"
            " WHERE task_id = ? ORDER BY position",
            (ID_A,),
        ).fetchall()
        assert attempts == [
            (0, 2, "RETRYABLE_FAILURE", 1, "java.net.SocketTimeoutException"),
            (1, 1, "SUCCESS", 0, None),
            (2, 1, "LEASE_EXPIRED", 1, ""),
            (3, 1, "PERMANENT_FAILURE", 1, "E"),
        ]
        # The residual keeps the null-valued unknown field as present-with-null.
        (residual,) = conn.execute("SELECT residual FROM rdq_tasks").fetchone()
        assert '"u_null":null' in residual
        assert residual.isascii()  # U+0000 and astral characters are escaped
    finally:
        conn.close()


def test_write_replaces_leaves_no_child_rows(tmp_path: Path) -> None:
    path = tmp_path / "rdq.db"
    storage = open_storage(path, layout=1)
    adapter = storage.open("ns_one")
    adapter.write(awkward_empty_envelope(ID_A))
    adapter.write(replacement_for(awkward_empty_envelope(ID_A)))
    storage.drop("ns_two")
    storage.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM rdq_headers").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM rdq_attempts").fetchone() == (1,)
    finally:
        conn.close()


def test_two_connections_on_one_file(tmp_path: Path) -> None:
    path = tmp_path / "rdq.db"
    first, second = open_storage(path), open_storage(path)
    a, b = first.open("ns_one"), second.open("ns_one")
    a.write(awkward_empty_envelope(ID_A))
    assert_same(awkward_empty_envelope(ID_A), b.read(ID_A))
    b.write(replacement_for(awkward_empty_envelope(ID_A)))
    assert_same(replacement_for(awkward_empty_envelope(ID_A)), a.read(ID_A))
    second.open("ns_two").write(minimal_envelope(ID_C))
    first.drop("ns_one")
    assert b.read(ID_A) is None
    assert_same(minimal_envelope(ID_C), first.open("ns_two").read(ID_C))
    first.close()
    second.close()


WORKER = textwrap.dedent(
    """
    import sys
    import rdq_plugin_sqlite
    from tests.plugins_example._harness import (
        awkward_empty_envelope, minimal_envelope, assert_same)
    path, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    storage = rdq_plugin_sqlite.rdq_storage_open({"path": path})
    adapter = storage.open(ns)
    ids = [f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}" for i in range(n)]
    for round in range(3):
        for i, id in enumerate(ids):
            env = awkward_empty_envelope(id) if (i + round) % 2 else minimal_envelope(id)
            adapter.write(env)
            assert_same(env, adapter.read(id))
    storage.drop(ns + "_scratch")
    storage.close()
    print("ok", n)
    """
)


OPENER = textwrap.dedent(
    """
    import sys, time
    import rdq_plugin_sqlite
    start, paths = float(sys.argv[1]), sys.argv[2:]
    for i, path in enumerate(paths):
        while time.time() < start + 0.25 * i:  # both processes open each new file at once
            pass
        try:
            rdq_plugin_sqlite.rdq_storage_open({"path": path}).close()
            print("ok")
        except Exception as exc:
            print(f"{path}: {exc}")
    """
)


def test_two_processes_opening_a_new_file_at_once(tmp_path: Path) -> None:
    """pytest-xdist workers starting together on one new file: both switch it to WAL,
    and SQLite answers the second "database is locked" at once, busy timeout or not (34
    of 60 such pairs failed before the switch was made under the writers' lock)."""
    paths = [str(tmp_path / f"new-{i}.db") for i in range(10)]
    start = str(time.time() + 1.0)
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, start, *paths], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        results = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.split() == ["ok"] * len(paths), out


def test_file_is_in_wal_mode(tmp_path: Path) -> None:
    """WAL: readers and the writer of two processes do not block each other."""
    open_storage(tmp_path / "rdq.db")
    conn = sqlite3.connect(tmp_path / "rdq.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        conn.close()


def test_two_processes_on_one_file(tmp_path: Path) -> None:
    """What pytest-xdist -n 2 does: two processes writing the same file at once."""
    path = tmp_path / "rdq.db"
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), ns, "60"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ns in ("gw_zero", "gw_one")
    ]
    try:
        results = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:  # never leave a worker behind, even on a timeout
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "ok 60"
    storage = open_storage(path)
    for ns in ("gw_zero", "gw_one"):
        # The last round (2) wrote awkward envelopes at odd positions.
        id = "01J2ZK7Q8XW5H3N9G4T6B8R005"
        assert_same(awkward_empty_envelope(id), storage.open(ns).read(id))
    storage.close()


def test_a_writer_waits_on_the_writers_lock_file(tmp_path: Path) -> None:
    """Writes take ``<path>-writers`` with flock before ``BEGIN IMMEDIATE``: a waiting
    process wakes when the holder lets go, instead of SQLite's busy handler sleeping
    between tries. Reads never take it (WAL: they do not wait for a writer)."""
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "rdq.db"
    adapter = open_storage(path).open("ns_lock")
    adapter.write(minimal_envelope(ID_A))
    reader = open_storage(path).open("ns_lock")  # opening takes the lock too (prepares)
    holder = os.open(f"{path}-writers", os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's writer, mid-transaction
    done = threading.Event()
    writer = threading.Thread(
        target=lambda: (adapter.write(awkward_empty_envelope(ID_B)), done.set()))
    try:
        writer.start()
        # Another connection's read does not wait (this process's own reads queue
        # behind its writer on the one connection, as they always did).
        assert_same(minimal_envelope(ID_A), reader.read(ID_A))
        # The write cannot have finished while the lock is held: with the lock file
        # ignored it would finish at once (this wait only gives it the chance).
        assert not done.wait(0.3), "the write did not wait for the writers' lock file"
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
        writer.join(30)
    assert done.is_set()
    assert_same(awkward_empty_envelope(ID_B), adapter.read(ID_B))


def test_foreign_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "rdq.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StorageUnavailable) as info:
        open_storage(path)
    assert info.value.setting == "path"
    assert "layout 99" in info.value.message


def test_unusable_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StorageUnavailable) as info:
        open_storage(tmp_path)  # a directory, not a database file
    assert info.value.setting == "path"
    assert str(tmp_path) in info.value.message


def test_layout_1_file_migrates_to_layout_2(tmp_path: Path) -> None:
    """C19: release 1.0.0 (layout 1) writes, release 2.0.0 (layout 2) migrates on open and
    reads everything back; the old headers table is gone; layout 1 cannot reopen it."""
    path = tmp_path / "rdq.db"
    old = open_storage(path, layout=1)
    assert old.info.version == "1.0.0"
    old.open("ns_one").write(awkward_empty_envelope(ID_A))
    old.open("ns_two").write(minimal_envelope(ID_B))
    old.open("ns_two").write(awkward_envelope(ID_C))
    old.open("ns_gone").write(minimal_envelope(ID_A))
    old.drop("ns_gone")
    old.close()
    new = open_storage(path)
    assert new.info.version == "2.0.0"
    assert_same(awkward_empty_envelope(ID_A), new.open("ns_one").read(ID_A))
    assert_same(minimal_envelope(ID_B), new.open("ns_two").read(ID_B))
    assert_same(awkward_envelope(ID_C), new.open("ns_two").read(ID_C))
    assert new.open("ns_gone").read(ID_A) is None
    new.open("ns_one").write(replacement_for(awkward_empty_envelope(ID_A)))
    assert_same(replacement_for(awkward_empty_envelope(ID_A)), new.open("ns_one").read(ID_A))
    new.close()
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"rdq_tasks", "rdq_attempts"}
        assert conn.execute("PRAGMA user_version").fetchone() == (2,)
    finally:
        conn.close()
    with pytest.raises(StorageUnavailable) as info:
        open_storage(path, layout=1)
    assert "cannot downgrade" in info.value.message


def test_bad_layout_option_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StorageUnavailable) as info:
        rdq_plugin_sqlite.rdq_storage_open({"path": str(tmp_path / "x.db"), "layout": "3"})
    assert info.value.setting == "layout"
