"""The kit's pytest plugin: options, plugin discovery, suite collection, fixtures.

Loaded by :mod:`.entry` only when ``--rdq-plugin`` (or the ``rdq_plugins`` ini
setting) is given. :func:`configure` validates every ``--rdq-*`` value (a bad
one is a usage error, never a traceback), loads the selected storage plugins,
adds the suite modules to the collection and registers :class:`KitPlugin`, whose
``rdq`` fixture builds the testing API's handle (:class:`~rdq_compliance.testing.Rdq`)
for each test from the run's settings and the plugin's runtime.
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .. import __version__
from .._corpus import corpus_hash
from .._requirements import REQUIREMENTS, Requirement, get_requirement
from ..storage._discovery import LoadedPlugin
from ..testing._case import MASKED, replay_command, save_case
from ..testing._context import KitSettings
from ..testing._failures import CheckFailed, OperationHung, find_failure
from ..testing._handle import Rdq, params_of
from ..testing._marker import MARKER
from ..testing._runtime import PluginRuntime
from . import _upgrade
from ._affinity import pin_threads
from ._hypothesis_summary import drop_empty_hypothesis_summary
from ._ordering import (
    SUITE_MODULE_PREFIX,
    StopOnCause,
    examples_first,
    is_kit_test,
    longest_first,
    specificity,
)
from ._settings import (
    TOKEN_INPUT,
    as_list,
    check_selection,
    guard_timeout,
    load_plugins,
    parse_settings,
    usage,
)
from ._state import RUN_KEY, KitRun, PluginUnderTest
from ._workdir import keep_hypothesis_out

__all__ = [
    "MARKER", "SUITE_FILES", "SUITE_MODULE_PREFIX", "KitPlugin", "configure", "examples_first",
    "longest_first", "specificity",
]

SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"
# Adding a suite is adding one module ``suites/test_<family>.py`` (and its requirements).
SUITE_FILES = tuple(sorted(SUITES_DIR.glob("test_*.py")))
_NOTES_KEY = "rdq_notes"


def _suites_to_add(config: pytest.Config, settings: KitSettings) -> tuple[Path, ...]:
    """The suite modules the kit adds to the collection (those no argument covers)."""
    files = SUITE_FILES
    if settings.replay is not None:
        wanted = f"test_{get_requirement(settings.replay.requirement).suite}.py"
        files = tuple(f for f in SUITE_FILES if f.name == wanted) or SUITE_FILES
    given = []
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        given.append(path.resolve())
    if any(g == SUITES_DIR or SUITES_DIR in g.parents for g in given):
        return ()  # the user picked kit suites explicitly: collect just those
    return files


def configure(config: pytest.Config) -> None:
    """Validate the options, load the plugins, add the suites, register the kit plugin."""
    settings = parse_settings(config)
    check_selection(config)
    config.add_cleanup(pin_threads(config))  # before the guard's threads: they inherit it
    if settings.replay is not None:
        try:
            get_requirement(settings.replay.requirement)
        except KeyError as exc:
            raise usage(f"--rdq-replay: {exc.args[0]}") from None
    loaded = load_plugins(config, settings)
    config.add_cleanup(keep_hypothesis_out(config.invocation_params.dir))
    # The kit's failure messages show the envelopes, cut to size; Hypothesis's warning
    # about the repr of a large generated argument tells the user nothing (issue 21 §7).
    # No category: naming Hypothesis' would import Hypothesis in the xdist controller,
    # which runs no test, while it spawns the workers; only Hypothesis says this.
    config.addinivalue_line("filterwarnings", "ignore:Generating overly large repr")
    for r in REQUIREMENTS:  # -m RDQ-UF-001 (and --strict-markers) know each id
        config.addinivalue_line("markers", f"{r.id}: {r.level} [{' '.join(r.clauses)}] {r.title}")
    config.stash[RUN_KEY] = KitRun(
        plugins=[PluginUnderTest(p.label) for p in loaded],
        profile=settings.profile,
        seed=settings.seed,
        timeout=settings.timeout,
        started_at=datetime.now(UTC),
        kit_version=__version__,
        fixture_hash=corpus_hash(),
        run_token=settings.run_token,
    )
    if settings.example_db is not None:
        config.stash[RUN_KEY].notes.append(
            f"example database (--rdq-example-db): {settings.example_db.describe()}; the "
            "failing examples saved there were tried before the seed's, so this run's "
            "examples depend on it as well as on --rdq-seed")
    try:
        upgrade = _upgrade.configure(config, loaded, lambda p: guard_timeout(p, settings))
    except _upgrade.UpgradeError as exc:
        raise usage(str(exc)) from None
    # Registered first, so that its session hooks run after the kit's (pluggy: LIFO).
    config.pluginmanager.register(upgrade, "rdq-upgrade")
    kit = KitPlugin(config, settings, loaded, _suites_to_add(config, settings))
    config.pluginmanager.register(kit, "rdq-kit")
    if config.getoption("maxfail", 0) == 1 and not config.pluginmanager.has_plugin("dsession") \
            and not _in_xdist_worker(config) and settings.replay is None:
        config.pluginmanager.register(StopOnCause(), "rdq-stop-on-cause")


def _requirement_of(item: pytest.Item) -> Requirement | None:
    mark = item.get_closest_marker(MARKER)
    if mark is None:
        return None
    return get_requirement(mark.args[0])


class KitPlugin:
    """Hooks and fixtures of a kit run (registered as ``rdq-kit``)."""

    def __init__(
        self,
        config: pytest.Config,
        settings: KitSettings,
        loaded: list[LoadedPlugin],
        suites: tuple[Path, ...],
    ) -> None:
        self.config = config
        self.settings = settings
        self.suites = suites
        self.runtimes = {p.label: PluginRuntime(p, guard_timeout(p, settings)) for p in loaded}
        self.shown: list[tuple[str, str]] = []
        """(title, message) for the terminal summary: why a plugin could not be opened."""
        self.not_opened: dict[str, str] = {}
        """Plugins whose open failed at session start -> the one-line skip reason."""

    # -- session -------------------------------------------------------------

    def _is_xdist_controller(self) -> bool:
        return self.config.pluginmanager.has_plugin("dsession")

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:
            return
        run = self.config.stash[RUN_KEY]
        for put in run.plugins:
            rt = self.runtimes[put.label]
            rt.start()
            put.info = rt.info
            put.unavailable = rt.unavailable
            if rt.unavailable is not None:
                run.notes.append(rt.unavailable)
            if rt.dead is not None:
                # Never opened: nothing of it can be tested (incomplete, issue 12). The
                # whole message, traceback included, is shown once; each test skips
                # with its first line.
                first = rt.dead.splitlines()[0]
                put.unavailable = put.broken = first
                self.not_opened[put.label] = (
                    first + (" (its traceback is shown once, above the verdict)"
                             if "\n" in rt.dead else ""))
                run.notes.append(first)
                self._show_once(f"rdq: plugin {put.label!r} could not be opened", rt.dead)
            if self._is_xdist_controller():
                rt.close()  # the controller runs no test; it only wanted .info

    def _show_once(self, title: str, text: str) -> None:
        # In the terminal summary, -q included: once per run, also under xdist, where
        # the controller opens the plugin too and the workers print nothing.
        self.shown.append((title, text))

    @pytest.hookimpl(tryfirst=True)  # just before the verdict (reporting_plugin)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for title, text in self.shown:
            terminalreporter.write_sep("-", title, yellow=True)
            for line in text.splitlines():
                terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Before the terminal summary: the xdist controller need not import Hypothesis.
        drop_empty_hypothesis_summary(self.config)
        run = self.config.stash[RUN_KEY]
        notes: list[str] = []
        for rt in self.runtimes.values():
            rt.close()
            notes.extend(f"plugin {rt.label!r}: {n}" for n in rt.notes)
        run.notes.extend(notes)
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict):
            # The controller writes the report and the terminal summary: it gets the
            # workers' notes (a hang, namespaces left behind) with their results.
            workeroutput[_NOTES_KEY] = notes

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: a worker starts; it names namespaces with this run's token."""
        node.workerinput[TOKEN_INPUT] = self.settings.run_token

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """xdist controller: a worker finished; keep its notes for the report."""
        notes = getattr(node, "workeroutput", {}).get(_NOTES_KEY, [])
        self.config.stash[RUN_KEY].notes.extend(str(n) for n in notes)

    # -- collection ----------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        # The suites live in the installed package, usually outside the rootdir.
        # Given as arguments they would get broken node ids (pytest names a file
        # outside the rootdir that is itself an argument ""), so the kit adds
        # them to the session's collection itself, with stable package-path ids:
        # rdq_compliance/suites/test_golden.py::test_...[memory]
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.extend(
                pytest.Module.from_parent(
                    collector, path=path, nodeid=f"rdq_compliance/suites/{path.name}"
                )
                for path in self.suites
            )
        return report

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        # Before -k/-m select (pytest_collection_modifyitems): the requirement id is a
        # marker of its tests, so "-k RDQ-UF-001" and "-m RDQ-UF-001" select exactly them.
        mark = item.get_closest_marker(MARKER)
        if mark is not None and mark.args and is_kit_test(item):
            item.add_marker(str(mark.args[0]))

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "rdq_plugin" in metafunc.fixturenames:
            labels = list(self.settings.labels)
            metafunc.parametrize("rdq_plugin", labels, ids=labels, indirect=True)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        for item in items:
            req = _requirement_of(item)
            callspec = getattr(item, "callspec", None)
            if req is None or callspec is None or "rdq_plugin" not in callspec.params:
                continue
            item.user_properties.extend([
                ("rdq_requirement", req.id),
                ("rdq_level", str(req.level)),
                ("rdq_clauses", " ".join(req.clauses)),
                ("rdq_plugin", callspec.params["rdq_plugin"]),
            ])
        if _in_xdist_worker(config) and not config.getoption("maxfail", 0):
            longest_first(items)
        else:
            examples_first(items)
        case = self.settings.replay
        if case is None:
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            callspec = getattr(item, "callspec", None)
            label = getattr(callspec, "params", {}).get("rdq_plugin")
            match = (
                getattr(item, "originalname", None) == case.test
                and label == case.plugin
                and params_of(item, label) == case.params
            )
            (keep if match else drop).append(item)
        if not keep:
            raise usage(
                f"--rdq-replay={str(case.path)!r}: no kit test {case.test}{case.params or ''} "
                f"for plugin {case.plugin!r} in kit {__version__}; was it saved by another version?"
            )
        items[:] = keep
        config.hook.pytest_deselected(items=drop)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Everything imported and collected so far lives to the end of the run: move it
        # out of the collector's way. Each full collection of a run otherwise walks those
        # ~100,000 objects again (7-8 per memory ci run, ~60 ms each), and Hypothesis
        # forces one before the first property (register_random).
        if not self.config.option.collectonly:
            gc.collect()
            gc.freeze()

    # -- running -------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        try:
            return (yield)
        except (CheckFailed, OperationHung, BaseExceptionGroup) as exc:
            # The test's own handle, while its fixtures are set up (pytest drops them after
            # the test: nothing keeps a handle, its namespaces and envelopes, past it).
            rdq = getattr(item, "funcargs", {}).get("rdq")
            if isinstance(rdq, Rdq):
                self._save_case(rdq, exc)
            raise

    def _save_case(self, rdq: Rdq, exc: BaseException) -> None:
        found = find_failure(exc, (CheckFailed, OperationHung))
        if not isinstance(found, CheckFailed | OperationHung):
            return
        check, kwargs = rdq.example or (None, None)
        if rdq.replay is not None:
            return  # replaying: the case file already exists
        message = str(found).split("\n", 2)
        try:
            path = save_case(
                self.settings.failures_dir,
                test=str(getattr(rdq.item, "originalname", rdq.item.name)),
                params=rdq.params,
                plugin=rdq.label,
                requirement=rdq.requirement.id,
                check=check,
                example=kwargs,
                envelopes=list(found.envelopes),
                message=" / ".join(message[:2]),
                meta={
                    "kit_version": __version__,
                    "profile": self.settings.profile,
                    "seed": self.settings.seed,
                    "nodeid": rdq.item.nodeid,
                },
            )
        except (OSError, TypeError, ValueError) as err:
            exc.add_note(f"(the failing case could not be saved: {type(err).__name__}: {err})")
            return
        config = self.config
        testee, timeout = config.getoption("rdq_testee"), config.getoption("rdq_timeout")
        ini_timeout = str(config.getini("rdq_timeout")).strip()
        command, masked = replay_command(
            rdq.label,
            _shown_path(path, config.invocation_params.dir),
            labels=self.settings.labels,
            declared=[o.name for o in self.runtimes[rdq.label].loaded.options],
            options=as_list(config.getoption("rdq_options")),
            ini_has_options=bool(as_list(config.getini("rdq_options"))),
            testee=None if testee is None else str(testee),
            # Only a value the replay would not pick up from the ini file (or the default).
            timeout=None if timeout is None or _same_number(timeout, ini_timeout)
            else str(timeout),
        )
        exc.add_note(f"replay: {command}")
        if masked:
            exc.add_note(
                f"replay note: {MASKED} stands for the secret in {', '.join(masked)}; "
                "put the real value back before running that command"
            )

    # -- fixtures ------------------------------------------------------------

    @pytest.fixture
    def rdq_plugin(self, request: pytest.FixtureRequest) -> PluginRuntime:
        """The plugin under test (parametrized over every --rdq-plugin)."""
        label = request.param
        rt = self.runtimes[label]
        if label in self.not_opened:
            pytest.skip(self.not_opened[label])
        rt.ensure_usable()
        if rt.unavailable is not None:
            pytest.skip(rt.unavailable)
        if rt.dead is not None:
            pytest.fail(rt.dead, pytrace=False)
        if rt.info is None or rt.storage is None:
            pytest.fail(f"plugin {label!r} was not opened (collect-only run?)", pytrace=False)
        return rt

    @pytest.fixture
    def rdq(
        self, request: pytest.FixtureRequest, rdq_plugin: PluginRuntime
    ) -> Iterator[Rdq]:
        """The per-test handle on the plugin under test (:class:`~rdq_compliance.testing.Rdq`)."""
        item = request.node
        req = _requirement_of(item)
        if req is None:
            pytest.fail(
                f"{item.nodeid} uses the rdq fixture without @requirement(...)", pytrace=False
            )
        assert rdq_plugin.info is not None
        if req.capability and req.capability not in rdq_plugin.info.capabilities:
            pytest.skip(f"plugin declares no {req.capability!r} capability")
        ctx = Rdq(item, req, rdq_plugin, self.settings)
        yield ctx
        ctx.teardown()


def _in_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _same_number(a: object, b: object) -> bool:
    try:
        return float(str(a)) == float(str(b))
    except ValueError:
        return False


def _shown_path(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)

