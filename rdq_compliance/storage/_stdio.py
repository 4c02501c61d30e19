"""The built-in ``stdio`` plugin: a bridge to a testee process (testee-protocol.md).

The kit starts the testee command, speaks one JSON line per request on its
standard input and reads one JSON line per response from its standard output.
Everything the testee says is judged strictly: a response that is not valid,
in-turn protocol JSON is a :class:`TesteeFault`; an envelope read back that is
not valid wire JSON is an :class:`InvalidTesteeEnvelope` (RDQ-RT-004).

No read or write on a pipe blocks past the ``timeout`` option: the stdout pipe
is read by one thread per process feeding a queue, standard input is written
non-blocking, and standard error is drained continuously into a bounded tail
that is shown with every failure. After a fault the process is killed and the
next operation starts it again (new ``hello``, same ``RDQ_STATE_DIR``).

A testee whose ``hello`` lists ``concurrent`` (C18) gets several requests in
flight: callers on several threads each send their request and wait for the
answer with their seq, which a dispatcher thread hands over whatever the order.
A line whose seq is not in flight is a fault. Any other testee keeps the strict
rule: one request at a time, answered in turn.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import dataclasses
import json
import os
import queue
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ..envelope._codec import encode, from_json
from ..envelope._deep import dumps, loads
from ..envelope._json import parse_json
from ..envelope._model import Envelope
from ..envelope._validate import InvalidEnvelope, validate_object
from ._protocol import (
    ErrorCode,
    OptionSpec,
    StorageError,
    StorageInfo,
    StorageUnavailable,
    positive_seconds,
)
from .hookspecs import hookimpl

__all__ = [
    "InvalidTesteeEnvelope",
    "StdioAdapter",
    "StdioStorage",
    "TesteeFault",
    "rdq_storage_open",
    "rdq_storage_options",
    "vouched_for",
]

PROTOCOL_VERSION = 1
STDERR_TAIL_LINES = 20
"""Lines of the testee's stderr shown with a failure."""
_STDERR_KEEP_LINES = 200
_STDERR_LINE_BYTES = 2_000
"""Longer stderr lines are cut: a chatty testee cannot grow the kit's memory."""
_MAX_LINE_BYTES = 32 * 1024 * 1024
"""A response line longer than this is a fault (a 1 MiB envelope fully \\u-escaped fits)."""
_PREVIEW_CHARS = 200
_C17_CODES = ", ".join(code.value for code in ErrorCode)


_VOUCHED: dict[int, Envelope] = {}
_VOUCHED_KEEP = 8
_vouched_lock = threading.Lock()
_NOT_VOUCHED = object()


def _vouch(env: Envelope) -> Envelope:
    with _vouched_lock:
        _VOUCHED[id(env)] = env  # kept alive, so its id() is not reused meanwhile
        while len(_VOUCHED) > _VOUCHED_KEEP:
            del _VOUCHED[next(iter(_VOUCHED))]
    return env


def vouched_for(env: object) -> bool:
    """True when ``env`` is a model the bridge itself just built from wire JSON that
    passed ``validate`` (one of the last few reads): validating the model again
    cannot find anything, so the kit may skip it. Identity, not equality: a model
    altered or rebuilt by anything between the bridge and the kit is not vouched for."""
    with _vouched_lock:
        # a default that is no caller's object: .get(...) -> None would vouch for None
        return _VOUCHED.get(id(env), _NOT_VOUCHED) is env


class TesteeFault(Exception):
    """The testee broke the protocol: it crashed, hung, printed a line that is
    not a protocol response, answered out of turn, or sent invalid JSON.

    ``kind`` names the fault for programs (``"crash"``, ``"timeout"``,
    ``"not_protocol"``, ``"invalid_json"``, ``"out_of_turn"``, ``"wrong_seq"``,
    ``"bad_response"``, ``"error_code"``, ``"bad_hello"``, ``"start"``,
    ``"exit_status"``, ``"invalid_envelope"``); ``message`` names it for people;
    ``stderr_tail`` holds the last lines the testee wrote to its stderr; ``pid`` the
    process the fault is about (None when none was running).
    """

    __test__ = False  # "Testee*" matches pytest's class pattern wherever it is imported

    def __init__(self, kind: str, message: str, *, stderr_tail: Sequence[str] = (),
                 pid: int | None = None) -> None:
        self.kind = kind
        self.message = message
        self.stderr_tail = tuple(stderr_tail)
        self.pid = pid
        super().__init__(message + _format_tail(self.stderr_tail))


