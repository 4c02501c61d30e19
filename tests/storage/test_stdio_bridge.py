"""The stdio bridge (rdq_compliance.storage._stdio) against fake testees.

Every fault must surface as a TesteeFault naming it, with the testee's stderr
tail, within bounded time; the next operation must restart the testee.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rdq_compliance import (
    Attempt,
    Envelope,
    ErrorCode,
    ErrorInfo,
    Outcome,
    Status,
    StorageError,
    StorageUnavailable,
    encode,
)
from rdq_compliance.storage import _stdio
from rdq_compliance.storage._stdio import (
    InvalidTesteeEnvelope,
    StdioStorage,
    TesteeFault,
    _faults,
    rdq_storage_open,
    rdq_storage_options,
)

FAKE = Path(__file__).parent / "testees" / "good.py"
BOUND = 5.0
"""Seconds any faulty operation may take at timeout 0.5 s (kill, reap, restart included)."""


def envelope(id: str = "01J2ZK7Q8XW5H3N9G4T6B8RDQ0", **changes: object) -> Envelope:
    fields: dict[str, object] = dict(
        id=id,
        queue="payments.charge",
        handler_ref="charge-payment",
        handler_version="v3",
        payload=b"\x00\xff{\"order_id\": 42}\n",
        payload_content_type="application/json",
        headers={"traceparent": "00-4bf9-01", "": "empty key", "A": "1", "a": "2"},
        status=Status.PENDING,
        attempt_count=1,
        next_attempt_at=datetime(2026, 7, 20, 14, 5, 22, 117000, tzinfo=UTC),
        created_at=datetime(2026, 7, 20, 14, 3, 22, 117000, tzinfo=UTC),
        attempts=(
            Attempt(
                attempt_no=1,
                started_at=datetime(2026, 7, 20, 14, 3, 22, 200000, tzinfo=UTC),
                finished_at=datetime(2026, 7, 20, 14, 3, 22, 950000, tzinfo=UTC),
                outcome=Outcome.RETRYABLE_FAILURE,
                error=ErrorInfo(type="java.net.SocketTimeoutException", message="timed out",
                                detail={"n": [1, 2.5, None]}, stack="at x\n\tat y"),
            ),
        ),
        extra={"payload_ref": None, "future": {"k": [True, -(2**63)]}},
    )
    fields.update(changes)
    return Envelope(**fields)  # type: ignore[arg-type]


def same(actual: Envelope | None, expected: Envelope) -> bool:
    # Canonical text: strict, and independent of the model's diff-based equality.
    return actual is not None and encode(actual) == encode(expected)


OPENED: list[StdioStorage] = []


def start(
    *flags: str, timeout: float = 0.5, start_timeout: float = 30, state_dir: Path | str = ""
) -> StdioStorage:
    command = " ".join([sys.executable, str(FAKE), *flags])
    storage = rdq_storage_open({
        "command": command,
        "timeout": str(timeout),
        "start_timeout": str(start_timeout),
        "state_dir": str(state_dir),
    })
    OPENED.append(storage)
    return storage


@pytest.fixture(autouse=True)
def _close_everything() -> Iterator[None]:
    yield
    while OPENED:
        storage = OPENED.pop()
        with contextlib.suppress(TesteeFault):
            storage.close()


def test_options_declared() -> None:
    specs = {spec.name: spec for spec in rdq_storage_options()}
    assert set(specs) == {"command", "timeout", "start_timeout", "state_dir"}
    assert specs["command"].default is None and specs["command"].env == "RDQ_TESTEE"
    assert specs["timeout"].default == "10"
    assert specs["state_dir"].default == ""


def test_round_trip_info_missing_and_namespaces(tmp_path: Path) -> None:
    storage = start(state_dir=tmp_path)
    assert storage.info.name == "fake" and storage.info.version == "0.1"
    assert storage.info.envelope_versions == {1} and storage.info.capabilities == frozenset()
    a, b = storage.open("ns_a"), storage.open("ns_b")
    env = envelope()
    a.write(env)
    assert same(a.read(env.id), env)
    assert b.read(env.id) is None
    assert a.read("01J2ZK7Q8XW5H3N9G4T6B8RDQ1") is None
    storage.drop("ns_a")
    assert a.read(env.id) is None
    a.close()
    b.close()


def test_framing_survives_awkward_strings() -> None:
    # Raw newlines are escaped by JSON, U+2028/U+0085 must not split lines, NUL and astral survive.
    storage = start()
    adapter = storage.open("ns")
    text = "line\nbreak\r\u2028\u2029\u0085\x00 \U0001f600 é"
    env = envelope(headers={text: text}, handler_version=text, payload=text.encode())
    adapter.write(env)
    assert same(adapter.read(env.id), env)


def test_allowed_differences_are_accepted() -> None:
    # Key order, \u and \/ escapes and absent optional fields carry no meaning (C9, C11).
    storage = start("--variant", "escaped")
    adapter = storage.open("ns")
    env = envelope(handler_version=None, next_attempt_at=None, headers={"é/": "\U0001f600"})
    adapter.write(env)
    assert same(adapter.read(env.id), env)


def test_durable_across_close_and_reopen(tmp_path: Path) -> None:
    first = start("--durable", state_dir=tmp_path)
    assert first.info.capabilities == {"durable"}
    env = envelope()
    first.open("ns").write(env)
    first.close()
    second = start("--durable", state_dir=tmp_path)
    assert same(second.open("ns").read(env.id), env)
    # Guard the check itself: another state dir holds nothing.
    other = start("--durable", state_dir=tmp_path / "other")
    assert other.open("ns").read(env.id) is None


def test_default_state_dir_is_shared_by_reopens() -> None:
    first = start("--durable")
    second = start("--durable")
    assert first.state_dir == second.state_dir
    assert os.path.isdir(first.state_dir)
    env = envelope()
    first.open("ns").write(env)
    assert same(second.open("ns").read(env.id), env)


# --- opening failures ---------------------------------------------------------------


def test_missing_command_option() -> None:
    with pytest.raises(StorageUnavailable, match="--rdq-testee") as info:
        rdq_storage_open({"command": "", "timeout": "1", "state_dir": ""})
    assert info.value.setting == "command"


def test_command_not_found() -> None:
    with pytest.raises(StorageUnavailable, match="'no-such-testee-xyz' not found"):
        rdq_storage_open({"command": "no-such-testee-xyz --flag", "timeout": "1"})


@pytest.mark.parametrize("name", ["timeout", "start_timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf"])
def test_bad_timeout_option(name: str, value: str) -> None:
    with pytest.raises(StorageUnavailable, match=f" {name}='{value}'") as info:
        rdq_storage_open({"command": "true", name: value})
    assert info.value.setting == name


def test_command_that_exits_at_once_shows_its_stderr() -> None:
    code = "import sys; sys.stderr.write('cannot open db\\n'); sys.exit(2)"
    command = f'{sys.executable} -c "{code}"'
    with pytest.raises(StorageUnavailable) as info:
        rdq_storage_open({"command": command, "timeout": "2"})
    message = str(info.value)
    assert "exited with status 2 during hello" in message
    assert "cannot open db" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("hello", "complaint"),
    [
        ('{"name": 7}', "name=7"),
        ('{"name": ""}', 'name=""'),
        ('{"version": null}', "version=null"),
        ('{"envelope_versions": ["1"]}', 'envelope_versions=["1"]'),
        ('{"envelope_versions": []}', "envelope_versions=[]"),
        ('{"envelope_versions": [true]}', "envelope_versions=[true]"),
        ('{"capabilities": "durable"}', 'capabilities="durable"'),
        ('{"capabilities": [1]}', "capabilities=[1]"),
    ],
)
def test_bad_hello(hello: str, complaint: str) -> None:
    with pytest.raises(StorageUnavailable, match="answered hello with") as info:
        start("--hello", f"'{hello}'")
    assert complaint in str(info.value)


def test_hello_timeout_and_banner() -> None:
    t0 = time.monotonic()
    with pytest.raises(StorageUnavailable, match=r"did not answer hello \(seq 0\) within 0.5 s"):
        start("--slow-start", "3", start_timeout=0.5)
    assert time.monotonic() - t0 < BOUND
    with pytest.raises(StorageUnavailable, match="not a protocol response: 'starting up'"):
        start("--banner")


def test_start_has_its_own_timeout() -> None:
    # A cold interpreter or a JVM starts far slower than it answers one request.
    storage = start("--slow-start", "1", timeout=0.5, start_timeout=10)
    assert storage.info.name == "fake"


def test_slow_start_within_timeout() -> None:
    storage = start("--slow-start", "0.3", timeout=3)
    assert storage.info.name == "fake"


# --- faults -------------------------------------------------------------------------

# Request 1 is hello, request 2 the write, request 3 the read that faults.
FAULTS = [
    ("--crash-on", "crash", r"testee crashed: it exited with status 3 during read \(seq 2\)"),
    ("--hang-on", "timeout", r"testee did not answer read \(seq 2\) within 0.5 s"),
    ("--garbage-on", "not_protocol",
     r"testee printed a line that is not a protocol response: 'hello world'"),
    ("--invalid-json-on", "invalid_json", r"answered read \(seq 2\) with invalid JSON"),
    ("--wrong-seq-on", "wrong_seq", r"testee answered seq 1 to request seq 2 \(read\)"),
    ("--dup-seq-on", "invalid_json", r"\(top level\): DUPLICATE_KEY: key 'seq'"),
    ("--close-stdout-on", "crash", r"closed its pipes during read \(seq 2\)"),
]


@pytest.mark.parametrize(("flag", "kind", "message"), FAULTS, ids=[f[1] + f[0] for f in FAULTS])
def test_fault_is_named_and_the_testee_restarts(
    flag: str, kind: str, message: str, tmp_path: Path
) -> None:
    storage = start("--durable", flag, "3", state_dir=tmp_path)
    adapter = storage.open("ns")
    env = envelope()
    adapter.write(env)
    t0 = time.monotonic()
    with pytest.raises(TesteeFault) as info:
        adapter.read(env.id)
    assert time.monotonic() - t0 < BOUND
    fault = info.value
    assert fault.kind == kind
    assert fault.__class__ is TesteeFault
    assert __import__("re").search(message, str(fault)), str(fault)
    # The stderr tail comes with the failure.
    assert "stderr ---" in str(fault) and "fake testee pid=" in str(fault)
    assert "request 3: read" in str(fault)
    # The next operation restarts the testee (same RDQ_STATE_DIR: the data is there).
    assert same(adapter.read(env.id), env)
    assert storage.restarts == 1


def test_crash_keeps_the_last_words() -> None:
    storage = start("--crash-on", "2")
    with pytest.raises(TesteeFault, match="disk on fire"):
        storage.open("ns").write(envelope())


def test_exit_between_requests() -> None:
    storage = start("--exit-after", "2")
    adapter = storage.open("ns")
    adapter.write(envelope())
    time.sleep(0.3)  # it exits while the bridge is idle
    with pytest.raises(TesteeFault, match=r"exited with status 4 during idle time, before "
                       r"request read \(seq 2\)") as info:
        adapter.read(envelope().id)
    assert info.value.kind == "crash"
    assert adapter.read(envelope().id) is None  # restarted


def test_extra_line_is_out_of_turn() -> None:
    storage = start("--extra-line-on", "2")
    adapter = storage.open("ns")
    adapter.write(envelope())
    with pytest.raises(TesteeFault) as info:
        adapter.read(envelope().id)
    assert info.value.kind in {"out_of_turn", "wrong_seq"}, info.value
    assert "seq" in info.value.message
    assert adapter.read(envelope().id) is None  # restarted in-memory testee: empty


def test_line_before_request_is_out_of_turn() -> None:
    storage = start("--extra-line-on", "2")
    adapter = storage.open("ns")
    adapter.write(envelope())
    time.sleep(0.2)  # let the stray line arrive before the next request
    with pytest.raises(TesteeFault, match=r"printed a line before request read \(seq 2\)") as info:
        adapter.read(envelope().id)
    assert info.value.kind == "out_of_turn"


def test_hung_testee_that_does_not_read_a_large_request() -> None:
    # A ~1 MiB request does not fit in the pipe: the write itself must not block forever.
    storage = start("--deaf-after", "1")
    big = envelope(payload=b"\x01" * 780_000)
    t0 = time.monotonic()
    with pytest.raises(TesteeFault) as info:
        storage.open("ns").write(big)
    assert time.monotonic() - t0 < BOUND
    assert info.value.kind == "timeout"
    assert "did not read request write (seq 1) within 0.5 s" in info.value.message


def test_large_envelope_round_trips() -> None:
    storage = start(timeout=5)
    adapter = storage.open("ns")
    big = envelope(payload=os.urandom(780_000))
    adapter.write(big)
    assert same(adapter.read(big.id), big)


def test_restart_that_fails_again_is_a_fault() -> None:
    storage = start("--crash-on", "2")
    adapter = storage.open("ns")
    for _ in range(2):  # each op restarts, and the restarted testee crashes again
        with pytest.raises(TesteeFault, match="status 3 during write"):
            adapter.write(envelope())


# --- error answers ------------------------------------------------------------------


def test_c17_error_is_a_storage_error_and_keeps_the_process() -> None:
    storage = start("--error", "write:UNSUPPORTED_ENVELOPE_VERSION")
    adapter = storage.open("ns")
    with pytest.raises(StorageError) as info:
        adapter.write(envelope())
    assert info.value.code is ErrorCode.UNSUPPORTED_ENVELOPE_VERSION
    assert info.value.message == "no"
    assert adapter.read(envelope().id) is None
    assert storage.restarts == 0


@pytest.mark.parametrize("op", ["write", "read", "drop"])
def test_unavailable_is_a_storage_error_and_keeps_the_process(op: str) -> None:
    """C20: a testee whose service went away answers UNAVAILABLE and keeps running."""
    storage = start("--error", f"{op}:UNAVAILABLE")
    adapter = storage.open("ns")
    call = {"write": lambda: adapter.write(envelope()),
            "read": lambda: adapter.read(envelope().id),
            "drop": lambda: storage.drop("ns")}[op]
    with pytest.raises(StorageError) as info:
        call()
    assert info.value.code is ErrorCode.UNAVAILABLE
    assert storage.restarts == 0


def test_error_code_outside_c17_is_a_fault() -> None:
    storage = start("--error", "write:NOT_FOUND")
    with pytest.raises(TesteeFault, match="error code 'NOT_FOUND', which is not a C17 code") as i:
        storage.open("ns").write(envelope())
    assert i.value.kind == "error_code"
    assert "INVALID_ENVELOPE" in i.value.message  # lists the allowed ones


def test_refused_drop() -> None:
    storage = start("--error", "drop:NOT_SUPPORTED")
    with pytest.raises(StorageError) as info:
        storage.drop("ns")
    assert info.value.code is ErrorCode.NOT_SUPPORTED


# --- what reads return (RDQ-RT-004 for testees) ---------------------------------------

MANGLES = [
    ("timestamp", "/created_at", "TIMESTAMP_FORMAT"),
    ("id", "/id", "ID_FORMAT"),
    ("base64", "/payload", "PAYLOAD_BASE64"),
    ("types", "/attempt_count", "FIELD_TYPE"),
    ("dupkey", "", "DUPLICATE_KEY"),
    ("surrogate", "/payload_content_type", "LONE_SURROGATE"),
]


@pytest.mark.parametrize(("mangle", "pointer", "code"), MANGLES, ids=[m[0] for m in MANGLES])
def test_invalid_envelope_from_read_lists_violations(mangle: str, pointer: str, code: str) -> None:
    storage = start("--mangle", mangle)
    adapter = storage.open("ns")
    env = envelope(id="01J2ZK7Q8XW5H3N9G4T6B8RDQA", payload=b"ab")  # "YWI=": padded base64
    adapter.write(env)
    with pytest.raises(InvalidTesteeEnvelope) as info:
        adapter.read(env.id)
    fault = info.value
    assert fault.kind == "invalid_envelope"
    assert any(v.pointer == pointer and v.code == code for v in fault.violations), fault
    assert f"{pointer or '(top level)'}: {code}" in str(fault)
    assert storage.restarts == 0  # the protocol was followed: no restart needed
    adapter.write(env)


@pytest.mark.parametrize("envelope_value", ["[]", '"x"', "1"])
def test_read_envelope_of_wrong_json_type(envelope_value: str, tmp_path: Path) -> None:
    script = tmp_path / "t.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        for line in sys.stdin:
            r = json.loads(line)
            a = {{"seq": r["seq"], "ok": True, "name": "t", "version": "1",
                  "envelope_versions": [1], "capabilities": []}}
            if r["op"] == "read":
                a = {{"seq": r["seq"], "ok": True, "envelope": json.loads({envelope_value!r})}}
            print(json.dumps(a), flush=True)
    """))
    storage = rdq_storage_open({"command": f"{sys.executable} {script}", "timeout": "2"})
    OPENED.append(storage)
    with pytest.raises(TesteeFault, match="expected an object or null") as info:
        storage.open("ns").read(envelope().id)
    assert info.value.kind == "bad_response"


