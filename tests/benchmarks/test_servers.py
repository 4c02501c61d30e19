"""benchmarks/_servers.py (section 8), _doc's section replacement, _timeline's summary:
the bookkeeping, on fixed inputs (the measurements themselves run in benchmarks/run.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import _servers as s
from benchmarks._doc import replace_sections
from benchmarks._timeline import summary

TICK = s.TICK


def stat(pid: int, comm: str, ppid: int, utime: int, stime: int, cutime: int = 0,
         cstime: int = 0) -> str:
    # Fields 3.. of /proc/<pid>/stat: state, ppid, pgrp, session, tty, tpgid, flags, minflt,
    # cminflt, majflt, cmajflt, utime, stime, cutime, cstime, then more.
    return (f"{pid} ({comm}) S {ppid} 1 1 0 -1 4194560 10 0 0 0 {utime} {stime} {cutime} "
            f"{cstime} 20 0 1 0 100 1000 10")


def test_stat_line_with_spaces_and_parentheses_in_the_name() -> None:
    got = s.read_stat(stat(42, "postgres: (wal) writer", 7, 3 * TICK, TICK, 5 * TICK, 0))
    assert (got.pid, got.comm, got.ppid) == (42, "postgres: (wal) writer", 7)
    assert (got.own, got.children) == (4.0, 5.0)


def test_server_cpu_adds_reaped_children_of_the_top_process_only() -> None:
    stats = [s.read_stat(x) for x in (
        stat(10, "postgres", 1, 2 * TICK, 0, 6 * TICK, 0),   # postmaster: 6 s of reaped backends
        stat(11, "postgres", 10, TICK, TICK, 9 * TICK, 0),   # a backend: its children not added
        stat(12, "python", 1, 50 * TICK, 0),                 # not the server
    )]
    assert s.server_cpu(("postgres",), stats) == 2 + 6 + 2
    assert s.server_cpu(("redis-server",), stats) is None


def test_a_down_server_is_one_line_and_the_others_are_measured() -> None:
    def check(server: s.Server) -> str | None:
        return "connection refused" if server.plugin == "mariadb" else None

    def measure(server: s.Server, repeat: int) -> s.Measured:
        from benchmarks._kitrun import Run
        probe = {"plugin": {"total": 2.0, "ops": {
            "adapter.write": {"calls": 100, "seconds": 1.5},
            "adapter.read": {"calls": 300, "seconds": 0.5}}},
            "sched": {"run": 3.0, "wait": 1.0, "threads": 2}}
        run = Run(10.0, 4.0, 80.0, 0, "5 passed in 9.9s", Path("."), 1.0, probe)
        return s.Measured(server, [run], run, 3.0, 0.5,
                          {"write of the seed example": (0.004, 0.001)})

    rows = s.bench_servers(1, True, check=check, measure=measure)
    text = "\n".join(rows)
    assert rows[0].startswith("### 8. ")
    assert "- MariaDB: not measured — connection refused" in text
    assert "| PostgreSQL |" in text and "| Redis |" in text and "| MariaDB |" not in text
    # 10 s wall = 4 s on a CPU + 1 s waiting for one + 5 s blocked; server 3 - 0.5 = 2.5 s.
    assert "blocked 5.00 s" in text and "2.50 s net" in text
    assert "400 (40/s; 200/s inside)" in text


def test_a_refused_connection_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's own message (which names the server and the option), on one line."""
    from rdq_compliance import StorageUnavailable
    from rdq_compliance.storage import _discovery

    def refuse(options: object) -> None:
        raise StorageUnavailable("PostgreSQL at 127.0.0.1:1/test refused the connection\n"
                                 "\tIs the server running?")

    loaded = SimpleNamespace(resolved={}, pm=SimpleNamespace(
        hook=SimpleNamespace(rdq_storage_open=refuse)))
    monkeypatch.setattr(_discovery, "load_plugin", lambda name: loaded)
    monkeypatch.setattr(_discovery, "resolve_options", lambda plugins, settings: None)
    assert s.check_server(s.SERVERS[0]) == (
        "PostgreSQL is down or refuses the plugin: PostgreSQL at 127.0.0.1:1/test refused the "
        "connection Is the server running?")


def test_all_servers_down() -> None:
    rows = s.bench_servers(1, True, check=lambda server: f"{server.title} down",
                           measure=lambda server, n: (_ for _ in ()).throw(AssertionError))
    assert [r for r in rows if r.startswith("- ")] == [
        "- PostgreSQL: not measured — PostgreSQL down", "- MariaDB: not measured — MariaDB down",
        "- Redis: not measured — Redis down"]


BLOCK = """## Measured

- date: then

### 1. One

old one

### 6. Six

old six
"""


def test_replace_sections_replaces_one_and_inserts_another_in_order() -> None:
    out = replace_sections(BLOCK, [["### 6. Six again", "", "new six"],
                                   ["### 3. Three", "", "new three"],
                                   ["### 8. Eight", "", "new eight"]], "*note*")
    assert out == """## Measured

- date: then

### 1. One

old one

### 3. Three

*note*

new three

### 6. Six again

*note*

new six

### 8. Eight

*note*

new eight
"""


def test_timeline_summary(tmp_path: Path) -> None:
    (tmp_path / "main.json").write_text(json.dumps(
        {"name": "main", "marks": {"imported": 0.5}, "tests": []}))
    (tmp_path / "gw0.json").write_text(json.dumps({"name": "gw0", "marks": {
        "imported": 1.0, "collected": 2.0, "cpu": 1.25}, "tests": [["a.py::t1", 2.0, 3.0],
                                                      ["a.py::t2[x]", 3.0, 3.5]]}))
    main, workers = summary(tmp_path)
    assert main == {"imported": 0.5}
    (w,) = workers
    assert (w.name, w.first, w.last, w.busy, w.tests, w.longest, w.cpu) == (
        "gw0", 2.0, 3.5, 1.5, 2, ("t1", 1.0), 1.25)
