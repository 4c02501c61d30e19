"""RDQ-RT-003 read from a new process (C15): each way the new process can answer.

One stand-in plugin, durable on files or (``memory``) in a module-level dict; in any
process but the first (``.first-pid``) it misbehaves as the option ``elsewhere`` says.
Each case is a kit run of the one test, and its report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rdq_compliance.reporting._outage import is_outage_skip

TEST = "test_written_envelopes_are_read_by_a_new_process"

PLUGIN = '''
import dataclasses, hashlib, os, shutil, threading, time
from rdq_compliance import (ErrorCode, OptionSpec, StorageError, StorageInfo,
                            StorageUnavailable, encode, decode, hookimpl)

if not os.path.exists(".first-pid"):
    with open(".first-pid", "w") as f:
        f.write(str(os.getpid()))
with open(".first-pid") as f:
    FIRST = f.read() == str(os.getpid())
if not FIRST and os.path.exists(".unloadable"):
    raise ImportError("this plugin imports only in the process that wrote .first-pid")

MEMORY = {}


def _file(ns, id):
    return os.path.join("disk", hashlib.sha256(ns.encode()).hexdigest(),
                        hashlib.sha256(id.encode()).hexdigest())


class Adapter:
    def __init__(self, storage, ns):
        self.storage, self.ns = storage, ns

    def write(self, env):
        if self.storage.memory:
            MEMORY.setdefault(self.ns, {})[env.id] = encode(env)
            return
        os.makedirs(os.path.dirname(_file(self.ns, env.id)), exist_ok=True)
        with open(_file(self.ns, env.id), "w", encoding="utf-8") as f:
            f.write(encode(env))

    def read(self, id):
        mode = "" if FIRST else self.storage.mode
        if mode == "raise":
            raise RuntimeError("the new process' connection pool is empty")
        if mode == "hang":
            time.sleep(60)
        if mode == "refuse":
            raise StorageError(ErrorCode.INTERNAL, "table is locked")
        if self.storage.memory:
            text = MEMORY.get(self.ns, {}).get(id)
        else:
            try:
                with open(_file(self.ns, id), encoding="utf-8") as f:
                    text = f.read()
            except FileNotFoundError:
                text = None
        if text is None:
            return None
        env = decode(text)
        if mode == "lossy":  # a column without fractional seconds, behind a cache
            env = dataclasses.replace(env, created_at=env.created_at.replace(microsecond=0))
        if mode == "wrong-type":
            return text
        if mode == "unpicklable":
            return threading.Lock()
        if mode == "memoryview":  # psycopg's bytea, which does not pickle
            return dataclasses.replace(env, payload=memoryview(env.payload))
        return env

    def close(self):
        pass


class Storage:
    def __init__(self, options):
        self.mode = options["elsewhere"]
        self.memory = options["elsewhere"] == "memory"
        self.info = StorageInfo("elsewhere", "1.0", frozenset({1}), frozenset({"durable"}))

    def open(self, ns):
        return Adapter(self, ns)

    def drop(self, ns):
        MEMORY.pop(ns, None)
        shutil.rmtree(os.path.dirname(_file(ns, "x")), ignore_errors=True)

    def close(self):
        pass


@hookimpl
def rdq_storage_options():
    return [OptionSpec("elsewhere", default="")]


@hookimpl
def rdq_storage_open(options):
    if not FIRST and options["elsewhere"] == "unavailable":
        raise StorageUnavailable("connection refused (127.0.0.1:5432)")
    return Storage(options)
'''


def _run(pytester: pytest.Pytester, mode: str, *args: str) -> tuple[Any, dict[str, Any]]:
    pytester.makepyfile(elsewhere=PLUGIN)
    if mode == "unloadable":
        (pytester.path / ".unloadable").write_text("", encoding="utf-8")
    if mode == "imported-elsewhere":
        # The kit's process runs a copy imported, before the run, from a folder then
        # taken off sys.path; the new process can only find the one beside the tests.
        (pytester.path / "old").mkdir()
        (pytester.path / "old" / "elsewhere.py").write_text(PLUGIN, encoding="utf-8")
        pytester.makeconftest(
            "import os, sys\nsys.path.insert(0, os.path.abspath('old'))\n"
            "import elsewhere  # noqa: F401\nsys.path.pop(0)\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rdq-plugin=elsewhere:", f"--rdq-option=elsewhere={mode}",
        "-k", TEST, "--rdq-allow-incomplete", "--rdq-report", "report.json", *args)
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    tests = [t for r in report["plugins"][0]["requirements"] for t in r["tests"]
             if TEST in t["nodeid"]]
    assert len(tests) == 1, tests
    return result, tests[0]


def test_a_store_on_files_passes(pytester: pytest.Pytester) -> None:
    result, test = _run(pytester, "")
    assert test["status"] == "passed", result.stdout.str()[-3000:]


@pytest.mark.parametrize(("mode", "message"), [
    ("memory", "a new process found none of the "),
    ("raise", "in a new process raised RuntimeError: the new process' connection pool is "
              "empty"),
    ("refuse", "in a new process raised StorageError: INTERNAL: table is locked"),
    ("hang", "in a new process did not return within 0.5 s"),
    ("lossy", "in a new process returned an envelope that differs from the one written"),
    ("wrong-type", "in a new process returned str"),
    ("unpicklable", "in a new process returned lock <unlocked _thread.lock object"),
    # judged as a read here: RDQ-RT-004's words, not "cannot carry back"
    ("memoryview", "/payload: FIELD_TYPE [C9 WE:Field notes]: expected bytes, got memoryview"),
    ("unloadable", "the plugin could not be loaded by a new process"),
])
def test_what_a_new_process_meets_fails_the_test(
    pytester: pytest.Pytester, mode: str, message: str
) -> None:
    result, test = _run(pytester, mode, "--rdq-timeout=0.5")
    out = result.stdout.str()
    assert test["status"] == "failed", out[-3000:]
    assert message in test["message"], test["message"][:2000]
    assert "RDQ-RT-003 [MUST; C15]" in test["message"]
    assert result.ret == 1


def test_a_plugin_traceback_from_the_new_process_is_shown(pytester: pytest.Pytester) -> None:
    _, test = _run(pytester, "raise")
    assert "plugin traceback:" in test["message"]
    assert 'raise RuntimeError("the new process\' connection pool is empty")' in test["message"]
    assert "_elsewhere.py" not in test["message"]  # the kit's own frames are cut


def test_an_outage_in_the_new_process_is_a_skip(pytester: pytest.Pytester) -> None:
    result, test = _run(pytester, "unavailable")
    assert test["status"] == "skipped", result.stdout.str()[-3000:]
    assert is_outage_skip(test["message"]), test["message"]
    assert "connection refused (127.0.0.1:5432)" in test["message"]


def test_a_plugin_the_new_process_loads_from_other_files_is_a_skip(
    pytester: pytest.Pytester,
) -> None:
    """What another copy of the plugin reads says nothing of the one under test: the
    requirement is not checked (a skip, which leaves the verdict incomplete)."""
    result, test = _run(pytester, "imported-elsewhere")
    assert test["status"] == "skipped", result.stdout.str()[-3000:]
    old, new = pytester.path / "old" / "elsewhere.py", pytester.path / "elsewhere.py"
    assert (f"the new process, given this one's sys.path and working directory, loaded it "
            f"from {new.resolve()}, where the kit's process loaded it from "
            f"{old.resolve()}") in test["message"], test["message"]
    assert not is_outage_skip(test["message"])
    assert "INCOMPLETE: " in result.stdout.str()  # accepted here by --rdq-allow-incomplete
