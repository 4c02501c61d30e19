"""``StdioStorage`` and ``StdioAdapter``: the Storage the kit tests, backed by a testee."""

from __future__ import annotations

import atexit
import json
import os
import shlex
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ...envelope._codec import encode, from_json
from ...envelope._deep import dumps
from ...envelope._model import Envelope
from ...envelope._validate import validate_object
from .._protocol import StorageInfo, StorageUnavailable
from ._faults import (
    InvalidTesteeEnvelope,
    TesteeFault,
    exit_text,
    pointer_text,
    short,
    start_excerpt,
)
from ._process import Process
from ._vouch import vouch
from ._wire import PROTOCOL_VERSION, Wire, hello_info

__all__ = ["StdioAdapter", "StdioStorage"]

_LIVE: set[StdioStorage] = set()
"""Storages with a testee that may still run; killed at interpreter exit."""


def _kill_all() -> None:
    # An interrupted run must not leave testees behind.
    for storage in list(_LIVE):
        storage._abandon()


atexit.register(_kill_all)


class StdioStorage(Wire):
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
        self._proc: Process | None = None
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
                + start_excerpt(fault.stderr_tail),
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
                    f"testee {exit_text(status)} after bye (expected exit status 0)",
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
            proc = Process(self.argv, self._env)
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
            info = hello_info(response)
        except ValueError as exc:
            raise self._fault(proc, "bad_hello", f"testee answered hello with {exc}") from None
        self._concurrent = "concurrent" in info.capabilities
        if self._concurrent:
            proc.dispatch()
        return info

    def _process(self) -> Process:
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
                              f"testee answered read with envelope={short(obj)}, "
                              "expected an object or null")
        # parsed=True: ``obj`` comes from parse_json, which already refused lone
        # surrogates, duplicate keys and non-JSON values.
        violations = validate_object(obj, versions=None, parsed=True)
        if violations:
            raise self._invalid(obj, violations, namespace, id)
        try:
            return vouch(from_json(obj))
        except (ValueError, TypeError, KeyError) as exc:  # validate() should have caught it
            raise self._invalid(obj, [], namespace, id, f" ({type(exc).__name__}: {exc})") from None

    def _invalid(
        self, obj: object, violations: Sequence[Any], namespace: str, id: str, note: str = ""
    ) -> InvalidTesteeEnvelope:
        listed = "".join(
            f"\n  {pointer_text(v.pointer)}: {v.code}: {v.message}" for v in violations
        )
        text = dumps(obj, allow_nan=True)  # any depth
        if len(text) > 2_000:
            text = text[:2_000] + "…"
        return InvalidTesteeEnvelope(
            f"testee returned an envelope that is not valid v1 wire JSON for read of "
            f"id={id!r} in namespace={namespace!r}{note}:{listed}\n  returned: {text}",
            violations,
            stderr_tail=self._proc.tail() if self._proc else (),
            document=obj,
        )


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
