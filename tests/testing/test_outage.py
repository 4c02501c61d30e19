"""Outages are not defects (C20, issue 21 §5).

A call answered ``UNAVAILABLE`` while the plugin's service is down makes the test one
that could not run (a skip stamped with the moment): the verdict is ``incomplete``,
the run exits 1, and one note says when the service went away and how many tests it
cost. A plugin that answers ``UNAVAILABLE`` while its service is up (the same adapter
answers a read of another id at once, and the call tried again answers
``UNAVAILABLE`` again) refuses that envelope: a failure under C17/C20.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rdq_compliance import ErrorCode, StorageError
from rdq_compliance.reporting._outage import (
    could_not_run_reason,
    is_outage_skip,
    outage_lines,
)
from rdq_compliance.testing import base_envelope
from rdq_compliance.testing._failures import PluginFault
from rdq_compliance.testing._guard import CouldNotRun
from rdq_compliance.testing._runtime import PluginRuntime

from ._fake_plugin import Plugin
from ._fake_runtime import started_runtime

TESTEE = Path(__file__).resolve().parents[1] / "mutants" / "testee.py"


@pytest.fixture
def rt_plugin() -> tuple[PluginRuntime, Plugin]:
    plugin = Plugin()
    rt = started_runtime(plugin, 5.0)
    yield rt, plugin
    rt.close()


def test_a_call_during_an_outage_could_not_run(rt_plugin: tuple[PluginRuntime, Plugin]) -> None:
    rt, plugin = rt_plugin
    assert rt.storage is not None
    adapter = rt.call("storage.open('a')", rt.storage.open, "a")
    plugin.storage.down = {"write", "read", "open", "drop"}
    with pytest.raises(CouldNotRun) as info:
        rt.call("write(…) in namespace 'a'", adapter.write, object())
    assert is_outage_skip(info.value.msg)
    assert "write(…) in namespace 'a' answered UNAVAILABLE: connection refused (write)" in (
        info.value.msg)
    assert plugin.storage.calls[-2:] == ["write", "read"]  # the probe read, no retry
    assert rt.unreachable
    with pytest.raises(CouldNotRun):  # no probe for storage calls
        rt.call("storage.drop('a')", rt.storage.drop, "a")
    assert plugin.storage.calls[-1] == "drop"
    plugin.storage.down = set()
    rt.call("storage.drop('a')", rt.storage.drop, "a")
    assert not rt.unreachable


class _Refused(Exception):
    """A driver's error raised from a refused connection (as redis-py's or a pool's)."""


@pytest.mark.parametrize("raised", ["builtin", "driver"])
def test_a_lost_connection_let_through_as_an_exception_is_an_outage_too(
    rt_plugin: tuple[PluginRuntime, Plugin], raised: str,
) -> None:
    """C20: a plugin that lets ConnectionRefusedError (or a driver error raised from one)
    through instead of answering UNAVAILABLE is told apart by the same probe: the service
    down, the test could not run, its reason naming what the plugin raised; the service
    up and the call failing again, the exception is that call's defect."""
    rt, plugin = rt_plugin
    assert rt.storage is not None
    adapter = rt.call("storage.open('a')", rt.storage.open, "a")

    def lost() -> BaseException:
        refused = ConnectionRefusedError(111, "Connection refused")
        if raised == "builtin":
            return refused
        driver = _Refused("Error 111 connecting to 127.0.0.1:6379")
        driver.__cause__ = refused
        return driver

    plugin.storage.lost = lost
    plugin.storage.down = {"write", "read"}
    with pytest.raises(CouldNotRun) as info:
        rt.call("write(…) in namespace 'a'", adapter.write, base_envelope(1))
    assert is_outage_skip(info.value.msg)
    what = "ConnectionRefusedError" if raised == "builtin" else "_Refused"
    assert f"write(…) in namespace 'a' raised {what}: " in info.value.msg
    assert "StorageError(UNAVAILABLE)" in info.value.msg
    assert plugin.storage.calls[-2:] == ["write", "read"]  # the probe read, no retry
    plugin.storage.down = {"write"}  # reads answer: the service is up
    with pytest.raises(PluginFault) as fault:
        rt.call("write(…) in namespace 'a'", adapter.write, base_envelope(1))
    assert type(fault.value.exc).__name__ == what
    assert plugin.storage.calls[-3:] == ["write", "read", "write"]
    plugin.storage.down = set()
    rt.call("write(…) in namespace 'a'", adapter.write, base_envelope(1))
    assert not rt.unreachable


