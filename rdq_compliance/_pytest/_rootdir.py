"""Closes the rootdir trap: an option value that pytest took for a path to test.

pytest finds its rootdir and configuration file before it loads plugins, from the
arguments it cannot parse yet: the value of ``--rdq-known-failures FILE`` (a separate
argument that is an existing file) counts as a path to test, so pytest roots the run at
that file's folder and applies the pytest configuration it finds there. A CI job that
runs the kit from an empty folder with ``"$GITHUB_WORKSPACE/known-failures.txt"`` would
then silently run under the plugin repository's own ``pyproject.toml``.

Once the kit's options are known (the entry module's ``pytest_load_initial_conftests``,
before conftests, ``pytest_configure`` and collection), this module parses the arguments
again, finds the rootdir and configuration pytest would have chosen without the kit's
option values and, when they differ, switches back to them (their ``addopts`` included)
and says so in one line. Plugins that the stray ``addopts`` loaded with ``-p`` stay
loaded. Lazily imported by the entry module: pytest only.
"""

from __future__ import annotations

import inspect
import itertools
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from _pytest.config.findpaths import determine_setup

__all__ = ["stray_setup", "undo_stray_setup"]

_PRIVATE = ("_rootpath", "_inipath", "_inicfg", "_inicache")


def _rdq_flags_with_values(parser: pytest.Parser) -> set[str]:
    flags: set[str] = set()
    for group in parser._groups:  # the kit's group: every --rdq-* option
        for opt in group.options:
            if opt.attrs().get("action") in ("store_true", "store_false"):
                continue
            flags.update(n for n in opt.names() if n.startswith("--rdq-"))
    return flags


def _path_values(args: list[str], flags: set[str]) -> list[str]:
    """The kit options whose value, given as a separate argument, is an existing path."""
    found = []
    for flag, value in itertools.pairwise(args):
        if flag in flags and not value.startswith("-") and Path(value).exists():
            found.append(flag)
    return found


def _setup(parser: pytest.Parser, args: list[str], invocation_dir: Path) -> tuple[Any, ...]:
    ns = parser.parse_known_args(args)
    kwargs: dict[str, Any] = {
        "inifile": ns.inifilename, "args": ns.file_or_dir,
        "rootdir_cmd_arg": ns.rootdir or None, "invocation_dir": invocation_dir,
        "override_ini": ns.override_ini,
    }
    accepted = inspect.signature(determine_setup).parameters  # it changes between releases
    return tuple(determine_setup(**{k: v for k, v in kwargs.items() if k in accepted}))


def stray_setup(config: pytest.Config, parser: pytest.Parser,
                args: list[str]) -> tuple[list[str], tuple[Any, ...]] | None:
    """``(flags, setup)`` when the value of a kit option (``flags``) moved pytest's rootdir
    or configuration file: ``setup`` is determine_setup's answer without those values."""
    invocation = list(config.invocation_params.args)
    flags = _path_values(invocation, _rdq_flags_with_values(parser))
    if not flags:
        return None
    env = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    setup = _setup(parser, env + invocation, config.invocation_params.dir)
    if (setup[0], setup[1]) == (config.rootpath, config.inipath):
        return None
    return flags, setup


def _describe(rootpath: Path, inipath: Path | None) -> str:
    return f"rootdir {str(rootpath)!r}" + (f" with {str(inipath)!r}" if inipath else "")


def undo_stray_setup(early_config: pytest.Config, parser: pytest.Parser,
                     args: list[str]) -> None:
    """``pytest_load_initial_conftests`` (tryfirst) of the entry module: switch back to the
    rootdir and configuration pytest would have chosen without the kit's option values."""
    found = stray_setup(early_config, parser, args)
    if found is None:
        return
    flags, setup = found
    stray = _describe(early_config.rootpath, early_config.inipath)
    fixed = all(hasattr(early_config, a) for a in _PRIVATE)
    if fixed:
        # The stray configuration's addopts lead the arguments (before PYTEST_ADDOPTS and
        # the command line): replace them with the right configuration's.
        stray_addopts = list(early_config.getini("addopts"))
        if args[:len(stray_addopts)] == stray_addopts:
            del args[:len(stray_addopts)]
        early_config._rootpath, early_config._inipath, early_config._inicfg = setup[:3]
        early_config._inicache.clear()
        args[:0] = list(early_config.getini("addopts"))
        if parser.parse_known_args(args).confcutdir is None:
            early_config.known_args_namespace.confcutdir = str(
                setup[1].parent if setup[1] is not None else setup[0])
    what = " and ".join(dict.fromkeys(flags))
    action = (f"the kit ignores it and uses {_describe(setup[0], setup[1])}" if fixed
              else "this pytest cannot be corrected: give the option as --opt=VALUE")
    early_config.pluginmanager.register(_Notice(
        f"rdq: pytest took the value of {what} for a path to test and chose {stray}; "
        f"{action} (write {flags[0]}=VALUE to avoid this)"), "rdq-rootdir-notice")


class _Notice:
    """Says it once the terminal exists (what is printed earlier, pytest captures)."""

    def __init__(self, line: str) -> None:
        self.line = line

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        if hasattr(config, "workerinput"):
            return  # the xdist controller says it; its workers make the same switch
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(self.line, yellow=True)
        else:
            print(self.line, file=sys.stderr)
