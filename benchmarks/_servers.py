"""Section 8 of ``benchmarks/run.py``: the example PostgreSQL, MariaDB and Redis plugins
(``plugins_example/*``) against their local servers, ``ci`` profile.

For each server whose plugin opens (a server that is down, or a plugin that is not
installed, is reported in one line, never a traceback):

- plain kit runs (median wall, the kit process' CPU);
- one run behind the timing proxy (``benchmarks/_timing.py``: time inside the plugin's
  calls, per operation) with the probe (``benchmarks/_probe.py``: Hypothesis' examples and,
  at exit, the kit process' threads' run-queue wait from ``/proc/self/task/*/schedstat``);
- the server's CPU over that run, from ``/proc/<pid>/stat`` of every server process
  (PostgreSQL: the postmaster with its children's reaped CPU and every live backend;
  MariaDB and Redis: the one process, all threads), less what the server spent in an
  equally long window with the kit idle just before the run: the servers are shared with
  other jobs, so that background is an estimate, and it is shown.

What bounds a run follows from splitting its wall time: the kit process on a CPU (the
kit, Hypothesis and the plugin's client code), waiting for a CPU (the machine's load),
and blocked — waiting on the server: its CPU time and the rest, network round trips.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._kitrun import PROXY, ROOT, Run, fmt_s, log, median, run_kit

__all__ = ["SERVERS", "Server", "bench_servers", "check_server", "read_stat", "server_cpu", "turns"]


@dataclass(frozen=True)
class Server:
    plugin: str  # rdq.storage entry point of the example plugin
    title: str
    commands: tuple[str, ...]  # /proc/<pid>/comm of the server's processes
    where: str  # the default address, for the "down" message
    round_trips: str  # network round trips per call, from the plugin's README


SERVERS = (
    Server("postgres", "PostgreSQL", ("postgres", "postmaster"), "127.0.0.1:5432",
           "one per write and one per read (psycopg pipeline mode)"),
    Server("mariadb", "MariaDB", ("mariadbd", "mysqld"), "127.0.0.1:3306",
           "about five per write and per read (PyMySQL: START TRANSACTION, one per "
           "statement, COMMIT)"),
    Server("redis", "Redis", ("redis-server",), "127.0.0.1:6379",
           "one per write (MULTI … EXEC pipeline) and one per read (HGETALL)"),
)
BACKGROUND_S = 3.0
"""Seconds of server CPU sampled with the kit idle, before each measured run."""


def check_server(server: Server) -> str | None:
    """None when the example plugin opens on its server; else why not, in one line."""
    from rdq_compliance import StorageUnavailable
    from rdq_compliance.storage._discovery import DiscoveryError, load_plugin, resolve_options

    try:
        loaded = load_plugin(server.plugin)
        resolve_options([loaded], [])
    except DiscoveryError as exc:
        return (f"the example plugin {server.plugin!r} is not usable: {exc} (install it: "
                f"`pip install -e plugins_example/{server.plugin}`)")
    try:
        storage = loaded.pm.hook.rdq_storage_open(options=dict(loaded.resolved))
    except StorageUnavailable as exc:
        return f"{server.title} is down or refuses the plugin: {_one_line(exc)}"
    except Exception as exc:  # a benchmark reports, it does not crash on one server
        return (f"{server.title} (default {server.where}): the plugin could not open it: "
                f"{type(exc).__name__}: {_one_line(exc)}")
    with contextlib.suppress(Exception):  # a probe connection; the runs open their own
        storage.close()
    return None


def _one_line(exc: BaseException) -> str:
    """The message on one line (a Markdown list item): libpq's has a hint line."""
    return " ".join(str(exc).split())


# -- a server's CPU from /proc ----------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Stat:
    pid: int
    comm: str
    ppid: int
    own: float  # utime + stime, seconds (every thread, living and exited)
    children: float  # cutime + cstime: children that exited and were reaped


def read_stat(text: str) -> Stat:
    """One ``/proc/<pid>/stat`` line (the command name may hold spaces and parentheses)."""
    head, _, rest = text.rpartition(")")
    pid, _, comm = head.partition(" (")
    fields = rest.split()
    # fields[0] is field 3 (state): field n is fields[n - 3].
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return Stat(int(pid), comm, int(fields[1]), (utime + stime) / TICK, (cutime + cstime) / TICK)


def _stats(proc: Path = Path("/proc")) -> Iterable[Stat]:
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            yield read_stat((entry / "stat").read_text())
        except (OSError, ValueError, IndexError):  # gone meanwhile, or unreadable
            continue


def server_cpu(commands: tuple[str, ...], stats: Iterable[Stat] | None = None) -> float | None:
    """CPU seconds the server's processes have used so far: every live process' own time,
    plus, for the top processes (whose parent is not the server), their reaped children's
    (a PostgreSQL backend's time moves to the postmaster's when it exits). None when no
    process of that name runs here (the server is elsewhere)."""
    mine = [s for s in (stats if stats is not None else _stats()) if s.comm in commands]
    if not mine:
        return None
    pids = {s.pid for s in mine}
    return sum(s.own for s in mine) + sum(s.children for s in mine if s.ppid not in pids)