def test_a_crashed_testee_is_no_outage() -> None:
    """A testee that died (its pipe broken) is the plugin's fault, not its service's."""
    from rdq_compliance.storage._stdio import TesteeFault
    from rdq_compliance.testing._guard import _disconnected

    try:
        try:
            raise BrokenPipeError(32, "Broken pipe")
        except BrokenPipeError as exc:
            raise TesteeFault("crash", "testee crashed") from exc
    except TesteeFault as fault:
        assert not _disconnected(fault)
    assert _disconnected(ConnectionResetError(104, "reset"))
    assert not _disconnected(RuntimeError("boom"))


def test_unavailable_while_the_adapter_answers_is_a_refusal(
    rt_plugin: tuple[PluginRuntime, Plugin],
) -> None:
    rt, plugin = rt_plugin
    assert rt.storage is not None
    adapter = rt.call("storage.open('a')", rt.storage.open, "a")
    plugin.storage.down = {"write"}  # reads answer: the service is up
    with pytest.raises(PluginFault) as info:
        rt.call("write(…)", adapter.write, object())
    err = info.value.exc
    assert isinstance(err, StorageError) and err.code == ErrorCode.UNAVAILABLE
    assert "the service is up, so this is a refusal, not an outage; C17, C20" in err.message
    assert plugin.storage.calls[-3:] == ["write", "read", "write"]
    assert not rt.unreachable


def test_a_service_back_before_the_second_try_is_no_outage(
    rt_plugin: tuple[PluginRuntime, Plugin],
) -> None:
    rt, plugin = rt_plugin
    assert rt.storage is not None
    adapter = rt.call("storage.open('a')", rt.storage.open, "a")
    plugin.storage.down = {"write"}
    real_read = adapter.read

    def read_then_up(id: str) -> object:
        plugin.storage.down = set()  # the server finished starting during the probe
        return real_read(id)

    adapter.read = read_then_up  # type: ignore[method-assign]
    env = base_envelope(1)
    assert rt.call("write(…)", adapter.write, env) is None
    assert plugin.storage.data["a"][env.id] is env
    assert plugin.storage.calls[-3:] == ["write", "read", "write"]


def test_outage_lines_from_a_report() -> None:
    from datetime import UTC, datetime

    def skip(second: int) -> dict[str, object]:
        moment = datetime(2026, 1, 2, 3, 4, second, 5000, tzinfo=UTC)
        return {"status": "skipped",
                "message": could_not_run_reason(moment, "write(…)", "gone\nmore")}

    plugins = [
        {"label": "pg", "requirements": [
            {"tests": [skip(9), {"status": "passed", "message": None}, skip(7)]},
            {"tests": [skip(8), {"status": "skipped", "message": "other reason"}]},
        ]},
        {"label": "fine", "requirements": [{"tests": [{"status": "passed"}]}]},
    ]
    assert outage_lines(plugins) == [
        "plugin 'pg': its storage was unavailable (C20) from 2026-01-02T03:04:07.005Z to "
        "2026-01-02T03:04:09.005Z; 3 tests could not run (skipped, so the verdict is at "
        "best incomplete); run again once the service is up"
    ]
    assert not is_outage_skip("other reason")
    assert is_outage_skip("2 of 5 tests skipped: " + str(skip(1)["message"]))


