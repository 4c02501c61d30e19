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
from contextlib import contextmanager
from pathlib import Path

from .conftest import unavailable

__all__ = ["scratch_postgres"]


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


@contextmanager
def scratch_postgres(*settings: str) -> Iterator[str]:
    """A fresh server with ``settings`` (``"max_connections=20"``); yields its DSN."""
    bindir = _bindir()
    if bindir is None:
        unavailable("the PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="rdq-scratch-pg-"))
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres", "postgres")
    data, port = root / "data", _free_port()
    options = " ".join(f"-c {s}" for s in (
        *settings, f"port={port}", "listen_addresses=127.0.0.1",
        f"unix_socket_directories={root}", "fsync=off"))
    try:
        _run([*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
              "--auth=trust", "-E", "UTF8", "--no-sync"])
        _run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"),
              "-w", "-t", "60", "-o", options, "start"])
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            _run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                  "-w", "stop"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
