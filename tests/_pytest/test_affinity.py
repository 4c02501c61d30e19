"""Which CPU an xdist worker keeps its threads on (``_pytest/_affinity.py``), and when
Hypothesis' terminal summary is left out (``_pytest/_hypothesis_summary.py``). The end-to-end
runs are in ``test_xdist.py``."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from rdq_compliance._pytest._affinity import worker_cpu
from rdq_compliance._pytest._hypothesis_summary import drop_empty_hypothesis_summary


@pytest.mark.parametrize(("worker", "count", "allowed", "cpu"), [
    ("gw0", 2, {0, 1}, 0),
    ("gw1", 2, {0, 1}, 1),
    ("gw1", 2, {3, 5}, 5),  # the CPUs this process may use, in order
    ("gw2", 3, {4, 6}, 4),  # more workers than CPUs: round robin
    ("gw3", 4, {0, 1}, 1),
    ("gw0", 2, {0, 1, 2, 3}, None),  # fewer workers than CPUs: the scheduler's
    ("gw0", 1, {0}, None),  # one CPU: nothing to choose
    ("gw0", 4, {7}, None),
    ("main", 2, {0, 1}, None),  # not an xdist worker id
])
def test_worker_cpu(worker: str, count: int, allowed: set[int], cpu: int | None) -> None:
    assert worker_cpu(worker, count, allowed) == cpu


@pytest.mark.parametrize(("worker", "count", "allowed", "cpu"), [
    ("gw1", 2, {0, 1, 2, 3}, 1),  # always: fewer workers than CPUs too
    ("gw0", 4, {7}, None),  # still nothing to choose on one CPU
])
def test_worker_cpu_always(worker: str, count: int, allowed: set[int], cpu: int | None) -> None:
    assert worker_cpu(worker, count, allowed, always=True) == cpu


class _Plugin:
    PRINT_STATISTICS_OPTION = "--hypothesis-show-statistics"
    FAILING_EXAMPLES_KEY = "_hypothesis_failing_examples"


class _Manager:
    def __init__(self, plugin: object, reports: list[object]) -> None:
        self.plugins: dict[str, object] = {
            "hypothesispytest": plugin,
            "terminalreporter": SimpleNamespace(stats={"passed": reports}),
        }

    def get_plugin(self, name: str) -> object:
        return self.plugins.get(name)

    def unregister(self, plugin: object) -> None:
        self.plugins = {k: v for k, v in self.plugins.items() if v is not plugin}


def _config(plugin: object = _Plugin, *, stats: bool = False,
            reports: tuple[object, ...] = ()) -> Any:
    return SimpleNamespace(pluginmanager=_Manager(plugin, list(reports)),
                           getoption=lambda name, default=None: stats)


@pytest.fixture
def no_hypothesis(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on the xdist controller: this process never imported Hypothesis."""
    monkeypatch.delitem(sys.modules, "hypothesis", raising=False)


@pytest.mark.usefixtures("no_hypothesis")
def test_an_empty_summary_is_left_out() -> None:
    config = _config(reports=(SimpleNamespace(),))
    assert drop_empty_hypothesis_summary(config)
    assert config.pluginmanager.get_plugin("hypothesispytest") is None


@pytest.mark.usefixtures("no_hypothesis")
@pytest.mark.parametrize("config", [
    _config(stats=True),  # statistics asked for
    _config(reports=(SimpleNamespace(_hypothesis_failing_examples="[]"),)),  # a patch to write
    _config(plugin=object()),  # a Hypothesis whose plugin this was not written against
], ids=["statistics", "failing-example", "unknown-plugin"])
def test_a_summary_with_something_to_say_is_kept(config: Any) -> None:
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    assert not drop_empty_hypothesis_summary(config)
    assert config.pluginmanager.get_plugin("hypothesispytest") is plugin


def test_a_process_that_imported_hypothesis_keeps_it() -> None:
    import hypothesis  # noqa: F401  # as a process that ran properties has
    config = _config()
    assert not drop_empty_hypothesis_summary(config)
    assert config.pluginmanager.get_plugin("hypothesispytest") is _Plugin