WINDOW_PLUGIN = '''
"""A file store whose service is down for a window of calls (C20)."""
import os
import shutil
import threading
from hashlib import sha256

from rdq_compliance import (ErrorCode, StorageError, StorageInfo, encode, from_json,
                            hookimpl, parse_json)

START, END = {start}, {end}
_calls = [0]
_lock = threading.Lock()


def _answer():
    with _lock:
        _calls[0] += 1
        n = _calls[0]
    if START <= n < END:
        raise StorageError(ErrorCode.UNAVAILABLE, f"connection refused (call {{n}})")


def _dir(namespace):  # durable: a directory per namespace, a file per envelope (C15)
    return os.path.abspath(os.path.join("window-disk", sha256(namespace.encode()).hexdigest()))


class Adapter:
    def __init__(self, root):
        self.root = root

    def write(self, envelope):
        _answer()
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, sha256(envelope.id.encode()).hexdigest()), "w",
                  encoding="utf-8") as f:
            f.write(encode(envelope))

    def read(self, id):
        _answer()
        try:
            with open(os.path.join(self.root, sha256(id.encode()).hexdigest()),
                      encoding="utf-8") as f:
                return from_json(parse_json(f.read()))
        except FileNotFoundError:
            return None

    def close(self):
        pass


class Storage:
    info = StorageInfo("window", "1.0.0", frozenset({{1}}), frozenset({{"durable"}}))

    def open(self, namespace):
        _answer()
        return Adapter(_dir(namespace))

    def drop(self, namespace):
        _answer()
        shutil.rmtree(_dir(namespace), ignore_errors=True)

    def close(self):
        pass


@hookimpl
def rdq_storage_open(options):
    return Storage()


plugin = __import__("sys").modules[__name__]
'''


def _kit_run(pytester: pytest.Pytester, start: int, end: int, *args: str
             ) -> tuple[pytest.RunResult, dict[str, object]]:
    pytester.makepyfile(window=WINDOW_PLUGIN.format(start=start, end=end))
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rdq-plugin=window:plugin", "--rdq-profile=quick",
        "--rdq-report", "report.json", *args)
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return result, report


def test_a_window_of_unavailable_calls_makes_the_run_incomplete(
    pytester: pytest.Pytester,
) -> None:
    result, report = _kit_run(pytester, 400, 500)
    out = result.stdout.str()
    assert result.ret == 1, out
    assert report["verdict"] == "incomplete"
    plugin = report["plugins"][0]
    assert plugin["verdict"] == "incomplete"
    assert not [r["id"] for r in plugin["requirements"] if r["status"] in ("failed", "error")]
    skipped = [t for r in plugin["requirements"] for t in r["tests"]
               if is_outage_skip(t["message"])]
    assert skipped
    notes = [n for n in report["notes"] if "unavailable (C20)" in n]
    assert len(notes) == 1, report["notes"]
    assert f"; {len(skipped)} test{'s' if len(skipped) > 1 else ''} could not run" in notes[0]
    shown = [line for line in out.splitlines() if "its storage was unavailable (C20)" in line]
    assert shown == [f"note: {notes[0]}"], out
    assert "INCOMPLETE:" in out and "the storage was unavailable (C20; see the outage note)" in out


def test_no_outage_no_note(pytester: pytest.Pytester) -> None:
    result, report = _kit_run(pytester, 0, 0)  # the same store, never down: compliant
    assert result.ret == 0, result.stdout.str()
    assert report["verdict"] == "compliant"
    assert not [n for n in report["notes"] if "C20" in n]


def test_a_testee_answering_unavailable_for_a_while_makes_the_run_incomplete(
    tmp_path: Path,
) -> None:
    """The testee protocol's side: ``UNAVAILABLE`` error responses, the testee keeps
    running (no restart) and answers again afterwards."""
    command = shlex.join([sys.executable, str(TESTEE), "--defect", "outage"])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rdq-plugin=stdio",
         "--rdq-testee", command, "--rdq-profile=quick", "--rdq-report", "report.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "RDQ_STATE_DIR": str(tmp_path)})
    out = proc.stdout[-4000:]
    assert proc.returncode == 1, out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "incomplete", out
    plugin = report["plugins"][0]
    assert not [r["id"] for r in plugin["requirements"] if r["status"] in ("failed", "error")]
    passed = [t for r in plugin["requirements"] for t in r["tests"] if t["status"] == "passed"]
    assert len(passed) > 50  # before and after the outage
    shown = [ln for ln in proc.stdout.splitlines() if "its storage was unavailable (C20)" in ln]
    assert len(shown) == 1, out


def test_many_namespaces_left_behind_are_counted_not_all_named() -> None:
    plugin = Plugin()
    rt = started_runtime(plugin, 5.0)
    plugin.storage.down = {"drop"}
    rt.abandon(f"n{i}" for i in range(30))
    rt.close()
    note = rt.notes[-1]
    assert note.startswith("30 namespaces left behind in the store: its service was "
                           "unavailable (C20)"), note
    assert len(re.findall(r"'n\d+'", note)) == 12 and " and 18 more: " in note, note