class InvalidTesteeEnvelope(TesteeFault):
    """A read answered with an envelope that is not valid v1 wire JSON (RDQ-RT-004).

    The testee process keeps running: the protocol was followed, the data was wrong.
    """

    def __init__(
        self, message: str, violations: Sequence[Any], *, stderr_tail: Sequence[str] = ()
    ) -> None:
        self.violations = list(violations)
        super().__init__("invalid_envelope", message, stderr_tail=stderr_tail)


def _format_tail(tail: Sequence[str]) -> str:
    if not tail:
        return "\n(the testee wrote nothing to stderr)"
    lines = tail[-STDERR_TAIL_LINES:]
    return f"\n--- last {len(lines)} line(s) of the testee's stderr ---\n" + "\n".join(lines)


_ERROR_LINE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception|Exit)\b|error\b|fatal\b|panic\b)", re.IGNORECASE)


def _start_excerpt(tail: Sequence[str], first: int = 4, limit: int = 800) -> str:
    """The first lines a testee that did not start wrote to stderr, plus its error
    lines further down: the real error line is at the top of a Node.js stack and at
    the bottom of a Python traceback."""
    lines = [line.strip() for line in tail if line.strip()]
    if not lines:
        return "; it wrote nothing to stderr"
    shown = lines[:first]
    errors = [line for line in lines[first:] if _ERROR_LINE.match(line)]
    for line in dict.fromkeys(errors[:1] + errors[-1:]):
        if line not in shown:
            shown += ["…", line]
    if len(lines) > first and not errors and lines[-1] not in shown:
        shown += ["…", lines[-1]]
    text = " | ".join(shown)
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"; its stderr: {text}"


