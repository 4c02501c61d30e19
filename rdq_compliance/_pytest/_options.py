"""Every ``--rdq-*`` option and its ini twin, and how the kit reads them.

Imported by the ``pytest11`` entry module in every pytest run: pytest only. The
report formats' options come from their units (``formats/``), imported when the
options are added.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest

__all__ = ["add_options", "option", "path_option"]

# (option, ini name, ini type, default, help, addoption extras). Every option has an ini
# twin. Two tables: --help lists the report formats' options between them, where they
# always were.
_Row = tuple[str, str, Literal["args", "string", "bool"], object, str, dict[str, Any]]
_OPTIONS_BEFORE_FORMATS: tuple[_Row, ...] = (
    ("--rdq-plugin", "rdq_plugins", "args", [],
     "storage plugin to test: an rdq.storage entry-point name, 'stdio', or "
     "'package.module:attr'; repeat to test several", {"action": "append", "metavar": "NAME"}),
    ("--rdq-option", "rdq_options", "args", [],
     "setting handed to the plugin, KEY=VALUE or PLUGIN.KEY=VALUE (repeatable)",
     {"action": "append", "metavar": "KEY=VALUE"}),
    ("--rdq-testee", "rdq_testee", "string", None,
     "command line of the testee for --rdq-plugin=stdio", {"metavar": "CMD"}),
    ("--rdq-profile", "rdq_profile", "string", "ci",
     "how hard to search: quick, ci (default) or thorough", {"metavar": "PROFILE"}),
    ("--rdq-seed", "rdq_seed", "string", "0",
     "seed of the generated examples (default 0: the same examples on every run)",
     {"metavar": "N"}),
    ("--rdq-timeout", "rdq_timeout", "string", "10",
     "seconds one storage operation may take before it counts as hung (default 10)",
     {"metavar": "SECONDS"}),
    ("--rdq-replay", "rdq_replay", "string", None,
     "re-run exactly the case saved in FILE by a failing run", {"metavar": "FILE"}),
    ("--rdq-failures-dir", "rdq_failures_dir", "string", ".rdq/failures",
     "where failing cases are saved for --rdq-replay (default .rdq/failures)",
     {"metavar": "DIR"}),
    ("--rdq-example-db", "rdq_example_db", "string", None,
     "Hypothesis example database shared by runs and shards: failing examples saved there "
     "are tried first, new ones saved; a directory, redis://HOST:PORT/DB[?prefix=P] or "
     "github:OWNER/REPO[/ARTIFACT] (read only); default none (see README)",
     {"metavar": "DB"}),
)
_OPTIONS_AFTER_FORMATS: tuple[_Row, ...] = (
    ("--rdq-known-failures", "rdq_known_failures", "string", None,
     "file of requirement ids the plugin is known to fail (see README)", {"metavar": "FILE"}),
    ("--rdq-upgrade-save", "rdq_upgrade_save", "string", None,
     "with the previous release: also store an upgrade corpus through the plugin and "
     "record it in DIR (see README, Check an upgrade)", {"metavar": "DIR"}),
    ("--rdq-upgrade-check", "rdq_upgrade_check", "string", None,
     "with the new release: also read back the corpus saved in DIR by --rdq-upgrade-save "
     "(rule C19)", {"metavar": "DIR"}),
    ("--rdq-spec-url", "rdq_spec_url", "string", None,
     "where the spec's clarifications.md is published (an http(s) URL): clause links in the "
     "report, summary and HTML point there; without it they show the clause's statement",
     {"metavar": "URL"}),
    ("--rdq-baseline", "rdq_baseline", "string", None,
     "a previous --rdq-report: the terminal and Markdown summaries lead with what changed "
     "since it (the exit status is unchanged)", {"metavar": "FILE"}),
    ("--rdq-shard", "rdq_shard", "string", None,
     "run only share K of N of the kit's tests (deterministic; the long ones spread over "
     "the shards); rdq-compliance merge combines the N reports into the run's verdict",
     {"metavar": "K/N"}),
    ("--rdq-pin-threads", "rdq_pin_threads", "string", "auto",
     "keep the kit's threads on one CPU per process: xdist workers when they are at least "
     "as many as the CPUs (auto, the default), also a run without xdist (always), or never "
     "(off)", {"metavar": "auto|always|off"}),
    ("--rdq-allow-incomplete", "rdq_allow_incomplete", "bool", False,
     "exit 0 when the verdict is incomplete (a partial local run: -k, a missing server); "
     "by default an incomplete run exits 1", {"action": "store_true"}),
)


def _format_rows() -> list[_Row]:
    # Imported here, not at the top: the entry module's start-up imports stay pytest only.
    from .formats import report_formats

    return [(f.flag, f.ini, "string", None, f.help, {"metavar": f.metavar})
            for f in report_formats()]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rdq", "rdq storage-plugin compliance kit")
    for flag, ini, ini_type, default, help_text, extra in (
        *_OPTIONS_BEFORE_FORMATS, *_format_rows(), *_OPTIONS_AFTER_FORMATS
    ):
        group.addoption(flag, dest=ini, default=None, help=help_text, **extra)
        parser.addini(ini, help=help_text, type=ini_type, default=default)


def option(config: pytest.Config, ini: str) -> object:
    """The command-line value of an option, else its ini value (else its default)."""
    value = config.getoption(ini)
    if value is None or value == []:
        return config.getini(ini)
    return value


def path_option(config: pytest.Config, ini: str) -> Path | None:
    """A path option: relative to the invocation directory on the command line,
    relative to the ini file's directory in the ini file; None when not given."""
    value = config.getoption(ini)
    base = config.invocation_params.dir
    if value is None:
        value = config.getini(ini)
        if not value:
            return None
        base = config.inipath.parent if config.inipath else config.rootpath
    return base / str(value)
