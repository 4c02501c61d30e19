"""A scratch PostgreSQL server of the kit's own tests: started on a free port with the
settings a test asks for (``max_connections=20``, say), stopped and removed afterwards.
The shared server on 5432 is never touched.

Needs the server binaries (``initdb``, ``pg_ctl``: Debian's ``postgresql`` package puts
them in ``/usr/lib/postgresql/<version>/bin``); without them the test is skipped with
the reason, or fails under ``RDQ_REQUIRE_SERVICES=1``. Run as root, the server runs as
the ``postgres`` user (``runuser``): PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .conftest import unavailable

__all__ = ["ScratchPostgres", "scratch_postgres"]


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: [int(x) for x in p.split("/")[4].split(".") if x.isdigit()])
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n"
                           f"{(proc.stdout + proc.stderr)[-2000:]}")


class ScratchPostgres:
    """A throw-away cluster with ``settings`` (``"max_connections=20"``) on a free port:
    :meth:`init` and :meth:`start` it, :meth:`stop` and :meth:`start` it again (an outage
    mid-run), :meth:`remove` it."""

    def __init__(self, *settings: str) -> None:
        bindir = _bindir()
        if bindir is None:
            unavailable("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="rdq-scratch-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")
        self.options = " ".join(f"-c {s}" for s in (
            *settings, f"port={self.port}", "listen_addresses=127.0.0.1",
            f"unix_socket_directories={self.root}", "fsync=off"))

    def _pg(self, program: str, *args: str) -> None:
        _run([*self.as_user, str(self.bindir / program), *args])

    def init(self) -> None:
        self._pg("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--no-sync")

    def start(self) -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60",
                 "-o", self.options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        with suppress(RuntimeError, subprocess.SubprocessError, OSError):
            self.stop("immediate")  # already stopped: pg_ctl says so, nothing to do
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def scratch_postgres(*settings: str) -> Iterator[str]:
    """A fresh server with ``settings`` (``"max_connections=20"``); yields its DSN."""
    pg = ScratchPostgres(*settings)
    try:
        pg.init()
        pg.start()
        yield pg.dsn
    finally:
        pg.remove()