def _preview(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").rstrip("\n")
    if len(text) > _PREVIEW_CHARS:
        text = text[:_PREVIEW_CHARS] + f"… ({len(raw)} bytes)"
    return repr(text)


def _exit_text(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


# --- options and the state directory ------------------------------------------------

_default_state_dir: str | None = None
_state_dir_lock = threading.Lock()


def _shared_state_dir() -> str:
    """One temporary directory per kit process, reused by every reopen (C15 check)."""
    global _default_state_dir
    with _state_dir_lock:
        if _default_state_dir is None:
            path = tempfile.mkdtemp(prefix="rdq-testee-state-")
            _default_state_dir = path
            atexit.register(shutil.rmtree, path, ignore_errors=True)
        return _default_state_dir


@hookimpl
def rdq_storage_options() -> list[OptionSpec]:
    return [
        OptionSpec(
            "command",
            default=None,
            help="command line of the testee (split like a shell would, run without one); "
            "set by --rdq-testee",
            env="RDQ_TESTEE",
        ),
        OptionSpec(
            "timeout",
            default="10",
            help="seconds the testee may take to answer one request before it counts as hung",
        ),
        OptionSpec(
            "start_timeout",
            default="30",
            help="seconds the testee may take to start and answer hello (a JVM or a cold "
            "interpreter starts far slower than it answers one request)",
        ),
        OptionSpec(
            "state_dir",
            default="",
            help="RDQ_STATE_DIR handed to the testee (default: a temporary directory that "
            "lives for the kit run)",
        ),
    ]


@hookimpl
def rdq_storage_open(options: Mapping[str, str]) -> StdioStorage:
    command = (options.get("command") or "").strip()
    if not command:
        raise StorageUnavailable(
            "the stdio plugin needs the testee's command line: pass --rdq-testee CMD "
            "(or set RDQ_TESTEE)",
            setting="command",
        )
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise StorageUnavailable(
            f"stdio option command={command!r} cannot be split into arguments ({exc}); "
            "check its quotes",
            setting="command",
        ) from None
    timeout = _seconds(options, "timeout", "10")
    start_timeout = _seconds(options, "start_timeout", "30")
    state_dir = options.get("state_dir") or ""
    if state_dir:
        state_dir = os.path.abspath(state_dir)
        try:
            os.makedirs(state_dir, exist_ok=True)
        except OSError as exc:
            raise StorageUnavailable(
                f"stdio option state_dir={state_dir!r} cannot be created: {exc}",
                setting="state_dir",
            ) from None
    else:
        state_dir = _shared_state_dir()
    return StdioStorage(argv, timeout=timeout, start_timeout=start_timeout, state_dir=state_dir)


def _seconds(options: Mapping[str, str], name: str, default: str) -> float:
    raw = options.get(name) or default
    value = positive_seconds(raw)
    if value is None:
        raise StorageUnavailable(
            f"stdio option {name}={raw!r} is not a number of seconds > 0 "
            f"(e.g. --rdq-option {name}={default})",
            setting=name,
        )
    return value


# --- one testee process -------------------------------------------------------------


class _Process:
    """A running testee: its pipes, the stdout reader thread and the stderr drainer."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
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
                line = stream.readline(_MAX_LINE_BYTES + 1)
                if not line:
                    break
                self.lines.put(line)
                if len(line) > _MAX_LINE_BYTES and not line.endswith(b"\n"):
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
                    seq = _lenient_seq(line)
                    if seq is not None and self.inflight.get(seq, b"") is None:
                        self.inflight[seq] = line
                    elif self.stray is None:
                        self.stray = line
                self.cv.notify_all()
            if line is None:
                return

    def send(self, data: bytes, deadline: float) -> bool:
        """Write ``data`` to stdin. False when the deadline passed first.

        Raises BrokenPipeError when the testee closed its stdin (it died).
        """
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._stdin_fd, view)
            except BlockingIOError:
                written = 0
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
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._selector.close()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


# --- the storage --------------------------------------------------------------------

_LIVE: set[StdioStorage] = set()
"""Storages with a testee that may still run; killed at interpreter exit."""


def _kill_all() -> None:
    # An interrupted run must not leave testees behind.
    for storage in list(_LIVE):
        storage._abandon()


atexit.register(_kill_all)


class StdioStorage:
    """A :class:`~rdq_compliance.Storage` backed by a testee process."""

    def __init__(
        self, argv: Sequence[str], *, timeout: float, start_timeout: float = 30.0, state_dir: str
    ) -> None:
        self.argv = list(argv)
        self.command = shlex.join(self.argv)
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.state_dir = state_dir
        self._env = {**os.environ, "RDQ_STATE_DIR": state_dir}
        self._lock = threading.RLock()
        self._proc: _Process | None = None
        self._closed = False
        self._concurrent = False
        self.restarts = 0
        _LIVE.add(self)
        try:
            self._info = self._start()
        except TesteeFault as fault:
            _LIVE.discard(self)
            raise StorageUnavailable(
                f"stdio: cannot start the testee {self.command!r}: {fault.message}"
                + _start_excerpt(fault.stderr_tail),
                setting="command",
            ) from None

    @property
    def info(self) -> StorageInfo:
        return self._info

    def open(self, namespace: str) -> StdioAdapter:
        return StdioAdapter(self, namespace)

    def drop(self, namespace: str) -> None:
        self._request("drop", {"namespace": namespace})

    def _call(self, op: str, extra: str) -> dict[str, Any]:
        """One request: in turn under the lock, or in flight beside others (C18)."""
        with self._lock:
            proc = self._process()
            if not self._concurrent:
                return self._exchange(proc, op, extra)
        return self._exchange_many(proc, op, extra)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _LIVE.discard(self)
            proc, self._proc = self._proc, None
            if proc is None:
                return
            if self._concurrent:  # bye only when no request is in flight
                with proc.cv:
                    proc.cv.wait_for(lambda: not proc.inflight, self.timeout)
                self._exchange_many(proc, "bye", "")
            else:
                self._exchange(proc, "bye", "")
            status = proc.wait(self.timeout)
            if status is None:
                tail = proc.tail()
                proc.kill()
                raise TesteeFault(
                    "exit_status",
                    f"testee did not exit within {self.timeout:g} s after answering bye "
                    "(it was killed)",
                    stderr_tail=tail,
                )
            proc.settle()
            proc.finish()
            if status != 0:
                raise TesteeFault(
                    "exit_status",
                    f"testee {_exit_text(status)} after bye (expected exit status 0)",
                    stderr_tail=proc.tail(),
                )

    def _abandon(self) -> None:
        """Kill the testee without a goodbye (interpreter exit, interrupted run)."""
        # No lock: a call abandoned by the kit's timeout guard may hold it; killing the
        # process is what ends that call (its reader sees EOF).
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()

    def __repr__(self) -> str:
        return f"StdioStorage(command={self.command!r}, state_dir={self.state_dir!r})"

    # -- process lifecycle --

    def _start(self) -> StorageInfo:
        try:
            proc = _Process(self.argv, self._env)
        except FileNotFoundError:
            raise TesteeFault(
                "start",
                f"executable {self.argv[0]!r} not found (check --rdq-testee / RDQ_TESTEE)",
            ) from None
        except OSError as exc:
            raise TesteeFault("start", f"it cannot be executed: {exc}") from None
        self._proc = proc
        response = self._exchange(
            proc, "hello", f',"protocol":{PROTOCOL_VERSION}', timeout=self.start_timeout
        )
        try:
            info = _hello_info(response)
        except ValueError as exc:
            raise self._fault(proc, "bad_hello", f"testee answered hello with {exc}") from None
        self._concurrent = "concurrent" in info.capabilities
        if self._concurrent:
            proc.dispatch()
        return info

    def _process(self) -> _Process:
        """The running testee, restarted after a fault."""
        if self._closed:
            raise RuntimeError(f"{self!r} is closed; open a new storage")
        if self._proc is None:
            info = self._start()
            self.restarts += 1
            if info != self._info:
                raise self._fault(
                    self._proc, "bad_hello",
                    f"testee answered hello differently after a restart: {info} "
                    f"instead of {self._info}",
                )
        assert self._proc is not None
        return self._proc

    def _fault(self, proc: _Process | None, kind: str, message: str) -> TesteeFault:
        """Kill the testee; the next operation restarts it."""
        tail: list[str] = []
        if proc is not None:
            proc.killed_for = proc.killed_for or message
            proc.kill()
            tail = proc.tail()
            if self._proc is proc:
                self._proc = None
        return TesteeFault(kind, message, stderr_tail=tail,
                           pid=None if proc is None else proc.popen.pid)

    # -- requests --

    def _request(self, op: str, fields: Mapping[str, str]) -> dict[str, Any]:
        extra = "".join(f",{json.dumps(k)}:{json.dumps(v)}" for k, v in fields.items())
        return self._call(op, extra)

    def write(self, namespace: str, envelope: Envelope) -> None:
        if not isinstance(envelope, Envelope):
            raise TypeError(f"write expects an Envelope, got {type(envelope).__name__}")
        extra = f',"namespace":{json.dumps(namespace)},"envelope":{encode(envelope)}'
        self._call("write", extra)

    def read(self, namespace: str, id: str) -> Envelope | None:
        return self._read(namespace, id)

    def _read(self, namespace: str, id: str) -> Envelope | None:
        response = self._request("read", {"namespace": namespace, "id": id})
        if "envelope" not in response:
            raise self._fault(self._proc, "bad_response",
                              "testee answered read without an 'envelope' field "
                              "(expected an object, or null when nothing is stored)")
        obj = response["envelope"]
        if obj is None:
            return None
        if not isinstance(obj, dict):
            raise self._fault(self._proc, "bad_response",
                              f"testee answered read with envelope={_short(obj)}, "
                              "expected an object or null")
        # parsed=True: ``obj`` comes from parse_json, which already refused lone
        # surrogates, duplicate keys and non-JSON values.
        violations = validate_object(obj, versions=None, parsed=True)
        if violations:
            raise self._invalid(obj, violations, namespace, id)
        try:
            return _vouch(from_json(obj))
        except (ValueError, TypeError, KeyError) as exc:  # validate() should have caught it
            raise self._invalid(obj, [], namespace, id, f" ({type(exc).__name__}: {exc})") from None

    def _invalid(
        self, obj: object, violations: Sequence[Any], namespace: str, id: str, note: str = ""
    ) -> InvalidTesteeEnvelope:
        listed = "".join(
            f"\n  {_where(v.pointer)}: {v.code}: {v.message}" for v in violations
        )
        text = dumps(obj, allow_nan=True)  # any depth
        if len(text) > 2_000:
            text = text[:2_000] + "…"
        return InvalidTesteeEnvelope(
            f"testee returned an envelope that is not valid v1 wire JSON for read of "
            f"id={id!r} in namespace={namespace!r}{note}:{listed}\n  returned: {text}",
            violations,
            stderr_tail=self._proc.tail() if self._proc else (),
        )

    def _exchange(
        self, proc: _Process, op: str, extra: str, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one request and return its (successful) response object."""
        timeout = self.timeout if timeout is None else timeout
        seq = proc.seq
        proc.seq += 1
        where = f"{op} (seq {seq})"
        stray = proc.pending()
        if stray is None:
            # Before the first request the testee had no idle time: it died starting up,
            # which is what a crash during hello says, whichever side saw it first.
            raise self._crashed(proc, where if seq == 0 else f"idle time, before request {where}")
        if isinstance(stray, bytes):
            raise self._fault(proc, "out_of_turn",
                              f"testee printed a line before request {where} was sent: "
                              f"{_preview(stray)}")
        deadline = time.monotonic() + timeout
        self._send(proc, op, seq, extra, deadline, timeout)
        raw = proc.receive(deadline)
        if raw is None:
            raise self._crashed(proc, where)
        if raw is False:
            raise self._fault(proc, "timeout",
                              f"testee did not answer {where} within {timeout:g} s")
        assert isinstance(raw, bytes)
        return self._answer(proc, raw, op, seq)

    def _send(
        self, proc: _Process, op: str, seq: int, extra: str, deadline: float, timeout: float
    ) -> None:
        """Write one request line; a testee that exited or stopped reading is a fault."""
        where = f"{op} (seq {seq})"
        data = f'{{"op":"{op}","seq":{seq}{extra}}}\n'.encode("utf-8", "backslashreplace")
        try:
            sent = proc.send(data, deadline)
        except BrokenPipeError:
            raise self._crashed(proc, where) from None
        if not sent:
            raise self._fault(proc, "timeout",
                              f"testee did not read request {where} within {timeout:g} s")

    def _exchange_many(self, proc: _Process, op: str, extra: str) -> dict[str, Any]:
        """Send one request while others may be in flight; wait for the answer with its
        seq (the dispatcher thread files each line under its seq)."""
        timeout = self.timeout
        deadline = time.monotonic() + timeout
        with proc.send_lock:  # seq order is send order; one writer on the pipe at a time
            seq = proc.seq
            proc.seq += 1
            where = f"{op} (seq {seq})"
            with proc.cv:
                stray, dead = proc.stray, proc.eof
                proc.inflight[seq] = None
            if dead:
                raise self._crashed(proc, f"idle time, before request {where}")
            if stray is not None:
                raise self._stray(proc, stray, op, seq, before=True)
            self._send(proc, op, seq, extra, deadline, timeout)
        with proc.cv:
            while True:
                raw = proc.inflight.get(seq)
                remaining = deadline - time.monotonic()
                if raw is not None or proc.stray is not None or proc.eof or remaining <= 0:
                    proc.inflight.pop(seq, None)
                    proc.cv.notify_all()  # close() waits for no request in flight
                    break
                proc.cv.wait(remaining)
            stray, eof = proc.stray, proc.eof
        if raw is not None:
            return self._answer(proc, raw, op, seq)
        if stray is not None:
            raise self._stray(proc, stray, op, seq, before=False)
        if eof:
            if proc.killed_for:
                raise self._fault(proc, "crash", f"request {where} was in flight when the "
                                  f"bridge killed the testee after: {proc.killed_for}")
            raise self._crashed(proc, where)
        raise self._fault(proc, "timeout", f"testee did not answer {where} within {timeout:g} s")

    def _stray(self, proc: _Process, raw: bytes, op: str, seq: int, *, before: bool
               ) -> TesteeFault:
        """The fault for a line a concurrent testee sent that no request in flight awaits."""
        got = _lenient_seq(raw)
        if got is None:  # not a protocol line at all: the strict parser names it
            try:
                self._parse(proc, raw, op, seq)
            except TesteeFault as fault:
                return fault
        when = f"before request {op} (seq {seq}) was sent" if before else \
            f"while request {op} (seq {seq}) was in flight"
        return self._fault(proc, "wrong_seq" if got is not None and got >= proc.seq
                           else "out_of_turn",
                           f"testee answered seq {got} {when}, but no request with seq {got} "
                           f"was awaiting an answer (never sent, or already answered): "
                           f"{_preview(raw)}")

    def _answer(self, proc: _Process, raw: bytes, op: str, seq: int) -> dict[str, Any]:
        """The successful response object of ``raw``, the answer to request ``seq``."""
        where = f"{op} (seq {seq})"
        response = self._parse(proc, raw, op, seq)
        if response["ok"] is True:
            return response
        error = response.get("error")
        if not (isinstance(error, dict) and isinstance(error.get("code"), str)
                and isinstance(error.get("message"), str)):
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with ok=false but error={_short(error)}; "
                              'expected {"code": CODE, "message": TEXT}')
        code, message = error["code"], error["message"]
        if code not in ErrorCode.__members__:
            raise self._fault(proc, "error_code",
                              f"testee answered {where} with error code {code!r}, which is not "
                              f"a C17 code (expected one of {_C17_CODES}); message: {message!r}")
        if op in ("hello", "bye"):
            raise self._fault(proc, "bad_response",
                              f"testee refused {where}: {code}: {message}")
        raise StorageError(ErrorCode(code), message)

    def _crashed(self, proc: _Process, where: str) -> TesteeFault:
        status = proc.wait(min(self.timeout, 2.0))
        if status is None:
            return self._fault(proc, "crash",
                               f"testee closed its pipes during {where} "
                               "without exiting (it was killed)")
        proc.settle()  # its last words (a traceback) are the most useful part
        return self._fault(proc, "crash", f"testee crashed: it {_exit_text(status)} "
                           f"during {where}")

    def _unparsable(
        self, proc: _Process, raw: bytes, op: str, seq: int, violations: Sequence[Any]
    ) -> TesteeFault:
        """The fault for a line the strict parser rejected."""
        where = f"{op} (seq {seq})"
        lenient = _lenient(raw)
        if not isinstance(lenient, dict):
            if raw.lstrip().startswith(b"{"):
                return self._fault(proc, "invalid_json",
                                   f"testee answered {where} with invalid JSON: {_preview(raw)}")
            return self._fault(proc, "not_protocol",
                               f"testee printed a line that is not a protocol response: "
                               f"{_preview(raw)} (answering {where})")
        # Well-formed but not strict JSON: duplicate keys, lone surrogates, bad UTF-8.
        listed = "; ".join(f"{_where(v.pointer)}: {v.code}: {v.message}" for v in violations)
        inside_envelope = bool(violations) and all(
            v.pointer == "/envelope" or str(v.pointer).startswith("/envelope/")
            for v in violations
        )
        if (op == "read" and inside_envelope and lenient.get("seq") == seq
                and lenient.get("ok") is True):
            # The protocol was followed; the envelope is wrong (RDQ-RT-004, C4/C11).
            # Pointers become envelope-relative, like those of validate().
            rebased = [dataclasses.replace(v, pointer=v.pointer[len("/envelope"):])
                       for v in violations]
            listed = "".join(f"\n  {_where(v.pointer)}: {v.code}: {v.message}" for v in rebased)
            return InvalidTesteeEnvelope(
                f"testee answered {where} with an envelope that is not strict JSON (C4, C11):"
                f"{listed}\n  line: {_preview(raw)}",
                rebased, stderr_tail=proc.tail(),
            )
        return self._fault(proc, "invalid_json",
                           f"testee answered {where} with invalid JSON ({listed}): "
                           f"{_preview(raw)}")

    def _parse(self, proc: _Process, raw: bytes, op: str, seq: int) -> dict[str, Any]:
        where = f"{op} (seq {seq})"
        if len(raw) > _MAX_LINE_BYTES:
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with a line over {_MAX_LINE_BYTES} bytes")
        try:
            obj = parse_json(raw)
        except InvalidEnvelope as exc:
            violations = list(getattr(exc, "violations", ()))
            raise self._unparsable(proc, raw, op, seq, violations) from None
        if not isinstance(obj, dict) or ("seq" not in obj and "ok" not in obj):
            raise self._fault(proc, "not_protocol",
                              f"testee printed a line that is not a protocol response: "
                              f"{_preview(raw)} (answering {where})")
        got = obj.get("seq")
        if type(got) is not int:
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with seq={_short(got)}, expected {seq}")
        if got != seq:
            raise self._fault(proc, "wrong_seq",
                              f"testee answered seq {got} to request seq {seq} ({op})")
        if not isinstance(obj.get("ok"), bool):
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with ok={_short(obj.get('ok'))}, "
                              "expected true or false")
        return obj


