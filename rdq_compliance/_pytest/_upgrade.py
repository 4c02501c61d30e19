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

import dataclasses
import hashlib
import json
import random
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest

from .. import __version__
from .._corpus import corpus_hash as fixture_corpus_hash
from .._corpus import valid_fixtures
from ..envelope._codec import decode, encode
from ..envelope._diff import diff, format_diff
from ..envelope._model import Envelope
from ..envelope._validate import InvalidEnvelope
from ..reporting import write_json
from ..storage._discovery import STDIO, LoadedPlugin
from ..storage._protocol import StorageError
from ..testing._builders import random_id
from ..testing._copy import private_copy
from ..testing._failures import OperationHung, PluginFault, describe_storage_error
from ..testing._handle import skip_not_applicable
from ..testing._runtime import PluginRuntime
from ..testing._upgrade import DROPPED, KEPT_ROLES, ROLES, Saved
from ._options import path_option
from ._state import RUN_KEY

__all__ = [
    "UpgradeError",
    "UpgradePlugin",
    "build_corpus",
    "configure",
    "load_saved",
]

MANIFEST = "manifest.json"
STATE = "state"
CHECKED = "checked.json"
FORMAT = "rdq-upgrade-corpus/1"
UPGRADE_IDS = ("RDQ-UP-001", "RDQ-UP-002", "RDQ-UP-003")
_GENERATED = 48
"""Generated envelopes of the corpus (split over the namespaces)."""

Step = tuple[Literal["write"], str, Envelope] | tuple[Literal["drop"], str, None]


class UpgradeError(Exception):
    """A bad upgrade directory or manifest: a usage error (one line, exit status 4)."""


# -- the corpus ----------------------------------------------------------------------------