# -- single calls, in this process -----------------------------------------------------

TURNS = 300
"""Calls per kind in :func:`turns` (after 50 to warm up the connection)."""


def turns(server: Server, count: int = TURNS) -> dict[str, tuple[float, float]]:
    """Wall and this process' CPU per call, one call at a time on one thread, of a read of
    a missing id (a bare round trip through the plugin) and of a write of the seed
    example (its round trips and the server's commit, which flushes the log on
    PostgreSQL and InnoDB by default). The namespace is this process' own and dropped."""
    from rdq_compliance import decode
    from rdq_compliance.storage._discovery import load_plugin, resolve_options

    loaded = load_plugin(server.plugin)
    resolve_options([loaded], [])
    storage = loaded.pm.hook.rdq_storage_open(options=dict(loaded.resolved))
    namespace = f"rdqbench{os.getpid()}"
    env = decode((ROOT / "fixtures/v1/valid/seed-example.json").read_text("utf-8"))
    missing = "01J2ZK7Q8XW5H3N9G4T6B8RDQ0"
    out: dict[str, tuple[float, float]] = {}
    try:
        adapter = storage.open(namespace)
        try:
            cases: list[tuple[str, Callable[[], object]]] = [
                ("read of a missing id", lambda: adapter.read(missing)),
                ("write of the seed example", lambda: adapter.write(env)),
                ("read of the seed example", lambda: adapter.read(env.id)),
            ]
            for label, fn in cases:
                for _ in range(50):
                    fn()
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(count):
                    fn()
                out[label] = ((time.perf_counter() - t0) / count,
                              (time.process_time() - c0) / count)
        finally:
            adapter.close()
            storage.drop(namespace)
    finally:
        storage.close()
    return out


# -- the section ------------------------------------------------------------------------


@dataclass
class Measured:
    server: Server
    plain: list[Run]
    probed: Run
    server_cpu: float | None  # during the probed run
    background: float | None  # the server's CPU in an equally long idle window
    single: dict[str, tuple[float, float]]  # turns(): wall and CPU per call


def _measure(server: Server, repeat: int) -> Measured:
    args = [f"--rdq-plugin={server.plugin}", "-q", "--rdq-profile=ci"]
    plain = []
    for i in range(repeat):
        log(f"servers: {server.plugin} run {i + 1}/{repeat}")
        plain.append(run_kit(args))
    log(f"servers: {server.plugin} behind the timing proxy, server CPU from /proc")
    before = server_cpu(server.commands)
    time.sleep(BACKGROUND_S)
    start = server_cpu(server.commands)
    probed = run_kit(["--rdq-plugin", PROXY, "--rdq-option", f"wrapped={server.plugin}", "-q",
                      "--rdq-profile=ci"], probe=True)
    end = server_cpu(server.commands)
    used = background = None
    if before is not None and start is not None and end is not None:
        used = end - start
        background = (start - before) / BACKGROUND_S * probed.wall
    log(f"servers: {server.plugin}: single calls ({TURNS} each)")
    try:
        single = turns(server)
    except Exception as exc:  # reported in the section: the server went away meanwhile
        log(f"servers: {server.plugin}: single calls failed: {type(exc).__name__}: {exc}")
        single = {}
    return Measured(server, plain, probed, used, background, single)


def _bound(kit_cpu: float, queued: float | None, blocked: float, server: float | None,
           wall: float) -> str:
    """The largest part of the wall time, in words."""
    parts: list[tuple[float, str]] = [(kit_cpu, "the kit process' CPU (kit, Hypothesis, "
                                       "the plugin's client code)")]
    if queued is not None:
        parts.append((queued, "waiting for a CPU (the machine's load)"))
    if server is not None:
        parts.append((min(server, blocked), "the server's CPU"))
        parts.append((max(blocked - server, 0.0), "waiting on the server while it does not "
                      "compute: network round trips and its commits' log flushes"))
    else:
        parts.append((blocked, "the server and the round trips (blocked; the server's CPU "
                      "is not visible from here)"))
    share, what = max(parts)
    return f"{what}: {share / wall:.0%} of wall"


