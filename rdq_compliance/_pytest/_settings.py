"""The kit's settings: every ``--rdq-*`` value checked (a bad one is a one-line usage
error, never a traceback), the run's namespace token, the storage plugins loaded, the
``-k`` selection checked against the requirement ids, the deadline of the guard."""

from __future__ import annotations

import difflib
import os
import re
import secrets
from contextlib import suppress

import pytest

from .._requirements import REQUIREMENTS
from ..storage._discovery import (
    MAIN,
    STDIO,
    DiscoveryError,
    LoadedPlugin,
    load_plugin,
    positive_seconds,
    resolve_options,
)
from ..testing._case import Case, CaseError, load_case
from ..testing._context import KitSettings
from ..testing._exampledb import ExampleDb, ExampleDbError, check_example_db, parse_example_db
from ..testing._properties import PROFILES
from ._options import option

__all__ = [
    "TOKEN_INPUT", "as_list", "check_selection", "guard_timeout", "load_plugins",
    "parse_settings", "usage",
]


def usage(message: str) -> pytest.UsageError:
    # One line: pytest prints "ERROR: <message>" and exits with status 4.
    return pytest.UsageError(" ".join(message.split("\n")))


def as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    return [str(v) for v in value]  # type: ignore[attr-defined]


def parse_settings(config: pytest.Config) -> KitSettings:
    labels = list(dict.fromkeys(as_list(option(config, "rdq_plugins"))))
    profile = str(option(config, "rdq_profile"))
    if profile not in PROFILES:
        raise usage(
            f"--rdq-profile={profile!r} is not a profile; expected one of {', '.join(PROFILES)}"
        )
    raw_seed = str(option(config, "rdq_seed")).strip()
    try:
        seed = int(raw_seed)
    except ValueError:
        raise usage(
            f"--rdq-seed={raw_seed!r} is not an integer; expected e.g. --rdq-seed=0"
        ) from None
    raw_timeout = str(option(config, "rdq_timeout")).strip()
    timeout = positive_seconds(raw_timeout)
    if timeout is None:
        raise usage(
            f"--rdq-timeout={raw_timeout!r} is not a positive number of seconds; "
            "expected e.g. --rdq-timeout=10"
        )
    base = config.invocation_params.dir
    failures_dir = base / str(option(config, "rdq_failures_dir"))
    replay: Case | None = None
    replay_file = option(config, "rdq_replay")
    if replay_file:
        try:
            replay = load_case(base / str(replay_file))
        except CaseError as exc:
            raise usage(str(exc)) from None
        if replay.plugin not in labels:
            raise usage(
                f"--rdq-replay={str(replay_file)!r} was saved for plugin {replay.plugin!r}; "
                f"run it with --rdq-plugin={replay.plugin}"
            )
    token, worker = _run_token(config)
    return KitSettings(tuple(labels), profile, seed, timeout, failures_dir, replay,
                       run_token=token, worker=worker, example_db=_example_db(config))


def _example_db(config: pytest.Config) -> ExampleDb | None:
    """``--rdq-example-db``, checked at the start of the run (a directory it can create, a
    Redis that answers); a relative directory is taken from where the option was given."""
    value = config.getoption("rdq_example_db")
    base = config.invocation_params.dir
    if value is None:
        value = config.getini("rdq_example_db")
        base = config.inipath.parent if config.inipath else config.rootpath
    try:
        db = parse_example_db(str(value or ""), base)
        if db is not None:
            check_example_db(db)
    except ExampleDbError as exc:
        raise usage(str(exc)) from None
    return db


TOKEN_INPUT = "rdq_run_token"

TOKEN_LOG_ENV = "RDQ_TOKEN_LOG"
"""For the kit's own test suite: a file every kit run appends its run token to, so that
the suite can find, at its end, what its kit runs left on the servers (tests/_leftovers.py)."""


def _process_name(config: pytest.Config) -> str:
    """What ``{worker}`` in an option value becomes: the xdist worker's id (``gw0``), or
    ``main`` in a run without workers and on the xdist controller."""
    workerinput = getattr(config, "workerinput", None)
    worker = workerinput.get("workerid") if isinstance(workerinput, dict) else None
    return str(worker) if worker else MAIN


def _run_token(config: pytest.Config) -> tuple[str, str]:
    """The run's namespace token and this process's xdist worker number.

    Made once per run (on the xdist controller) and handed to the workers in their
    ``workerinput`` (see :meth:`KitPlugin.pytest_configure_node`): every namespace of
    one run carries it, whatever the process (issue 12 §4)."""
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and workerinput.get(TOKEN_INPUT):
        worker = _process_name(config).removeprefix("gw")
        return str(workerinput[TOKEN_INPUT]), worker if worker.isdigit() else ""
    token = secrets.token_hex(4)
    log = os.environ.get(TOKEN_LOG_ENV)
    if log:
        with suppress(OSError), open(log, "a", encoding="ascii") as f:
            f.write(token + "\n")  # one short O_APPEND write: whole lines, whatever the process
    return token, ""


def load_plugins(config: pytest.Config, settings: KitSettings) -> list[LoadedPlugin]:
    testee = option(config, "rdq_testee")
    try:
        loaded = [load_plugin(label) for label in settings.labels]
        resolve_options(
            loaded,
            as_list(option(config, "rdq_options")),
            testee=None if testee is None else str(testee),
            worker=_process_name(config),
        )
    except DiscoveryError as exc:
        raise usage(str(exc)) from None
    for p in loaded:
        # The bridge enforces its own deadline (and kills a hung testee);
        # unless told otherwise it uses the kit's.
        if p.label == "stdio" and "timeout" in p.resolved and "timeout" not in p.explicit:
            p.resolved["timeout"] = f"{settings.timeout:g}"
    return loaded



_ID_LIKE = re.compile(r"rdq-[a-z]+-\d+", re.I)


def check_selection(config: pytest.Config) -> None:
    """``-k`` naming a requirement id that does not exist selects nothing of it: say so,
    with the closest ids, instead of a run that silently tests something else."""
    known = {r.id for r in REQUIREMENTS}
    expression = str(config.getoption("keyword", "") or "")
    for found in dict.fromkeys(_ID_LIKE.findall(expression)):
        if found.upper() in known:
            continue
        close = difflib.get_close_matches(found.upper(), sorted(known), n=3, cutoff=0.5)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise usage(f"-k {expression!r}: {found!r} is no requirement id of this kit{hint} "
                     "(rdq-compliance requirements lists them all)")



def guard_timeout(plugin: LoadedPlugin, settings: KitSettings) -> float:
    """The deadline of the kit's guard around one call into ``plugin``.

    The stdio bridge enforces its own deadline on the testee and then kills it
    and reports the fault with the testee's stderr, which is the more useful
    message; the guard waits a little longer so that the bridge speaks first.
    """
    if plugin.label != STDIO:
        return settings.timeout
    bridge = positive_seconds(plugin.resolved.get("timeout", "")) or settings.timeout
    return bridge + max(2.0, bridge / 2)


