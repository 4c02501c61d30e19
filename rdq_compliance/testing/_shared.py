"""Namespaces no run can own: opened and dropped under a lock all kit runs on one machine share.

Every namespace the kit opens is dropped (issue 22 §4). A name built on the run's token
is the run's alone; a one-character name (``a``, C14) is not: every kit run on a store
uses the same one. Dropping it while another run has an adapter open on it would fail
that run for nothing (a schema-per-namespace store's adapter does not outlive a drop of
its schema, and C14 does not ask it to), and never dropping it leaves it behind. So:

- a test uses a shared name holding a *shared* ``flock`` on one lock file per machine
  (:func:`lock_path`): any number of runs may use such names at once;
- when it is done it closes its adapter, and then drops the name holding the lock
  *exclusively*, so no run on this machine has an adapter open on it then. Each run drops
  what it opened (a drop of a dropped name is a no-op, C14), so nothing depends on
  another run finishing;
- the exclusive lock is waited for at most the kit's timeout plus :data:`GRACE` seconds
  (runs hold the shared lock for one open, read and close; longer only when a plugin
  hangs). Past that, or where ``flock`` is not available (Windows) or the lock file
  cannot be opened, the name is left with a note of the run, as before.

What the lock cannot see: kit runs on *other machines* that share the store. One of
them can have the name open while this run drops it; such setups (one database server
for the CI jobs of several machines) are told to give each job its own database,
Redis db number or key prefix (README, under "Test your plugin": the run token).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._namespace_handle import Namespace
    from ._owned_namespaces import Namespaces

__all__ = ["GRACE", "SharedLock", "lock_path", "shared_namespace"]

GRACE = 5.0
"""Seconds beyond the kit's timeout to wait for the exclusive lock before leaving a name."""

_POLL = 0.005

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lock_path() -> Path:
    """One lock file per machine, whatever TMPDIR each job sets: ``/tmp`` on POSIX."""
    base = Path("/tmp")  # shared by every job of the machine, on purpose
    if not base.is_dir():
        base = Path(tempfile.gettempdir())
    return base / "rdq-compliance-shared-namespaces.lock"


class SharedLock:
    """The machine-wide lock of one use of a shared name (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or lock_path()
        self.fd: int | None = None
        self.unavailable: str | None = None
        """Why the lock could not be taken (the name is then left, with a note)."""

    def acquire_shared(self) -> None:
        if fcntl is None:
            self.unavailable = "file locks (fcntl.flock) are not available on this system"
            return
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o666)
        except OSError as exc:
            self.unavailable = f"the lock file {str(self.path)!r} cannot be opened: {exc}"
            return
        with suppress(OSError):
            os.chmod(self.path, 0o666)  # other users' runs lock it too
        fcntl.flock(self.fd, fcntl.LOCK_SH)

    def acquire_exclusive(self, wait: float) -> bool:
        """Exclusive (no other run on this machine holds it); False after ``wait`` s.
        The shared lock held so far is given up first (flock converts that way)."""
        if self.fd is None:
            return False
        assert fcntl is not None
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None


@contextmanager
def shared_namespace(namespaces: Namespaces, name: str) -> Iterator[Namespace]:
    """``rdq.shared_namespace(name)``: see :meth:`Rdq.shared_namespace`."""
    __tracebackhide__ = True
    lock = SharedLock()
    lock.acquire_shared()
    try:
        try:
            namespaces.shared.add(name)
            ns = namespaces.open(name)
            yield ns
            ns.close()
        except BaseException:
            # The test's failure wins; the name is still dropped if the storage can be
            # called, else left with a note.
            with suppress(Exception):
                _drop(namespaces, name, lock)
            raise
        _drop(namespaces, name, lock)
    finally:
        lock.release()


def _drop(namespaces: Namespaces, name: str, lock: SharedLock) -> None:
    __tracebackhide__ = True
    rdq = namespaces.rdq
    runtime = rdq.runtime
    if runtime.broken is not None or runtime.storage is None or runtime.unreachable:
        namespaces.leave(name, "the storage could no longer be called to drop it")
        return
    for ns in namespaces.opened:
        if ns.name == name:
            ns.close()
    if lock.unavailable is not None:
        namespaces.leave(
            name, f"no run can own a {len(name)}-character name and {lock.unavailable}, "
            "so the kit cannot know that no other kit run has it open")
        return
    wait = rdq.settings.timeout + GRACE
    if not lock.acquire_exclusive(wait):
        namespaces.leave(
            name, f"no run can own a {len(name)}-character name and another kit run on "
            f"this machine kept it open for over {wait:g} s")
        return
    namespaces.drop(name)