def _rows(m: Measured) -> tuple[str, list[str]]:
    probed, plugin = m.probed, (m.probed.probe or {}).get("plugin") or {}
    ops: dict[str, Any] = plugin.get("ops", {})
    inside = float(plugin.get("total", 0.0))
    calls = sum(int(v["calls"]) for k, v in ops.items() if k.startswith(("adapter.", "storage.")))
    rt = sum(int(v["calls"]) for k, v in ops.items() if k in ("adapter.write", "adapter.read"))
    sched = (probed.probe or {}).get("sched") or {}
    queued = sched.get("wait")
    wall, cpu = probed.wall, probed.cpu
    blocked = max(wall - cpu - (queued or 0.0), 0.0)
    net = None if m.server_cpu is None else max(m.server_cpu - (m.background or 0.0), 0.0)
    server_txt = ("— (no server process here)" if m.server_cpu is None else
                  f"{m.server_cpu:.2f} s, less {m.background:.2f} s background = {net:.2f} s")
    row = (f"| {m.server.title} | {', '.join(f'{r.wall:.1f}' for r in m.plain)} | "
           f"{fmt_s(median([r.wall for r in m.plain]))} | {fmt_s(median([r.cpu for r in m.plain]))}"
           f" ({median([r.cpu for r in m.plain]) / median([r.wall for r in m.plain]):.0%}) | "
           f"{fmt_s(wall)} / {fmt_s(cpu)} | {inside:.2f} s ({inside / wall:.0%}) | "
           f"{rt:,} ({rt / wall:,.0f}/s; {rt / inside if inside else 0:,.0f}/s inside) | "
           f"{server_txt} | {m.plain[-1].summary} |")
    detail = [
        f"- **{m.server.title}**: bound by {_bound(cpu, queued, blocked, net, wall)}. Of the "
        f"probed run's {wall:.2f} s: kit process on a CPU {cpu:.2f} s, "
        + (f"waiting for a CPU {queued:.2f} s, " if queued is not None else "")
        + f"blocked {blocked:.2f} s; inside the plugin's calls {inside:.2f} s "
        f"({calls:,} calls, {inside / max(calls, 1) * 1000:.2f} ms each); the server's CPU "
        + (f"{net:.2f} s net." if net is not None else "not visible.")
        + f" Network round trips per call: {m.server.round_trips}. Slowest calls: "
        + ", ".join(f"{op} {v['calls']:,} × {v['seconds'] / max(v['calls'], 1) * 1000:.2f} ms"
                    for op, v in sorted(ops.items(), key=lambda kv: -kv[1]["seconds"])[:3])
        + "."
    ]
    if m.single:
        detail.append("  One call at a time in the benchmark's process (wall / its CPU / "
                      "waiting, per call): " + "; ".join(
                          f"{label} {w * 1000:.2f} / {c * 1000:.2f} / "
                          f"{max(w - c, 0) * 1000:.2f} ms" for label, (w, c) in m.single.items())
                      + ".")
        waits = {k: max(w - c, 0.0) for k, (w, c) in m.single.items()}
        writes = int(ops.get("adapter.write", {}).get("calls", 0))
        reads = int(ops.get("adapter.read", {}).get("calls", 0))
        est = writes * waits.get("write of the seed example", 0.0) + reads * waits.get(
            "read of the seed example", 0.0)
        detail.append(f"  The run's {writes:,} writes and {reads:,} reads at those waits: "
                      f"{est:.1f} s of waiting (blocked in the probed run: {blocked:.1f} s; "
                      "its envelopes are larger, and the concurrency suite overlaps calls).")
    return row, detail


def bench_servers(
    repeat: int, quick: bool, *, check: Callable[[Server], str | None] = check_server,
    measure: Callable[[Server, int], Measured] = _measure,
) -> list[str]:
    head = ["### 8. Real servers: the example PostgreSQL, MariaDB and Redis plugins (ci)", "",
            "Each against its local server (`plugins_example/*`, default options). Plain runs "
            "give wall and the kit process' CPU (share of wall in brackets); one more run, "
            "behind the timing proxy with the probe, gives the time inside the plugin's calls "
            "(summed over threads: the concurrency suite calls in parallel, so it can exceed the "
            "wall time), the writes and reads per second (of wall, and of the time inside the "
            "plugin), the "
            "kit process' threads' run-queue wait (`/proc/self/task/*/schedstat`) and the "
            "server's CPU over that run from `/proc/<pid>/stat` (all its processes; "
            "PostgreSQL's exited backends through the postmaster's reaped-children time). "
            "**The servers are shared with other jobs**: the server's CPU in an equally long "
            f"window just before the run, with the kit idle ({BACKGROUND_S:.0f} s sampled, "
            "scaled), is subtracted as background — an estimate that moves with the "
            "neighbours. Blocked = wall − the kit's CPU − its run-queue wait: the kit "
            "waiting on the server, for its CPU or for the network.", ""]
    rows = ["| server | runs' wall | wall (median) | kit CPU (median) | probed run: wall / "
            "kit CPU | inside the plugin | writes + reads | server CPU (probed run) | result |",
            "|---|---|---|---|---|---|---|---|---|"]
    details: list[str] = []
    down: list[str] = []
    for server in SERVERS:
        reason = check(server)
        if reason is not None:
            log(f"servers: {server.plugin}: not measured: {reason}")
            down.append(f"- {server.title}: not measured — {reason}")
            continue
        row, detail = _rows(measure(server, 1 if quick else repeat))
        rows.append(row)
        details += detail
    if len(down) == len(SERVERS):
        return [*head, *down]
    return [*head, *rows, "", *details, *(["", *down] if down else [])]
