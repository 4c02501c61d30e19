"""The stdio bridge with several requests in flight (capability ``concurrent``, C18).

A testee that lists ``concurrent`` in ``hello`` gets requests pipelined and may answer
them in any order; the bridge matches answers by ``seq``. A line whose seq no request
awaits is still a fault. (Testees that do not list it: test_stdio_bridge.py.)
"""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path

import pytest

from rdq_compliance.storage._stdio import StdioStorage, TesteeFault

# Answers nothing until three requests are in flight, then answers them in reverse order:
# a bridge that waited for each answer before sending the next request would hang.
SCRIPT = textwrap.dedent('''
    import json, sys
    mode, caps = sys.argv[1], sys.argv[2].split(",") if sys.argv[2] else []
    pending = []
    def say(obj):
        sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
    for raw in sys.stdin:
        req = json.loads(raw)
        if req["op"] == "hello":
            say({"seq": req["seq"], "ok": True, "name": "c", "version": "1",
                 "envelope_versions": [1], "capabilities": caps})
            continue
        if req["op"] == "bye":
            say({"seq": req["seq"], "ok": True})
            break
        pending.append(req)
        if len(pending) < 3:
            continue
        for r in reversed(pending):
            seq = r["seq"] + 100 if mode == "unknown" else r["seq"]
            answer = {"seq": seq, "ok": True}
            if r["op"] == "read":
                answer["envelope"] = None
            say(answer)
            if mode == "twice":
                say(answer)
        pending.clear()
''')


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "pipelined.py"
    path.write_text(SCRIPT)
    return path


def storage(script: Path, tmp_path: Path, mode: str, caps: str = "concurrent",
            timeout: float = 5.0) -> StdioStorage:
    return StdioStorage([sys.executable, str(script), mode, caps], timeout=timeout,
                        state_dir=str(tmp_path))


def three_reads(s: StdioStorage) -> list[object]:
    """Three reads released together from three threads: each result or exception."""
    results: list[object] = [None] * 3
    barrier = threading.Barrier(3)

    def read(i: int) -> None:
        barrier.wait()
        try:
            results[i] = s.read("ns", f"01J2ZK7Q8XW5H3N9G4T6B8RDQ{i}")
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=read, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_pipelined_requests_answered_in_reverse_order(script: Path, tmp_path: Path) -> None:
    s = storage(script, tmp_path, "ok")
    try:
        assert "concurrent" in s.info.capabilities
        for _ in range(3):  # the process keeps working: several rounds, one process
            assert three_reads(s) == [None, None, None]
        assert s.restarts == 0
    finally:
        s.close()


def test_answer_to_a_seq_never_sent_is_a_fault(script: Path, tmp_path: Path) -> None:
    s = storage(script, tmp_path, "unknown")
    try:
        results = three_reads(s)
        assert all(isinstance(r, TesteeFault) for r in results), results
        kinds = {r.kind for r in results if isinstance(r, TesteeFault)}
        assert kinds <= {"wrong_seq", "out_of_turn", "crash"} and kinds & {"wrong_seq"}
        first = next(r for r in results if isinstance(r, TesteeFault) and r.kind == "wrong_seq")
        assert "no request with seq" in first.message
    finally:
        s.close()


def test_a_request_that_finds_the_testee_killed_for_a_fault_reports_that_fault(
    script: Path, tmp_path: Path
) -> None:
    """A lane that took the process before another lane's request saw a fault (and the
    bridge killed the testee for it) finds it gone: that fault, its kind and first line,
    not a crash of the testee ("killed by SIGKILL during idle time"), so that one defect
    reads as one cause."""
    s = storage(script, tmp_path, "ok")
    try:
        assert "concurrent" in s.info.capabilities  # started
        proc = s._proc
        assert proc is not None
        first = s._fault(proc, "wrong_seq", "testee answered seq 9 while request read (seq 1) "
                         "was in flight")
        for call in (s._exchange_many, s._exchange):  # pipelined, and one at a time
            with pytest.raises(TesteeFault) as info:
                call(proc, "read", ',"namespace":"ns","id":"01J2ZK7Q8XW5H3N9G4T6B8RDQ0"')
            assert info.value.kind == "wrong_seq", info.value
            lines = info.value.message.splitlines()
            assert lines[0] == first.message
            assert "the bridge had killed the testee for that fault" in lines[1]
        assert three_reads(s) == [None, None, None]  # a new process answers
    finally:
        s.close()


def test_an_answer_sent_twice_is_a_fault(script: Path, tmp_path: Path) -> None:
    s = storage(script, tmp_path, "twice")
    try:
        # Each answer comes twice. A duplicate is unclaimed: it faults the requests still
        # in flight when it arrives, or else the next request (before it is sent).
        faults = [r for r in three_reads(s) if isinstance(r, TesteeFault)]
        if not faults:
            with pytest.raises(TesteeFault) as info:
                s.read("ns", "01J2ZK7Q8XW5H3N9G4T6B8RDQ9")
            faults = [info.value]
        assert faults[0].kind == "out_of_turn", faults
        assert "already answered" in faults[0].message
    finally:
        s._abandon()


def test_a_testee_without_concurrent_gets_one_request_at_a_time(
    script: Path, tmp_path: Path
) -> None:
    # The same script without the capability: the bridge never pipelines, so the
    # testee (waiting for three requests in flight) never answers: a timeout fault.
    s = storage(script, tmp_path, "ok", caps="", timeout=0.5)
    try:
        results = three_reads(s)
        assert all(isinstance(r, TesteeFault) and r.kind == "timeout" for r in results), results
    finally:
        s._abandon()


def test_a_hang_with_requests_in_flight_ends_them_all_in_bounded_time(
    script: Path, tmp_path: Path
) -> None:
    # Two requests in flight, and the testee waits for a third: both end within the
    # timeout (plus the kill), each naming why; the next request starts a fresh testee.
    s = storage(script, tmp_path, "ok", timeout=0.5)
    try:
        results: list[object] = [None, None]

        def read(i: int) -> None:
            try:
                results[i] = s.read("ns", f"01J2ZK7Q8XW5H3N9G4T6B8RDQ{i}")
            except TesteeFault as exc:
                results[i] = exc

        threads = [threading.Thread(target=read, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
            assert not t.is_alive()
        faults = [r for r in results if isinstance(r, TesteeFault)]
        assert len(faults) == 2, results
        assert any(f.kind == "timeout" and "did not answer" in f.message for f in faults)
        assert all(f.kind == "timeout" or "killed the testee after" in f.message
                   for f in faults), [f.message for f in faults]
        assert three_reads(s) == [None, None, None]  # restarted, working again
        assert s.restarts == 1
    finally:
        s._abandon()
