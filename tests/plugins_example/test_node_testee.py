"""The Node.js example testee, spoken to directly over the testee protocol.

The envelopes are hand-written JSON so that no kit code sits between the test
and the testee; responses are parsed with a duplicate-key-refusing reader and
compared type-strictly (1.0 is not 1, True is not 1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._harness import ID_A, ID_B, INT64_MAX, INT64_MIN, assert_same, every_json_type

ROOT = Path(__file__).resolve().parents[2]
TESTEE = ROOT / "plugins_example" / "node" / "testee.js"
NODE = shutil.which("node")
# Every JSON type at every level of the wire envelope that has unknown fields.
AWKWARD_JSON = {**every_json_type("u"), "payload_ref": "s3://bucket/key"}

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"duplicate keys in {keys!r}"
    return dict(pairs)


def _loads(line: str) -> Any:
    return json.loads(line, object_pairs_hook=_no_duplicates)


class NodeTestee:
    def __init__(self, state_dir: Path) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(TESTEE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "RDQ_STATE_DIR": str(state_dir)},
            cwd=state_dir,
        )
        self.seq = 0

    def send_raw(self, line: bytes) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer.endswith(b"\n"), f"no response line; stderr: {self.stderr()}"
        result = _loads(answer.decode("utf-8"))
        assert isinstance(result, dict)
        return result

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        req = {"op": op, "seq": self.seq, **fields}
        text = json.dumps(req, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        response = self.send_raw(text.encode("utf-8"))
        assert response["seq"] == self.seq
        return response

    def stderr(self) -> str:
        self.proc.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")

    def bye(self) -> None:
        assert self.request("bye") == {"seq": self.seq, "ok": True}
        assert self.proc.wait(timeout=10) == 0
        assert self.proc.stdout is not None
        assert self.proc.stdout.read() == b""  # nothing after the bye response

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def testee(state_dir: Path) -> Iterator[NodeTestee]:
    t = NodeTestee(state_dir)
    hello = t.request("hello", protocol=1)
    assert hello == {
        "seq": 1,
        "ok": True,
        "name": "node-files",
        "version": "1.0.0",
        "envelope_versions": [1],
        "capabilities": ["durable", "concurrent"],
    }
    yield t
    t.close()


def envelope(id: str = ID_A, **changes: Any) -> dict[str, Any]:
    """A hand-written v1 envelope with every awkward value (wire form)."""
    env: dict[str, Any] = {
        "envelope_version": 1,
        "id": id,
        "queue": "payments.charge",
        "handler_ref": "charge-payment",
        "handler_version": "",
        "payload": "",
        "payload_content_type": "a\x00\U0001f600",
        "headers": {"": "", "A": "1", "a": "2", "k\x00": "v\x00", "\U0001f600": "x"},
        "status": "PENDING",
        "attempt_count": 2,
        "redrive_count": 1,
        "next_attempt_at": "9999-12-31T23:59:59.999Z",
        "lease_expires_at": None,
        "created_at": "1970-01-01T00:00:00.000Z",
        "attempts": [
            {
                "attempt_no": 1,
                "started_at": "2026-07-20T14:03:22.200Z",
                "finished_at": None,
                "outcome": "RETRYABLE_FAILURE",
                "error": {
                    "type": "T",
                    "message": "m\x00",
                    "detail": {"big": INT64_MAX, "small": INT64_MIN, "tiny": 5e-324},
                    "stack": None,
                    **AWKWARD_JSON,
                },
                **AWKWARD_JSON,
            },
            {
                "attempt_no": 1,
                "started_at": "2026-07-20T14:03:22.200Z",
                "finished_at": None,
                "outcome": "LEASE_EXPIRED",
                "error": None,
            },
        ],
        **AWKWARD_JSON,
    }
    env.update(changes)
    return env


def assert_read(t: NodeTestee, namespace: str, id: str, expected: dict[str, Any] | None) -> None:
    response = t.request("read", namespace=namespace, id=id)
    assert response["ok"] is True, response
    assert set(response) == {"seq", "ok", "envelope"}
    if expected is None:
        assert response["envelope"] is None
    else:
        assert_same(expected, response["envelope"])


def test_round_trip_is_exact(testee: NodeTestee) -> None:
    assert testee.request("write", namespace="ns_one", envelope=envelope()) == {
        "seq": 2,
        "ok": True,
    }
    assert_read(testee, "ns_one", ID_A, envelope())


def test_numbers_come_back_as_their_source_text(testee: NodeTestee) -> None:
    line = (
        '{"op":"write","seq":7,"namespace":"ns_one","envelope":{"envelope_version":1,'
        '"id":"X","n":[9223372036854775807,-9223372036854775808,5e-324,1.0,1E+2,-0.0]}}'
    )
    assert testee.send_raw(line.encode()) == {"seq": 7, "ok": True}
    raw = testee.proc
    assert raw.stdin is not None and raw.stdout is not None
    raw.stdin.write(b'{"op":"read","seq":8,"namespace":"ns_one","id":"X"}\n')
    raw.stdin.flush()
    assert raw.stdout.readline() == (
        b'{"seq":8,"ok":true,"envelope":{"envelope_version":1,"id":"X",'
        b'"n":[9223372036854775807,-9223372036854775808,5e-324,1.0,1E+2,-0.0]}}\n'
    )


def test_write_replaces_wholly(testee: NodeTestee) -> None:
    testee.request("write", namespace="ns_one", envelope=envelope())
    smaller = {"envelope_version": 1, "id": ID_A, "queue": "q", "headers": {}, "attempts": []}
    testee.request("write", namespace="ns_one", envelope=smaller)
    assert_read(testee, "ns_one", ID_A, smaller)


def test_namespaces_and_drop(testee: NodeTestee) -> None:
    testee.request("write", namespace="ns_one", envelope=envelope(ID_A))
    testee.request("write", namespace="ns_one", envelope=envelope(ID_B))
    testee.request("write", namespace="ns_two", envelope=envelope(ID_A, queue="two"))
    assert_read(testee, "ns_three", ID_A, None)
    assert_read(testee, "ns_two", ID_A, envelope(ID_A, queue="two"))
    assert testee.request("drop", namespace="ns_one")["ok"] is True
    assert_read(testee, "ns_one", ID_A, None)
    assert_read(testee, "ns_one", ID_B, None)
    assert_read(testee, "ns_two", ID_A, envelope(ID_A, queue="two"))
    assert testee.request("drop", namespace="never_used")["ok"] is True


def test_ids_are_case_sensitive(testee: NodeTestee) -> None:
    testee.request("write", namespace="ns_one", envelope=envelope("abc"))
    testee.request("write", namespace="ns_one", envelope=envelope("ABC", queue="upper"))
    assert_read(testee, "ns_one", "abc", envelope("abc"))
    assert_read(testee, "ns_one", "ABC", envelope("ABC", queue="upper"))


def _error_code(response: dict[str, Any]) -> str:
    assert response["ok"] is False, response
    assert isinstance(response["error"]["message"], str) and response["error"]["message"]
    code = response["error"]["code"]
    assert isinstance(code, str)
    return code


def test_other_versions_are_refused(testee: NodeTestee) -> None:
    for version in (0, 2):
        response = testee.request(
            "write", namespace="ns_one", envelope=envelope(envelope_version=version)
        )
        assert _error_code(response) == "UNSUPPORTED_ENVELOPE_VERSION"
    assert_read(testee, "ns_one", ID_A, None)


def test_refusals(testee: NodeTestee) -> None:
    assert _error_code(testee.request("compact")) == "NOT_SUPPORTED"
    assert _error_code(testee.request("read", namespace="Bad-NS", id=ID_A)) == "INVALID_ENVELOPE"
    assert (
        _error_code(testee.request("write", namespace="ns_one", envelope=[])) == "INVALID_ENVELOPE"
    )
    bad = envelope()
    del bad["id"]
    assert (
        _error_code(testee.request("write", namespace="ns_one", envelope=bad)) == "INVALID_ENVELOPE"
    )
    # Malformed lines: an answer each, and the testee keeps going.
    assert _error_code(testee.send_raw(b"not json")) == "INVALID_ENVELOPE"
    assert _error_code(testee.send_raw(b"\xff\xfe")) == "INVALID_ENVELOPE"
    dup = b'{"op":"write","seq":99,"namespace":"ns_one","envelope":{"id":"a","id":"b"}}'
    response = testee.send_raw(dup)
    assert response["seq"] == 99
    assert _error_code(response) == "INVALID_ENVELOPE"
    # Unknown request fields are ignored.
    assert testee.request("drop", namespace="ns_one", extra_field=[1])["ok"] is True


def test_durable_across_restart(state_dir: Path, testee: NodeTestee) -> None:
    testee.request("write", namespace="ns_one", envelope=envelope())
    testee.bye()
    again = NodeTestee(state_dir)
    try:
        assert again.request("hello", protocol=1)["ok"] is True
        assert_read(again, "ns_one", ID_A, envelope())
        again.bye()
    finally:
        again.close()


def test_exits_when_stdin_closes(testee: NodeTestee) -> None:
    assert testee.proc.stdin is not None
    testee.proc.stdin.close()
    assert testee.proc.wait(timeout=10) == 0


def test_large_envelope(testee: NodeTestee) -> None:
    big = envelope(payload="QUJD" * 250_000)  # 1,000,000 base64 characters
    assert testee.request("write", namespace="ns_one", envelope=big)["ok"] is True
    assert_read(testee, "ns_one", ID_A, big)


def test_pipelined_requests_are_each_answered_once(testee: NodeTestee) -> None:
    # C18 / "several requests in flight": 60 requests written before any answer is read;
    # every seq comes back exactly once, in whatever order the testee finishes them.
    proc = testee.proc
    assert proc.stdin is not None and proc.stdout is not None
    lines = []
    for i in range(20):
        env = {**envelope(), "id": f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}"}
        lines.append({"op": "write", "seq": 100 + 3 * i, "namespace": "ns_pipe",
                      "envelope": env})
        lines.append({"op": "read", "seq": 101 + 3 * i, "namespace": "ns_pipe",
                      "id": "01J2ZK7Q8XW5H3N9G4T6B8RZZZ"})
        lines.append({"op": "drop", "seq": 102 + 3 * i, "namespace": f"ns_other{i}"})
    proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in lines))
    proc.stdin.flush()
    answers = [_loads(proc.stdout.readline().decode("utf-8")) for _ in lines]
    assert sorted(a["seq"] for a in answers) == [r["seq"] for r in lines]
    assert all(a["ok"] is True for a in answers), answers
    assert all(a["envelope"] is None for a in answers if a["seq"] % 3 == 2)
    for i in range(20):  # every write landed whole
        testee.seq = 1000 + i
        assert_read(testee, "ns_pipe", f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}",
                    {**envelope(), "id": f"01J2ZK7Q8XW5H3N9G4T6B8R{i:03d}"})
