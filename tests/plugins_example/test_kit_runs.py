"""Every example plugin passes the full kit, run as a plugin author runs it.

Each test starts ``pytest --rdq-plugin=P`` in an empty folder (a subprocess: a real
kit run), reads the JSON report and asserts the verdict (the runs and their checks are in
``_kit_runs.py``). The default-profile runs are ``slow_ci`` (run by ``.ci/run``);
``bash .ci/test`` runs their quick twins, whose quick run is the one ``tests/browser``'s
site shows (``_kit_runs.quick_run``: made once, issue 25 §5).
For the server-backed plugins it also shows, twice in a row, that a run leaves
nothing behind on the server and leaves data outside the kit's namespaces alone:
a sentinel shaped like another namespace's data is planted before and checked after.
The sqlite plugin's file, the run's alone, holds nothing at the end. The one-character
namespace ``a``, which no run can own, is dropped too (no note names it): under a lock
the kit runs of this machine share (``testing/_shared.py``; its protocol is tested in
``tests/testing/test_shared_namespace.py``). Whether the server still holds ``a`` after
the run is not checked here: other kit runs on these shared servers (older versions
among them) open it at any time.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from ._harness import minimal_envelope
from ._kit_runs import (
    SERVERS,
    check_run,
    checked_run,
    example_args,
    quick_run,
    run_kit,
    sqlite_namespaces,
)
from .conftest import open_or_skip

# The default profile (ci: the full kit as a plugin author runs it) runs in .ci/run
# (slow_ci); `bash .ci/test` runs the quick twin, which .ci/run leaves out
# (tests/_selection.py, issue 25 §5). The quick twin's run is the one tests/browser's site
# shows: made once, in the browser group's worker.
PROFILES = [pytest.param("quick", id="quick",
                         marks=[pytest.mark.quick_twin, pytest.mark.xdist_group("browser")]),
            pytest.param("ci", id="ci", marks=pytest.mark.slow_ci)]


def _first(plugin: str, profile: str, tmp_path: Path) -> dict[str, Any]:
    """The checked run (``_kit_runs.check_run``) of ``plugin`` at ``profile``; the shared
    one when quick."""
    if profile == "quick":
        return quick_run(plugin).checked().report
    return checked_run(plugin, tmp_path, f"--rdq-profile={profile}", name=profile).report


# --- the plugins without a server ---------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("plugin", ["memory", "sqlite"])
def test_embedded_plugin_is_compliant(tmp_path: Path, plugin: str, profile: str) -> None:
    """Compliant, durable verified for sqlite only, and the sqlite file (the run's alone)
    holds no namespace at the end."""
    _first(plugin, profile, tmp_path)


def test_the_sqlite_leftover_check_sees_a_namespace(tmp_path: Path) -> None:
    """The check above can fail: a namespace written and not dropped is seen."""
    module = importlib.import_module("rdq_plugin_sqlite")
    storage = module.rdq_storage_open({"path": str(tmp_path / "probe.db")})
    try:
        storage.open("t0123abcd0w1fxxxx").write(minimal_envelope())
    finally:
        storage.close()
    assert sqlite_namespaces(tmp_path / "probe.db") == {"t0123abcd0w1fxxxx"}


@pytest.mark.parametrize("profile", PROFILES)
def test_node_testee_is_compliant_through_the_stdio_bridge(tmp_path: Path, profile: str) -> None:
    """Compliant, concurrent and durable verified."""
    _first("node", profile, tmp_path)


# --- the server-backed plugins ------------------------------------------------------------


@pytest.mark.parametrize("first", PROFILES)
@pytest.mark.parametrize("plugin", sorted(SERVERS))
def test_server_plugin_is_compliant_and_leaves_nothing_behind(
    tmp_path: Path, plugin: str, first: str
) -> None:
    """Two runs in a row, each between a sentinel's planting and its check: the `first`
    profile, then a quick one; neither leaves anything of its own on the server."""
    tokens = [_first(plugin, first, tmp_path)["run_token"]]
    with SERVERS[plugin]() as objects:
        run = run_kit(tmp_path, *example_args(plugin, tmp_path), "--rdq-profile=quick",
                      name="second-quick")
        check_run(plugin, run, tmp_path, objects, "second-quick")
        tokens.append(run.report["run_token"])
        assert tokens[0] != tokens[1]
        # The check itself must see a namespace named as the kit names them, also one of
        # the names RDQ-ST-008 builds by padding a unique name.
        module = importlib.import_module(f"rdq_plugin_{plugin}")
        storage = open_or_skip(module)
        probe = f"t{tokens[1]}0w0" + "x" * 12
        try:
            storage.open(probe).write(minimal_envelope())
            assert objects(tokens[1]), f"the leftover check does not see {probe!r}"
        finally:
            storage.drop(probe)
            storage.close()
        assert not objects(tokens[1])
