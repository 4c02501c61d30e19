"""Reading a durable store from a new process (C15).

A store that keeps what it wrote only in its own process (a module-level dict, an
in-memory database kept open by a global connection, a process-wide cache in front of a
lossy column) survives a close and reopen in that process, and loses everything, or
shows what its column kept, when the process ends. So the kit also reads a durable
plugin's namespace from a Python process of its own: :func:`read_elsewhere` starts
``sys.executable`` with the kit's ``sys.path`` and working directory, and there
:func:`serve` loads the plugin as ``--rdq-plugin`` named it, opens it with the options
the kit resolved (``{worker}`` already replaced) and reads each id once. Every plugin
call there has the kit's ``--rdq-timeout``.

What the new process read comes back pickled, as the plugin returned it (a model with
the wrong Python types stays wrong; a part that does not pickle, a ``memoryview``, comes
as a stand-in of the same type name and repr), or as the exception it raised, described:
the kit judges it as it judges a read of its own. This module only carries it; it judges
nothing and imports neither pytest nor Hypothesis.
"""

from __future__ import annotations

import copy as pycopy
import dataclasses
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._discovery import DiscoveryError, LoadedPlugin, load_plugin, plugin_sources
from ._protocol import ErrorCode, StorageError, StorageUnavailable

__all__ = ["Answer", "Problem", "Read", "read_elsewhere", "serve"]

_START_UP = 60.0
"""Seconds the new process may take beyond its plugin calls (the interpreter, the kit's
imports): a bound for a process that never starts, far above any machine's start-up."""


@dataclass(frozen=True)
class Problem:
    """A step of the new process that did not answer: ``kind`` ``raised`` (``code`` set
    for a StorageError), ``unavailable`` (StorageUnavailable, or UNAVAILABLE: C20),
    ``hung`` (past the timeout), ``unloadable`` (the plugin could not be loaded there),
    ``crashed`` (the process ended without an answer, or did not end), ``unstarted``
    (the interpreter could not be started: the machine's problem, not the plugin's),
    ``mismatched`` (the plugin loaded there from other files than here: what it reads
    says nothing of the plugin under test), ``unpicklable`` (a read returned a value that
    cannot be carried back)."""

    step: str
    kind: Literal[
        "raised", "unavailable", "hung", "unloadable", "crashed", "unstarted", "mismatched",
        "unpicklable"]
    message: str
    traceback: str = ""
    code: str | None = None
    violations: list[Any] | None = None
    """For the stdio bridge's verdict on a testee's wire JSON (``InvalidTesteeEnvelope``):
    its list of violations, and the ``document`` the testee returned, judged as the kit
    judges them in its own process (``testing._failures.testee_violations``)."""
    document: Any = None


@dataclass(frozen=True)
class Read:
    """``read(id)`` in the new process: what it returned, or its problem."""

    id: str
    value: Any = None
    problem: Problem | None = None


@dataclass(frozen=True)
class Answer:
    """The reads done (in order), and the step that stopped the process, if any."""

    reads: tuple[Read, ...]
    problem: Problem | None = None


# -- the kit's side ------------------------------------------------------------------------

_BOOT = (
    "import json, sys\n"
    "request = json.load(sys.stdin)\n"
    "sys.path[:] = request['path']\n"
    "from rdq_compliance.storage._elsewhere import serve\n"
    "sys.exit(serve(request))\n"
)
"""The kit's own ``sys.path`` first, so that the new process imports the kit and the
plugin from where this one did (a checkout, a pytester directory, a wheel)."""


def read_elsewhere(
    loaded: LoadedPlugin, options: dict[str, str], namespace: str, ids: Sequence[str], *,
    timeout: float,
) -> Answer:
    """Open plugin ``loaded`` (by its label) with ``options`` in a new Python process and
    ``read`` each of ``ids`` in ``namespace`` through one adapter; each call bounded by
    ``timeout``. The new process must load it from the same files as this one."""
    with tempfile.TemporaryDirectory(prefix="rdq-elsewhere-") as tmp:
        answer_path = Path(tmp) / "answer.pickle"
        request = {
            "path": [p for p in sys.path if isinstance(p, str)], "plugin": loaded.label,
            "sources": list(plugin_sources(loaded)),
            "options": options, "namespace": namespace, "ids": list(ids),
            "timeout": timeout, "answer": str(answer_path),
        }
        limit = _START_UP + timeout * (len(ids) + 4)
        try:
            done = subprocess.run(
                [sys.executable, "-c", _BOOT], input=json.dumps(request), text=True,
                capture_output=True, timeout=limit, check=False,
            )
        except subprocess.TimeoutExpired as exc:
            return Answer((), Problem("the new process", "crashed", (
                f"did not end within {limit:g} s (it was killed){_tail(exc.stderr)}")))
        except OSError as exc:  # pragma: no cover - this interpreter cannot start again
            return Answer((), Problem("the new process", "unstarted", (
                f"{sys.executable} could not be started: {exc}")))
        if not answer_path.is_file():
            return Answer((), Problem("the new process", "crashed", (
                f"{sys.executable} -c … ended with exit status {done.returncode} and no "
                f"answer{_tail(done.stderr)}")))
        with answer_path.open("rb") as f:
            answer: Answer = pickle.load(f)  # written by serve(), in the kit's own code
        return answer


def _tail(stderr: str | bytes | None) -> str:
    if not stderr:
        return ""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = text.rstrip().splitlines()[-12:]
    return "; its standard error ended with:\n" + "\n".join("    " + ln for ln in lines)