# --- stderr, close, cleanup ---------------------------------------------------------


def test_chatty_stderr_never_blocks_and_stays_bounded() -> None:
    storage = start("--chatty", "1000000", timeout=5)
    adapter = storage.open("ns")
    env = envelope()
    for _ in range(3):
        adapter.write(env)
        assert same(adapter.read(env.id), env)
    proc = storage._proc
    assert proc is not None and len(proc.stderr) <= 200


def test_bye_with_nonzero_exit_is_reported() -> None:
    storage = start("--bye-status", "2")
    OPENED.remove(storage)
    with pytest.raises(TesteeFault, match=r"exited with status 2 after bye \(expected exit"):
        storage.close()


def test_testee_that_lingers_after_bye_is_killed() -> None:
    storage = start("--linger-after-bye")
    OPENED.remove(storage)
    proc = storage._proc
    assert proc is not None
    t0 = time.monotonic()
    with pytest.raises(TesteeFault, match=r"did not exit within 0\.5 s after answering bye"):
        storage.close()
    assert time.monotonic() - t0 < BOUND
    assert proc.popen.returncode is not None


def test_close_leaves_no_process_or_thread() -> None:
    storage = start()
    storage.open("ns").write(envelope())
    proc = storage._proc
    assert proc is not None
    pid = proc.popen.pid
    storage.close()
    storage.close()  # idempotent
    assert proc.popen.returncode == 0
    assert not [t for t in threading.enumerate() if t.name.endswith(f"-{pid}")]
    with pytest.raises(RuntimeError, match="closed"):
        storage.open("ns").read(envelope().id)


