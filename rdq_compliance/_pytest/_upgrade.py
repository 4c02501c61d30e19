"""Upgrades across plugin releases (rule C19): ``--rdq-upgrade-save`` / ``--rdq-upgrade-check``.

Two kit runs share one directory DIR. The run with the previous release
(``--rdq-upgrade-save DIR``) does its normal run and then, once per kit run (on
the xdist controller), writes a deterministic corpus through the plugin: every
valid golden fixture and envelopes generated from ``--rdq-seed``, in several
namespaces, with rewrites (the last version must win) and one namespace written
and then dropped. It reads everything back through the same release (a defect
of the old release is not blamed on the migration), leaves it stored and records
``DIR/manifest.json``: kit version, fixture and corpus hashes, plugin name and
version, seed, namespaces and the expected envelopes in canonical JSON. A
testee's ``RDQ_STATE_DIR`` is ``DIR/state`` in both runs.

The run with the new release (``--rdq-upgrade-check DIR``) opens the store as
usual (the plugin migrates it) and the suite ``upgrade`` (RDQ-UP-001..003) reads
the corpus back against the manifest, never against an earlier read. When all
three tests ran, the corpus namespaces are dropped at the end and
``DIR/checked.json`` marks the directory as used: the store no longer holds the
corpus, so a second check needs a new save.

Without ``--rdq-upgrade-check`` the upgrade tests are skipped as not applicable
(the ``rdq_not_applicable`` user property), which never makes a verdict
incomplete.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest

from .. import __version__
from .._corpus import corpus_hash as fixture_corpus_hash
from .._requirements import get_requirement
from ..envelope._codec import encode
from ..reporting import write_json
from ..storage._discovery import STDIO, WORKER, LoadedPlugin
from ..testing._handle import skip_not_applicable
from ..testing._runtime import PluginRuntime
from ..testing._upgrade import DROPPED, KEPT_ROLES, ROLES, Saved
from ._options import path_option
from ._state import RUN_KEY
from ._upgrade_corpus import (
    CHECKED,
    FORMAT,
    MANIFEST,
    STATE,
    UpgradeError,
    build_corpus,
    corpus_digest,
    expected_of,
    load_saved,
    usage_dir,
)
from ._upgrade_store import call, drop_previous, storage, store, verify

# The corpus and its manifest live in _upgrade_corpus, the plugin calls in
# _upgrade_store; these names stay importable from here.
__all__ = [
    "DROPPED",
    "KEPT_ROLES",
    "UpgradeError",
    "UpgradePlugin",
    "build_corpus",
    "configure",
    "expected_of",
    "load_saved",
]

UPGRADE_IDS = ("RDQ-UP-001", "RDQ-UP-002", "RDQ-UP-003")


# -- configuration -------------------------------------------------------------------------


def _dir_option(config: pytest.Config, ini: str) -> Path | None:
    path = path_option(config, ini)
    return None if path is None else path.resolve()


def _check_save_dir(directory: Path) -> None:
    flag = "--rdq-upgrade-save"
    if directory.exists() and not directory.is_dir():
        raise usage_dir(flag, directory, "is not a directory; give a new or empty directory")
    if directory.is_dir():
        foreign = sorted(p.name for p in directory.iterdir()
                         if p.name not in (MANIFEST, STATE, CHECKED))
        if foreign and not (directory / MANIFEST).exists():
            raise usage_dir(flag, directory, f"holds other files ({', '.join(foreign[:3])}) "
                             "and no manifest: give a new or empty directory, or one an "
                             "earlier --rdq-upgrade-save wrote")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise usage_dir(flag, directory, f"cannot be created: {exc}") from None


def configure(
    config: pytest.Config,
    loaded: Sequence[LoadedPlugin],
    timeout_of: Callable[[LoadedPlugin], float],
) -> UpgradePlugin:
    """Validate the upgrade options (:class:`UpgradeError` on bad input) and point a
    testee's state at ``DIR/state``; the plugin returned is registered in every kit run
    (its fixture makes the upgrade tests not applicable without a check)."""
    save = _dir_option(config, "rdq_upgrade_save")
    check = _dir_option(config, "rdq_upgrade_check")
    if save is not None and check is not None:
        raise UpgradeError("--rdq-upgrade-save and --rdq-upgrade-check were both given; "
                           "save with the previous release, then check with the new one")
    directory = save or check
    if directory is None:
        return UpgradePlugin(config, None, None, None, None)
    flag = "--rdq-upgrade-save" if save is not None else "--rdq-upgrade-check"
    if len(loaded) != 1:
        raise UpgradeError(f"{flag} needs exactly one --rdq-plugin, got "
                           f"{', '.join(repr(p.label) for p in loaded)}; upgrade one plugin "
                           "per directory")
    plugin = loaded[0]
    if plugin.per_worker:
        # The xdist controller saves the corpus and the workers read it: with a store per
        # process the check would read an empty store and blame the new release.
        names = ", ".join(sorted(plugin.per_worker))
        raise UpgradeError(f"{flag} needs the one store both releases open, but option "
                           f"{names} of plugin {plugin.label!r} names {WORKER} (a store per "
                           f"process); give it a value without {WORKER}")
    saved = None
    if save is not None:
        _check_save_dir(save)
    else:
        saved = load_saved(directory)
    if plugin.label == STDIO and "state_dir" not in plugin.explicit:
        # Both releases' testees find their store in the directory both runs are given.
        plugin.resolved["state_dir"] = str(directory / STATE)
    mode: Literal["save", "check"] = "save" if save is not None else "check"
    if saved is not None:
        run = config.stash[RUN_KEY]
        run.upgraded_from = saved.release
        run.notes.append(
            f"upgrade check: reading the corpus of release {saved.release} (plugin "
            f"{saved.plugin_label!r}) saved on {saved.saved_at} in {str(directory)!r}"
        )
    return UpgradePlugin(config, mode, directory, plugin, saved, timeout_of(plugin))


class UpgradePlugin:
    """Hooks and the ``rdq_upgrade`` fixture (registered as ``rdq-upgrade``)."""

    def __init__(
        self,
        config: pytest.Config,
        mode: Literal["save", "check"] | None,
        directory: Path | None,
        plugin: LoadedPlugin | None,
        saved: Saved | None,
        timeout: float = 10.0,
    ) -> None:
        self.config = config
        self.mode = mode
        self.directory = directory
        self.plugin = plugin
        self.saved = saved
        self.timeout = timeout
        self.ran: set[str] = set()
        self.not_applicable: set[str] = set()
        self.problem: str | None = None
        self.done: str | None = None

    @pytest.fixture
    def rdq_upgrade(self, request: pytest.FixtureRequest) -> Saved:
        """The saved corpus of ``--rdq-upgrade-check``; without it the test is skipped as
        not applicable (never a skip that makes the verdict incomplete)."""
        if self.saved is None:
            skip_not_applicable(request.node, "applies to a run given --rdq-upgrade-check DIR "
                                "only (C19: the corpus a previous release saved with "
                                "--rdq-upgrade-save)")
        return self.saved

    # -- hooks (registered before the kit's own plugin: these run after its hooks) ------------

    def _controller(self) -> bool:
        return not hasattr(self.config, "workerinput") and not self.config.option.collectonly

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.saved is None or self.plugin is None:
            return
        run = self.config.stash[RUN_KEY]
        info = next((p.info for p in run.plugins if p.label == self.plugin.label), None)
        if info is not None and info.name != self.saved.plugin_name:
            raise pytest.UsageError(
                f"--rdq-upgrade-check={str(self.saved.directory)!r} was saved by plugin name="
                f"{self.saved.plugin_name!r}, but --rdq-plugin={self.plugin.label} declares "
                f"name={info.name!r}; check with the new release of the same plugin"
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        rid = str(props.get("rdq_requirement", ""))
        if rid not in UPGRADE_IDS:
            return
        if report.when == "call":
            self.ran.add(rid)
        elif report.skipped and props.get("rdq_not_applicable"):
            # Not applicable (a release that no longer declares 'durable'): counted as the
            # terminal and the report count it, not as "did not run" (issue 21 §7).
            self.not_applicable.add(rid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.mode is None or not self._controller():
            return
        run = self.config.stash[RUN_KEY]
        if self.mode == "save":
            try:
                self.done = self._save()
            except UpgradeError as exc:
                self.problem = f"upgrade save FAILED: {exc}"
        elif self.ran >= set(UPGRADE_IDS):
            self.done = self._finish_check()
        else:
            na = sorted((self.not_applicable | self._gated_off(run)) - self.ran)
            missing = sorted(set(UPGRADE_IDS) - self.ran - set(na))
            parts = []
            if na:
                parts.append(f"{', '.join(na)} not applicable (see the requirements' "
                             "reasons)")
            if missing:
                parts.append(f"{', '.join(missing)} did not run (deselected, skipped or "
                             "stopped early)")
            self.done = (f"upgrade check: {'; '.join(parts)}; the corpus is left in the "
                         "store for another check")
        if self.problem is not None:
            run.notes.append(self.problem)
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.done is not None:
            run.notes.append(self.done)

    def _gated_off(self, run: Any) -> set[str]:
        """The upgrade requirements gated on a capability the plugin does not declare:
        not applicable, as the report counts them."""
        assert self.plugin is not None
        info = next((p.info for p in run.plugins if p.label == self.plugin.label), None)
        if info is None:
            return set()
        return {rid for rid in UPGRADE_IDS
                if (cap := get_requirement(rid).capability) and cap not in info.capabilities}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.problem is not None:
            terminalreporter.write_line(self.problem, red=True)

    # -- save ------------------------------------------------------------------------------

    def _runtime(self) -> PluginRuntime:
        assert self.plugin is not None
        rt = PluginRuntime(self.plugin, self.timeout)
        rt.start()
        if rt.storage is None or rt.info is None:
            why = (rt.unavailable or rt.dead or "the plugin could not be opened").splitlines()
            rt.close()
            raise UpgradeError(why[0])
        return rt

    def _save(self) -> str:
        assert self.directory is not None and self.plugin is not None
        seed = self.config.stash[RUN_KEY].seed
        rt = self._runtime()
        try:
            info = rt.info
            assert info is not None
            if "durable" not in info.capabilities:
                raise UpgradeError(f"plugin {self.plugin.label!r} declares no 'durable' "
                                   "capability: what it stores does not outlive it, so there "
                                   "is no upgrade to check (C19 applies to durable plugins)")
            drop_previous(rt, self.directory)
            token = secrets.token_hex(4)
            namespaces = {role: f"up{token}_{role}" for role in ROLES}
            steps = build_corpus(seed, sorted(info.envelope_versions))
            expected, dropped = expected_of(steps)
            try:
                store(rt, namespaces, steps)
                verify(rt, namespaces, expected, dropped)
            except UpgradeError:
                for name in namespaces.values():  # leave nothing of a failed save behind
                    try:
                        call(rt, f"storage.drop({name!r})", storage(rt).drop, name)
                    except UpgradeError:
                        break
                raise
        finally:
            rt.close()
        texts = {role: {id: encode(env) for id, env in by_id.items()}
                 for role, by_id in expected.items()}
        manifest = {
            "format": FORMAT,
            "kit_version": __version__,
            "fixture_hash": fixture_corpus_hash(),
            "corpus_hash": corpus_digest(texts, dropped),
            "plugin": {"label": self.plugin.label, "name": info.name, "version": info.version},
            "seed": seed,
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "namespaces": namespaces,
            "state_dir": STATE if self.plugin.label == STDIO else None,
            "expected": texts,
            "dropped_ids": dropped,
        }
        (self.directory / CHECKED).unlink(missing_ok=True)
        write_json(self.directory / MANIFEST, manifest)
        count = sum(len(v) for v in expected.values())
        return (f"upgrade corpus saved: {count} envelopes of {info.name} {info.version} in "
                f"{len(KEPT_ROLES)} namespaces (and {len(dropped)} in one dropped) through "
                f"{self.plugin.label!r}; manifest {str(self.directory / MANIFEST)!r}")

    # -- check -----------------------------------------------------------------------------

    def _finish_check(self) -> str:
        assert self.saved is not None and self.directory is not None
        try:
            rt = self._runtime()
        except UpgradeError as exc:
            return f"upgrade check: the corpus could not be dropped ({exc})"
        try:
            for name in self.saved.namespaces.values():
                call(rt, f"storage.drop({name!r})", storage(rt).drop, name)
        except UpgradeError as exc:
            return f"upgrade check: the corpus could not be dropped ({exc})"
        finally:
            rt.close()
        write_json(self.directory / CHECKED, {
            "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "kit_version": __version__,
            "upgraded_from": self.saved.release,
        })
        return (f"upgrade check: corpus of {self.saved.release} dropped from the store; "
                f"{str(self.directory)!r} is used up (save again for another check)")