# -- the new process -----------------------------------------------------------------------


class _Stop(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def serve(request: dict[str, Any]) -> int:
    """The new process: load, open, read each id, close; write the :class:`Answer`
    (pickled) to ``request['answer']``. A hang ends the process at once (the call's
    thread cannot be stopped) after writing what was read so far."""
    timeout = float(request["timeout"])
    answer_path = Path(request["answer"])
    reads: list[Read] = []

    def finish(problem: Problem | None) -> int:
        _write(answer_path, Answer(tuple(reads), problem))
        return 0

    try:
        label = str(request["plugin"])
        loaded = _call(f"loading plugin {label!r}", timeout, load_plugin, label)
        here, there = list(plugin_sources(loaded)), list(request["sources"])
        if here != there:
            # Another copy of the plugin (the first one on sys.path) than the one the kit
            # runs: one imported before the run from a folder no longer on sys.path.
            return finish(Problem(f"loading plugin {label!r}", "mismatched", (
                f"loaded it from {', '.join(here)}, where the kit's process loaded it from "
                f"{', '.join(there)}")))
        options = dict(request["options"])
        storage = _call("rdq_storage_open(options)", timeout,
                        lambda: loaded.pm.hook.rdq_storage_open(options=options))
        namespace = str(request["namespace"])
        adapter = _call(f"storage.open({namespace!r})", timeout, storage.open, namespace)
        for id in request["ids"]:
            op = f"read({id!r}) in namespace {namespace!r}"
            try:
                reads.append(Read(id, value=_call(op, timeout, adapter.read, id)))
            except _Stop as stop:
                if stop.problem.kind == "hung":
                    raise
                reads.append(Read(id, problem=stop.problem))
        _call(f"adapter.close() of namespace {namespace!r}", timeout, adapter.close)
        _call("storage.close()", timeout, storage.close)
    except _Stop as stop:
        code = finish(stop.problem)
        if stop.problem.kind == "hung":
            sys.stdout.flush()
            os._exit(code)  # the hung call's thread would keep the process alive
        return code
    return finish(None)


def _call(step: str, timeout: float, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a daemon thread, bounded by ``timeout``; raises :class:`_Stop`."""
    box: list[tuple[bool, Any]] = []
    thread = threading.Thread(target=lambda: box.append(_run(fn, args)), daemon=True,
                              name="rdq-elsewhere")
    thread.start()
    thread.join(timeout)
    if not box:
        raise _Stop(Problem(step, "hung", f"did not return within {timeout:g} s (--rdq-timeout)"))
    ok, value = box[0]
    if ok:
        return value
    exc: BaseException = value
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, DiscoveryError):  # its message says it all
        raise _Stop(Problem(step, "unloadable", str(exc)))
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != __file__])
    tb = "".join(te.format()).rstrip("\n")
    if isinstance(exc, StorageUnavailable) or (
            isinstance(exc, StorageError) and exc.code == ErrorCode.UNAVAILABLE):
        raise _Stop(Problem(step, "unavailable", message, tb))
    code = str(exc.code) if isinstance(exc, StorageError) else None
    violations = getattr(exc, "violations", None)
    raise _Stop(Problem(step, "raised", message, tb, code,
                        violations if isinstance(violations, list) else None,
                        getattr(exc, "document", None)))


def _run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    try:
        return True, fn(*args)
    except BaseException as exc:  # the plugin's problem, described to the kit
        return False, exc


def _write(path: Path, answer: Answer) -> None:
    """Pickle ``answer``; a value that does not pickle goes as its description."""
    try:
        data = pickle.dumps(answer)
    except Exception:
        reads = tuple(_picklable(r) for r in answer.reads)
        data = pickle.dumps(Answer(reads, answer.problem))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class _StandIn:
    """A value the plugin returned that does not pickle (a ``memoryview`` payload), carried
    back inside its model as its type's name and its repr: the kit judges it as it judges
    such a read of its own ("expected bytes, got memoryview")."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return self._text

    def __reduce__(self) -> tuple[Any, ...]:
        return _stand_in, (type(self).__name__, self._text)


def _stand_in(name: str, text: str) -> _StandIn:
    """A :class:`_StandIn` of a class named ``name`` (made again where it is unpickled)."""
    cls: type[_StandIn] = type(name, (_StandIn,), {"__slots__": ()})
    return cls(text)


def _carried(value: Any) -> Any:
    """``value`` with each part that does not pickle replaced by a :class:`_StandIn`,
    through models (dataclasses), mappings and sequences."""
    try:
        pickle.dumps(value)
        return value
    except Exception:
        pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        copy = pycopy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(copy, f.name, _carried(getattr(value, f.name)))
        return copy
    if isinstance(value, dict):
        return {k: _carried(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_carried(v) for v in value)
    return _stand_in(type(value).__name__, repr(value)[:500])


def _picklable(read: Read) -> Read:
    try:
        pickle.dumps(read.value)
    except Exception as exc:
        if dataclasses.is_dataclass(read.value):
            carried = _carried(read.value)
            try:
                pickle.dumps(carried)
                return Read(read.id, value=carried)
            except Exception:
                pass
        return Read(read.id, problem=Problem(
            f"read({read.id!r})", "unpicklable",
            f"returned {type(read.value).__name__} {read.value!r:.200}, which the kit cannot "
            f"carry back from the new process ({type(exc).__name__}: {exc}); expected "
            "rdq_compliance.Envelope or None"))
    return read