def test_concurrent_callers_are_serialized() -> None:
    storage = start(timeout=5)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        adapter = storage.open(f"ns{i}")
        env = envelope()
        try:
            for _ in range(10):
                adapter.write(env)
                assert same(adapter.read(env.id), env)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors


def test_interrupted_run_kills_the_testee(tmp_path: Path) -> None:
    # A run that never closes its storage (Ctrl-C) must not leave the testee behind.
    code = textwrap.dedent(f"""
        import sys
        from rdq_compliance.storage._stdio import rdq_storage_open
        s = rdq_storage_open({{"command": "{sys.executable} {FAKE} --ignore-eof", "timeout": "2"}})
        print(s._proc.popen.pid, s.state_dir, flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30, check=True).stdout.split()
    pid, state_dir = int(out[0]), out[1]
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not os.path.exists(state_dir)  # the temporary state dir is removed at exit


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_module_is_a_plugin() -> None:
    assert hasattr(_stdio.rdq_storage_open, "rdq_impl")
    assert hasattr(_stdio.rdq_storage_options, "rdq_impl")


@pytest.mark.parametrize(("stderr", "wanted"), [
    # Python: the real error is the last line of a traceback
    (["Traceback (most recent call last):", '  File "t.py", line 1, in <module>',
      "    import a", '  File "a.py", line 9, in <module>', "    import b",
      "ModuleNotFoundError: No module named 'b'"],
     "ModuleNotFoundError: No module named 'b'"),
    # Node.js: the real error is near the top, above a long stack
    (["node:internal/modules/cjs/loader:1228", "  throw err;", "  ^", "",
      "Error: Cannot find module '/x/testee.js'", *[f"    at f{i} (x.js:{i})" for i in range(12)],
      "}", "", "Node.js v20.11.1"],
     "Error: Cannot find module '/x/testee.js'"),
])
def test_a_testee_that_does_not_start_shows_its_real_error_line(
    stderr: list[str], wanted: str
) -> None:
    """Issue 12 §1: the one message about a testee that does not start quotes the first
    lines of its stderr and the real error line, wherever that is."""
    text = _faults.start_excerpt(stderr)
    assert text.startswith(f"; its stderr: {stderr[0].strip()} | ")
    assert wanted in text and len(text) < 900