def _where(pointer: str) -> str:
    return pointer or "(top level)"


def _lenient_seq(raw: bytes) -> int | None:
    """The integer seq of a line that is a JSON object, else None (routing only: the
    line is judged strictly by the request that receives it)."""
    obj = _lenient(raw)
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if type(seq) is int else None


def _lenient(raw: bytes) -> object:
    try:
        return loads(raw.decode("utf-8", "replace"))  # any depth
    except ValueError:
        return None


def _short(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except RecursionError:  # nested deeper than json recurses: values from parse_json
        text = dumps(value, allow_nan=True)
    return text if len(text) <= 80 else text[:80] + "…"


def _hello_info(response: Mapping[str, Any]) -> StorageInfo:
    name, version = response.get("name"), response.get("version")
    versions, capabilities = response.get("envelope_versions"), response.get("capabilities")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name={_short(name)}; expected a non-empty string")
    if not isinstance(version, str):
        raise ValueError(f"version={_short(version)}; expected a string")
    if not (isinstance(versions, list) and versions
            and all(type(v) is int and v >= 0 for v in versions)):
        raise ValueError(
            f"envelope_versions={_short(versions)}; expected a non-empty list of integers"
        )
    if not (isinstance(capabilities, list) and all(isinstance(c, str) for c in capabilities)):
        raise ValueError(f"capabilities={_short(capabilities)}; expected a list of strings")
    return StorageInfo(name, version, frozenset(versions), frozenset(capabilities))


class StdioAdapter:
    """An :class:`~rdq_compliance.Adapter` on one namespace of a testee."""

    def __init__(self, storage: StdioStorage, namespace: str) -> None:
        self.storage = storage
        self.namespace = namespace

    def write(self, envelope: Envelope) -> None:
        self.storage.write(self.namespace, envelope)

    def read(self, id: str) -> Envelope | None:
        return self.storage.read(self.namespace, id)

    def close(self) -> None:
        """Nothing to release: the testee holds no per-namespace resources in the protocol."""

    def __repr__(self) -> str:
        return f"StdioAdapter({self.storage.command!r}, namespace={self.namespace!r})"
