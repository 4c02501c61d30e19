"""One running testee: its pipes, the stdout reader thread and the stderr drainer.

No read or write on a pipe blocks past a deadline: stdout is read by one thread per
process feeding a queue, stdin is written non-blocking, and stderr is drained
continuously into a bounded tail.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import queue
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from .._cpus import unpinned
from ._faults import lenient_seq

__all__ = ["MAX_LINE_BYTES", "Process"]

_STDERR_KEEP_LINES = 200
_STDERR_LINE_BYTES = 2_000
"""Longer stderr lines are cut: a chatty testee cannot grow the kit's memory."""
MAX_LINE_BYTES = 32 * 1024 * 1024
"""A response line longer than this is a fault (a 1 MiB envelope fully \\u-escaped fits)."""


class Process:
    """A running testee: its pipes, the stdout reader thread and the stderr drainer."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        with unpinned():  # its threads serve the lanes: every CPU (storage/_cpus.py)
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                # Its own process group, so that a wrapper script's children die with it.
                start_new_session=os.name == "posix",
            )
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.seq = 0
        self.lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_KEEP_LINES)
        self._stdin_fd = self.popen.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdin_fd, selectors.EVENT_WRITE)
        self.eof = False
        self.inflight: dict[int, bytes | None] = {}
        """Concurrent testees: seq -> its answer line (None while awaited)."""
        self.stray: bytes | None = None
        """Concurrent testees: the first line whose seq was not in flight."""
        self.killed_for = ""
        """Why the bridge killed the testee (shown to requests still in flight)."""
        self.killed_kind = ""
        """The kind (``TesteeFault.kind``) of that fault."""
        self.closed = False
        """Killed or finished: its pipes are closed, or about to be (no more writes: the
        file descriptor may already be closed, or reused by another file)."""
        self.cv = threading.Condition()
        self.send_lock = threading.Lock()
        self._kill_lock = threading.Lock()
        pid = self.popen.pid
        self._threads = [
            threading.Thread(
                target=self._pump_stdout, args=(self.popen.stdout,),
                name=f"rdq-stdio-stdout-{pid}", daemon=True,
            ),
            threading.Thread(
                target=self._pump_stderr, args=(self.popen.stderr,),
                name=f"rdq-stdio-stderr-{pid}", daemon=True,
            ),
        ]
        for thread in self._threads:
            thread.start()

    def _pump_stdout(self, stream: IO[bytes]) -> None:
        try:
            while True:
                line = stream.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                self.lines.put(line)
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    break  # over-long: the bridge reports it and kills the testee
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def _pump_stderr(self, stream: IO[bytes]) -> None:
        try:
            while True:
                chunk = stream.readline(_STDERR_LINE_BYTES)
                if not chunk:
                    break
                self.stderr.append(chunk.decode("utf-8", "replace").rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def tail(self) -> list[str]:
        return list(self.stderr)

    def dispatch(self) -> None:
        """Hand each answer line to the request with its seq (concurrent testees)."""
        threading.Thread(target=self._dispatch, name=f"rdq-stdio-dispatch-{self.popen.pid}",
                         daemon=True).start()

    def _dispatch(self) -> None:
        while True:
            line = self.lines.get()
            with self.cv:
                if line is None:
                    self.eof = True
                else:
                    seq = lenient_seq(line)
                    if seq is not None and self.inflight.get(seq, b"") is None:
                        self.inflight[seq] = line
                    elif self.stray is None:
                        self.stray = line
                self.cv.notify_all()
            if line is None:
                return

    def send(self, data: bytes, deadline: float) -> bool:
        """Write ``data`` to stdin. False when the deadline passed first.

        Raises BrokenPipeError when the testee closed its stdin (it died) or the bridge
        killed it (a request that took the process before another request's fault).
        """
        view = memoryview(data)
        while view:
            if self.closed:
                raise BrokenPipeError("the testee was killed or has exited")
            try:
                written = os.write(self._stdin_fd, view)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                if exc.errno == errno.EBADF:  # closed by a kill since the check above
                    raise BrokenPipeError("the testee was killed or has exited") from None
                raise
            view = view[written:]
            if view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._selector.select(remaining)
        return True

    def pending(self) -> bytes | bool | None:
        """A line (or EOF as None) already received, else False."""
        try:
            return self.lines.get_nowait()
        except queue.Empty:
            return False

    def receive(self, deadline: float) -> bytes | bool | None:
        """The next line, None at EOF, False when the deadline passed first."""
        if self.eof:
            return None
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return False
        if line is None:
            self.eof = True
        return line

    def wait(self, seconds: float) -> int | None:
        try:
            return self.popen.wait(timeout=max(0.0, seconds))
        except subprocess.TimeoutExpired:
            return None

    def settle(self, seconds: float = 1.0) -> None:
        """Give the stderr drainer a moment to catch the last words of a dying testee."""
        self._threads[1].join(timeout=seconds)

    def kill(self) -> None:
        """Kill the testee (and its process group), reap it, stop the threads."""
        with self._kill_lock:  # callers on several threads may all give up on it
            self._kill()

    def _kill(self) -> None:
        self.closed = True
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
        self.wait(10.0)
        self.finish()

    def finish(self) -> None:
        """Release pipes and threads of an exited testee."""
        self.closed = True
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._selector.close()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
