"""The bridge's half that speaks the protocol: one request out, its answer judged.

Everything the testee says is judged strictly: a response that is not valid, in-turn
protocol JSON is a :class:`TesteeFault` (and the process is killed); an envelope read
back that is not strict JSON is an :class:`InvalidTesteeEnvelope` (RDQ-RT-004).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ...envelope._json import parse_json
from ...envelope._validate import InvalidEnvelope
from .._protocol import ErrorCode, StorageError, StorageInfo
from ._faults import (
    InvalidTesteeEnvelope,
    TesteeFault,
    exit_text,
    lenient_json,
    lenient_seq,
    pointer_text,
    preview,
    short,
)
from ._process import MAX_LINE_BYTES, Process

__all__ = ["PROTOCOL_VERSION", "Wire", "hello_info"]

PROTOCOL_VERSION = 1
_C17_CODES = ", ".join(code.value for code in ErrorCode)


class Wire:
    """Requests and answers on a testee's pipes (a base of ``StdioStorage``)."""

    timeout: float
    _proc: Process | None

    def _fault(self, proc: Process | None, kind: str, message: str) -> TesteeFault:
        """Kill the testee; the next operation restarts it."""
        tail: list[str] = []
        if proc is not None:
            if not proc.killed_for:
                proc.killed_for, proc.killed_kind = message, kind
            proc.kill()
            tail = proc.tail()
            if self._proc is proc:
                self._proc = None
        return TesteeFault(kind, message, stderr_tail=tail,
                           pid=None if proc is None else proc.popen.pid)

    def _exchange(
        self, proc: Process, op: str, extra: str, *, timeout: float | None = None
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
                              f"{preview(stray)}")
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
        self, proc: Process, op: str, seq: int, extra: str, deadline: float, timeout: float
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

    def _exchange_many(self, proc: Process, op: str, extra: str) -> dict[str, Any]:
        """Send one request while others may be in flight; wait for the answer with its
        seq (the dispatcher thread files each line under its seq)."""
        timeout = self.timeout
        deadline = time.monotonic() + timeout
        with proc.send_lock:  # seq order is send order; one writer on the pipe at a time
            seq = proc.seq
            proc.seq += 1
            where = f"{op} (seq {seq})"
            with proc.cv:
                stray, dead = proc.stray, proc.eof or proc.closed
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
            raise self._crashed(proc, where)
        raise self._fault(proc, "timeout", f"testee did not answer {where} within {timeout:g} s")

    def _stray(self, proc: Process, raw: bytes, op: str, seq: int, *, before: bool
               ) -> TesteeFault:
        """The fault for a line a concurrent testee sent that no request in flight awaits."""
        got = lenient_seq(raw)
        if got is None:  # not a protocol line at all: the strict parser names it
            try:
                self._parse(proc, raw, op, seq)
            except TesteeFault as fault:
                return fault
        when = f"before request {op} (seq {seq}) was sent" if before else \
            f"while request {op} (seq {seq}) was in flight"
        # Which request saw it on its own line: every request in flight sees the line,
        # one fault of the testee, whose first line (its cause) is the same for each.
        return self._fault(proc, "wrong_seq" if got is not None and got >= proc.seq
                           else "out_of_turn",
                           f"testee answered seq {got}, but no request with seq {got} "
                           f"was awaiting an answer (never sent, or already answered): "
                           f"{preview(raw)}\n(seen {when})")

    def _answer(self, proc: Process, raw: bytes, op: str, seq: int) -> dict[str, Any]:
        """The successful response object of ``raw``, the answer to request ``seq``."""
        where = f"{op} (seq {seq})"
        response = self._parse(proc, raw, op, seq)
        if response["ok"] is True:
            return response
        error = response.get("error")
        if not (isinstance(error, dict) and isinstance(error.get("code"), str)
                and isinstance(error.get("message"), str)):
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with ok=false but error={short(error)}; "
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

    def _crashed(self, proc: Process, where: str) -> TesteeFault:
        if proc.killed_for:
            # The bridge killed it for a fault another request saw (a concurrent testee's
            # wrong seq): that fault, first line and kind, is this request's too; a crash
            # it is not.
            return self._fault(proc, proc.killed_kind, f"{proc.killed_for}\n(the bridge had "
                               f"killed the testee for that fault; it was gone during {where})")
        status = proc.wait(min(self.timeout, 2.0))
        if status is None:
            return self._fault(proc, "crash",
                               f"testee closed its pipes during {where} "
                               "without exiting (it was killed)")
        proc.settle()  # its last words (a traceback) are the most useful part
        return self._fault(proc, "crash", f"testee crashed: it {exit_text(status)} "
                           f"during {where}")

    def _unparsable(
        self, proc: Process, raw: bytes, op: str, seq: int, violations: Sequence[Any]
    ) -> TesteeFault:
        """The fault for a line the strict parser rejected."""
        where = f"{op} (seq {seq})"
        lenient = lenient_json(raw)
        if not isinstance(lenient, dict):
            if raw.lstrip().startswith(b"{"):
                return self._fault(proc, "invalid_json",
                                   f"testee answered {where} with invalid JSON: {preview(raw)}")
            return self._fault(proc, "not_protocol",
                               f"testee printed a line that is not a protocol response: "
                               f"{preview(raw)} (answering {where})")
        # Well-formed but not strict JSON: duplicate keys, lone surrogates, bad UTF-8.
        listed = "; ".join(f"{pointer_text(v.pointer)}: {v.code}: {v.message}" for v in violations)
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
            listed = "".join(f"\n  {pointer_text(v.pointer)}: {v.code}: {v.message}"
                             for v in rebased)
            return InvalidTesteeEnvelope(
                f"testee answered {where} with an envelope that is not strict JSON (C4, C11):"
                f"{listed}\n  line: {preview(raw)}",
                rebased, stderr_tail=proc.tail(),
            )
        return self._fault(proc, "invalid_json",
                           f"testee answered {where} with invalid JSON ({listed}): "
                           f"{preview(raw)}")

    def _parse(self, proc: Process, raw: bytes, op: str, seq: int) -> dict[str, Any]:
        where = f"{op} (seq {seq})"
        if len(raw) > MAX_LINE_BYTES:
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with a line over {MAX_LINE_BYTES} bytes")
        try:
            obj = parse_json(raw)
        except InvalidEnvelope as exc:
            violations = list(getattr(exc, "violations", ()))
            raise self._unparsable(proc, raw, op, seq, violations) from None
        if not isinstance(obj, dict) or ("seq" not in obj and "ok" not in obj):
            raise self._fault(proc, "not_protocol",
                              f"testee printed a line that is not a protocol response: "
                              f"{preview(raw)} (answering {where})")
        got = obj.get("seq")
        if type(got) is not int:
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with seq={short(got)}, expected {seq}")
        if got != seq:
            raise self._fault(proc, "wrong_seq",
                              f"testee answered seq {got} to request seq {seq} ({op})")
        if not isinstance(obj.get("ok"), bool):
            raise self._fault(proc, "bad_response",
                              f"testee answered {where} with ok={short(obj.get('ok'))}, "
                              "expected true or false")
        return obj


def hello_info(response: Mapping[str, Any]) -> StorageInfo:
    name, version = response.get("name"), response.get("version")
    versions, capabilities = response.get("envelope_versions"), response.get("capabilities")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name={short(name)}; expected a non-empty string")
    if not isinstance(version, str):
        raise ValueError(f"version={short(version)}; expected a string")
    if not (isinstance(versions, list) and versions
            and all(type(v) is int and v >= 0 for v in versions)):
        raise ValueError(
            f"envelope_versions={short(versions)}; expected a non-empty list of integers"
        )
    if not (isinstance(capabilities, list) and all(isinstance(c, str) for c in capabilities)):
        raise ValueError(f"capabilities={short(capabilities)}; expected a list of strings")
    return StorageInfo(name, version, frozenset(versions), frozenset(capabilities))
