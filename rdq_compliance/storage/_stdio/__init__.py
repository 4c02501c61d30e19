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
import os
import shlex
import shutil
import tempfile
import threading
from collections.abc import Mapping

from .._protocol import OptionSpec, StorageUnavailable, positive_seconds
from ..hookspecs import hookimpl
from ._faults import InvalidTesteeEnvelope, TesteeFault
from ._storage import StdioAdapter, StdioStorage
from ._vouch import vouched_for

__all__ = [
    "InvalidTesteeEnvelope",
    "StdioAdapter",
    "StdioStorage",
    "TesteeFault",
    "rdq_storage_open",
    "rdq_storage_options",
    "vouched_for",
]


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
