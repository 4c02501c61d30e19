"""Hypothesis' terminal summary, left out where it has nothing to say.

Hypothesis' pytest plugin imports Hypothesis in every run's terminal summary (to read
which observability files this process wrote). The xdist controller runs no test and
never imports Hypothesis otherwise: that import (0.1–0.2 s of CPU) was the last thing a
``-n 2`` run did after its last test. The summary is provably empty when this process
never imported Hypothesis (so it wrote no observations), statistics were not asked for
and no report carries a failing example to patch in; only then is the plugin taken out,
at session finish, before the terminal summary runs. Anything else (a newer Hypothesis
whose plugin names differ, say) keeps it.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

__all__ = ["drop_empty_hypothesis_summary"]

_PLUGIN = "hypothesispytest"  # Hypothesis' pytest11 entry point


def drop_empty_hypothesis_summary(config: pytest.Config) -> bool:
    """Unregister Hypothesis' pytest plugin if its terminal summary would print nothing and
    do nothing but import Hypothesis; returns whether it did."""
    if "hypothesis" in sys.modules:
        return False  # tests ran here: observations, statistics, patches are possible
    plugin = config.pluginmanager.get_plugin(_PLUGIN)
    stats_option = getattr(plugin, "PRINT_STATISTICS_OPTION", None)
    failing_key = getattr(plugin, "FAILING_EXAMPLES_KEY", None)
    if not isinstance(stats_option, str) or not isinstance(failing_key, str):
        return False  # not the plugin this was written against
    if config.getoption(stats_option, default=False):
        return False
    reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
    stats: dict[str, list[Any]] = getattr(reporter, "stats", {})
    if any(failing_key in getattr(r, "__dict__", {}) for rs in stats.values() for r in rs):
        return False
    config.pluginmanager.unregister(plugin)
    return True