def _generated(seed: int, versions: Sequence[int], count: int) -> list[Envelope]:
    """``count`` envelopes drawn from the public strategy under ``seed``, each with its
    own id (Hypothesis may draw equal ids; a corpus must not overwrite by accident)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from ..strategies import envelopes

    drawn: list[Envelope] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(envelopes(envelope_versions=versions, max_attempts=3, max_payload_size=256))
    def draw(env: Envelope) -> None:
        drawn.append(env)

    draw()
    if len(drawn) < count:  # pragma: no cover - the strategy's space is far larger
        raise UpgradeError(f"Hypothesis drew {len(drawn)} envelopes, the corpus needs {count}")
    rng = random.Random(seed)
    return [dataclasses.replace(env, id=random_id(rng)) for env in drawn[:count]]


def build_corpus(seed: int, versions: Sequence[int]) -> list[Step]:
    """The writes and the drop of the upgrade corpus, in order, for a plugin declaring
    ``versions``: a pure function of ``seed`` (and the kit's fixtures)."""
    fixtures = [f.envelope() for f in valid_fixtures() if f.envelope_version in versions]
    gen = _generated(seed, sorted(versions), _GENERATED + 5)
    steps: list[Step] = []
    # golden: every valid fixture of a declared version, but five kept for the others
    # (generated ones stand in when a declared version has fewer fixtures)
    steps.extend(("write", "golden", env) for env in fixtures[5:])
    head = [*fixtures[:5], *gen[_GENERATED:]][:5]
    steps.extend(("write", "generated", env) for env in gen[:16])
    # rewritten: a first version, then another envelope under the same id (last wins);
    # the golden ones are the richest (headers, attempts, unknown fields at every level)
    firsts = [*head[:3], *gen[16:24]]
    seconds = [*gen[24:32], *head[3:5], gen[0]]
    for first, second in zip(firsts, seconds, strict=True):
        steps.append(("write", "rewritten", first))
        steps.append(("write", "rewritten", dataclasses.replace(second, id=first.id)))
    steps.extend(("write", "writable", env) for env in gen[32:40])
    steps.extend(("write", "writable", env) for env in head[:2])
    # dropped: written (some ids also live elsewhere), then the whole namespace dropped
    steps.extend(("write", DROPPED, env) for env in [*gen[40:48], *head[:2], gen[1]])
    steps.append(("drop", DROPPED, None))
    return steps


def expected_of(steps: Sequence[Step]) -> tuple[dict[str, dict[str, Envelope]], list[str]]:
    """What the store holds after ``steps`` (per kept role: id -> the last write), and
    the ids the dropped namespace held."""
    kept: dict[str, dict[str, Envelope]] = {role: {} for role in KEPT_ROLES}
    dropped: dict[str, None] = {}
    for kind, role, env in steps:
        if kind == "write":
            assert env is not None
            if role == DROPPED:
                dropped[env.id] = None
            else:
                kept[role][env.id] = env
    return kept, list(dropped)


def _corpus_digest(expected: Mapping[str, Mapping[str, str]], dropped: Sequence[str]) -> str:
    body = json.dumps({"expected": expected, "dropped": list(dropped)}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


# -- the manifest --------------------------------------------------------------------------


def _usage_dir(flag: str, directory: Path, problem: str) -> UpgradeError:
    return UpgradeError(f"{flag}={str(directory)!r}: {problem}")


def load_saved(directory: Path) -> Saved:
    """Read and check ``DIR/manifest.json``; :class:`UpgradeError` says what to do."""
    flag = "--rdq-upgrade-check"
    if not directory.exists():
        raise _usage_dir(flag, directory, "no such directory; first run the kit with the "
                         "previous release and --rdq-upgrade-save on that directory")
    if not directory.is_dir():
        raise _usage_dir(flag, directory, "is not a directory; expected the directory "
                         "written by --rdq-upgrade-save")
    path = directory / MANIFEST
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _usage_dir(flag, directory, f"holds no {MANIFEST}, so it was not written by "
                         "--rdq-upgrade-save; give the directory of a save run") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _usage_dir(flag, directory, f"{MANIFEST} is unreadable ({exc}); save again "
                         "with --rdq-upgrade-save") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise _usage_dir(flag, directory, f"{MANIFEST} has format={found!r}, expected "
                         f"{FORMAT!r}; it was not written by --rdq-upgrade-save of this kit")
    kit_version = raw.get("kit_version")
    if kit_version != __version__:
        raise _usage_dir(flag, directory, f"was saved by rdq-compliance {kit_version!r}, this "
                         f"is {__version__!r}; save and check with the same kit version "
                         f"(install rdq-compliance=={kit_version} for the check, or save again "
                         f"with {__version__})")
    if raw.get("fixture_hash") != fixture_corpus_hash():
        raise _usage_dir(flag, directory, "was saved with other golden fixtures "
                         f"(fixture_hash={raw.get('fixture_hash')!r}, this kit has "
                         f"{fixture_corpus_hash()!r}); save again with this kit")
    checked = directory / CHECKED
    if checked.exists():
        raise _usage_dir(flag, directory, f"was already checked ({CHECKED}); that check "
                         "dropped the corpus from the store: run --rdq-upgrade-save with the "
                         "previous release again")
    try:
        texts: dict[str, dict[str, str]] = raw["expected"]
        dropped = [str(i) for i in raw["dropped_ids"]]
        if _corpus_digest(texts, dropped) != raw["corpus_hash"]:
            raise _usage_dir(flag, directory, f"{MANIFEST} was changed after the save "
                             "(corpus_hash does not match its envelopes); save again")
        plugin = raw["plugin"]
        namespaces = {str(k): str(v) for k, v in raw["namespaces"].items()}
        if set(namespaces) != set(ROLES) or set(texts) != set(KEPT_ROLES):
            raise KeyError("namespaces")
        expected = {
            role: {id: decode(text, versions=None) for id, text in by_id.items()}
            for role, by_id in texts.items()
        }
        return Saved(
            directory=directory,
            plugin_label=str(plugin["label"]),
            plugin_name=str(plugin["name"]),
            plugin_version=str(plugin["version"]),
            kit_version=str(kit_version),
            seed=int(raw["seed"]),
            saved_at=str(raw["saved_at"]),
            namespaces=namespaces,
            expected=expected,
            dropped_ids=tuple(dropped),
        )
    except (KeyError, TypeError, ValueError, AttributeError, InvalidEnvelope) as exc:
        raise _usage_dir(flag, directory, f"{MANIFEST} is malformed ({type(exc).__name__}: "
                         f"{exc}); save again with --rdq-upgrade-save") from None


# -- configuration -------------------------------------------------------------------------


def _dir_option(config: pytest.Config, ini: str) -> Path | None:
    path = path_option(config, ini)
    return None if path is None else path.resolve()


def _check_save_dir(directory: Path) -> None:
    flag = "--rdq-upgrade-save"
    if directory.exists() and not directory.is_dir():
        raise _usage_dir(flag, directory, "is not a directory; give a new or empty directory")
    if directory.is_dir():
        foreign = sorted(p.name for p in directory.iterdir()
                         if p.name not in (MANIFEST, STATE, CHECKED))
        if foreign and not (directory / MANIFEST).exists():
            raise _usage_dir(flag, directory, f"holds other files ({', '.join(foreign[:3])}) "
                             "and no manifest: give a new or empty directory, or one an "
                             "earlier --rdq-upgrade-save wrote")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _usage_dir(flag, directory, f"cannot be created: {exc}") from None


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
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == "rdq_requirement" and str(value) in UPGRADE_IDS:
                self.ran.add(str(value))

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
            missing = ", ".join(sorted(set(UPGRADE_IDS) - self.ran))
            self.done = (f"upgrade check: {missing} did not run (deselected, skipped or "
                         "stopped early); the corpus is left in the store for another check")
        if self.problem is not None:
            run.notes.append(self.problem)
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.done is not None:
            run.notes.append(self.done)

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
            _drop_previous(rt, self.directory)
            token = secrets.token_hex(4)
            namespaces = {role: f"up{token}_{role}" for role in ROLES}
            steps = build_corpus(seed, sorted(info.envelope_versions))
            expected, dropped = expected_of(steps)
            try:
                _store(rt, namespaces, steps)
                _verify(rt, namespaces, expected, dropped)
            except UpgradeError:
                for name in namespaces.values():  # leave nothing of a failed save behind
                    try:
                        _call(rt, f"storage.drop({name!r})", _storage(rt).drop, name)
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
            "corpus_hash": _corpus_digest(texts, dropped),
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
                _call(rt, f"storage.drop({name!r})", _storage(rt).drop, name)
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


def _storage(rt: PluginRuntime) -> Any:
    if rt.storage is None:
        raise UpgradeError(rt.dead or rt.broken or "the storage is gone")
    return rt.storage


def _call(rt: PluginRuntime, op: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return rt.call(op, fn, *args)
    except OperationHung as exc:
        raise UpgradeError(str(exc)) from None
    except PluginFault as fault:
        err = fault.exc
        what = describe_storage_error(err) if isinstance(err, StorageError) else (
            f"{type(err).__name__}: {err}")
        raise UpgradeError(f"{op} raised {what}") from None


def _drop_previous(rt: PluginRuntime, directory: Path) -> None:
    """Saving again into DIR: drop the corpus of the earlier save first."""
    try:
        raw = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        names = [str(n) for n in raw["namespaces"].values()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    for name in names:
        _call(rt, f"storage.drop({name!r})", _storage(rt).drop, name)


@contextmanager
def _adapters(rt: PluginRuntime) -> Iterator[Callable[[str], Any]]:
    """An adapter per namespace, opened on first use and closed at the end."""
    opened: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in opened:
            opened[name] = _call(rt, f"storage.open({name!r})", _storage(rt).open, name)
        return opened[name]

    try:
        yield get
    finally:
        for name, adapter in opened.items():
            _call(rt, f"adapter.close() of namespace {name!r}", adapter.close)


def _store(rt: PluginRuntime, namespaces: Mapping[str, str], steps: Sequence[Step]) -> None:
    with _adapters(rt) as adapter:
        for kind, role, env in steps:
            name = namespaces[role]
            if kind == "drop":
                _call(rt, f"storage.drop({name!r})", _storage(rt).drop, name)
                continue
            assert env is not None
            op = f"write(envelope id={env.id!r}) in namespace {name!r}"
            _call(rt, op, adapter(name).write, private_copy(env))


def _verify(rt: PluginRuntime, namespaces: Mapping[str, str],
            expected: Mapping[str, Mapping[str, Envelope]], dropped: Sequence[str]) -> None:
    """The release that saves must read its own corpus back: otherwise the check would
    blame the migration for a defect of the previous release."""
    with _adapters(rt) as adapter:
        for role, by_id in expected.items():
            name = namespaces[role]
            for id, env in by_id.items():
                op = f"read({id!r}) in namespace {name!r}"
                got = _call(rt, op, adapter(name).read, id)
                fix = ("; run the kit on this release without --rdq-upgrade-save and fix "
                       "that first")
                if not isinstance(got, Envelope):
                    raise UpgradeError(f"the release being saved does not read back its own "
                                       f"write: {op} returned {got!r:.200}{fix}")
                differences = diff(env, got)
                if differences:
                    first = format_diff(differences).splitlines()[0]
                    raise UpgradeError(f"the release being saved does not read back its own "
                                       f"write: {op} differs: {first}{fix}")
        name = namespaces[DROPPED]
        for id in dropped:
            if _call(rt, f"read({id!r}) in namespace {name!r}", adapter(name).read, id):
                raise UpgradeError(f"the release being saved still reads {id!r} in namespace "
                                   f"{name!r} after dropping it (RDQ-ST-004); fix that first")
